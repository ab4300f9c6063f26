"""A re-embed (``hive-mind maintenance reembed``, after a model change) and a reconcile's
re-sends read the frames they queue a piece at a time (workers/backlog.py), as a resumed backlog
does: never more than two pieces of jobs queued or running, whatever the mind's size, embedded
and on Redis; every frame ends re-embedded under the new model's fingerprint, its knowledge
graph kept; a re-embed stopped midway is finished by the next one, keeping the vectors made.

Minds are written with the 64-dimension test model (or left unindexed by the degraded ``mock``
embedder) and re-embedded with the 32-dimension one. The distributed case runs on a real Redis
(db 10, this file's own) with an in-process cognify worker and the host's consumer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hive_mind.facade import HiveMind
from mind.embeddings.registry import EmbeddingConfig
from mind.mind import Mind
from queue_schemas import ops
from tests.conftest import flushed_redis, redis_db_url
from tests.test_backlog import (
    BATCH,
    PIECE,
    TWO_PIECES,
    counts,
    runner_peak,
    two_pieces_then_all,
    write_backlog,
)
from vocabulary.ids import PERSONAL_MIND
from workers.host_runtime import HostRuntime
from workers.queue import QueueConfig
from workers.runtime import EmbeddedRuntime, RuntimeConfig

REDIS10 = redis_db_url(10)  # this file's own db
NEW_MODEL = "hashed-bow-trigram-32"  # the test embedder at 32 dimensions


def config(data: Path, dimensions: int = 32) -> RuntimeConfig:
    return RuntimeConfig(data_dir=data, cognify_batch=BATCH, backlog_piece=PIECE,
                         embedding=EmbeddingConfig(provider="test", test_dimensions=dimensions))


def reembed() -> ops.Reembed:
    return ops.Reembed(mind_id=PERSONAL_MIND, provider="test", model=NEW_MODEL, dim=32)


async def write_indexed(data: Path, frames: int) -> dict[str, int]:
    """``frames`` frames indexed with the 64-dimension model; the mind's graph counts."""
    async with EmbeddedRuntime(config(data, 64)) as rt:
        for start in range(0, frames, 100):
            await rt.submit(PERSONAL_MIND, ops.SaveFrames(mind_id=PERSONAL_MIND, frames=[
                ops.NewFrameOp(gop_id=f"chat-{i // 20}",
                               content=f"Alice Walker met Bob Stone about Project {i}")
                for i in range(start, min(frames, start + 100))]))
        assert await rt.wait_idle(60)
    return await graph(data)


async def graph(data: Path) -> dict[str, int]:
    async with await Mind.open(data / "personal.mind", readonly=True) as m:
        relations = await m.db.fetchval("SELECT COUNT(*) FROM knowledge_relations")
        return {"entities": await m.knowledge.get_entity_count(), "relations": int(relations)}


async def model(data: Path) -> tuple[str, int] | None:
    async with await Mind.open(data / "personal.mind", readonly=True) as m:
        fp = await m.vectors.fingerprint()
    return None if fp is None else (fp.model, fp.dim)


# -- embedded ----------------------------------------------------------------------------------

async def test_a_reembed_queues_its_frames_in_pieces_and_reembeds_them_all(
        tmp_path: Path) -> None:
    before = await write_indexed(tmp_path, 300)
    async with EmbeddedRuntime(config(tmp_path)) as rt:
        assert (await rt.submit(PERSONAL_MIND, reembed())).queued == 300
        assert await runner_peak(rt) <= TWO_PIECES  # not 38 jobs at once
        assert await rt.wait_idle(60)
        assert rt.runner.completed == 38  # each frame once
    assert await counts(tmp_path) == {"pending": 0, "vectors": 300}
    assert await model(tmp_path) == (NEW_MODEL, 32)
    assert await graph(tmp_path) == before  # embedding only: the graph is kept


