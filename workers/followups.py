"""What the owner enqueues after a commit: cognify work for new or stale frames.

Called by the host's commit hook with the ops it just committed and their results. New frames
of ``save_frames``/``harvest_batch`` become cognify jobs (their text is in the op); frames the
reconcile sweep found stale, and all frames after a re-embed, are read back from the mind.
Saved frames and ingested documents are ``interactive`` (somebody waits for them), everything
else ``bulk`` (:mod:`workers.fairness`). New frames a one-shot process handed to another process
to index are left out (:mod:`actors.handoff`), and so are stale frames a resumption of the
mind's backlog in this process queues anyway (:mod:`workers.backlog`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from pydantic import ConfigDict, TypeAdapter

from actors.actor import Duplicate
from actors.results import FramesSaved, Reconciled, expect
from mind.frames.content_hash import hash_frame_content
from mind.frames.outbox import Outbox
from mind.mind import Mind
from queue_schemas import jobs, ops
from queue_schemas.vector import Fingerprint
from vocabulary.enums import JobPriority
from workers.constants import COGNIFY_BATCH_FRAMES

Job = jobs.CognifyJob | jobs.ReembedJob


def _batches(items: list[jobs.CognifyItem], size: int) -> list[list[jobs.CognifyItem]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


_ITEMS: Final = TypeAdapter(list[jobs.CognifyItem], config=ConfigDict(defer_build=True))


def new_frame_items(op: ops.SaveFrames | ops.HarvestBatch, result: FramesSaved) -> list[
    jobs.CognifyItem
]:
    """The new frames' items, checked in one call rather than built one by one (a quarter less
    time on the commit path, where an import's commits make a thousand at a time)."""
    return _ITEMS.validate_python([
        {"frame_id": saved.id, "content": frame_op.content,
         "content_hash": saved.content_hash or hash_frame_content(frame_op.content),
         "importance": frame_op.importance}
        for frame_op, saved in zip(op.frames, result.frames, strict=True) if saved.created])


async def pending_items(mind: Mind, frame_ids: Sequence[int] | None = None) -> list[
    jobs.CognifyItem
]:
    """Items for frames still pending in the outbox (all of them, or the given ids)."""
    if frame_ids is None:
        frame_ids = [p.frame_id for p in await Outbox(mind.db).pending(1_000_000)]
    frames = await mind.frames.get_many(frame_ids)
    return [
        jobs.CognifyItem(frame_id=f.id, content=f.content, content_hash=f.content_hash,
                         importance=f.importance)
        for f in frames.values()
    ]


async def fingerprint_hint(reader: Mind) -> Fingerprint | None:
    fp = await reader.vectors.fingerprint()
    return Fingerprint(provider=fp.provider, model=fp.model, dim=fp.dim) if fp else None


def cognify_jobs(
    mind_id: str, items: list[jobs.CognifyItem], hint: Fingerprint | None, batch: int,
    priority: JobPriority = "bulk",
) -> list[jobs.CognifyJob]:
    unique = list({i.frame_id: i for i in items}.values())
    return [
        jobs.CognifyJob(mind_id=mind_id, items=part, fingerprint_hint=hint, priority=priority)
        for part in _batches(unique, batch)
    ]


async def followup_jobs(
    mind_id: str,
    committed: Sequence[tuple[Any, Any]],
    reader: Mind,
    *,
    batch: int = COGNIFY_BATCH_FRAMES,
    handed: frozenset[int] = frozenset(),
    resuming: Callable[[str, int], bool] | None = None,
) -> list[Job]:
    """``resuming(mind_id, frame_id)``: whether a resumption running in this process queues
    the frame anyway (:meth:`workers.backlog.Backlogs.covers`)."""
    saved: list[jobs.CognifyItem] = []  # somebody waits for these: interactive
    new: list[jobs.CognifyItem] = []
    out: list[Job] = []
    for op, result in committed:
        if isinstance(result, Duplicate):  # applied before: its follow-ups were sent then
            continue
        if isinstance(op, ops.SaveFrames | ops.HarvestBatch):
            urgent = isinstance(op, ops.SaveFrames) or op.priority == "interactive"
            (saved if urgent else new).extend(
                item for item in new_frame_items(op, expect(result, FramesSaved))
                if item.frame_id not in handed)
        elif isinstance(op, ops.Reconcile):
            requeue = [frame for frame in expect(result, Reconciled).requeue
                       if resuming is None or not resuming(mind_id, frame)]
            if requeue:
                new.extend(await pending_items(reader, requeue))
        elif isinstance(op, ops.Reembed):
            target = Fingerprint(provider=op.provider, model=op.model, dim=op.dim)
            for part in _batches(await pending_items(reader), batch):
                out.append(jobs.ReembedJob(mind_id=mind_id, items=part, fingerprint=target))
    if saved or new:
        hint = await fingerprint_hint(reader)
        out[:0] = cognify_jobs(mind_id, saved, hint, batch, "interactive")
        out.extend(cognify_jobs(mind_id, new, hint, batch))
    return out
