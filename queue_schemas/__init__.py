"""Pydantic models of every job payload and write-op, with schema versions, and the JSON codec
used as arq's job serializer (no pickle anywhere). Depends only on pydantic and the stdlib.

Modules: ``constants`` (queue names, Redis keys, job ids), ``ids`` (mind/op/host id rules),
``fields`` (annotated field types, timestamps), ``errors``, ``base`` (``Envelope`` with version
checks and upgrade hooks), ``vector`` (``Vector``, ``Fingerprint``), ``jobs`` (worker jobs),
``ops`` (write-ops applied by a mind's owner), ``codec`` (``serialize`` / ``deserialize``).
"""

from queue_schemas.base import Envelope, FrozenModel
from queue_schemas.codec import deserialize, serialize
from queue_schemas.constants import (
    COGNIFY_QUEUE,
    DEAD_LETTERS_KEY,
    HOST_QUEUE_PREFIX,
    KEY_PREFIX,
    MAINTENANCE_QUEUE,
    host_queue,
    job_id,
)
from queue_schemas.errors import PayloadError, SchemaVersionError, UnknownKindError
from queue_schemas.ids import split_mind_id, validate_mind_id, workspace_mind_id
from queue_schemas.jobs import (
    AnyJob,
    CognifyItem,
    CognifyJob,
    JobEnvelope,
    JobModel,
    ReembedJob,
    parse_job,
)
from queue_schemas.ops import (
    AnyOp,
    ApplyIndex,
    ChunkResult,
    Compact,
    Dedupe,
    EntityResult,
    Erase,
    FrameIndexResult,
    HarvestBatch,
    NewFrameOp,
    OpEnvelope,
    OpModel,
    Reconcile,
    Reembed,
    RelationResult,
    SaveFrames,
    Touch,
    parse_op,
)
from queue_schemas.vector import Fingerprint, Vector

__all__ = [
    "COGNIFY_QUEUE",
    "DEAD_LETTERS_KEY",
    "HOST_QUEUE_PREFIX",
    "KEY_PREFIX",
    "MAINTENANCE_QUEUE",
    "AnyJob",
    "AnyOp",
    "ApplyIndex",
    "ChunkResult",
    "CognifyItem",
    "CognifyJob",
    "Compact",
    "Dedupe",
    "EntityResult",
    "Envelope",
    "Erase",
    "Fingerprint",
    "FrameIndexResult",
    "FrozenModel",
    "HarvestBatch",
    "JobEnvelope",
    "JobModel",
    "NewFrameOp",
    "OpEnvelope",
    "OpModel",
    "PayloadError",
    "Reconcile",
    "Reembed",
    "ReembedJob",
    "RelationResult",
    "SaveFrames",
    "SchemaVersionError",
    "Touch",
    "UnknownKindError",
    "Vector",
    "deserialize",
    "host_queue",
    "job_id",
    "parse_job",
    "parse_op",
    "serialize",
    "split_mind_id",
    "validate_mind_id",
    "workspace_mind_id",
]