async def test_a_reembed_during_a_resumption_starts_it_over_and_leaves_nothing_pending(
        tmp_path: Path) -> None:
    """The reset queues every frame again, those the resumption has indexed already too: it
    reads the outbox again from the first frame."""
    await write_backlog(tmp_path, 300)
    async with EmbeddedRuntime(config(tmp_path)) as rt:
        assert await rt.resume(PERSONAL_MIND) == 300
        while (await counts(tmp_path))["vectors"] == 0:  # some frames behind its cursor
            await asyncio.sleep(0.01)
        assert (await rt.submit(PERSONAL_MIND, reembed())).queued == 300
        assert await rt.wait_idle(60)
    assert await counts(tmp_path) == {"pending": 0, "vectors": 300}
    assert await model(tmp_path) == (NEW_MODEL, 32)


async def test_a_reembed_stopped_midway_is_finished_by_the_next_one(tmp_path: Path) -> None:
    await write_backlog(tmp_path, 2_000)
    async with EmbeddedRuntime(config(tmp_path)) as rt:
        await rt.submit(PERSONAL_MIND, reembed())
        while (await counts(tmp_path))["vectors"] == 0:  # some of it re-embedded ...
            await asyncio.sleep(0.01)
    # ... and the process gone: the rest still pending, marked for re-embedding
    stopped = await counts(tmp_path)
    assert stopped["pending"] > 0 and stopped["pending"] + stopped["vectors"] == 2_000
    async with await Mind.open(tmp_path / "personal.mind", readonly=True) as m:
        assert await m.vectors.unfinished("test", NEW_MODEL, 32) == stopped["pending"]
    settings = {"data_dir": tmp_path, "embedding_provider": "test",
                "test_embedding_dimensions": 32, "redis_url": None}
    async with await HiveMind.open(**settings) as hm:  # `hive-mind maintenance reembed`
        again = await hm.maintenance("reembed")
        assert again["minds"][PERSONAL_MIND] == {"queued": stopped["pending"],
                                                 "continued": True}  # not all 2,000
        assert await hm.wait_idle(120)
    assert await counts(tmp_path) == {"pending": 0, "vectors": 2_000}
    assert await model(tmp_path) == (NEW_MODEL, 32)
    async with await HiveMind.open(**settings) as hm:  # once finished, a re-embed starts over
        assert (await hm.maintenance("reembed"))["minds"][PERSONAL_MIND] == {
            "queued": 2_000, "continued": False}
        assert await hm.wait_idle(120)
    assert await counts(tmp_path) == {"pending": 0, "vectors": 2_000}


async def test_a_reconcile_resends_its_stale_frames_in_pieces(tmp_path: Path) -> None:
    await write_backlog(tmp_path, 300)
    async with EmbeddedRuntime(config(tmp_path, 64)) as rt:  # no resumption: the op alone
        assert len((await rt.reconcile(PERSONAL_MIND, grace_seconds=0)).requeue) == 300
        assert await runner_peak(rt) <= TWO_PIECES
        assert await rt.wait_idle(60)
        assert rt.runner.completed == 38
    assert await counts(tmp_path) == {"pending": 0, "vectors": 300}


# -- distributed: a real Redis (db 10) ---------------------------------------------------------

@pytest.fixture
async def redis10() -> AsyncIterator[Any]:
    async with flushed_redis(REDIS10) as pool:
        yield pool


async def test_a_host_sends_a_reembed_to_redis_in_pieces_and_workers_reembed_it_all(
        tmp_path: Path, redis10: Any) -> None:
    before = await write_indexed(tmp_path, 300)
    runtime = config(tmp_path)
    queue = QueueConfig(redis_url=REDIS10, host_id="reembed")
    rt = await HostRuntime.connect(runtime, queue)
    try:
        assert (await rt.submit(PERSONAL_MIND, reembed())).queued == 300
        await two_pieces_then_all(rt, redis10, queue, runtime, 300)
    finally:
        await rt.close()
    assert await counts(tmp_path) == {"pending": 0, "vectors": 300}
    assert await model(tmp_path) == (NEW_MODEL, 32)
    assert await graph(tmp_path) == before
