"""Write-ops: applied by the mind's owner (its ``MindActor``), idempotently by ``op_id``.

They reach the owner either in-process (facade → actor) or through the owning host's arq queue
(``host_queue(host_id)``): index results from workers, maintenance from cron, bulk harvests.

=================  ===============================================================================
kind               meaning
=================  ===============================================================================
``save_frames``    write frames (+ FTS + outbox rows) in one group commit
``apply_index``    vectors, chunks, entities, relations from a worker; stale results are dropped
                   by ``content_hash``
``compact``        age out temporary/deprecated frames, merge P-frame chains, optimize indexes
``reconcile``      consistency sweep; re-enqueue outbox rows pending longer than the grace period
``reembed_mind``   switch the mind to a new embedding model and re-embed every frame
``dedupe``         merge duplicate entities
``touch``          record that frames were recalled (access count, last accessed)
``harvest_batch``  one batch of a bulk import (frames with stable external ids + resume cursor)
``erase``          delete one frame and everything derived from it
``set_importance`` change one frame's importance
``set_identity``   create or update the mind's identity (only the fields given)
``add_awareness``  add one awareness item (category, content, priority, expiry)
``remove_awareness``  remove one awareness item by id
``clear_awareness``   remove every awareness item of one category
``save_entity``    create an entity, or update the active one with that type and name
``create_relation``   relate two active entities
``cleanup_entities``  entity cleanup (audit, remove_noise, dedup, retire_orphans, wipe_all)
``wipe_frames``    delete every imported frame, or every frame and session
``finish_harvest`` record how a harvest run ended and the source's sync bookkeeping
=================  ===============================================================================

Each kind is one model with typed fields: a wrong argument name or type is refused when the op
is built (a pydantic ``ValidationError`` naming the field), before any owner sees it. Value rules
that belong to the engine (name limits, control characters, categories, modes) are checked once,
by the ``mind`` method that applies the op.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationInfo,
    field_validator,
    model_validator,
)

from queue_schemas.base import Envelope, FrozenModel, kind_registry, resolve
from queue_schemas.constants import RECONCILE_GRACE_SECONDS
from queue_schemas.fields import (
    Confidence,
    ContentHash,
    ExternalId,
    FrameId,
    FrameText,
    GopId,
    Label,
    Name,
    Timestamp,
)
from queue_schemas.vector import Fingerprint, Vector
from vocabulary.enums import FrameSource, FrameType, Importance, JobPriority
from vocabulary.limits import (
    COMPACT_DEPRECATED_DAYS,
    COMPACT_TEMP_DAYS,
    MAX_FRAME_REFERENCES,
    MAX_FRAMES_PER_OP,
    MAX_ID_CHARS,
    MAX_IDS_PER_OP,
    MAX_ITEMS_PER_JOB,
    MAX_LABEL_CHARS,
    MAX_NAME_CHARS,
    MAX_VECTOR_DIM,
)


class OpEnvelope(Envelope):
    """Base of the write-ops applied by a mind's owner."""

    CATEGORY: ClassVar[str] = "op"
    CONSUMER: ClassVar[str] = "host"
    OLD_REMEDY: ClassVar[str] = (
        "re-issue it (pending index work is re-enqueued from the outbox by "
        "hive-mind maintenance reconcile)"
    )


MAX_METADATA_DEPTH = 32


def _check_json(value: dict[str, Any] | list[Any], where: str, depth: int) -> None:
    """Every value under ``value`` is JSON: a string, a finite number, a bool, None, a list or
    an object with string keys, nested at most :data:`MAX_METADATA_DEPTH` levels (JSON can carry
    neither NaN/inf nor unbounded nesting: refused here, not in the codec). One pass, strings
    and ints skipped without a call: bulk imports check hundreds of thousands of these, nearly
    all flat strings (pydantic's ``JsonValue`` and a walk for the numbers took twice as long)."""
    if depth > MAX_METADATA_DEPTH:
        raise ValueError(f"{where} is nested deeper than {MAX_METADATA_DEPTH} levels")
    if isinstance(value, dict):
        if depth and not all(isinstance(key, str) for key in value):  # depth 0: the field type's
            raise ValueError(f"{where} has a key that is not a string")
        pairs: Iterable[tuple[object, object]] = value.items()
        fmt = "{}.{}"
    else:
        pairs, fmt = enumerate(value), "{}[{}]"
    for key, item in pairs:
        if item is None or isinstance(item, str | int):  # bool is an int
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise ValueError(f"{fmt.format(where, key)} holds {item} (JSON numbers must be "
                                 "finite)")
        elif isinstance(item, dict | list):
            _check_json(item, fmt.format(where, key), depth + 1)
        else:
            raise ValueError(f"{fmt.format(where, key)} holds a {type(item).__name__}, not a JSON "
                             "value")


