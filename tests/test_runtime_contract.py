"""The runtime contract (issue #13, "Reaching through the runtime"): the bugs that lived in
the seams between the facade and the two runtimes, each reproduced literally.

Distributed cases run on a real Redis (db 11, flushed per test) with real mind files; no
worker process runs unless a test starts one in process, so queued cognify jobs stay visible.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hive_mind.facade import HiveMind
from hive_mind.server import HostWorker
from hive_mind.settings import Settings
from queue_schemas import jobs
from queue_schemas.constants import COGNIFY_QUEUE
from tests.conftest import redis_db_url
from workers.arq_worker import make_worker
from workers.distributed import worker_settings
from workers.queue import connect

REDIS_DB_URL = redis_db_url(11)  # this file's own db number
HOST = "contract"


@pytest.fixture
async def redis11() -> AsyncIterator[Any]:
    try:
        pool = await connect(REDIS_DB_URL)
        await pool.ping()
    except Exception as exc:
        pytest.skip(f"no Redis at {REDIS_DB_URL}: {exc}")
    await pool.flushdb()
    yield pool
    await pool.flushdb()
    await pool.aclose()


def distributed(data: Path) -> dict[str, Any]:
    return {"data_dir": data, "redis_url": REDIS_DB_URL, "host_id": HOST,
            "embedding_provider": "test", "url": None}


async def queued_frames(redis: Any) -> Counter[int]:
    """How many queued cognify jobs name each frame (no worker runs, so they stay queued)."""
    seen: Counter[int] = Counter()
    for job in await redis.queued_jobs(queue_name=COGNIFY_QUEUE):
        parsed = jobs.parse_job(job.args[0])
        seen.update(item.frame_id for item in parsed.items)
    return seen


def consumer(hm: HiveMind, settings: Settings) -> type:
    """The arq settings of the host's own queue, as ``serve`` gets them from its runtime."""
    cls = hm.runtime.consumer_settings(settings.schedule_config())
    assert cls is not None
    return cls


async def run_burst(settings_cls: type) -> None:
    """Run an arq worker of ``settings_cls`` until its queue is empty."""
    worker = make_worker(settings_cls, burst=True, poll_delay=0.05)
    try:
        await worker.main()
    finally:
        await worker.close()


def notes(tmp_path: Path) -> Path:
    path = tmp_path / "notes.md"
    path.write_text("# Garden\n\nWater the tomatoes on Tuesdays.\n\n## Roses\n\n"
                    "Prune the roses in February.\n")
    return path


# -- a: harvest writes go through the runtime ---------------------------------------------------

async def test_distributed_wait_idle_waits_for_a_mind_that_was_only_harvested(
    tmp_path: Path, redis11: Any
) -> None:
    settings = Settings(**distributed(tmp_path / "data"))
    async with await HiveMind.open(settings) as hm:
        summary = await hm.harvest("markdown", notes(tmp_path), wait=False)
        assert summary["frames_created"] == 2 and summary["pending_index"] == 2
        # no worker runs: the harvested frames are pending, so the process is not idle
        assert await hm.wait_idle(0.3) is False
        assert sum((await queued_frames(redis11)).values()) == 2
        # a cognify worker embeds them, this host applies the results: now it is idle
        await run_burst(worker_settings(settings.queue_config(), settings.runtime_config()))
        await run_burst(consumer(hm, settings))
        assert await hm.wait_idle(30) is True
        assert (await hm.stats())["vectors"] == 2


# -- b: reconcile queues each pending frame once ----------------------------------------------

async def test_reconcile_queues_each_pending_frame_once(tmp_path: Path, redis11: Any) -> None:
    async with await HiveMind.open(**distributed(tmp_path / "data")) as hm:
        for text in ("Alice owns the budget", "Bob owns the roadmap", "Carol owns the wiki"):
            await hm.save(text)
        await redis11.flushdb()  # Redis lost the cognify jobs: reconcile must re-send them
        result = await hm.maintenance("reconcile")
        assert result["minds"]["personal"]["requeued"] == 3
        assert "requeue" not in result["minds"]["personal"]  # the op's list stays internal
        await hm.runtime.backlogs.wait()  # re-sent in the background, a piece at a time
        assert await queued_frames(redis11) == Counter({1: 1, 2: 1, 3: 1})


