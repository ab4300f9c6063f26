"""Prometheus series of one process (``serve``'s ``/metrics``, a worker's ``--metrics-port``).

Each process keeps its own series in prometheus-client's default registry and exposes them
itself: several workers are several scrape targets, told apart by Prometheus's ``instance``
label, so nothing is shared between processes. Labels are bounded: job kinds, priorities,
queues and harvest sources are fixed vocabularies; per-mind series exist only for the
:data:`TOP_MINDS` deepest actor mailboxes (the rest summed under ``mind="other"``), and the
group-commit latency is a histogram without a mind label.

Counters and histograms move where the work happens (the runner, :func:`workers.queue.guarded`,
the micro-batcher, the harvest driver, the actor's group commit); the gauges are sampled —
:func:`sample_runtime` before each scrape of ``serve``, :func:`sample_queue` every few seconds
in a worker — because they are states, not events.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Final

from prometheus_client import Counter, Gauge, Histogram

from queue_schemas.constants import COGNIFY_QUEUE
from workers.fairness import BAND_BOUNDS

log = logging.getLogger(__name__)
TOP_MINDS: Final = 10  # minds with a mailbox series of their own
SAMPLE_SECONDS: Final = 5.0  # a worker's queue sampling period
_LATENCY_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)

JOBS_STARTED = Counter("hive_mind_jobs_started_total", "cognify jobs started (each try)",
                       ["kind", "priority"])
JOBS_SUCCEEDED = Counter("hive_mind_jobs_succeeded_total", "cognify jobs that ended well",
                         ["kind", "priority"])
JOBS_FAILED = Counter("hive_mind_jobs_failed_total", "tries that raised (retried or not)",
                      ["kind", "priority"])
JOBS_DEAD_LETTERED = Counter("hive_mind_jobs_dead_lettered_total",
                             "jobs given up on (kept as dead letters)", ["kind"])
JOB_SECONDS = Histogram("hive_mind_job_seconds", "run time of a cognify job (one try)",
                        ["kind", "priority"], buckets=_LATENCY_BUCKETS)
EMBED_BATCH_TEXTS = Histogram("hive_mind_embedding_batch_texts",
                              "texts per micro-batched embed_batch call", ["priority"],
                              buckets=_BATCH_BUCKETS)
EMBEDDED_TEXTS = Counter("hive_mind_embedded_texts_total",
                         "texts embedded by the micro-batcher (rate = texts/s)", ["priority"])
EMBED_SECONDS = Counter("hive_mind_embedding_seconds_total",
                        "wall time of the micro-batcher's embed_batch calls")
HARVEST_FRAMES = Counter("hive_mind_harvest_frames_total", "frames written by harvest imports",
                         ["source"])
QUEUE_DEPTH = Gauge("hive_mind_queue_depth", "jobs queued (and running), per queue and band",
                    ["queue", "priority"])
JOBS_RUNNING = Gauge("hive_mind_jobs_running", "jobs running in this process")
DEAD_LETTERS = Gauge("hive_mind_dead_letters", "dead letters kept (all processes)")
INDEX_LAG = Gauge("hive_mind_index_lag_seconds",
                  "age of the oldest frame waiting to be indexed, over the open minds")
PENDING_INDEX = Gauge("hive_mind_pending_index_frames",
                      "frames waiting to be indexed, over the open minds")
OPEN_MINDS = Gauge("hive_mind_open_minds", "mind files this process holds open")
MAILBOX_OPS = Gauge("hive_mind_actor_mailbox_ops", "write-ops queued in a mind's actor",
                    ["mind"])
HEARTBEAT = Gauge("hive_mind_heartbeat_timestamp_seconds",
                  "when this process last sampled its state (alert when it stops moving)")


def job_started(kind: str, priority: str) -> float:
    JOBS_STARTED.labels(kind, priority).inc()
    JOBS_RUNNING.inc()
    return time.perf_counter()


def job_ended(kind: str, priority: str, started: float, *, ok: bool) -> None:
    JOBS_RUNNING.dec()
    JOB_SECONDS.labels(kind, priority).observe(time.perf_counter() - started)
    (JOBS_SUCCEEDED if ok else JOBS_FAILED).labels(kind, priority).inc()


def embedded(priority: str, texts: int, seconds: float) -> None:
    EMBED_BATCH_TEXTS.labels(priority).observe(texts)
    EMBEDDED_TEXTS.labels(priority).inc(texts)
    EMBED_SECONDS.inc(seconds)


def serve_metrics(port: int, host: str) -> int:
    """Expose this process's series on ``host:port`` (a thread); returns the bound port."""
    from prometheus_client import start_http_server

    server, _ = start_http_server(port, addr=host)
    return int(server.server_port)


async def sample_forever(redis: Any, queues: list[str]) -> None:
    """A worker's gauges, every :data:`SAMPLE_SECONDS` (a Redis error skips one sample)."""
    while True:
        try:
            await sample_queue(redis, queues)
        except Exception as exc:  # Redis down: the heartbeat stops moving, the alert fires
            log.warning("metrics sample failed: %s", exc)
        await asyncio.sleep(SAMPLE_SECONDS)


async def sample_queue(redis: Any, queues: list[str]) -> None:
    """Depth of the Redis queues (the cognify queue per priority band)."""
    for queue in queues:
        if queue == COGNIFY_QUEUE:
            for band, (low, high) in BAND_BOUNDS.items():
                QUEUE_DEPTH.labels(queue, band).set(int(await redis.zcount(queue, low, high)))
        else:
            QUEUE_DEPTH.labels(queue, "all").set(int(await redis.zcard(queue)))
    HEARTBEAT.set(time.time())


async def sample_runtime(runtime: Any) -> None:
    """The gauges of a facade's runtime (``serve`` calls this before rendering a scrape)."""
    status = await runtime.queue_status()
    bands = status.get("by_priority") or {}
    queues = status.get("queues")
    if status.get("mode") == "embedded":  # the in-process runner
        for band, count in bands.items():
            QUEUE_DEPTH.labels("embedded", band).set(count)
    elif queues is not None:  # None: Redis did not answer (the report says why)
        for band, count in bands.items():
            QUEUE_DEPTH.labels(COGNIFY_QUEUE, band).set(count)
        for queue, depth in queues.items():
            if queue != COGNIFY_QUEUE:
                QUEUE_DEPTH.labels(queue, "all").set(depth)
    if status.get("dead_letters") is not None:
        DEAD_LETTERS.set(status["dead_letters"])
    await sample_minds(runtime.host)
    HEARTBEAT.set(time.time())


async def sample_minds(host: Any) -> None:
    """Open minds, their actors' mailboxes (top :data:`TOP_MINDS`) and their index lag."""
    open_ids = host.open_ids
    OPEN_MINDS.set(len(open_ids))
    depths = sorted(((host.queued(mind_id), mind_id) for mind_id in open_ids), reverse=True)
    MAILBOX_OPS.clear()
    for depth, mind_id in depths[:TOP_MINDS]:
        MAILBOX_OPS.labels(mind_id).set(depth)
    MAILBOX_OPS.labels("other").set(sum(depth for depth, _ in depths[TOP_MINDS:]))
    oldest: float | None = None
    pending = 0
    for mind_id in open_ids:
        async with host.lease(mind_id, create=False) as reader:
            pending += await reader.outbox.count()
            age = await reader.outbox.oldest_age_seconds()
        if age is not None:
            oldest = age if oldest is None else max(oldest, age)
    PENDING_INDEX.set(pending)
    INDEX_LAG.set(oldest or 0.0)
