"""The mind-host runtime of the distributed mode: actors here, embeddings on Redis workers.

Implements :class:`workers.protocol.Runtime` like :class:`workers.runtime.EmbeddedRuntime`, so
the facade does not care which one it drives. Commits enqueue cognify jobs to Redis; index
results come back through the host's own queue (consumed by ``hive-mind serve``, whose arq
settings :meth:`HostRuntime.consumer_settings` gives: they share this runtime's host, and its
startup sweep counts as this process's one sweep of each mind). The embedder here only embeds
*queries* for recall. ``wait_idle`` polls the outbox of the minds this process wrote to —
saves, harvests and maintenance alike, since they all go through :meth:`submit` — until it is
empty.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any

from arq.connections import ArqRedis
from redis.exceptions import RedisError

from mind.errors import HiveMindError
from mind.redact import mask_text
from workers.constants import OUTBOX_POLL_SECONDS
from workers.distributed import CognifyQueue, host_settings
from workers.followups import Job
from workers.protocol import JobQueue
from workers.queue import QueueConfig, connect, queue_status
from workers.runtime import HostedRuntime, RuntimeConfig
from workers.schedule import ScheduleConfig
from workers.scrub import forget_queued
from workers.usage import RedisUsage

REDIS_TIMEOUT = 2.0  # a readiness probe's patience with Redis

log = logging.getLogger(__name__)


class HostRuntime(HostedRuntime):
    def __init__(self, config: RuntimeConfig, queue: QueueConfig, redis: ArqRedis) -> None:
        self.cognify_queue = CognifyQueue(redis)
        super().__init__(config, RedisUsage(redis))
        self.queue = queue
        self.redis = redis
        self._written: set[str] = set()

    @classmethod
    async def connect(cls, config: RuntimeConfig, queue: QueueConfig) -> HostRuntime:
        return cls(config, queue, await connect(queue.redis_url))

    def job_queue(self) -> JobQueue:
        """The deployment's queues and dead letters on Redis (:mod:`workers.jobs_redis`)."""
        from workers.jobs_redis import RedisJobs

        return RedisJobs(self, self.redis, self.queue.host_id)

    @classmethod
    def unconnected(cls, config: RuntimeConfig, queue: QueueConfig) -> HostRuntime:
        """The runtime of a report made while Redis is unreachable (``status``): its client
        connects on first use, so :meth:`queue_status` answers with the error."""
        return cls(config, queue, ArqRedis.from_url(queue.redis_url,
                                                    socket_connect_timeout=REDIS_TIMEOUT))

    async def submit(self, mind_id: str, op: Any, *, create: bool = True) -> Any:
        result = await self.host.submit(mind_id, op, create=create)
        self._written.add(mind_id)
        if getattr(op, "kind", None) == "erase":  # its text leaves the queues too
            await forget_queued(self.redis, self.queue.host_id, mind_id, {op.frame_id},
                                self.queue.cluster_key)
        return result

    async def _dispatch(self, mind_id: str, queued: Sequence[Job]) -> None:
        await self.cognify_queue.send(mind_id, queued)

    async def _settle(self, queued: list[Job], keep: int) -> list[Job]:
        return await self.cognify_queue.settle(queued, keep)

    async def resume_all(self) -> int:
        """At the start of ``serve``: re-send the outbox of every mind not swept yet that
        holds pending rows (the catalog's census says which, without opening the others), a
        piece at a time in the background (:mod:`workers.backlog`); the first use of a mind
        afterwards sends nothing again. The frames found pending."""
        minds = self.claim(self.list_minds())
        census = await self.census(minds)  # a mind it cannot read is looked at by resuming
        return await self.backlogs.resume_all(
            m for m in minds if (c := census.get(m)) is None or c.pending_index)

    def consumer_settings(self, schedule: ScheduleConfig) -> type | None:
        return host_settings(self.queue, self.config, schedule=schedule, host=self.host,
                             startup_sweep=self.resume_all)

    async def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until the outbox of every mind written here is empty (workers caught up)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            pending = 0
            for mind_id in list(self._written):
                reader = await self.host.reader(mind_id, create=False)
                pending += await reader.outbox.count()
            if pending == 0:
                return True
            if deadline is not None and time.monotonic() > deadline:
                return False
            await asyncio.sleep(OUTBOX_POLL_SECONDS)

    async def queue_status(self) -> dict[str, Any]:
        try:
            return {**await queue_status(self.redis, [self.queue.host_id]),
                    "resuming": self.backlogs.status()}
        except (RedisError, OSError, HiveMindError) as exc:  # e.g. a Redis URL with a password
            return {"depth": None, "in_progress": None, "dead_letters": None,
                    "error": mask_text(str(exc))}

    async def ready_checks(self) -> dict[str, bool]:
        try:
            return {"redis": bool(await asyncio.wait_for(self.redis.ping(), REDIS_TIMEOUT))}
        except Exception:  # any failure to answer is "not ready"
            return {"redis": False}

    async def close(self) -> None:
        await self.backlogs.close()
        await self.host.close()
        await asyncio.to_thread(self.catalog.close)
        await self.embedder.close()
        await self.redis.aclose()