# -- c: status reads the runtime's own minds, embedder and runner -----------------------------

async def test_status_reports_the_runners_numbers_through_the_runtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    async with await HiveMind.open(data_dir=data, embedding_provider="test",
                                   test_embedding_dimensions=64, redis_url=None) as hm:
        await hm.save("Alice owns the budget", wait=True)  # the mind is indexed at 64 dims
        await hm.create_workspace("Ops")  # a mind the next process never opens
    # another model, one try: the next frame's cognify job fails for good (a dead letter)
    async with await HiveMind.open(data_dir=data, embedding_provider="test",
                                   test_embedding_dimensions=32, job_max_tries=1,
                                   redis_url=None) as hm:
        await hm.save("Bob owns the roadmap", wait=True)
        opened: list[Path] = []
        started: list[object] = []
        from mind.embeddings.chain import EmbeddingProviderChain
        from mind.mind import Mind

        real_open, real_start = Mind.open.__func__, EmbeddingProviderChain.start  # type: ignore[attr-defined]

        async def counting_open(cls: type[Mind], /, path: Path, **kw: Any) -> Mind:
            opened.append(path)
            return await real_open(cls, path, **kw)  # type: ignore[no-any-return]

        async def counting_start(self: EmbeddingProviderChain) -> Any:
            started.append(self)
            return await real_start(self)

        monkeypatch.setattr(Mind, "open", classmethod(counting_open))
        monkeypatch.setattr(EmbeddingProviderChain, "start", counting_start)
        report = await hm.status(probe=True)
        # every mind's counts from the catalog's short looks: no mind opened (no actor, no
        # reader) for a report, and the embedder the runtime already loaded
        assert opened == [] and started == []
        assert report["embedder"]["dimensions"] == 32 and report["embedder"]["degraded"] is False
        queue = report["queue"]
        assert queue["mode"] == "embedded"
        assert (queue["depth"], queue["in_progress"], queue["dead_letters"]) == (0, 0, 1)
        assert queue["dead_letters_by_mind"] == {"personal": 1}
        (letter,) = queue["recent_dead_letters"]
        assert letter["mind_id"] == "personal" and "64" in letter["error"]
        assert [(m["id"], m["frames"], m["pending_index"]) for m in report["minds"]] == [
            ("personal", 2, 1), ("workspace:ops", 0, 0)]
        assert "workspace:ops" not in hm_open_ids(hm)


async def test_status_shows_the_search_indexes_this_process_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The personal mind's vector index (rows, exact scan; the saves' link search loaded it)
    and, once a recall ran, its keyword index: off for a small mind, ready once built (here
    from 3 frames instead of 20,000, on its thread after the recall)."""
    from mind.retrieval import keyword_index
    from mind.retrieval.keyword_index import KeywordIndex

    texts = ["Alice owns the budget", "Bob owns the roadmap", "Carol owns the wiki"]
    async with await HiveMind.open(data_dir=tmp_path / "small", embedding_provider="test",
                                   redis_url=None) as hm:
        for text in texts:
            await hm.save(text, wait=True)
        before = (await hm.status(probe=False))["memory_indexes"]
        assert before["personal"]["keyword"] is None  # no recall yet
        await hm.recall("budget", touch=False)  # starts a thread that finds the mind small
        small = await _settled(hm)
    assert list(small) == ["personal"]
    vector, keyword = small["personal"]["vector"], small["personal"]["keyword"]
    assert (vector["frames"], vector["chunks"], vector["scan"]) == (3, 0, "exact")
    assert vector["bytes"] > 0 and keyword == {"state": "off", "frames": 0, "bytes": 0,
                                               "error": None}

    monkeypatch.setattr(keyword_index, "KeywordIndex",  # as a mind makes it, on first use
                        lambda path: KeywordIndex(path, min_rows=3))
    async with await HiveMind.open(data_dir=tmp_path / "big", embedding_provider="test",
                                   redis_url=None) as hm:
        for text in texts:
            await hm.save(text, wait=True)
        await hm.recall("budget", touch=False)  # answers through FTS5, then starts the build
        keyword = (await _settled(hm))["personal"]["keyword"]
    assert keyword["state"] == "ready" and keyword["frames"] == 3 and keyword["bytes"] > 0


async def _settled(hm: HiveMind) -> dict[str, Any]:
    """``memory_indexes`` once the personal mind's keyword index is no longer building."""
    import asyncio

    for _ in range(200):
        found: dict[str, Any] = (await hm.status(probe=False))["memory_indexes"]
        if found["personal"]["keyword"]["state"] != "building":
            return found
        await asyncio.sleep(0.05)
    raise AssertionError("the keyword index is still building after 10 s")


