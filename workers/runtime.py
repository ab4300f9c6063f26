"""The embedded runtime: one process holds the mind host, its actors, the embedder, the
micro-batcher and the in-process job runner — the same job code the Redis workers run.

Flow: ``submit(mind_id, SaveFrames)`` → the mind's actor commits frames + FTS + outbox rows →
the commit hook plans cognify jobs → the runner executes them (extraction + batched embedding)
→ the resulting ``ApplyIndex`` op goes back through the same actor. ``wait_idle()`` returns
once all of that has settled; ``sweep()`` re-queues whatever the outbox still holds (startup,
and after a crash), a piece at a time (:mod:`workers.backlog`).

:class:`HostedRuntime` is what this runtime shares with the distributed
:class:`~workers.host_runtime.HostRuntime` (the contract is :class:`workers.protocol.Runtime`),
and :func:`open_host` is the one place a ``MindHost`` is built.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from actors.actor import CommitHook
from actors.catalog import MindCatalog
from actors.constants import CATALOG_FILE, USAGE_FILE
from actors.handlers import HANDLERS
from actors.handoff import HandedHook
from actors.host import ActorSettings, MindHost
from actors.moves import Authority, Departure
from actors.placement import ShardMap
from mind.census import Census
from mind.embeddings.chain import EmbeddingProviderChain
from mind.embeddings.quota import EmbeddingQuotaExceededError, UsageCounter, UsageStore
from mind.embeddings.registry import EmbeddingConfig
from mind.errors import ConfigurationError
from mind.mind import Mind
from mind.storage.fencing import Fence
from queue_schemas import jobs, ops
from vocabulary.ids import split_mind_id
from workers.backlog import Backlogs
from workers.batcher import EmbeddingBatcher
from workers.constants import (
    BACKLOG_PIECE_FRAMES,
    COGNIFY_BATCH_FRAMES,
    INDEX_POLL_SECONDS,
    RUNNER_CONCURRENCY,
)
from workers.dead_letters import DeadLetterFile, persist_to
from workers.followups import Job, cognify_jobs, fingerprint_hint, pending_items
from workers.protocol import JobQueue
from workers.runner import RECENT_DEAD_LETTERS, InProcessRunner
from workers.schedule import ScheduleConfig

if TYPE_CHECKING:  # routing (numpy) loads with the first routed recall
    from mind.retrieval.routing import RoutePool

log = logging.getLogger(__name__)

HookFactory = Callable[[str, Mind], CommitHook]


@dataclass
class RuntimeConfig:
    data_dir: Path
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    batcher_max_items: int = 512
    batcher_max_tokens: int = 32_768
    batcher_max_wait: float = 0.02
    actor: ActorSettings = field(default_factory=ActorSettings)
    max_open_minds: int = 64
    concurrency: int = RUNNER_CONCURRENCY
    max_tries: int = 5
    cognify_batch: int = COGNIFY_BATCH_FRAMES
    backlog_piece: int = BACKLOG_PIECE_FRAMES  # rows a resumed backlog is read in (workers.backlog)
    fence: Fence | None = None  # a shard host's fencing record (issue #17); None: unsharded
    shards: ShardMap | None = None  # a shard host's placement: which minds it may open


def open_host(config: RuntimeConfig, on_commit: HookFactory,
              on_handed: Callable[[str, Mind], HandedHook] | None = None) -> MindHost:
    """The ``MindHost`` of a process: the data dir's minds with the configured limits, each
    commit followed by ``on_commit`` (which queues the cognify work the commit caused), the
    frames other processes hand over to ``on_handed`` (:mod:`actors.handoff`)."""
    return MindHost(
        config.data_dir, HANDLERS, max_open=config.max_open_minds,
        actor_settings=config.actor,
        on_commit=on_commit, on_handed=on_handed, fence=config.fence,
        owner=None if config.shards is None else config.shards.owner,
    )


class HostedRuntime:
    """The parts of the runtime contract both runtimes share: the host, the embedder, reads,
    the jobs each commit causes and sweeping the outbox, a piece at a time, into the runtime's
    own queue (:class:`~workers.backlog.Backlogs`: ``_dispatch``, with ``_settle`` its
    backpressure), once per mind per start."""

    def __init__(self, config: RuntimeConfig, usage: UsageCounter) -> None:
        self.config = config
        self.embedder = EmbeddingProviderChain(config.embedding, usage=usage)
        self.backlogs = Backlogs(lambda mind_id: self.host.lease(mind_id, create=False),
                                 self._dispatch, self._settle, config.cognify_batch,
                                 piece=config.backlog_piece)
        self.host = open_host(config, self.backlogs.on_commit, self._adopt)
        self.catalog = MindCatalog(cache_file=config.data_dir / CATALOG_FILE)
        self._embedder_started: asyncio.Task[Any] | None = None
        self._resumed: set[str] = set()

    async def _dispatch(self, mind_id: str, queued: Sequence[Job]) -> None:
        raise NotImplementedError

    async def _settle(self, queued: list[Job], keep: int) -> list[Job]:
        """Wait until at most ``keep`` of ``queued`` (dispatched before) are unfinished."""
        raise NotImplementedError

    def _adopt(self, mind_id: str, reader: Mind) -> HandedHook:
        """What this process does with the frames a one-shot process handed it: index them
        at interactive priority, as its own saves (:mod:`actors.handoff`)."""
        async def adopt(frame_ids: list[int]) -> None:
            items = await pending_items(reader, frame_ids)
            await self._dispatch(mind_id, cognify_jobs(
                mind_id, items, await fingerprint_hint(reader), self.config.cognify_batch,
                "interactive"))

        return adopt

    async def embedder_ready(self) -> EmbeddingProviderChain:
        """Probe the provider chain once (loading the model can take seconds)."""
        if self._embedder_started is None:
            self._embedder_started = asyncio.ensure_future(self.embedder.start())
        await asyncio.shield(self._embedder_started)
        return self.embedder

    async def quota_status(self) -> dict[str, object] | None:
        """This month's embedding count for the configured user, with its tier's quota."""
        return await self.embedder.quota_status()

    async def check_quota(self, n: int = 1) -> None:
        """Refuse a write whose ``n`` embeddings this month's quota no longer has room for."""
        await self.embedder.check_quota(n)

    # -- minds ------------------------------------------------------------------------------

    async def submit(self, mind_id: str, op: Any, *, create: bool = True) -> Any:
        return await self.host.submit(mind_id, op, create=create)

    async def reader(self, mind_id: str, *, create: bool = True) -> Mind:
        return await self.host.reader(mind_id, create=create)

    def lease(self, mind_id: str, *, create: bool = True) -> AbstractAsyncContextManager[Mind]:
        """The reader, kept open (past the LRU) until the block ends: :meth:`MindHost.lease`."""
        return self.host.lease(mind_id, create=create)

    def exists(self, mind_id: str) -> bool:
        return self.host.exists(mind_id)

    def list_minds(self) -> list[str]:
        return self.host.list_minds()

    def memory_indexes(self) -> dict[str, dict[str, Any]]:
        return self.host.memory_indexes()

    def serves(self, mind_id: str) -> bool:
        return self.host.serves(mind_id)

    def check_serves(self, mind_id: str) -> None:
        self.host.check_owner(mind_id)

    # moving minds between shards (actors/moves.py; ``cluster rebalance``)

    def departed(self, mind_id: str) -> Departure | None:
        """Where ``mind_id`` went, if this (sharded) host moved it away."""
        moves = self.host.moves
        return None if moves is None else moves.departed.get(mind_id)

    def shard(self) -> Fence:
        if self.host.fence is None:
            raise ConfigurationError("not a shard host (HIVE_MIND_SHARDS is unset)")
        return self.host.fence

    def mind_metadata(self, mind_id: str) -> str | None:
        return self.host.metadata(mind_id)

    def incoming_path(self, mind_id: str) -> Path:
        return self.host.incoming_path(mind_id)

    async def holdings(self) -> list[dict[str, object]]:
        return await self.host.holdings()

    def expect_mind(self, mind_id: str, metadata: str | None = None) -> None:
        self.host.expect(mind_id, metadata)

    async def release_mind(self, mind_id: str, to: Fence, url: str,
                           authorized: Authority) -> Departure:
        return await self.host.release(mind_id, to, url, authorized)

    def cancel_arrival(self, mind_id: str) -> bool:
        return self.host.cancel_arrival(mind_id)

    def cancel_departure(self, mind_id: str) -> Departure:
        return self.host.cancel_departure(mind_id)

    async def snapshot_mind(self, mind_id: str, dest: Path) -> None:
        await self.host.snapshot(mind_id, dest)

    async def admit_mind(self, mind_id: str, copy: Path) -> None:
        await self.host.admit(mind_id, copy)

    def retire_mind(self, mind_id: str) -> None:
        self.host.retire(mind_id)

    async def close_mind(self, mind_id: str) -> None:
        await self.host.close_mind(mind_id)

    # -- every mind at once (the catalog: no actor, no place in the LRU) ---------------------

    async def census(self, mind_ids: Sequence[str]) -> dict[str, Census]:
        """Counts of each mind that has a file, re-read only where its file changed."""
        return await self.catalog.census({m: self.host.path(m) for m in mind_ids})

    async def route_pool(self, mind_ids: Sequence[str]) -> tuple[list[str], RoutePool]:
        """The routing summaries of the minds that exist (:mod:`mind.retrieval.routing`)."""
        return await self.catalog.route_pool({m: self.host.path(m) for m in mind_ids})

    def stems(self, query: str) -> list[str]:
        return self.catalog.stems(query)

    # -- recovery ---------------------------------------------------------------------------

    async def sweep(self, mind_id: str) -> int:
        """Queue cognify jobs for everything the mind's outbox holds now, a piece at a time in
        the background (:mod:`workers.backlog`: memory does not grow with the backlog); how
        many frames that is. ``wait_idle`` waits for the last piece too."""
        return await self.backlogs.resume(mind_id)

    def claim(self, mind_ids: Iterable[str]) -> list[str]:
        """The minds not yet swept by this process, marked as swept from now on."""
        fresh = [m for m in mind_ids if m not in self._resumed]
        self._resumed.update(fresh)
        return fresh

    async def resume(self, mind_id: str) -> int:
        """On first use of a mind in this process, re-queue what its outbox still holds
        (indexing that a crashed or killed process never finished: :meth:`sweep`); afterwards
        nothing. While a writer in another process has the mind open (an import, ``serve``,
        an agent's MCP server), its outbox is that process's: it queued the indexing of what
        it wrote, so this one re-queues nothing (a save beside an import would index the
        import's backlog before it returns) and asks again at its next use of the mind.

        A one-shot process (a CLI command) re-queues nothing either: it indexes what it writes
        and exits, and a backlog can take minutes, which a ``save`` must not wait for. The
        backlog stays in the outbox for the next long-lived process (``serve``, ``mcp``, an
        import, ``maintenance``); a command at a terminal says so."""
        if mind_id in self._resumed or not self.exists(mind_id):
            return 0
        if self.host.others_writing(mind_id):
            log.debug("mind %s: another process writes to it; its outbox is left to it", mind_id)
            return 0
        self.claim([mind_id])
        if self.config.actor.one_shot:
            await self._leave_backlog(mind_id)
            return 0
        return await self.sweep(mind_id)

    async def _leave_backlog(self, mind_id: str) -> None:
        """A one-shot process's first use of a mind: say how many frames wait for another."""
        async with self.host.lease(mind_id, create=False) as reader:
            left = await reader.outbox.count()
        if left:
            _, workspace = split_mind_id(mind_id)
            log.info("mind %s: %d frames an earlier process saved are not indexed yet (keyword "
                     "search finds them); serve, mcp or an import index them when they next "
                     "open the mind, or now: hive-mind maintenance reconcile%s", mind_id, left,
                     "" if workspace is None else f" --workspace {workspace}",
                     extra={"notice": True})

    async def wait_indexed(self, mind_id: str, frame_ids: Sequence[int] | None = None,
                           timeout: float | None = None) -> bool:
        """Wait until ``frame_ids`` of ``mind_id`` (``None``: everything its outbox holds)
        are indexed — not the rest of the runtime's work, so a save made during another
        mind's bulk import returns when the save is indexed. False on timeout, or once this
        runtime has nothing left running that could index them (a degraded embedder)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        async with self.host.lease(mind_id, create=False) as reader:
            while True:
                pending = await (reader.outbox.holds(frame_ids) if frame_ids is not None
                                 else reader.outbox.count())
                if not pending:
                    return True
                if self._settled() or (deadline is not None and time.monotonic() > deadline):
                    return False
                await asyncio.sleep(INDEX_POLL_SECONDS)

    def _settled(self) -> bool:
        """Nothing this process runs can still index a frame (embedded: the runner is idle)."""
        return False

    async def reconcile(self, mind_id: str, grace_seconds: int = 0) -> Any:
        op = ops.Reconcile(mind_id=mind_id, grace_seconds=grace_seconds)
        return await self.submit(mind_id, op, create=False)

    def consumer_settings(self, schedule: ScheduleConfig) -> type | None:
        return None


class EmbeddedRuntime(HostedRuntime):
    def __init__(self, config: RuntimeConfig) -> None:
        super().__init__(config, UsageStore(config.data_dir / USAGE_FILE))
        self.batcher = EmbeddingBatcher(
            self.embedder,
            max_items=config.batcher_max_items,
            max_tokens=config.batcher_max_tokens,
            max_wait=config.batcher_max_wait,
        )
        self.runner = InProcessRunner(
            self._execute, concurrency=config.concurrency, max_tries=config.max_tries,
            on_dead_letter=persist_to(config.data_dir),  # shared with the data dir's processes
        )

    async def _dispatch(self, mind_id: str, queued: Sequence[Job]) -> None:
        await self.runner.dispatch_many(mind_id, list(queued))

    async def _settle(self, queued: list[Job], keep: int) -> list[Job]:
        return await self.runner.settle(queued, keep)

    def _settled(self) -> bool:
        return (self.runner.depth == 0 and self.runner.in_progress == 0
                and not self.backlogs.busy)

    async def _execute(self, job: jobs.CognifyJob | jobs.ReembedJob) -> None:
        embedder = await self.embedder_ready()
        if embedder.degraded:
            log.warning("embedder degraded: frames of %s stay pending (keyword search works)",
                        job.mind_id)
            return
        from workers.cognify import run_index_job  # extraction's code loads with the first job

        try:
            op = await run_index_job(job, self.batcher)
        except EmbeddingQuotaExceededError as exc:  # no retry helps before the quota resets
            log.warning("frames of %s stay pending (keyword search works): %s", job.mind_id, exc)
            return
        await self.host.submit(job.mind_id, op, create=False)

    # -- waiting and reporting --------------------------------------------------------------

    async def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until queued jobs ran and their results were committed, a backlog being
        resumed included (its last piece queued and run)."""
        try:
            async with asyncio.timeout(timeout):
                while True:
                    await self.backlogs.wait()
                    await self.runner.wait_idle()
                    if not self.backlogs.busy:
                        return True
        except TimeoutError:
            return False

    def job_queue(self) -> JobQueue:
        """This process's runner and the data dir's dead letters (:mod:`workers.jobs_embedded`)."""
        from workers.jobs_embedded import EmbeddedJobs

        return EmbeddedJobs(self, self.runner, self.config.data_dir)

    async def queue_status(self) -> dict[str, Any]:
        """The runner's depth and running jobs; dead letters from the data dir's file, which
        every process on it shares (a fresh CLI sees what a long-running ``serve`` failed)."""
        letters = await asyncio.to_thread(DeadLetterFile(self.config.data_dir).entries)
        by_mind: dict[str, int] = {}
        for letter in letters:
            mind = str(letter.get("mind_id"))
            by_mind[mind] = by_mind.get(mind, 0) + 1
        return {**self.runner.status(), "mode": "embedded", "dead_letters": len(letters),
                "dead_letters_by_mind": by_mind,
                "recent_dead_letters": letters[:RECENT_DEAD_LETTERS],
                "resuming": self.backlogs.status()}

    async def ready_checks(self) -> dict[str, bool]:
        return {}

    async def close(self) -> None:
        await self.backlogs.close()
        await self.runner.close()
        await self.batcher.close()
        await self.host.close()
        await asyncio.to_thread(self.catalog.close)
        await self.embedder.close()

    async def __aenter__(self) -> EmbeddedRuntime:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
