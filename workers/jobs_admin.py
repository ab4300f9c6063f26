"""What ``hive-mind jobs`` shows and does: queued, running and failed jobs per mind, and the
retry or drop of dead letters — in both modes, through the runtime the facade holds.

* **embedded**: queued and running jobs are this process's own runner's (a CLI invocation
  starts with none); ``pending_index`` per mind is what every process still has to index (the
  outbox is the truth); dead letters are the data dir's file (:class:`DeadLetterFile`), shared
  by the CLI, ``serve`` and ``mcp``. A retry rebuilds the job — an index job from its frames
  still pending (frames indexed meanwhile are left out), a scheduled task from its per-day id —
  and runs it in this process.
* **distributed**: the arq queues (``COGNIFY_QUEUE`` and this host's queue; per-mind counts
  over the first :data:`SAMPLE` queued jobs of each), jobs in progress, and the dead-letter
  list; a retry re-enqueues the stored payload under a fresh arq job id.

Dead-letter ids are validated (:func:`workers.dead_letters.validate_id`) before any lookup.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from mind.errors import NotFoundError, ValidationError
from workers.dead_letters import validate_id
from workers.jobs_shapes import (
    LISTED,
    Dropped,
    JobRow,
    JobsReport,
    LetterRow,
    MindJobs,
    Retried,
)
from workers.protocol import Runtime


def _targets(dead_letter_id: str | None, all_failed: bool) -> list[str] | None:
    if (dead_letter_id is None) == (not all_failed):
        raise ValidationError("give one dead letter id or --all (all=true), not both")
    return None if all_failed else [validate_id(dead_letter_id)]


def job_row(job_id: str, kind: str, mind_id: str | None) -> JobRow:
    return {"job_id": job_id, "kind": kind, "mind_id": mind_id}


def letter_row(entry: dict[str, Any], retryable: bool) -> LetterRow:
    return {"id": entry.get("id"), "job_id": entry.get("job_id"),
            "kind": entry.get("kind") or entry.get("function"), "mind_id": entry.get("mind_id"),
            "error": entry.get("error"), "tries": entry.get("tries"), "at": entry.get("at"),
            "retryable": retryable}


async def assemble(runtime: Runtime, mode: str, queued: list[JobRow], queued_total: int,
                   running: list[JobRow], letters: list[LetterRow], letters_total: int,
                   letters_by_mind: dict[str, int]) -> JobsReport:
    """The report: every mind here (an unreadable one is reported, not a failed report) and
    every mind a job or a dead letter names, with its counts."""
    ids = runtime.list_minds()
    counts = await runtime.census(ids)
    queued_by = Counter(str(job.get("mind_id") or "unknown") for job in queued)
    running_by = Counter(str(job.get("mind_id") or "unknown") for job in running)
    here = set(ids)
    minds: list[MindJobs] = []
    for mind_id in dict.fromkeys([*ids, *queued_by, *running_by, *letters_by_mind]):
        known = counts.get(mind_id)
        row: MindJobs = {"id": mind_id,
                         "pending_index": None if known is None else known.pending_index,
                         "queued": queued_by[mind_id], "running": running_by[mind_id],
                         "dead_letters": letters_by_mind.get(mind_id, 0)}
        if mind_id in here and known is None:
            row["error"] = "the mind file could not be read (see the log)"
        minds.append(row)
    return {"mode": mode, "queued": queued_total, "running": len(running),
            "dead_letters": letters_total, "minds": minds,
            "queued_jobs": queued[:LISTED], "running_jobs": running[:LISTED],
            "failures": letters[:LISTED]}


# -- through the runtime's job queue (workers.protocol.JobQueue) ----------------------------

async def jobs_report(runtime: Runtime) -> JobsReport:
    """Queued, running and failed jobs per mind (see the module docstring)."""
    return await runtime.job_queue().report()


async def retry(runtime: Runtime, dead_letter_id: str | None = None, *,
                all_failed: bool = False) -> Retried:
    """Run dead letters again; a single unknown id is :class:`NotFoundError`."""
    ids = _targets(dead_letter_id, all_failed)
    results = await runtime.job_queue().retry(ids)
    if ids is not None and not results:
        raise NotFoundError(f"dead letter {ids[0]} not found (or it cannot be retried: "
                            "see hive-mind jobs)")
    return {"retried": results, "count": len(results)}


async def drop(runtime: Runtime, dead_letter_id: str | None = None, *,
               all_failed: bool = False) -> Dropped:
    """Forget dead letters (their frames, if any, stay in the outbox for a reconcile)."""
    ids = _targets(dead_letter_id, all_failed)
    dropped = await runtime.job_queue().drop(ids)
    if ids is not None and not dropped:
        raise NotFoundError(f"dead letter {ids[0]} not found")
    return {"dropped": dropped, "count": len(dropped)}
