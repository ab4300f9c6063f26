"""Redis (arq) plumbing shared by the worker and the host: pools, enqueueing, dead letters,
and the queue status ops read (depth, in-progress jobs, dead letters).

arq delivers at least once; every job is idempotent (job ids dedupe enqueues, op ids dedupe
applies) and the mind's outbox is the source of truth for what still needs indexing.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from arq import Retry
from arq.connections import ArqRedis, RedisSettings, create_pool

from actors.placement import ShardMap
from mind.errors import HiveMindError
from mind.redact import mask_text, mask_url
from queue_schemas.codec import deserialize, serialize
from queue_schemas.constants import COGNIFY_QUEUE, DEAD_LETTERS_KEY, host_queue
from queue_schemas.errors import PayloadError
from vocabulary.enums import JOB_PRIORITIES
from workers import metrics
from workers.dead_letters import record_redis
from workers.fairness import BAND_BOUNDS

log = logging.getLogger(__name__)

JobFunction = Callable[..., Awaitable[Any]]  # (ctx, payload, *signature)


class QueueUnavailableError(HiveMindError):
    code = "queue_unavailable"
    status = 503


@dataclass
class QueueConfig:
    redis_url: str
    host_id: str = "local"
    max_jobs: int = 32
    job_timeout: int = 120
    max_tries: int = 5
    retry_backoff: float = 2.0
    shards: ShardMap | None = None  # sharded (issue #17): a mind's results go to its owner
    cluster_key: str | None = None  # signs the write-ops enqueued (workers/op_auth.py)

    def owner_of(self, mind_id: str) -> str:
        """The host whose queue takes ``mind_id``'s write-ops: its shard's, else this
        deployment's one host."""
        return self.host_id if self.shards is None else self.shards.owner(mind_id)


def redis_settings(url: str) -> RedisSettings:
    settings = RedisSettings.from_dsn(url)
    settings.conn_timeout = 2
    settings.conn_retries = 2
    return settings


async def connect(url: str) -> ArqRedis:
    try:
        return await create_pool(
            redis_settings(url), job_serializer=serialize, job_deserializer=deserialize
        )
    except Exception as exc:
        raise QueueUnavailableError(f"cannot reach Redis at {mask_url(url)}: {exc}") from exc


def guarded(fn: JobFunction, name: str, max_tries: int, backoff: float, *,
            queue: str | None = None) -> JobFunction:
    """Retry transient failures with back-off; dead-letter bad payloads and exhausted jobs
    (with their payload, so ``hive-mind jobs retry`` can send them to ``queue`` again).

    The back-off is waited out inside the job, then arq retries it with no defer: a defer
    would give it a wall-clock score, behind every job of the priority bands
    (:mod:`workers.fairness`); without one it keeps its place in the queue."""

    async def dead_letter(ctx: dict[str, Any], payload: Any, error: str, tries: int,
                          extra: tuple[Any, ...]) -> None:
        await record_redis(ctx["redis"], job_id=str(ctx.get("job_id", "?")), function=name,
                           queue=queue, payload=payload, error=mask_text(error), tries=tries,
                           signature=extra[0] if extra else None)

    async def run(ctx: dict[str, Any], payload: dict[str, Any], *extra: Any) -> Any:
        tries = int(ctx.get("job_try", 1))
        priority = payload.get("priority") if isinstance(payload, dict) else None
        band = priority if priority in JOB_PRIORITIES else "none"  # bounded label values
        started = metrics.job_started(name, band)
        try:
            result = await fn(ctx, payload, *extra)
            metrics.job_ended(name, band, started, ok=True)
            return result
        except PayloadError as exc:  # a payload we must never execute: no retries
            metrics.job_ended(name, band, started, ok=False)
            metrics.JOBS_DEAD_LETTERED.labels(name).inc()
            await dead_letter(ctx, payload, f"PayloadError: {exc}", tries, extra)
            log.error("job %s %s rejected: %s", name, ctx.get("job_id"), exc)
            return {"rejected": str(exc)}
        except Exception as exc:
            metrics.job_ended(name, band, started, ok=False)
            if tries >= max_tries:
                metrics.JOBS_DEAD_LETTERED.labels(name).inc()
                log.exception("job %s %s failed for good after %d tries", name,
                              ctx.get("job_id"), tries)
                await dead_letter(ctx, payload, f"{type(exc).__name__}: {exc}", tries, extra)
                return {"failed": str(exc)}
            log.warning("job %s %s failed (try %d): %s", name, ctx.get("job_id"), tries, exc)
            await asyncio.sleep(backoff * tries)
            raise Retry() from exc

    run.__name__ = name
    run.__qualname__ = name
    return run


async def queue_status(redis: ArqRedis, host_ids: list[str]) -> dict[str, Any]:
    queues = [COGNIFY_QUEUE, *(host_queue(h) for h in host_ids)]
    depth = {q: int(await redis.zcard(q)) for q in queues}
    by_priority = {band: int(await redis.zcount(COGNIFY_QUEUE, low, high))
                   for band, (low, high) in BAND_BOUNDS.items()}
    in_progress = 0
    async for _ in redis.scan_iter(match="arq:in-progress:*", count=1000):
        in_progress += 1
    dead = int(await redis.llen(DEAD_LETTERS_KEY))  # type: ignore[misc]
    recent = [json.loads(x) for x in await redis.lrange(DEAD_LETTERS_KEY, 0, 9)]  # type: ignore[misc]
    return {"depth": sum(depth.values()), "queues": depth, "by_priority": by_priority,
            "in_progress": in_progress,
            "dead_letters": dead, "dead_letters_by_mind": await dead_letters_by_mind(redis),
            "recent_dead_letters": recent}


async def dead_letters_by_mind(redis: ArqRedis) -> dict[str, int]:
    """How many dead-lettered jobs each mind has (the list is capped, so this is cheap)."""
    counts: dict[str, int] = {}
    for raw in await redis.lrange(DEAD_LETTERS_KEY, 0, -1):  # type: ignore[misc]
        try:
            mind = json.loads(raw).get("mind_id") or "unknown"
        except (ValueError, AttributeError):
            mind = "unknown"
        counts[mind] = counts.get(mind, 0) + 1
    return counts