def hm_open_ids(hm: HiveMind) -> list[str]:
    """The minds the runtime's host has open (a test may look inside ``workers/``)."""
    return list(hm.runtime.host.open_ids)  # type: ignore[attr-defined]


# -- d: one sweep per mind per process start --------------------------------------------------

async def test_host_restart_queues_pending_frames_once(tmp_path: Path, redis11: Any) -> None:
    settings = Settings(**distributed(tmp_path / "data"))
    async with await HiveMind.open(settings) as hm:
        for text in ("Alice owns the budget", "Bob owns the roadmap"):
            await hm.save(text)
    await redis11.flushdb()  # the host died and Redis lost its jobs
    async with await HiveMind.open(settings) as hm:  # the restarted serve
        worker = HostWorker(consumer(hm, settings))  # what serve runs beside its HTTP API
        await worker.worker.on_startup({"redis": redis11})  # type: ignore[misc]
        assert await queued_frames(redis11) == Counter({1: 1, 2: 1})  # the startup sweep
        assert (await hm.stats())["pending_index"] == 2  # first use of the mind afterwards
        assert await queued_frames(redis11) == Counter({1: 1, 2: 1})  # nothing queued twice


# -- readiness goes through the runtime too ---------------------------------------------------

async def test_readiness_asks_the_runtimes_own_redis(tmp_path: Path, redis11: Any) -> None:
    from arq.connections import ArqRedis

    from workers.host_runtime import HostRuntime

    settings = Settings(**distributed(tmp_path / "data"))
    async with await HiveMind.open(settings) as hm:
        assert await hm.readiness() == {"warm_up": True, "redis": True}  # none started
    down = HostRuntime(settings.runtime_config(), settings.queue_config(),
                       ArqRedis(host="127.0.0.1", port=1))  # nothing listens there
    try:
        assert await down.ready_checks() == {"redis": False}
        queue = await down.queue_status()
        assert queue["depth"] is None and "error" in queue
    finally:
        await down.close()
    async with await HiveMind.open(data_dir=tmp_path / "e", embedding_provider="test",
                                   redis_url=None) as embedded:
        # nothing beyond the facade, the data dir and a warm-up (none started: nothing to wait for)
        assert await embedded.readiness() == {"warm_up": True}


def test_status_json_while_redis_is_unreachable(tmp_path: Path) -> None:
    """The facade cannot open without Redis; ``status --json`` still reports minds and the
    queue's (masked) error, as it did before it read through the runtime."""
    import json
    import os
    import subprocess
    import sys

    from tests.procs import ROOT

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HIVE_MIND_DATA_DIR": str(tmp_path / "data"),
           "HIVE_MIND_EMBEDDING_PROVIDER": "test"}
    env.pop("HIVE_MIND_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "hive_mind", "--redis-url", "redis://:s3cret-pw@127.0.0.1:1/0",
         "status", "--json", "--no-probe"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["mode"] == "distributed" and report["queue"]["depth"] is None
    assert "127.0.0.1:1" in report["queue"]["error"] and "s3cret" not in done.stdout
