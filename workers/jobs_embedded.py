"""The job queue of an embedded runtime (:mod:`workers.jobs_admin` has the report's shape):
queued and running jobs are this process's own runner's (a CLI invocation starts with none);
``pending_index`` per mind is what every process still has to index (the outbox is the truth);
dead letters are the data dir's file (:class:`~workers.dead_letters.DeadLetterFile`), shared
by the CLI, ``serve`` and ``mcp``. A retry rebuilds the job — an index job from its frames
still pending (frames indexed meanwhile are left out), a scheduled task from its per-day id —
and runs it in this process."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from mind.frames.outbox import Outbox
from mind.mind import Mind
from queue_schemas import jobs
from queue_schemas.vector import Fingerprint
from vocabulary.enums import JobPriority
from workers.dead_letters import DeadLetterFile, error_text, new_id
from workers.followups import fingerprint_hint, pending_items
from workers.jobs_admin import assemble, job_row, letter_row
from workers.jobs_shapes import JobsReport, Row
from workers.protocol import Runtime
from workers.runner import InProcessRunner
from workers.schedule import TASKS, DailyJob
from workers.scheduler import in_process


@dataclass(frozen=True, slots=True)
class EmbeddedJobs:
    """:class:`workers.protocol.JobQueue` of an embedded runtime."""

    runtime: Runtime
    runner: InProcessRunner
    data_dir: Path

    async def report(self) -> JobsReport:
        return await _report(self)

    async def retry(self, ids: list[str] | None) -> list[Row]:
        return await _retry(self, ids)

    async def drop(self, ids: list[str] | None) -> list[str]:
        dropped = [str(e.get("id")) for e in DeadLetterFile(self.data_dir).take(ids)]
        self.runner.forget(None if ids is None else set(ids))
        return dropped


async def _report(queue: EmbeddedJobs) -> JobsReport:
    runtime = queue.runtime
    waiting = [job_row(j.op_id, j.kind, j.mind_id) for j in queue.runner.waiting_jobs()]
    running = [job_row(j.op_id, j.kind, j.mind_id) for j in queue.runner.running_jobs()]
    entries = DeadLetterFile(queue.data_dir).entries()
    by_mind: dict[str, int] = {}
    for entry in entries:
        key = str(entry.get("mind_id") or "unknown")
        by_mind[key] = by_mind.get(key, 0) + 1
    report = await assemble(runtime, "embedded", waiting, len(waiting), running,
                             [letter_row(e, _file_retryable(e)) for e in entries],
                             len(entries), by_mind)
    report["note"] = ("queued and running are this process's jobs; pending_index is what each "
                      "mind still has to index, whichever process wrote it")
    return report


def _file_retryable(entry: dict[str, Any]) -> bool:
    kind = entry.get("kind")
    return (kind in ("cognify", "reembed") and bool(entry.get("frame_ids"))) or \
        (kind in TASKS and bool(entry.get("day")))


async def _retry(queue: EmbeddedJobs, ids: list[str] | None) -> list[Row]:
    store = DeadLetterFile(queue.data_dir)
    wanted = [str(e["id"]) for e in store.entries()
              if (ids is None or e.get("id") in ids) and _file_retryable(e)]
    if not wanted:
        return []
    taken = store.take(wanted)
    queue.runner.forget(set(wanted))
    return [await _rerun(queue, store, entry) for entry in taken]


async def _rerun(queue: EmbeddedJobs, store: DeadLetterFile, entry: dict[str, Any]) -> Row:
    runtime = queue.runtime
    out: Row = {"id": entry["id"], "job_id": entry.get("job_id")}
    mind_id = str(entry.get("mind_id"))
    if not runtime.exists(mind_id):
        return {**out, "status": "mind_gone"}
    kind = entry.get("kind")
    if kind in TASKS:
        job = DailyJob(str(kind), mind_id, date.fromisoformat(str(entry["day"])))
        try:
            result = await in_process(runtime)(job)
        except Exception as exc:
            store.add({**entry, "id": new_id(), "error": error_text(exc),
                       "tries": int(entry.get("tries") or 1) + 1})
            return {**out, "status": "failed", "error": error_text(exc)}
        return {**out, "status": "done", "result": result}
    async with runtime.lease(mind_id, create=False) as reader:
        items = await pending_items(reader, await still_pending(
            reader, {int(i) for i in entry.get("frame_ids", [])}))
    if not items:
        return {**out, "status": "nothing_pending"}  # indexed meanwhile
    rebuilt: jobs.CognifyJob | jobs.ReembedJob
    if kind == "reembed":
        rebuilt = jobs.ReembedJob(mind_id=mind_id, items=items,
                                  fingerprint=Fingerprint(**entry["fingerprint"]))
    else:
        priority: JobPriority = "interactive" if entry.get("priority") == "interactive" \
            else "bulk"
        rebuilt = jobs.CognifyJob(mind_id=mind_id, items=items, priority=priority,
                                  fingerprint_hint=await fingerprint_hint(reader))
    await queue.runner.dispatch(rebuilt)
    return {**out, "status": "queued", "frames": len(items)}


async def still_pending(reader: Mind, frame_ids: set[int]) -> list[int]:
    """Which of ``frame_ids`` the outbox still holds (a walk over the pending rows between the
    smallest and the largest id only)."""
    if not frame_ids:
        return []
    outbox, found, after = Outbox(reader.db), [], min(frame_ids) - 1
    while after < max(frame_ids):
        rows = await outbox.pending(1000, after_id=after)
        if not rows:
            break
        found += [r.frame_id for r in rows if r.frame_id in frame_ids]
        after = rows[-1].frame_id
    return found