def _json_object(value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
    _check_json(value, info.field_name or "value", 0)
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(_json_object)]
"""A JSON object (metadata, properties): finite numbers, nested at most 32 levels."""


# -- frames ----------------------------------------------------------------------------------
class NewFrameOp(FrozenModel):
    """A frame to write (mirrors ``mind.frames.model.NewFrame``).

    ``created_at`` is the source time (imports keep theirs; ``None`` = now on apply).
    ``dedup`` applies to I-frames without an ``external_id``; frames with an ``external_id`` are
    idempotent by that id.
    """

    gop_id: GopId
    content: FrameText
    frame_type: FrameType = "I"
    importance: Importance = "normal"
    source: FrameSource = "user_stated"
    base_frame_id: FrameId | None = None
    created_at: Timestamp | None = None
    metadata: JsonObject = Field(default_factory=dict)
    external_id: ExternalId | None = None
    references: Annotated[Sequence[FrameId], Field(max_length=MAX_FRAME_REFERENCES),
                          AfterValidator(tuple)] = ()
    """The frames a B-frame cross-references (a JSON array), held as a tuple: none is the one
    shared empty tuple, not a new list per frame of an import for the garbage collector to
    walk."""
    dedup: bool = True

    @model_validator(mode="after")
    def _b_frame_base(self) -> Self:
        if self.frame_type == "B" and self.base_frame_id is None:
            raise ValueError("a B-frame needs a base_frame_id")
        return self


Frames = Annotated[list[NewFrameOp], Field(max_length=MAX_FRAMES_PER_OP)]
FrameIds = Annotated[list[FrameId], Field(min_length=1, max_length=MAX_IDS_PER_OP)]


class SaveFrames(OpEnvelope):
    kind: Literal["save_frames"] = "save_frames"
    frames: Annotated[Frames, Field(min_length=1)]


class HarvestBatch(OpEnvelope):
    """One batch of a bulk import. Every frame needs an ``external_id`` (stable per message) so a
    re-import or a redelivered batch writes nothing twice; ``cursor`` is where the adapter
    resumes after this batch (``None`` = the export is done).

    v2 added ``priority`` (the cognify jobs' :mod:`workers.fairness` priority: ``interactive``
    for one ingested document, ``bulk`` for an import); v1 payloads are read as ``bulk``."""

    CURRENT_VERSION: ClassVar[int] = 2
    MIN_SUPPORTED: ClassVar[int] = 1

    kind: Literal["harvest_batch"] = "harvest_batch"
    v: int = CURRENT_VERSION
    priority: JobPriority = "bulk"
    source: Label
    conversation_ids: Annotated[list[Name], Field(max_length=MAX_IDS_PER_OP)]
    frames: Frames
    cursor: Annotated[str, Field(max_length=MAX_NAME_CHARS)] | None = None
    run_id: Annotated[str, Field(max_length=MAX_ID_CHARS)] | None = None
    source_path: Annotated[str, Field(max_length=4096)] = ""
    content_hash: Annotated[str, Field(max_length=128)] = ""
    items: int = Field(default=0, ge=0)
    """How many source items this batch completes (advances the run's ``items_done``)."""
    titles: dict[GopId, Annotated[str, Field(max_length=MAX_NAME_CHARS)]] = Field(
        default_factory=dict
    )
    """Session summaries for new sessions (the conversation titles)."""

    @field_validator("frames")
    @classmethod
    def _stable_ids(cls, frames: list[NewFrameOp]) -> list[NewFrameOp]:
        for i, frame in enumerate(frames):
            if frame.external_id is None:
                raise ValueError(
                    f"harvested frame {i} has no external_id (re-imports must be idempotent)"
                )
        return frames

    @classmethod
    def upgrade(cls, data: dict[str, Any]) -> dict[str, Any]:
        return {**data, "v": 2}  # a v1 batch is bulk, the default


