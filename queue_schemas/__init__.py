"""Pydantic models of every job payload and write-op, with schema versions, and the JSON codec
used as arq's job serializer (no pickle anywhere). Depends only on pydantic and the stdlib-only
vocabulary leaf (:mod:`vocabulary`: id rules, timestamp format, enumerations, limits).

Modules: ``constants`` (queue names, Redis keys, job ids), ``fields`` (the vocabulary's rules as
annotated field types), ``errors``, ``base`` (``Envelope`` with version
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
    host_queue,
    job_id,
)
from queue_schemas.errors import PayloadError, SchemaVersionError, UnknownKindError
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
    AddAwareness,
    AnyOp,
    ApplyIndex,
    ChunkResult,
    CleanupEntities,
    ClearAwareness,
    Compact,
    CreateRelation,
    Dedupe,
    EntityResult,
    Erase,
    FinishHarvest,
    FrameIndexResult,
    HarvestBatch,
    NewFrameOp,
    OpEnvelope,
    OpModel,
    Reconcile,
    Reembed,
    RelationResult,
    RemoveAwareness,
    SaveEntity,
    SaveFrames,
    SetIdentity,
    SetImportance,
    Touch,
    WipeFrames,
    parse_op,
)
from queue_schemas.vector import Fingerprint, Vector
from vocabulary.ids import split_mind_id, validate_mind_id, workspace_mind_id

__all__ = [
    "COGNIFY_QUEUE",
    "DEAD_LETTERS_KEY",
    "HOST_QUEUE_PREFIX",
    "KEY_PREFIX",
    "AddAwareness",
    "AnyJob",
    "AnyOp",
    "ApplyIndex",
    "ChunkResult",
    "CleanupEntities",
    "ClearAwareness",
    "CognifyItem",
    "CognifyJob",
    "Compact",
    "CreateRelation",
    "Dedupe",
    "EntityResult",
    "Envelope",
    "Erase",
    "Fingerprint",
    "FinishHarvest",
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
    "RemoveAwareness",
    "SaveEntity",
    "SaveFrames",
    "SchemaVersionError",
    "SetIdentity",
    "SetImportance",
    "Touch",
    "UnknownKindError",
    "Vector",
    "WipeFrames",
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
