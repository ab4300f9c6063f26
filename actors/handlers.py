"""How the owner applies each write-op to its mind (the actor's handler table).

Each handler runs inside the actor's group-commit transaction (in its own savepoint) and
returns a JSON-able result. Ops come from :mod:`queue_schemas.ops`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from actors.actor import Handler
from actors.calls import call, harvest_progress
from mind.chunker import MIN_CHUNK_CHARS
from mind.cognify_apply import FrameIndex, apply_index
from mind.frame import NewFrame
from mind.kg_dedupe import dedupe_by_name
from mind.mind import Mind
from mind.vectors import ChunkSpan
from queue_schemas import ops


def to_new_frame(op: ops.NewFrameOp) -> NewFrame:
    return NewFrame(
        gop_id=op.gop_id,
        content=op.content,
        frame_type=op.frame_type,
        importance=op.importance,
        source=op.source,
        base_frame_id=op.base_frame_id,
        created_at=op.created_at,
        metadata=dict(op.metadata),
        external_id=op.external_id,
        references=list(op.references),
        dedup=op.dedup,
    )


def _vector(v: Any) -> np.ndarray:
    return np.frombuffer(v.to_bytes(), dtype="<f4")


async def save_frames(mind: Mind, op: ops.SaveFrames | ops.HarvestBatch) -> dict[str, Any]:
    results = await mind.frames.insert_many([to_new_frame(f) for f in op.frames])
    if isinstance(op, ops.HarvestBatch):
        await harvest_progress(mind, op, results)
    return {
        "frames": [
            {"id": r.frame.id, "created": r.created, "upgraded": r.upgraded,
             "gop_id": r.frame.gop_id, "t": r.frame.t, "content_hash": r.frame.content_hash}
            for r in results
        ]
    }


async def apply_index_op(mind: Mind, op: ops.ApplyIndex) -> dict[str, Any]:
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
    stats = await apply_index(mind.db, fp, results, link_index=await mind.vector_index())
    return stats.as_dict()


async def touch(mind: Mind, op: ops.Touch) -> dict[str, Any]:
    await mind.frames.touch(list(op.frame_ids))
    return {"touched": len(op.frame_ids)}


async def erase(mind: Mind, op: ops.Erase) -> dict[str, Any]:
    """Remove a frame and everything derived from it, and entities left with no frame (the
    actor truncates the WAL after the commit: :mod:`mind.forget`)."""
    return dict(await mind.erase_frame(op.frame_id))


async def compact(mind: Mind, op: ops.Compact) -> dict[str, Any]:
    result = await mind.compact(op.max_temp_age_days, op.max_deprecated_age_days)
    await mind.db.execute(
        "DELETE FROM applied_ops WHERE applied_at < strftime('%Y-%m-%dT%H:%M:%fZ','now','-7 days')"
    )
    return result.as_dict()


async def reconcile(mind: Mind, op: ops.Reconcile) -> dict[str, Any]:
    result = await mind.reconcile(chunk_min_chars=MIN_CHUNK_CHARS)
    stale = await mind.outbox.pending(10_000, older_than_seconds=op.grace_seconds)
    await mind.outbox.touch([p.frame_id for p in stale])
    return {**result.as_dict(), "requeue": [p.frame_id for p in stale]}


async def reembed(mind: Mind, op: ops.Reembed) -> dict[str, Any]:
    queued = await mind.vectors.reset(op.provider, op.model, op.dim)
    return {"queued": queued}


async def dedupe(mind: Mind, op: ops.Dedupe) -> dict[str, Any]:
    return dict(await dedupe_by_name(mind.db))


HANDLERS: dict[str, Handler] = {
    "save_frames": save_frames,
    "harvest_batch": save_frames,
    "apply_index": apply_index_op,
    "touch": touch,
    "erase": erase,
    "compact": compact,
    "reconcile": reconcile,
    "reembed_mind": reembed,
    "dedupe": dedupe,
    "call": call,
}
