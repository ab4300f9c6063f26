"""Jobs: work for the stateless cognify/embedding workers (queue ``COGNIFY_QUEUE``).

Workers never open a mind file, so a job carries the text it needs. Results go back to the owning
host's queue as an :class:`~queue_schemas.ops.ApplyIndex` op.

Version history of ``cognify``:

- **v1** — ``texts: list[str]`` and ``frame_ids: list[int]`` as parallel lists.
- **v2** — ``items: list[CognifyItem]`` (frame id, content, content hash, importance)
  and an optional ``fingerprint_hint``. v1 payloads are upgraded on read: items get
  ``importance="normal"`` and ``content_hash=None`` (the worker hashes the content it embedded).
- **v3** (current) — ``priority`` (``interactive`` | ``bulk``, :mod:`workers.fairness`). v1
  and v2 payloads are upgraded to ``bulk`` (they were queued before anyone told them apart).

A re-embed job is always ``bulk`` (:attr:`ReembedJob.priority`).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, TypeAdapter, field_validator

from queue_schemas.base import Envelope, FrozenModel, kind_registry, resolve
from queue_schemas.errors import PayloadError
from queue_schemas.fields import ContentHash, FrameId, FrameText
from queue_schemas.vector import Fingerprint
from vocabulary.enums import Importance, JobPriority
from vocabulary.limits import MAX_ITEMS_PER_JOB


class JobEnvelope(Envelope):
    """Base of the jobs consumed by workers."""

    CATEGORY: ClassVar[str] = "job"
    CONSUMER: ClassVar[str] = "worker"
    OLD_REMEDY: ClassVar[str] = (
        "re-enqueue from the outbox (hive-mind maintenance reconcile)"
    )


class CognifyItem(FrozenModel):
    """One frame to index. ``content_hash`` is passed back in the result so the owner can drop
    results for frames edited since; ``None`` (only from upgraded v1 jobs) means the worker
    computes it from ``content``."""

    frame_id: FrameId
    content: FrameText
    content_hash: ContentHash | None = None
    importance: Importance = "normal"


class FrameBatchJob(JobEnvelope):
    """A job over a batch of frames (1..``MAX_ITEMS_PER_JOB`` items, each frame once)."""

    items: list[CognifyItem] = Field(min_length=1, max_length=MAX_ITEMS_PER_JOB)

    @field_validator("items")
    @classmethod
    def _unique_frames(cls, items: list[CognifyItem]) -> list[CognifyItem]:
        seen: set[int] = set()
        for item in items:
            if item.frame_id in seen:
                raise ValueError(f"frame {item.frame_id} appears twice in one job")
            seen.add(item.frame_id)
        return items


class CognifyJob(FrameBatchJob):
    """Extract, embed (+ chunk vectors for long frames) and index a batch of new frames."""

    CURRENT_VERSION: ClassVar[int] = 3
    MIN_SUPPORTED: ClassVar[int] = 1

    kind: Literal["cognify"] = "cognify"
    v: int = CURRENT_VERSION
    fingerprint_hint: Fingerprint | None = None
    """The mind's stored fingerprint if it has one: a worker with another model fails clearly
    instead of producing vectors the owner would reject."""
    priority: JobPriority = "bulk"
    """``interactive``: somebody waits for these frames (a save); runs before any bulk job."""

    @classmethod
    def upgrade(cls, data: dict[str, Any]) -> dict[str, Any]:
        if data.get("v") == 1:
            texts = data.pop("texts", None)
            frame_ids = data.pop("frame_ids", None)
            if not isinstance(texts, list) or not isinstance(frame_ids, list):
                raise PayloadError("cognify v1 payload needs the lists 'texts' and 'frame_ids'")
            if len(texts) != len(frame_ids):
                raise PayloadError(
                    f"cognify v1 payload has {len(texts)} texts but {len(frame_ids)} frame_ids"
                )
            data["items"] = [
                {"frame_id": frame_id, "content": text}
                for frame_id, text in zip(frame_ids, texts, strict=True)
            ]
            data["v"] = 2
        if data.get("v") == 2:
            data["v"] = 3  # priority: its default, bulk
        return data


class ReembedJob(FrameBatchJob):
    """Re-embed a batch of existing frames with the mind's new model (after ``Reembed``)."""

    kind: Literal["reembed"] = "reembed"
    fingerprint: Fingerprint
    """The model the owner switched the mind to; a worker with another model must fail."""
    priority: ClassVar[JobPriority] = "bulk"


JobModel = CognifyJob | ReembedJob
"""The plain union of job models (for annotations)."""
AnyJob = Annotated[JobModel, Field(discriminator="kind")]
"""The discriminated union (for pydantic validation)."""
JOB_MODELS: tuple[type[JobEnvelope], ...] = (CognifyJob, ReembedJob)
JOB_KINDS = kind_registry(*JOB_MODELS)
_JOB_ADAPTER: TypeAdapter[JobModel] = TypeAdapter(AnyJob, config=ConfigDict(defer_build=True))


def parse_job(data: object) -> JobModel:
    """Validate a raw job payload (a dict from the codec).

    Checks the version first (upgrading older supported payloads), so a payload of an unknown
    version raises :class:`SchemaVersionError` and is never executed; an unknown kind raises
    :class:`UnknownKindError`; invalid fields raise ``pydantic.ValidationError`` (a ValueError).
    """
    return _JOB_ADAPTER.validate_python(resolve(data, JOB_KINDS, "job"))
