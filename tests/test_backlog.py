"""A backlog left in a mind's outbox by a process that stopped before its indexing caught up
(workers/backlog.py): the next long-lived process resumes it a piece at a time — never more
than two pieces queued, whatever the backlog's size — and indexes all of it, embedded and on
Redis; a process stopped mid-resumption leaves the rest pending for the next one; a one-shot
save (a CLI command) beside the backlog indexes its own frame and leaves the backlog alone.

Backlogs are written with indexing off (the ``mock`` embedder is degraded: nothing is embedded,
every frame stays pending), as an import with indexing off or a killed one leaves them. The
distributed case runs on a real Redis (db 14, this file's own) with an in-process cognify worker
and the host's consumer, as ``serve`` runs it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from hive_mind.facade import HiveMind
from hive_mind.server import HostWorker
from mind.embeddings.registry import EmbeddingConfig
from mind.mind import Mind
from queue_schemas import ops
from queue_schemas.constants import COGNIFY_QUEUE
from tests.conftest import flushed_redis, redis_db_url
from vocabulary.ids import PERSONAL_MIND
from workers.distributed import worker_settings
from workers.host_runtime import HostRuntime
from workers.queue import QueueConfig
from workers.runtime import EmbeddedRuntime, RuntimeConfig
from workers.schedule import ScheduleConfig

REDIS14 = redis_db_url(14)  # this file's own db
BATCH, PIECE = 8, 32  # frames per cognify job, outbox rows per piece: 4 jobs a piece
TWO_PIECES = 2 * PIECE // BATCH


def config(data: Path, provider: str = "test") -> RuntimeConfig:
    return RuntimeConfig(data_dir=data, cognify_batch=BATCH, backlog_piece=PIECE,
                         embedding=EmbeddingConfig(provider=provider, test_dimensions=64))


async def write_backlog(data: Path, frames: int) -> None:
    """``frames`` frames in the personal mind, none indexed (a degraded embedder)."""
    async with EmbeddedRuntime(config(data, "mock")) as rt:
        for start in range(0, frames, 500):
            await rt.submit(PERSONAL_MIND, ops.SaveFrames(mind_id=PERSONAL_MIND, frames=[
                ops.NewFrameOp(gop_id=f"chat-{i // 20}", content=f"turn {i} of the import")
                for i in range(start, min(frames, start + 500))]))
        assert await rt.wait_idle(60)
    assert await counts(data) == {"pending": frames, "vectors": 0}


async def counts(data: Path) -> dict[str, int]:
    async with await Mind.open(data / "personal.mind", readonly=True) as m:
        return {"pending": await m.outbox.count(),
                "vectors": (await m.vectors.counts())["frame_vectors"]}


async def watch(jobs_now: Callable[[], Awaitable[int]], done: Callable[[], Awaitable[bool]],
                timeout: float = 120) -> int:
    """Until ``done()``: the most jobs ``jobs_now()`` reported."""
    most, deadline = 0, asyncio.get_running_loop().time() + timeout
    while not await done():
        most = max(most, await jobs_now())
        assert asyncio.get_running_loop().time() < deadline, "the backlog was not indexed"
        await asyncio.sleep(0.005)
    return most


async def runner_peak(rt: EmbeddedRuntime) -> int:
    """Until ``rt``'s backlogs are read and its jobs run: the most jobs queued or running."""
    async def jobs_now() -> int:
        return rt.runner.depth + rt.runner.in_progress

    async def done() -> bool:
        return not rt.backlogs.busy and await jobs_now() == 0

    return await watch(jobs_now, done)


# -- embedded ----------------------------------------------------------------------------------

async def test_a_long_lived_process_resumes_a_backlog_in_pieces_and_indexes_it_all(
        tmp_path: Path) -> None:
    await write_backlog(tmp_path, 300)
    async with EmbeddedRuntime(config(tmp_path)) as rt:
        assert await rt.resume(PERSONAL_MIND) == 300
        assert await runner_peak(rt) <= TWO_PIECES  # not 38 jobs at once
        assert await rt.wait_idle(60)
        assert await rt.resume(PERSONAL_MIND) == 0  # once per process
    assert await counts(tmp_path) == {"pending": 0, "vectors": 300}


async def test_a_reconcile_during_a_resumption_queues_no_frame_twice(tmp_path: Path) -> None:
    """``hive-mind maintenance reconcile`` in a fresh process: its first use of the mind
    resumes the backlog, then the op finds the same frames pending; they are indexed once."""
    await write_backlog(tmp_path, 300)
    async with EmbeddedRuntime(config(tmp_path)) as rt:
        assert await rt.resume(PERSONAL_MIND) == 300
        assert len((await rt.reconcile(PERSONAL_MIND, grace_seconds=0)).requeue) == 300
        assert await rt.wait_idle(60)
        assert rt.runner.completed == 38  # 9 pieces of 4 jobs and 12 frames in 2: not 76
    assert await counts(tmp_path) == {"pending": 0, "vectors": 300}


