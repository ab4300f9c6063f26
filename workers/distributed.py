"""arq settings for the two process kinds of the distributed mode.

* **worker** (``hive-mind worker``, any number, any machine): consumes ``COGNIFY_QUEUE``,
  never opens a mind file; each cognify job becomes an ``ApplyIndex`` op enqueued to the owning
  host's queue with the op id as job id.
* **host** (``hive-mind serve``): owns the mind files; consumes its own queue of write-ops
  (``apply_op``), runs the nightly maintenance fan-out (the schedule of
  :mod:`workers.schedule`, shared with the embedded processes: per-mind ``compact``,
  ``reconcile`` and ``harvest_sync`` of stale auto-sync sources, with per-day ids and claims: a
  double cron fire runs nothing twice), and enqueues cognify jobs after each commit. On start
  it sweeps every mind's outbox, so work lost with a crash or a Redis flush is re-sent — once:
  in ``serve`` the sweep is the facade runtime's
  (:meth:`workers.host_runtime.HostRuntime.consumer_settings`), which then sweeps no mind
  again on its first use.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from arq import cron
from arq.connections import ArqRedis
from arq.constants import job_key_prefix

from actors.actor import Duplicate
from actors.host import MindHost
from mind.embeddings.chain import EmbeddingProviderChain
from mind.embeddings.quota import EmbeddingQuotaExceededError
from mind.storage.fencing import FencedError
from queue_schemas import jobs
from queue_schemas.codec import deserialize, serialize
from queue_schemas.constants import COGNIFY_QUEUE, host_queue
from vocabulary.enums import JobPriority
from workers import metrics
from workers.backlog import Backlogs
from workers.batcher import EmbeddingBatcher
from workers.claims import ClaimStore
from workers.cognify import run_index_job
from workers.constants import BUSY_POLL_SECONDS, IDLE_POLL_SECONDS
from workers.fairness import BAND_BOUNDS, FairClock, defer_by, tag_of
from workers.followups import Job
from workers.op_auth import admitted, signature_of
from workers.queue import QueueConfig, guarded, redis_settings
from workers.runtime import RuntimeConfig, open_host
from workers.schedule import DailyJob, ScheduleConfig, start_offsets
from workers.scheduler import record_applied, run_day, summarize
from workers.usage import RedisUsage
from workers.wake import notify

log = logging.getLogger(__name__)


async def enqueue_job(redis: ArqRedis, job: jobs.CognifyJob | jobs.ReembedJob, *,
                      tag: float = 0.0) -> None:
    """Queue one job at its place (:mod:`workers.fairness`: ``tag`` orders bulk jobs); the
    caller wakes the workers once for all it queued (:func:`workers.wake.notify`)."""
    await redis.enqueue_job(
        "cognify", job.model_dump(mode="json"), _job_id=job.op_id, _queue_name=COGNIFY_QUEUE,
        _expires=7 * 24 * 3600, _defer_by=defer_by(job.priority, tag),
    )


async def enqueue_op(redis: ArqRedis, host_id: str, op: Any, *,
                     defer: float | None = None, priority: JobPriority | None = None,
                     forwarded: bool = False, key: str | None = None) -> None:
    """Queue a write-op for its host: at a wall-clock time (``defer`` seconds from now), or in
    the interactive band (the index op of an interactive job: ahead of a bulk import's).
    ``forwarded``: passed on by a host the mind left, while that host's job of the same op id
    still runs (arq drops a job whose id is in use): the job id names the new host too; the op
    id inside, which the mind dedupes on, is unchanged. ``key``: the deployment key the op is
    signed with (:mod:`workers.op_auth`)."""
    later = defer_by("interactive") if priority == "interactive" else defer
    job_id = f"{op.op_id}.to.{host_id}" if forwarded else op.op_id
    queue = host_queue(host_id)
    payload = op.model_dump(mode="json")
    await redis.enqueue_job(
        "apply_op", payload, signature_of(key, payload), _job_id=job_id, _queue_name=queue,
        _expires=7 * 24 * 3600, _defer_by=later,
    )
    await notify(redis, queue)


async def bulk_front(redis: ArqRedis) -> float | None:
    """The smallest bulk tag in the cognify queue (running jobs included), if any."""
    low, high = BAND_BOUNDS["bulk"]
    first = await redis.zrangebyscore(COGNIFY_QUEUE, low, high, start=0, num=1,
                                      withscores=True)
    return tag_of(first[0][1]) if first else None


class CognifyQueue:
    """Where a host process sends cognify jobs: ``COGNIFY_QUEUE``, in fair order. One per
    process (its :class:`FairClock` remembers each mind's last tag); ``redis`` may be set
    after construction (arq's startup hands it over)."""

    def __init__(self, redis: ArqRedis | None = None) -> None:
        self.redis = redis
        self.clock = FairClock()

    async def send(self, mind_id: str, queued: Sequence[Job]) -> None:
        if self.redis is None:
            raise RuntimeError("the cognify queue has no Redis connection yet")
        bulk = [job for job in queued if job.priority == "bulk"]
        tags: dict[str, float] = {}
        if bulk:
            front = await bulk_front(self.redis)
            costs = [len(job.items) for job in bulk]
            tags = dict(zip((job.op_id for job in bulk),
                            self.clock.tags(mind_id, costs, front=front), strict=True))
        for job in queued:
            await enqueue_job(self.redis, job, tag=tags.get(job.op_id, 0.0))
        if queued:
            await notify(self.redis, COGNIFY_QUEUE)

    async def settle(self, queued: list[Job], keep: int) -> list[Job]:
        """Wait until at most ``keep`` of ``queued`` (sent before) are unfinished — queued,
        running or waiting for a retry: arq keeps a job's key until it ends, retried or not —
        looking every :data:`BUSY_POLL_SECONDS`; those that are."""
        if self.redis is None:
            raise RuntimeError("the cognify queue has no Redis connection yet")
        while True:
            async with self.redis.pipeline(transaction=False) as pipe:
                for job in queued:
                    pipe.exists(job_key_prefix + job.op_id)
                alive = await pipe.execute()
            left = [job for job, there in zip(queued, alive, strict=True) if there]
            if len(left) <= keep:
                return left
            await asyncio.sleep(BUSY_POLL_SECONDS)


# -- worker ---------------------------------------------------------------------------------


async def cognify(ctx: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    job = jobs.parse_job(payload)
    try:
        op = await run_index_job(job, ctx["batcher"])
    except EmbeddingQuotaExceededError as exc:  # no retry helps before the quota resets: the
        # frames stay in the owner's outbox, its reconcile queues them again later
        log.warning("cognify %s of %s: %s", job.op_id, job.mind_id, exc)
        return {"op_id": job.op_id, "frames": 0, "error": exc.code}
    await enqueue_op(ctx["redis"], ctx["queue"].owner_of(job.mind_id), op,
                     priority=job.priority, key=ctx["queue"].cluster_key)
    return {"op_id": op.op_id, "frames": len(op.results)}


def worker_settings(queue: QueueConfig, runtime: RuntimeConfig) -> type:
    async def startup(ctx: dict[str, Any]) -> None:
        chain = EmbeddingProviderChain(runtime.embedding, usage=RedisUsage(ctx["redis"]))
        await chain.start()
        if chain.degraded:
            log.error("worker has no real embedder (%s); cognify jobs will fail", chain.last_error)
        ctx["embedder"] = chain
        ctx["batcher"] = EmbeddingBatcher(
            chain, max_items=runtime.batcher_max_items, max_tokens=runtime.batcher_max_tokens,
            max_wait=runtime.batcher_max_wait,
        )
        ctx["host_id"] = queue.host_id
        ctx["queue"] = queue
        ctx["sampler"] = asyncio.ensure_future(metrics.sample_forever(
            ctx["redis"], [COGNIFY_QUEUE, host_queue(queue.host_id)]))

    async def shutdown(ctx: dict[str, Any]) -> None:
        if "sampler" in ctx:
            ctx["sampler"].cancel()
        if "batcher" in ctx:
            await ctx["batcher"].close()
            await ctx["embedder"].close()

    return _settings_class("CognifyWorkerSettings", queue, COGNIFY_QUEUE, startup, shutdown, {
        "functions": [guarded(cognify, "cognify", queue.max_tries, queue.retry_backoff,
                              queue=COGNIFY_QUEUE)],
        "queue_read_limit": max(queue.max_jobs * 5, 200),
    })


def _settings_class(
    name: str, queue: QueueConfig, queue_name: str, startup: Any, shutdown: Any,
    extra: dict[str, Any],
) -> type:
    """An arq WorkerSettings class: JSON codec, short in-progress TTL, fast polling."""
    return type(name, (), {
        "queue_name": queue_name,
        "redis_settings": redis_settings(queue.redis_url),
        "job_serializer": serialize,
        "job_deserializer": deserialize,
        "on_startup": startup,
        "on_shutdown": shutdown,
        "max_jobs": queue.max_jobs,
        "job_timeout": queue.job_timeout,
        "max_tries": queue.max_tries + 1,
        "keep_result": 60,
        "health_check_interval": 30,
        "poll_delay": IDLE_POLL_SECONDS,
        **extra,
    })


# -- host -----------------------------------------------------------------------------------


async def apply_op(ctx: dict[str, Any], payload: dict[str, Any],
                   signature: str | None = None) -> Any:
    """Apply one write-op from the host's queue, if Redis may carry it
    (:mod:`workers.op_auth`: unsigned ops may only add to a mind)."""
    op = admitted(payload, signature, ctx.get("cluster_key"))
    create = op.kind in ("save_frames", "harvest_batch")
    try:
        result = await ctx["host"].submit(op.mind_id, op, create=create)
    except FencedError as exc:  # sharded: the map gives the mind to another shard, or it moved
        if exc.owner is None or exc.owner == ctx["host_id"]:
            raise  # arriving or stale here: retried, then a dead letter naming why
        await enqueue_op(ctx["redis"], exc.owner, op, forwarded=True,  # ops follow the mind
                         key=ctx.get("cluster_key"))
        log.info("op %s of %s forwarded to %s, its owner", op.op_id, op.mind_id, exc.owner)
        return {"forwarded": exc.owner}
    if op.kind in ("compact", "reconcile") and op.op_id:  # a scheduled job done: its claim
        record_applied(ctx["host"].data_dir, op.op_id, summarize(result))
    return {"duplicate": True} if isinstance(result, Duplicate) else result


async def maintenance_fanout(ctx: dict[str, Any]) -> dict[str, int]:
    """Enqueue today's scheduled jobs (:mod:`workers.schedule`: the configured tasks of every
    mind not skipped, per-day ids, claimed once per data dir), each mind's deferred to its
    start offset (:func:`workers.schedule.start_offsets`: spread over ``spread_minutes``,
    jittered, ``pause_seconds`` apart) so the host does not run every mind's at once."""
    host: MindHost = ctx["host"]
    schedule: ScheduleConfig = ctx.get("schedule") or ScheduleConfig()
    minds = [m for m in host.list_minds() if m not in schedule.skip_minds]
    today = datetime.now(UTC).date()
    delay = dict(zip(minds, start_offsets(minds, today, schedule), strict=True))

    async def enqueue(job: DailyJob) -> dict[str, Any]:
        defer = delay[job.mind_id] or None
        op = job.op()
        if op is not None:
            await enqueue_op(ctx["redis"], ctx["host_id"], op, defer=defer,
                             key=ctx.get("cluster_key"))
        else:
            queue = host_queue(ctx["host_id"])
            await ctx["redis"].enqueue_job(
                "harvest_sync", {"mind_id": job.mind_id}, _job_id=job.job_id,
                _queue_name=queue, _expires=24 * 3600, _defer_by=defer)
            await notify(ctx["redis"], queue)
        return {"deferred_seconds": defer or 0}

    run = await run_day(today, minds, replace(schedule, pause_seconds=0, spread_minutes=0),
                        ClaimStore(host.data_dir), enqueue, done="enqueued")
    return {"enqueued": run.ran}


async def harvest_sync(ctx: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    """Re-harvest a mind's auto-sync sources whose interval has passed (from the fan-out)."""
    from workers.harvest import harvest_stale

    mind_id = str(payload.get("mind_id", ""))
    results = await harvest_stale(ctx["host"], mind_id)
    record_applied(ctx["host"].data_dir, str(ctx.get("job_id", "")), {
        "sources": len(results), "failed": sum(1 for r in results if r.status == "failed")})
    return {"mind_id": mind_id, "synced": [r.status for r in results]}


async def maintenance_now(ctx: dict[str, Any], payload: dict[str, Any]) -> dict[str, int]:
    """The fan-out on demand (``hive-mind maintenance`` in distributed mode, tests)."""
    return await maintenance_fanout(ctx)


def host_settings(queue: QueueConfig, runtime: RuntimeConfig, *,
                  holder: dict[str, Any] | None = None,
                  host: MindHost | None = None,
                  startup_sweep: Callable[[], Awaitable[int]] | None = None,
                  schedule: ScheduleConfig | None = None) -> type:
    """``holder`` receives the MindHost, so the entry point can release it if arq's own
    shutdown fails (arq 0.28 can raise CancelledError from ``close()`` before ``on_shutdown``).

    ``host``: an existing MindHost to apply the ops with (``hive-mind serve`` shares the one of
    its facade's runtime, so a mind file has one writer per process); its owner closes it, not
    this worker, and ``startup_sweep`` is its owner's sweep (once per mind per process).
    Without them the worker opens and closes its own host and re-sends every mind's outbox, a
    piece at a time in the background (:mod:`workers.backlog`).

    ``schedule``: the nightly maintenance (default: 03:17 UTC, every task, every mind);
    disabled, no cron runs."""
    shared = host
    schedule = schedule or ScheduleConfig()

    async def startup(ctx: dict[str, Any]) -> None:
        host, sweep = shared, startup_sweep
        if host is None:
            cognify = CognifyQueue(ctx["redis"])
            backlogs = ctx["backlogs"] = Backlogs(
                lambda mind_id: own.lease(mind_id, create=False), cognify.send,
                cognify.settle, runtime.cognify_batch, piece=runtime.backlog_piece)
            own = host = open_host(runtime, backlogs.on_commit)
            sweep = sweep or (lambda: backlogs.resume_all(own.list_minds()))
        ctx["host"] = host
        ctx["host_id"] = queue.host_id
        ctx["cluster_key"] = queue.cluster_key
        ctx["schedule"] = schedule
        if holder is not None:
            holder["host"] = host
        swept = await sweep() if sweep is not None else 0
        log.info("host %s up; re-sending %d pending frames", queue.host_id, swept)

    async def shutdown(ctx: dict[str, Any]) -> None:
        if "backlogs" in ctx:
            await ctx["backlogs"].close()
        if "host" in ctx and shared is None:
            await ctx["host"].close()

    return _settings_class("MindHostSettings", queue, host_queue(queue.host_id), startup,
                           shutdown, {
        "functions": [guarded(fn, fn.__name__, queue.max_tries, queue.retry_backoff,
                              queue=host_queue(queue.host_id))
                      for fn in (apply_op, maintenance_now, harvest_sync)],
        "cron_jobs": [cron(maintenance_fanout, hour=schedule.hour, minute=schedule.minute,
                           unique=True, keep_result=3600, name="maintenance_cron")]
        if schedule.enabled else [],
    })
