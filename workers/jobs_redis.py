"""The job queue of a distributed host (:mod:`workers.jobs_admin` has the report's shape): the
arq queues (``COGNIFY_QUEUE`` and this host's queue; per-mind counts over the first
:data:`SAMPLE` queued jobs of each), jobs in progress, and the dead-letter list; a retry
re-enqueues the stored payload under a fresh arq job id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from arq.connections import ArqRedis
from arq.constants import in_progress_key_prefix, job_key_prefix
from arq.jobs import deserialize_job

from mind.errors import ValidationError
from queue_schemas.codec import deserialize
from queue_schemas.constants import COGNIFY_QUEUE, DEAD_LETTERS_KEY, HOST_QUEUE_PREFIX, host_queue
from vocabulary.ids import HOST_ID_RE
from workers.dead_letters import new_id, payload_key, redis_entries, redis_restore, redis_take
from workers.fairness import defer_by
from workers.jobs_admin import assemble, job_row, letter_row
from workers.jobs_shapes import LISTED, JobRow, JobsReport, Row
from workers.protocol import Runtime
from workers.queue import dead_letters_by_mind
from workers.wake import notify

SAMPLE: Final = 500  # queued jobs per queue read for the per-mind counts
HOST_FUNCTIONS: Final = ("apply_op", "harvest_sync", "maintenance_now")


@dataclass(frozen=True, slots=True)
class RedisJobs:
    """:class:`workers.protocol.JobQueue` of a host on Redis."""

    runtime: Runtime
    redis: ArqRedis
    host_id: str

    async def report(self) -> JobsReport:
        return await _report(self)

    async def retry(self, ids: list[str] | None) -> list[Row]:
        return await _retry(self.redis, ids)

    async def drop(self, ids: list[str] | None) -> list[str]:
        return [str(e.get("id")) for e, _ in await redis_take(self.redis, ids)]


async def _report(jobs: RedisJobs) -> JobsReport:
    redis = jobs.redis
    queued: list[JobRow] = []
    total = 0
    for queue in (COGNIFY_QUEUE, host_queue(jobs.host_id)):
        total += int(await redis.zcard(queue))
        queued += await _describe(redis, [i.decode() for i in await redis.zrange(queue, 0,
                                                                                  SAMPLE - 1)])
    ids = [key.decode()[len(in_progress_key_prefix):] async for key in
           redis.scan_iter(match=in_progress_key_prefix + "*", count=1000)]
    running = await _describe(redis, ids)
    entries = [e for _, e in await redis_entries(redis, LISTED)]
    letters = [letter_row(e, await _redis_retryable(redis, e)) for e in entries]
    report = await assemble(jobs.runtime, "distributed", queued, total, running, letters,
                             int(await redis.llen(DEAD_LETTERS_KEY)),  # type: ignore[misc]
                             await dead_letters_by_mind(redis))
    report["note"] = (f"per-mind queued counts cover the first {SAMPLE} jobs of each queue "
                      f"({len(queued)} read); running counts every worker's jobs")
    return report


async def _describe(redis: ArqRedis, ids: list[str]) -> list[JobRow]:
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
            out.append(job_row(job_id, "unreadable", None))
            continue
        payload = job.args[0] if job.args and isinstance(job.args[0], dict) else {}
        out.append(job_row(job_id, job.function, payload.get("mind_id")))
    return out


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


async def _redis_retryable(redis: ArqRedis, entry: dict[str, Any]) -> bool:
    if _redis_queue(entry) is None:
        return False
    try:
        return bool(await redis.exists(payload_key(entry["id"])))
    except ValidationError:
        return False


def _retry_place(queue: str, payload: Any) -> Any:
    """A retried cognify job goes back to its band (a bulk one at the front of the bulk band);
    a host op, to the present."""
    if queue != COGNIFY_QUEUE:
        return None
    urgent = isinstance(payload, dict) and payload.get("priority") == "interactive"
    return defer_by("interactive" if urgent else "bulk")


async def _retry(redis: ArqRedis, ids: list[str] | None) -> list[Row]:
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
