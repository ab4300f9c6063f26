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

from datetime import date
from typing import Any, Final

from arq.constants import in_progress_key_prefix, job_key_prefix
from arq.jobs import deserialize_job

from mind.errors import NotFoundError, ValidationError
from mind.frames.outbox import Outbox
from mind.mind import Mind
from queue_schemas import jobs
from queue_schemas.codec import deserialize
from queue_schemas.constants import COGNIFY_QUEUE, DEAD_LETTERS_KEY, HOST_QUEUE_PREFIX, host_queue
from queue_schemas.vector import Fingerprint
from vocabulary.enums import JobPriority
from vocabulary.ids import HOST_ID_RE
from workers.dead_letters import (
    DeadLetterFile,
    error_text,
    new_id,
    payload_key,
    redis_entries,
    redis_restore,
    redis_take,
    validate_id,
)
from workers.fairness import defer_by
from workers.followups import fingerprint_hint, pending_items
from workers.host_runtime import HostRuntime
from workers.queue import dead_letters_by_mind
from workers.runtime import EmbeddedRuntime
from workers.schedule import TASKS, DailyJob
from workers.scheduler import in_process
from workers.wake import notify

SAMPLE: Final = 500  # queued jobs per queue read for the per-mind counts (distributed)
LISTED: Final = 100  # jobs and dead letters listed in full
HOST_FUNCTIONS: Final = ("apply_op", "harvest_sync", "maintenance_now")


def _targets(dead_letter_id: str | None, all_failed: bool) -> list[str] | None:
    if (dead_letter_id is None) == (not all_failed):
        raise ValidationError("give one dead letter id or --all (all=true), not both")
    return None if all_failed else [validate_id(dead_letter_id)]


def _job_row(job_id: str, kind: str, mind_id: str | None) -> dict[str, Any]:
    return {"job_id": job_id, "kind": kind, "mind_id": mind_id}


def _letter_row(entry: dict[str, Any], retryable: bool) -> dict[str, Any]:
    return {"id": entry.get("id"), "job_id": entry.get("job_id"),
            "kind": entry.get("kind") or entry.get("function"), "mind_id": entry.get("mind_id"),
            "error": entry.get("error"), "tries": entry.get("tries"), "at": entry.get("at"),
            "retryable": retryable}


async def _assemble(runtime: Any, mode: str, queued: list[dict[str, Any]], queued_total: int,
                    running: list[dict[str, Any]], letters: list[dict[str, Any]],
                    letters_total: int, letters_by_mind: dict[str, int]) -> dict[str, Any]:
    minds: dict[str, dict[str, Any]] = {}
    ids = runtime.list_minds()
    counts = await runtime.census(ids)  # an unreadable mind is reported, not a failed report
    for mind_id in ids:
        row: dict[str, Any] = {"id": mind_id, "pending_index": None, "queued": 0,
                               "running": 0, "dead_letters": 0}
        if mind_id in counts:
            row["pending_index"] = counts[mind_id].pending_index
        else:
            row["error"] = "the mind file could not be read (see the log)"
        minds[mind_id] = row

    def of(mind_id: Any) -> dict[str, Any]:
        key = str(mind_id or "unknown")
        return minds.setdefault(key, {"id": key, "pending_index": None, "queued": 0,
                                      "running": 0, "dead_letters": 0})

    for job in queued:
        of(job["mind_id"])["queued"] += 1
    for job in running:
        of(job["mind_id"])["running"] += 1
    for mind_id, count in letters_by_mind.items():
        of(mind_id)["dead_letters"] = count
    return {"mode": mode, "queued": queued_total, "running": len(running),
            "dead_letters": letters_total, "minds": list(minds.values()),
            "queued_jobs": queued[:LISTED], "running_jobs": running[:LISTED],
            "failures": letters[:LISTED]}


# -- report -----------------------------------------------------------------------------------