async def test_a_process_stopped_mid_resumption_leaves_the_rest_to_the_next(
        tmp_path: Path) -> None:
    await write_backlog(tmp_path, 2_000)
    async with EmbeddedRuntime(config(tmp_path)) as rt:
        await rt.resume(PERSONAL_MIND)
        while (await counts(tmp_path))["vectors"] == 0:  # some of it indexed ...
            await asyncio.sleep(0.01)
    # ... and the process gone: every frame indexed or still pending, none lost
    stopped = await counts(tmp_path)
    assert stopped["pending"] > 0 and stopped["pending"] + stopped["vectors"] == 2_000
    async with EmbeddedRuntime(config(tmp_path)) as rt:  # the next process
        assert await rt.resume(PERSONAL_MIND) == stopped["pending"]
        assert await rt.wait_idle(120)
    assert await counts(tmp_path) == {"pending": 0, "vectors": 2_000}


async def test_a_one_shot_save_beside_a_backlog_indexes_its_frame_and_leaves_the_backlog(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """What ``hive-mind save`` does beside a dead import's backlog: its own frame is indexed
    before it returns, the backlog is left for the next long-lived process, which indexes it."""
    await write_backlog(tmp_path, 300)
    settings = {"data_dir": tmp_path, "embedding_provider": "test",
                "test_embedding_dimensions": 64, "redis_url": None}
    with caplog.at_level(logging.INFO, logger="workers.runtime"):
        async with await HiveMind.open(**settings, one_shot=True) as cli:
            frame = await cli.save("the note a user saves from the shell")
            assert await cli.wait_idle(60)  # what the CLI waits for before it exits
            assert await cli.runtime.wait_indexed(PERSONAL_MIND, [frame["id"]], timeout=0)
    assert await counts(tmp_path) == {"pending": 300, "vectors": 1}
    notices = [r.getMessage() for r in caplog.records if getattr(r, "notice", False)]
    assert notices and "300 frames" in notices[0] and "maintenance reconcile" in notices[0]
    async with await HiveMind.open(**settings) as keeper:  # serve, mcp, an import ...
        assert (await keeper.stats())["frames"] == 301  # its first use of the mind resumes
        assert await keeper.wait_idle(60)
    assert await counts(tmp_path) == {"pending": 0, "vectors": 301}


# -- distributed: a real Redis (db 14) ---------------------------------------------------------

@pytest.fixture
async def redis14() -> AsyncIterator[Any]:
    async with flushed_redis(REDIS14) as pool:
        yield pool


@asynccontextmanager
async def running(settings_cls: type) -> AsyncIterator[None]:
    """An arq worker of ``settings_cls`` in this event loop, as ``serve`` runs its consumer."""
    worker = HostWorker(settings_cls)
    worker.start()
    try:
        yield
    finally:
        await worker.stop()
        if "batcher" in worker.worker.ctx and worker.worker.on_shutdown is not None:
            await worker.worker.on_shutdown(worker.worker.ctx)  # the cognify worker's


async def two_pieces_then_all(rt: HostRuntime, redis: Any, queue: QueueConfig,
                              runtime: RuntimeConfig, frames: int) -> None:
    """``frames`` frames pending in ``rt``'s personal mind, being sent in pieces: with no
    worker two pieces of jobs wait in Redis and no more; with the host's consumer and a cognify
    worker, never more than two pieces are queued or running until every frame is indexed."""
    async def jobs_now() -> int:
        return int(await redis.zcard(COGNIFY_QUEUE))

    async def two_pieces() -> bool:
        return await jobs_now() == TWO_PIECES

    await watch(jobs_now, two_pieces, 30)
    await asyncio.sleep(0.6)  # no worker takes them: nothing more is sent
    assert await jobs_now() == TWO_PIECES
    assert (await counts(runtime.data_dir))["pending"] == frames

    async def done() -> bool:
        return (await counts(runtime.data_dir))["pending"] == 0

    consumer = rt.consumer_settings(ScheduleConfig(enabled=False))
    assert consumer is not None
    async with running(consumer), running(worker_settings(queue, runtime)):
        assert await watch(jobs_now, done) <= TWO_PIECES
        await asyncio.wait_for(rt.backlogs.wait(), 30)  # it saw its last jobs end


async def test_a_host_resends_a_backlog_to_redis_in_pieces_and_workers_index_it_all(
        tmp_path: Path, redis14: Any) -> None:
    await write_backlog(tmp_path, 300)
    runtime = config(tmp_path)
    queue = QueueConfig(redis_url=REDIS14, host_id="backlog")
    rt = await HostRuntime.connect(runtime, queue)
    try:
        assert await rt.resume_all() == 300  # serve's startup sweep
        await two_pieces_then_all(rt, redis14, queue, runtime, 300)
    finally:
        await rt.close()
    assert await counts(tmp_path) == {"pending": 0, "vectors": 300}
