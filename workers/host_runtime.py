"""The mind-host runtime of the distributed mode: actors here, embeddings on Redis workers.

Same surface as :class:`workers.runtime.EmbeddedRuntime` (``host``, ``submit``, ``sweep``,
``wait_idle``, ``embedder_ready``, ``close``) so the facade does not care which one it drives.
Commits enqueue cognify jobs to Redis; index results come back through the host's own queue
(consumed by ``hive-mind serve``). The embedder here only embeds *queries* for recall.
``wait_idle`` polls the outbox of the minds this process wrote to until it is empty.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from arq.connections import ArqRedis

from actors.handlers import HANDLERS
from actors.host import MindHost
from mind.embeddings.chain import EmbeddingProviderChain
from queue_schemas import ops
from workers.constants import OUTBOX_POLL_SECONDS
from workers.distributed import enqueue_job, host_hook
from workers.followups import outbox_jobs
from workers.queue import QueueConfig, connect
from workers.runtime import RuntimeConfig


class HostRuntime:
    def __init__(self, config: RuntimeConfig, queue: QueueConfig, redis: ArqRedis) -> None:
        self.config = config
        self.queue = queue
        self.redis = redis
        self.embedder = EmbeddingProviderChain(config.embedding)
        self.host = MindHost(
            config.data_dir, HANDLERS, max_open=config.max_open_minds,
            idle_seconds=config.idle_close_seconds, actor_settings=config.actor,
            on_commit=host_hook({"redis": redis}, config.cognify_batch),
        )
        self._written: set[str] = set()
        self._ready: asyncio.Task[Any] | None = None

    @classmethod
    async def connect(cls, config: RuntimeConfig, queue: QueueConfig) -> HostRuntime:
        return cls(config, queue, await connect(queue.redis_url))

    async def embedder_ready(self) -> EmbeddingProviderChain:
        if self._ready is None:
            self._ready = asyncio.ensure_future(self.embedder.start())
        await asyncio.shield(self._ready)
        return self.embedder

    async def submit(self, mind_id: str, op: Any, *, create: bool = True) -> Any:
        result = await self.host.submit(mind_id, op, create=create)
        self._written.add(mind_id)
        return result

    async def sweep(self, mind_id: str) -> int:
        reader = await self.host.reader(mind_id, create=False)
        queued = await outbox_jobs(reader, mind_id, self.config.cognify_batch)
        for job in queued:
            await enqueue_job(self.redis, job)
        return sum(len(job.items) for job in queued)

    async def reconcile(self, mind_id: str, grace_seconds: int = 0) -> Any:
        return await self.submit(mind_id, ops.Reconcile(mind_id=mind_id,
                                                        grace_seconds=grace_seconds), create=False)

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

    async def close(self) -> None:
        await self.host.close()
        await self.embedder.close()
        await self.redis.aclose()