async def jobs_report(runtime: Any) -> dict[str, Any]:
    if isinstance(runtime, HostRuntime):
        return await _redis_report(runtime)
    if isinstance(runtime, EmbeddedRuntime):
        return await _embedded_report(runtime)
    raise ValidationError("this runtime has no job queue to report")


async def _embedded_report(runtime: EmbeddedRuntime) -> dict[str, Any]:
    waiting = [_job_row(j.op_id, j.kind, j.mind_id) for j in runtime.runner.waiting_jobs()]
    running = [_job_row(j.op_id, j.kind, j.mind_id) for j in runtime.runner.running_jobs()]
    entries = DeadLetterFile(runtime.config.data_dir).entries()
    by_mind: dict[str, int] = {}
    for entry in entries:
        key = str(entry.get("mind_id") or "unknown")
        by_mind[key] = by_mind.get(key, 0) + 1
    report = await _assemble(runtime, "embedded", waiting, len(waiting), running,
                             [_letter_row(e, _file_retryable(e)) for e in entries],
                             len(entries), by_mind)
    report["note"] = ("queued and running are this process's jobs; pending_index is what each "
                      "mind still has to index, whichever process wrote it")
    return report


async def _redis_report(runtime: HostRuntime) -> dict[str, Any]:
    redis = runtime.redis
    queued: list[dict[str, Any]] = []
    total = 0
    for queue in (COGNIFY_QUEUE, host_queue(runtime.queue.host_id)):
        total += int(await redis.zcard(queue))
        queued += await _describe(redis, [i.decode() for i in await redis.zrange(queue, 0,
                                                                                  SAMPLE - 1)])
    ids = [key.decode()[len(in_progress_key_prefix):] async for key in
           redis.scan_iter(match=in_progress_key_prefix + "*", count=1000)]
    running = await _describe(redis, ids)
    entries = [e for _, e in await redis_entries(redis, LISTED)]
    letters = [_letter_row(e, await _redis_retryable(redis, e)) for e in entries]
    report = await _assemble(runtime, "distributed", queued, total, running, letters,
                             int(await redis.llen(DEAD_LETTERS_KEY)),  # type: ignore[misc]
                             await dead_letters_by_mind(redis))
    report["note"] = (f"per-mind queued counts cover the first {SAMPLE} jobs of each queue "
                      f"({len(queued)} read); running counts every worker's jobs")
    return report


async def _describe(redis: Any, ids: list[str]) -> list[dict[str, Any]]:
    if not ids:
        return []
    raws = await redis.mget([job_key_prefix + i for i in ids])
    out = []
    for job_id, raw in zip(ids, raws, strict=True):
        if raw is None:
            continue  # finished meanwhile
        try:
            job = deserialize_job(raw, deserializer=deserialize)
        except Exception:
            out.append(_job_row(job_id, "unreadable", None))
            continue
        payload = job.args[0] if job.args and isinstance(job.args[0], dict) else {}
        out.append(_job_row(job_id, job.function, payload.get("mind_id")))
    return out


# -- retry and drop ---------------------------------------------------------------------------

def _file_retryable(entry: dict[str, Any]) -> bool:
    kind = entry.get("kind")
    return (kind in ("cognify", "reembed") and bool(entry.get("frame_ids"))) or \
        (kind in TASKS and bool(entry.get("day")))


def _redis_queue(entry: dict[str, Any]) -> str | None:
    """The queue a stored dead letter may go back to (None: not retryable)."""
    function, queue = entry.get("function"), entry.get("queue")
    if not isinstance(queue, str) or not isinstance(entry.get("id"), str):
        return None
    if function == "cognify" and queue == COGNIFY_QUEUE:
        return queue
    host = queue[len(HOST_QUEUE_PREFIX):] if queue.startswith(HOST_QUEUE_PREFIX) else ""
    if function in HOST_FUNCTIONS and HOST_ID_RE.fullmatch(host):
        return queue
    return None


async def _redis_retryable(redis: Any, entry: dict[str, Any]) -> bool:
    if _redis_queue(entry) is None:
        return False
    try:
        return bool(await redis.exists(payload_key(entry["id"])))
    except ValidationError:
        return False


