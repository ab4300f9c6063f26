"""How the owner applies each write-op to its mind (the actor's handler table).

One handler per op model of :mod:`queue_schemas.ops`, registered by type (:func:`_on`): mypy
checks that each handler takes its model, and a test that every model has one. Each handler runs
inside the actor's group-commit transaction (in its own savepoint), calls ``mind`` methods (the
SQL lives there) and returns a small frozen result type (:mod:`actors.results`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from actors.actor import Handler
from actors.calls import (
    add_awareness,
    clear_awareness,
    create_relation,
    entities_cleanup,
    finish_harvest,
    frames_wipe,
    harvest_progress,
    remove_awareness,
    save_entity,
    set_identity,
)
from actors.results import Deduped, FramesSaved, Reconciled, Reembedded, Touched
from mind.cognify_apply import ApplyStats, FrameIndex, apply_index
from mind.errors import HiveMindError
from mind.frames.compaction import CompactResult
from mind.frames.forget import Erasure
from mind.frames.model import Frame, FrameToWrite
from mind.harvest.store import HarvestStore
from mind.knowledge import supersession
from mind.knowledge.dedupe import dedupe_by_name
from mind.mind import Mind
from mind.retrieval.chunker import MAX_CHARS
from mind.retrieval.vectors import ChunkSpan
from mind.storage import idempotency
from queue_schemas import ops

if TYPE_CHECKING:  # numpy loads with the first index result applied
    import numpy as np

OpT = TypeVar("OpT", bound=ops.OpEnvelope)


def _vector(v: Any) -> np.ndarray:
    import numpy as np

    return np.frombuffer(v.to_bytes(), dtype="<f4")


async def save_frames(mind: Mind, op: ops.SaveFrames | ops.HarvestBatch) -> FramesSaved:
    frames: Sequence[FrameToWrite] = op.frames  # checked when the op was built: as they are
    if isinstance(op, ops.HarvestBatch):  # turns stored under an adapter's older keys
        frames = await HarvestStore(mind.db).adopt_previous_keys(frames)
    results = await mind.frames.insert_many(frames, checked=True)
    await supersession.record_updates(mind.db, [
        (r.frame.base_frame_id, r.frame.id, r.frame.created_at) for r in results
        if r.created and r.frame.frame_type == "P" and r.frame.base_frame_id is not None])
    if isinstance(op, ops.HarvestBatch):
        await harvest_progress(mind, op, results)
    return FramesSaved.of(results)


async def apply_index_op(mind: Mind, op: ops.ApplyIndex) -> ApplyStats:
    results = [
        FrameIndex(
            r.frame_id,
            r.content_hash,
            _vector(r.vector),
            tuple(
                (ChunkSpan(c.chunk_idx, c.content, c.char_start, c.char_end), _vector(c.vector))
                for c in r.chunks
            ),
            r.entities,
            r.relations,
        )
        for r in op.results
    ]
    fp = (op.fingerprint.provider, op.fingerprint.model, op.fingerprint.dim)
    return await apply_index(mind.db, fp, results, link_index=await mind.vector_index())


async def touch(mind: Mind, op: ops.Touch) -> Touched:
    await mind.frames.touch(list(op.frame_ids))
    return Touched(len(op.frame_ids))


async def erase(mind: Mind, op: ops.Erase) -> Erasure:
    """Remove a frame and everything derived from it, and entities left with no frame (the
    actor truncates the WAL after the commit: :mod:`mind.frames.forget`)."""
    return await mind.erase_frame(op.frame_id)


async def set_importance(mind: Mind, op: ops.SetImportance) -> Frame:
    """Change a frame's importance (its content, and so its index, stay)."""
    return await mind.frames.update(op.frame_id, importance=op.importance)


async def compact(mind: Mind, op: ops.Compact) -> CompactResult:
    result = await mind.compact(op.max_temp_age_days, op.max_deprecated_age_days)
    await idempotency.forget_old(mind.db)
    return result


async def reconcile(mind: Mind, op: ops.Reconcile) -> Reconciled:
    result = await mind.reconcile(chunk_min_chars=MAX_CHARS)
    stale = await mind.outbox.pending(10_000, older_than_seconds=op.grace_seconds)
    await mind.outbox.touch([p.frame_id for p in stale])
    return Reconciled(result, tuple(p.frame_id for p in stale))


async def reembed(mind: Mind, op: ops.Reembed) -> Reembedded:
    """Switch the mind to the op's model: drop every vector and queue every frame — unless a
    re-embed to that model is unfinished (its process stopped), which is finished instead of
    started over: on a large mind, hours of embedding are kept."""
    left = await mind.vectors.unfinished(op.provider, op.model, op.dim)
    if left:
        return Reembedded(left, continued=True)
    return Reembedded(await mind.vectors.reset(op.provider, op.model, op.dim))


async def dedupe(mind: Mind, op: ops.Dedupe) -> Deduped:
    result = await dedupe_by_name(mind.db)
    return Deduped(result["groups"], result["merged"])


def _on(model: type[OpT], handle: Callable[[Mind, OpT], Awaitable[object]]
        ) -> tuple[str, Handler]:
    """``(kind, handler)``: the handler of one op model; it refuses an op of another type."""

    async def dispatch(mind: Mind, op: Any) -> object:
        if not isinstance(op, model):
            raise HiveMindError(f"op kind {op.kind!r} is not a {model.__name__}")
        return await handle(mind, op)

    return model.kind_name(), dispatch


HANDLERS: dict[str, Handler] = dict([
    _on(ops.SaveFrames, save_frames),
    _on(ops.HarvestBatch, save_frames),
    _on(ops.ApplyIndex, apply_index_op),
    _on(ops.Touch, touch),
    _on(ops.Erase, erase),
    _on(ops.SetImportance, set_importance),
    _on(ops.Compact, compact),
    _on(ops.Reconcile, reconcile),
    _on(ops.Reembed, reembed),
    _on(ops.Dedupe, dedupe),
    _on(ops.SetIdentity, set_identity),
    _on(ops.AddAwareness, add_awareness),
    _on(ops.RemoveAwareness, remove_awareness),
    _on(ops.ClearAwareness, clear_awareness),
    _on(ops.SaveEntity, save_entity),
    _on(ops.CreateRelation, create_relation),
    _on(ops.CleanupEntities, entities_cleanup),
    _on(ops.WipeFrames, frames_wipe),
    _on(ops.FinishHarvest, finish_harvest),
])
"""``{kind: handler}`` for :class:`~actors.actor.MindActor` (kinds are 1:1 with op models)."""
