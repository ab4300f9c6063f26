"""The embedded runtime: one process holds the mind host, its actors, the embedder, the
micro-batcher and the in-process job runner — the same job code the Redis workers run.

Flow: ``submit(mind_id, SaveFrames)`` → the mind's actor commits frames + FTS + outbox rows →
the commit hook plans cognify jobs → the runner executes them (extraction + batched embedding)
→ the resulting ``ApplyIndex`` op goes back through the same actor. ``wait_idle()`` returns
once all of that has settled; ``sweep()`` re-queues whatever the outbox still holds (startup,
and after a crash).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from actors.actor import CommitHook
from actors.handlers import HANDLERS
from actors.host import ActorSettings, MindHost
from mind.embeddings.chain import EmbeddingProviderChain
from mind.embeddings.registry import EmbeddingConfig
from mind.mind import Mind
from queue_schemas import jobs, ops
from workers.batcher import EmbeddingBatcher
from workers.cognify import run_index_job
from workers.constants import COGNIFY_BATCH_FRAMES, RUNNER_CONCURRENCY
from workers.followups import followup_jobs, outbox_jobs
from workers.runner import InProcessRunner

log = logging.getLogger(__name__)


@dataclass
class RuntimeConfig:
    data_dir: Path
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    batcher_max_items: int = 512
    batcher_max_tokens: int = 32_768
    batcher_max_wait: float = 0.02
    actor: ActorSettings = field(default_factory=ActorSettings)
    max_open_minds: int = 20
    idle_close_seconds: float = 60.0
    concurrency: int = RUNNER_CONCURRENCY
    max_tries: int = 5
    cognify_batch: int = COGNIFY_BATCH_FRAMES


class EmbeddedRuntime:
    def __init__(self, config: RuntimeConfig) -> None:
        self.config = config
        self.embedder = EmbeddingProviderChain(config.embedding)
        self.batcher = EmbeddingBatcher(
            self.embedder,
            max_items=config.batcher_max_items,
            max_tokens=config.batcher_max_tokens,
            max_wait=config.batcher_max_wait,
        )
        self.host = MindHost(
            config.data_dir, HANDLERS, max_open=config.max_open_minds,
            idle_seconds=config.idle_close_seconds, actor_settings=config.actor,
            on_commit=self._hook,
        )
        self.runner = InProcessRunner(
            self._execute, concurrency=config.concurrency, max_tries=config.max_tries
        )
        self._embedder_ready: asyncio.Task[Any] | None = None

    async def embedder_ready(self) -> EmbeddingProviderChain:
        """Probe the provider chain once (loading the model can take seconds)."""
        if self._embedder_ready is None:
            self._embedder_ready = asyncio.ensure_future(self.embedder.start())
        await asyncio.shield(self._embedder_ready)
        return self.embedder

    # -- writes -----------------------------------------------------------------------------

    async def submit(self, mind_id: str, op: Any, *, create: bool = True) -> Any:
        return await self.host.submit(mind_id, op, create=create)

    def _hook(self, mind_id: str, reader: Mind) -> CommitHook:
        async def after_commit(committed: list[tuple[Any, Any]]) -> None:
            for job in await followup_jobs(
                mind_id, committed, reader, batch=self.config.cognify_batch
            ):
                await self.runner.dispatch(job)

        return after_commit

    async def _execute(self, job: jobs.CognifyJob | jobs.ReembedJob) -> None:
        embedder = await self.embedder_ready()
        if embedder.degraded:
            log.warning("embedder degraded: frames of %s stay pending (keyword search works)",
                        job.mind_id)
            return
        op = await run_index_job(job, self.batcher)
        await self.host.submit(job.mind_id, op, create=False)

    # -- recovery and waiting ---------------------------------------------------------------

    async def sweep(self, mind_id: str) -> int:
        """Queue cognify jobs for everything the mind's outbox still holds."""
        reader = await self.host.reader(mind_id, create=False)
        queued = await outbox_jobs(reader, mind_id, self.config.cognify_batch)
        for job in queued:
            await self.runner.dispatch(job)
        return sum(len(job.items) for job in queued)

    async def reconcile(self, mind_id: str, grace_seconds: int = 0) -> Any:
        op = ops.Reconcile(mind_id=mind_id, grace_seconds=grace_seconds)
        return await self.submit(mind_id, op, create=False)

    async def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until queued jobs ran and their results were committed."""
        return await self.runner.wait_idle(timeout)

    async def close(self) -> None:
        await self.runner.close()
        await self.batcher.close()
        await self.host.close()
        await self.embedder.close()

    async def __aenter__(self) -> EmbeddedRuntime:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