class Touch(OpEnvelope):
    kind: Literal["touch"] = "touch"
    frame_ids: FrameIds


class Erase(OpEnvelope):
    kind: Literal["erase"] = "erase"
    frame_id: FrameId


class SetImportance(OpEnvelope):
    kind: Literal["set_importance"] = "set_importance"
    frame_id: FrameId
    importance: Importance


# -- index results ---------------------------------------------------------------------------
class ChunkResult(FrozenModel):
    chunk_idx: int = Field(ge=0)
    content: FrameText
    char_start: int = Field(ge=0)
    char_end: int = Field(ge=0)
    vector: Vector

    @model_validator(mode="after")
    def _span(self) -> Self:
        if self.char_end <= self.char_start:
            raise ValueError(f"chunk span [{self.char_start}, {self.char_end}) is empty")
        return self


class EntityResult(FrozenModel):
    name: Name
    entity_type: Label
    confidence: Confidence = 1.0


class RelationResult(FrozenModel):
    source: Name
    target: Name
    relation_type: Label
    confidence: Confidence = 1.0


class FrameIndexResult(FrozenModel):
    """Everything a worker derived from one frame. The owner applies it only if the frame's
    current ``content_hash`` still equals this one (else the frame was edited: stale result)."""

    frame_id: FrameId
    content_hash: ContentHash
    vector: Vector
    chunks: list[ChunkResult] = Field(default_factory=list)
    entities: list[EntityResult] = Field(default_factory=list)
    relations: list[RelationResult] = Field(default_factory=list)

    @field_validator("chunks")
    @classmethod
    def _chunk_order(cls, chunks: list[ChunkResult]) -> list[ChunkResult]:
        if [c.chunk_idx for c in chunks] != list(range(len(chunks))):
            raise ValueError("chunk_idx must run 0, 1, 2, … in order")
        return chunks


class ApplyIndex(OpEnvelope):
    """Index results for one mind, all made by the model named in ``fingerprint``."""

    kind: Literal["apply_index"] = "apply_index"
    fingerprint: Fingerprint
    results: list[FrameIndexResult] = Field(min_length=1, max_length=MAX_ITEMS_PER_JOB)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        dim = self.fingerprint.dim
        seen: set[int] = set()
        for result in self.results:
            if result.frame_id in seen:
                raise ValueError(f"frame {result.frame_id} appears twice in one apply_index")
            seen.add(result.frame_id)
            vectors = [result.vector, *(c.vector for c in result.chunks)]
            for vector in vectors:
                if vector.dim != dim:
                    raise ValueError(
                        f"frame {result.frame_id}: vector has {vector.dim} dims but the "
                        f"fingerprint {self.fingerprint.model!r} declares {dim}"
                    )
        return self


# -- maintenance -----------------------------------------------------------------------------
class Compact(OpEnvelope):
    kind: Literal["compact"] = "compact"
    max_temp_age_days: int = Field(default=COMPACT_TEMP_DAYS, ge=1)
    max_deprecated_age_days: int = Field(default=COMPACT_DEPRECATED_DAYS, ge=1)


class Reconcile(OpEnvelope):
    kind: Literal["reconcile"] = "reconcile"
    grace_seconds: int = Field(default=RECONCILE_GRACE_SECONDS, ge=0)


class Reembed(OpEnvelope):
    """Switch the mind's vectors to ``provider``/``model``/``dim`` (drops the old vectors and
    queues every frame for re-embedding as ``ReembedJob`` batches)."""

    kind: Literal["reembed_mind"] = "reembed_mind"
    provider: Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS)]
    model: Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]
    dim: int = Field(ge=1, le=MAX_VECTOR_DIM)

    @property
    def fingerprint(self) -> Fingerprint:
        return Fingerprint(provider=self.provider, model=self.model, dim=self.dim)


