"""What the owner enqueues after a commit, and the jobs for frames waiting in the outbox.

Called by the host's commit hook (:meth:`workers.backlog.Backlogs.on_commit`) with the ops it
just committed and their results: new frames of ``save_frames``/``harvest_batch`` become
cognify jobs (their text is in the op). Saved frames and ingested documents are
``interactive`` (somebody waits for them), everything else ``bulk`` (:mod:`workers.fairness`).
New frames a one-shot process handed to another process to index are left out
(:mod:`actors.handoff`). What a commit put back in the outbox — every frame after a re-embed,
the stale frames a reconcile found — is read back a piece at a time by :mod:`workers.backlog`,
which makes its jobs with :func:`outbox_jobs`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from pydantic import ConfigDict, TypeAdapter

from actors.actor import Duplicate
from actors.results import FramesSaved, expect
from mind.constants import OUTBOX_REEMBED
from mind.frames.content_hash import hash_frame_content
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


async def pending_items(mind: Mind, frame_ids: Sequence[int]) -> list[jobs.CognifyItem]:
    """Items for the frames ``frame_ids`` (those that still exist), with their content."""
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


async def outbox_jobs(mind_id: str, reader: Mind, waiting: Mapping[int, str], batch: int
                      ) -> list[Job]:
    """The bulk jobs of frames waiting in the outbox (frame id → reason: a piece of a
    backlog): those a re-embed queued become re-embed jobs (embedding only: their knowledge
    graph is kept), the others cognify jobs."""
    hint = await fingerprint_hint(reader)
    index: list[jobs.CognifyItem] = []
    embed: list[jobs.CognifyItem] = []
    for item in await pending_items(reader, list(waiting)):
        again = hint is not None and waiting[item.frame_id] == OUTBOX_REEMBED
        (embed if again else index).append(item)
    out: list[Job] = list(cognify_jobs(mind_id, index, hint, batch))
    if hint is not None:
        out.extend(jobs.ReembedJob(mind_id=mind_id, items=part, fingerprint=hint)
                   for part in _batches(embed, batch))
    return out


async def followup_jobs(
    mind_id: str,
    committed: Sequence[tuple[Any, Any]],
    reader: Mind,
    *,
    batch: int = COGNIFY_BATCH_FRAMES,
    handed: frozenset[int] = frozenset(),
) -> list[jobs.CognifyJob]:
    """The cognify jobs of the frames a commit wrote (but ``handed``: another process
    indexes them)."""
    saved: list[jobs.CognifyItem] = []  # somebody waits for these: interactive
    new: list[jobs.CognifyItem] = []
    for op, result in committed:
        if isinstance(result, Duplicate):  # applied before: its follow-ups were sent then
            continue
        if isinstance(op, ops.SaveFrames | ops.HarvestBatch):
            urgent = isinstance(op, ops.SaveFrames) or op.priority == "interactive"
            (saved if urgent else new).extend(
                item for item in new_frame_items(op, expect(result, FramesSaved))
                if item.frame_id not in handed)
    if not saved and not new:
        return []
    hint = await fingerprint_hint(reader)
    return [*cognify_jobs(mind_id, saved, hint, batch, "interactive"),
            *cognify_jobs(mind_id, new, hint, batch)]