async def retry(runtime: Any, dead_letter_id: str | None = None, *,
                all_failed: bool = False) -> dict[str, Any]:
    """Run dead letters again; a single unknown id is :class:`NotFoundError`."""
    ids = _targets(dead_letter_id, all_failed)
    if isinstance(runtime, HostRuntime):
        results = await _redis_retry(runtime, ids)
    elif isinstance(runtime, EmbeddedRuntime):
        results = await _embedded_retry(runtime, ids)
    else:
        raise ValidationError("this runtime has no job queue")
    if ids is not None and not results:
        raise NotFoundError(f"dead letter {ids[0]} not found (or it cannot be retried: "
                            "see hive-mind jobs)")
    return {"retried": results, "count": len(results)}


async def drop(runtime: Any, dead_letter_id: str | None = None, *,
               all_failed: bool = False) -> dict[str, Any]:
    """Forget dead letters (their frames, if any, stay in the outbox for a reconcile)."""
    ids = _targets(dead_letter_id, all_failed)
    if isinstance(runtime, HostRuntime):
        dropped = [str(e.get("id")) for e, _ in await redis_take(runtime.redis, ids)]
    elif isinstance(runtime, EmbeddedRuntime):
        dropped = [str(e.get("id")) for e in DeadLetterFile(runtime.config.data_dir).take(ids)]
        runtime.runner.forget(None if ids is None else set(ids))
    else:
        raise ValidationError("this runtime has no job queue")
    if ids is not None and not dropped:
        raise NotFoundError(f"dead letter {ids[0]} not found")
    return {"dropped": dropped, "count": len(dropped)}


def _retry_place(queue: str, payload: Any) -> Any:
    """A retried cognify job goes back to its band (a bulk one at the front of the bulk band);
    a host op, to the present."""
    if queue != COGNIFY_QUEUE:
        return None
    urgent = isinstance(payload, dict) and payload.get("priority") == "interactive"
    return defer_by("interactive" if urgent else "bulk")


async def _redis_retry(runtime: HostRuntime, ids: list[str] | None) -> list[dict[str, Any]]:
    redis = runtime.redis
    wanted = [str(e["id"]) for _, e in await redis_entries(redis)
              if (ids is None or e.get("id") in ids) and await _redis_retryable(redis, e)]
    if not wanted:
        return []
    out = []
    for entry, payload in await redis_take(redis, wanted):
        queue = _redis_queue(entry)
        if payload is None or queue is None:  # expired between the look and the take
            await redis_restore(redis, entry, payload)
            continue
        try:
            signed = (entry["signature"],) if isinstance(entry.get("signature"), str) else ()
            await redis.enqueue_job(str(entry["function"]), payload, *signed,
                                    _job_id=f"retry-{new_id()}", _queue_name=queue,
                                    _expires=7 * 24 * 3600,
                                    _defer_by=_retry_place(queue, payload))
        except Exception:
            await redis_restore(redis, entry, payload)
            raise
        await notify(redis, queue)
        out.append({"id": entry["id"], "job_id": entry.get("job_id"), "status": "queued"})
    return out


async def _embedded_retry(runtime: EmbeddedRuntime, ids: list[str] | None
                          ) -> list[dict[str, Any]]:
    store = DeadLetterFile(runtime.config.data_dir)
    wanted = [str(e["id"]) for e in store.entries()
              if (ids is None or e.get("id") in ids) and _file_retryable(e)]
    if not wanted:
        return []
    taken = store.take(wanted)
    runtime.runner.forget(set(wanted))
    return [await _rerun(runtime, store, entry) for entry in taken]


async def _rerun(runtime: EmbeddedRuntime, store: DeadLetterFile, entry: dict[str, Any]
                 ) -> dict[str, Any]:
    out: dict[str, Any] = {"id": entry["id"], "job_id": entry.get("job_id")}
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
    await runtime.runner.dispatch(rebuilt)
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