class Dedupe(OpEnvelope):
    kind: Literal["dedupe"] = "dedupe"


# -- small writes from the facade ------------------------------------------------------------
class SetIdentity(OpEnvelope):
    """Create the identity (``name`` required then) or update the fields given (``None`` =
    leave unchanged)."""

    kind: Literal["set_identity"] = "set_identity"
    name: str | None = None
    role: str | None = None
    department: str | None = None
    personality: str | None = None
    capabilities: str | None = None
    system_prompt: str | None = None

    def given(self) -> dict[str, str]:
        """The identity fields this op sets (those not ``None``)."""
        values = {name: getattr(self, name) for name in type(self).model_fields
                  if name not in OpEnvelope.model_fields}
        return {name: value for name, value in values.items() if value is not None}


class AddAwareness(OpEnvelope):
    kind: Literal["add_awareness"] = "add_awareness"
    category: str
    content: str
    priority: int = 0
    expires_at: Timestamp | None = None


class RemoveAwareness(OpEnvelope):
    kind: Literal["remove_awareness"] = "remove_awareness"
    item_id: int


class ClearAwareness(OpEnvelope):
    kind: Literal["clear_awareness"] = "clear_awareness"
    category: str


class SaveEntity(OpEnvelope):
    kind: Literal["save_entity"] = "save_entity"
    entity_type: str
    name: str
    properties: JsonObject = Field(default_factory=dict)


class CreateRelation(OpEnvelope):
    kind: Literal["create_relation"] = "create_relation"
    source_id: int
    target_id: int
    relation_type: str
    confidence: float = 1.0
    properties: JsonObject = Field(default_factory=dict)


class CleanupEntities(OpEnvelope):
    kind: Literal["cleanup_entities"] = "cleanup_entities"
    mode: str


class WipeFrames(OpEnvelope):
    kind: Literal["wipe_frames"] = "wipe_frames"
    mode: str


class FinishHarvest(OpEnvelope):
    """How a harvest run ended, and the source's sync bookkeeping. ``path`` is what the run is
    shown as (a label, a masked URL); only ``sync_path`` (a path or URL the server read because
    its caller named it) becomes re-readable by auto-sync."""

    kind: Literal["finish_harvest"] = "finish_harvest"
    run_id: Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]
    source: Label
    status: Literal["completed", "failed"]
    path: Annotated[str, Field(max_length=4096)] = ""
    content_hash: Annotated[str, Field(max_length=128)] = ""
    items: int = Field(default=0, ge=0)
    frames: int = Field(default=0, ge=0)
    error: str | None = None
    auto_sync: bool | None = None
    interval_hours: int | None = Field(default=None, ge=1)
    sync_path: Annotated[str, Field(max_length=4096)] | None = None


# -- union -----------------------------------------------------------------------------------
OpModel = (
    SaveFrames | ApplyIndex | Compact | Reconcile | Reembed | Dedupe | Touch | HarvestBatch
    | Erase | SetImportance | SetIdentity | AddAwareness | RemoveAwareness | ClearAwareness
    | SaveEntity | CreateRelation | CleanupEntities | WipeFrames | FinishHarvest
)
"""The plain union of write-op models (for annotations)."""
AnyOp = Annotated[OpModel, Field(discriminator="kind")]
"""The discriminated union (for pydantic validation)."""
OP_MODELS: tuple[type[OpEnvelope], ...] = (
    SaveFrames, ApplyIndex, Compact, Reconcile, Reembed, Dedupe, Touch, HarvestBatch, Erase,
    SetImportance, SetIdentity, AddAwareness, RemoveAwareness, ClearAwareness, SaveEntity,
    CreateRelation, CleanupEntities, WipeFrames, FinishHarvest,
)
OP_KINDS = kind_registry(*OP_MODELS)
_OP_ADAPTER: TypeAdapter[OpModel] = TypeAdapter(AnyOp, config=ConfigDict(defer_build=True))


def parse_op(data: object) -> OpModel:
    """Validate a raw write-op payload; same contract as :func:`queue_schemas.jobs.parse_job`."""
    return _OP_ADAPTER.validate_python(resolve(data, OP_KINDS, "op"))
