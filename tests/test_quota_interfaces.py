"""The monthly embedding quota of ``HIVE_MIND_USER_ID`` through the product: every embedding path
counts (save's and harvest's indexing, recall's query encode, a Redis worker's batched encode),
a used-up gated tier refuses saves, imports and recalls (429 over real HTTP, a tool error over
real MCP stdio, the same error class with its numbers from the remote client), eval mode never
refuses, and ``status`` reports the month's count. Real SQLite usage file, real Redis."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from actors.constants import USAGE_FILE
from hive_mind.facade import HiveMind
from hive_mind.settings import Settings
from mind.embeddings.quota import EmbeddingQuotaExceededError, UsageStore
from tests.conftest import REDIS_URL
from tests.http_server import running_server, server_settings
from tests.procs import run_cli
from workers.distributed import worker_settings
from workers.host_runtime import HostRuntime
from workers.usage import RedisUsage

FREE = 10_000


async def used(data: Path, user: str) -> int:
    store = UsageStore(data / USAGE_FILE)
    try:
        return await store.current(user)
    finally:
        await store.close()


async def use_up(data: Path, user: str, n: int = FREE) -> None:
    store = UsageStore(data / USAGE_FILE)
    try:
        await store.add(user, n)
    finally:
        await store.close()


async def test_every_embedded_path_counts_and_status_reports_it(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Deploys\n\nWe deploy on Fridays.\n\n# Lunch\n\nLunch is at noon.\n")
    async with await HiveMind.open(data_dir=tmp_path / "data", embedding_provider="test",
                                   user_id="alice") as hm:

        async def count() -> int:
            return int((await hm.status(probe=False))["embedding_quota"]["current"])

        status = await hm.status(probe=False)
        assert status["embedding_quota"]["current"] == 0
        assert status["embedding_quota"]["tier"] is None
        assert status["embedding_quota"]["quota"] == -1
        await hm.save("The deploy runs on Fridays at five", wait=True)
        after_save = await count()
        assert after_save >= 1
        await hm.recall("when do we deploy", touch=False)
        after_recall = await count()
        assert after_recall == after_save + 1  # one query encode, however many minds
        summary = await hm.harvest("markdown", notes, wait=True)
        assert summary["frames_created"] >= 1
        after_harvest = await count()
        assert after_harvest >= after_recall + summary["frames_created"]
        status = await hm.status(probe=False)
    assert status["embedding_quota"] == {
        "user_id": "alice", "tier": None, "month": status["embedding_quota"]["month"],
        "current": after_harvest, "quota": -1, "gated": False}
    assert await used(tmp_path / "data", "alice") == after_harvest  # in the data dir's file
    assert await used(tmp_path / "data", "bob") == 0  # counted for the configured user only


async def test_a_used_up_tier_refuses_saves_imports_and_recalls(tmp_path: Path) -> None:
    data = tmp_path / "data"
    notes = tmp_path / "notes.md"
    notes.write_text("# Deploys\n\nWe deploy on Fridays.\n")
    async with await HiveMind.open(data_dir=data, embedding_provider="test", tier="free",
                                   user_id="carol") as hm:
        await hm.save("kept from before the limit", wait=True)
        await use_up(data, "carol", FREE - await used(data, "carol"))
        with pytest.raises(EmbeddingQuotaExceededError) as info:
            await hm.save("one too many")
        assert (info.value.tier, info.value.quota, info.value.current) == ("free", FREE, FREE)
        with pytest.raises(EmbeddingQuotaExceededError):
            await hm.harvest("markdown", notes)
        with pytest.raises(EmbeddingQuotaExceededError):
            await hm.recall("deploy", touch=False)
        assert (await hm.stats())["frames"] == 1  # nothing refused was written
        assert (await hm.recall("kept", lanes="keyword", touch=False))  # keyword needs none
        status = await hm.status(probe=False)
    assert status["embedding_quota"]["current"] == FREE
    assert (status["embedding_quota"]["tier"], status["embedding_quota"]["gated"]) == (
        "free", True)


async def test_indexing_past_the_quota_leaves_frames_pending_not_dead(tmp_path: Path) -> None:
    """A save admitted with one embedding left whose indexing needs more (a long frame: the
    frame and its chunks): the frame stays in the outbox for a later reconcile, with no dead
    letter and no retries, and the refused reservation counts nothing."""
    data = tmp_path / "data"
    async with await HiveMind.open(data_dir=data, embedding_provider="test", tier="free",
                                   user_id="dan") as hm:
        await use_up(data, "dan", FREE - 1)
        long_text = "\n\n".join(f"Paragraph {i} of the design notes. " * 20 for i in range(8))
        saved = await hm.save(long_text)
        assert await hm.wait_idle(30)
        status = await hm.status(probe=False)
        stats = await hm.stats()
    assert saved["id"] >= 1
    assert status["queue"]["dead_letters"] == 0
    assert stats["pending_index"] == 1 and stats["vectors"] == 0
    assert status["embedding_quota"]["current"] == FREE - 1


async def test_eval_mode_never_refuses(tmp_path: Path) -> None:
    data = tmp_path / "data"
    await use_up(data, "erin")
    async with await HiveMind.open(data_dir=data, embedding_provider="test", tier="free",
                                   user_id="erin", eval_mode=True) as hm:
        await hm.save("evaluations run past the quota", wait=True)
        assert await hm.recall("evaluations", touch=False)
        assert (await hm.status(probe=False))["embedding_quota"]["gated"] is False
    assert await used(data, "erin") > FREE  # still counted


def test_http_answers_429_and_the_client_raises_the_same_error(tmp_path: Path) -> None:
    data = tmp_path / "data"
    settings = server_settings(data, tier="free", user_id="frank")
    with running_server(settings) as base, httpx.Client(base_url=base, timeout=30) as api:
        first = api.post("/v1/memories", json={"content": "before the limit", "wait": True})
        assert first.status_code == 201, first.text
        asyncio.run(use_up(data, "frank", FREE - asyncio.run(used(data, "frank"))))
        response = api.post("/v1/memories", json={"content": "over the limit"})
        assert response.status_code == 429, response.text
        error = response.json()["error"]
        assert error["code"] == "quota_exceeded"
        assert "embedding quota exceeded for tier 'free': 10000 of 10000" in error["message"]
        assert error["details"] == {"tier": "free", "quota": FREE, "current": FREE,
                                    "requested": 1, "upgrade_url": None}
        recall = api.post("/v1/recall", json={"query": "anything"})
        assert recall.status_code == 429 and recall.json()["error"]["code"] == "quota_exceeded"
        assert api.get("/v1/stats").json()["frames"] == 1
        status = api.get("/v1/status", params={"probe": "false"}).json()
        assert status["embedding_quota"]["current"] == FREE

        async def remote() -> EmbeddingQuotaExceededError:
            async with await HiveMind.open(Settings(url=base, data_dir=tmp_path / "c")) as hm:
                with pytest.raises(EmbeddingQuotaExceededError) as info:
                    await hm.save("over the limit")
            return info.value

        err = asyncio.run(remote())
    assert (err.tier, err.quota, err.current, err.requested) == ("free", FREE, FREE, 1)


@asynccontextmanager
async def mcp_session(data: Path, **env: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "hive_mind.mcp_server"], cwd=str(data),
        env={"HIVE_MIND_DATA_DIR": str(data), "HIVE_MIND_EMBEDDING_PROVIDER": "test",
             "HF_HUB_OFFLINE": "1", "PYTHONPATH": os.environ.get("PYTHONPATH", ""), **env})
    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, read_timeout_seconds=60) as session:
        await session.initialize()
        yield session


async def test_mcp_tools_answer_a_clear_error(tmp_path: Path) -> None:
    data = tmp_path / "data"
    await use_up(data, "gina")
    async with mcp_session(data, HIVE_MIND_TIER="free", HIVE_MIND_USER_ID="gina") as session:
        saved = await session.call_tool("save_memory", {"content": "over the limit"})
        ingested = await session.call_tool("ingest_source", {"content": "# Notes\n\nover"})
    for result in (saved, ingested):
        assert result.is_error
        text = result.content[0].text  # type: ignore[union-attr]
        assert text.startswith("quota_exceeded: embedding quota exceeded for tier 'free'")
        assert "\n" not in text


# -- distributed: hosts and workers count into Redis -------------------------------------------


async def test_workers_and_hosts_count_into_one_redis_counter(redis: Any, tmp_path: Path
                                                               ) -> None:
    settings = Settings(data_dir=tmp_path / "data", embedding_provider="test", redis_url=REDIS_URL,
                        tier="free", user_id="hana")
    worker = worker_settings(settings.queue_config(), settings.runtime_config(host=False))
    ctx: dict[str, Any] = {"redis": redis}
    await worker.on_startup(ctx)  # type: ignore[attr-defined]
    try:
        await ctx["batcher"].embed(["one", "two", "three"])  # a cognify job's batched encode
    finally:
        await worker.on_shutdown(ctx)  # type: ignore[attr-defined]
    host = HostRuntime(settings.runtime_config(), settings.queue_config(), redis)
    try:
        await (await host.embedder_ready()).embed_batch(["a recall query"])
        quota = await host.quota_status()
        assert quota is not None and quota["current"] == 4 and quota["quota"] == FREE
        await RedisUsage(redis).add("hana", FREE - 4)
        with pytest.raises(EmbeddingQuotaExceededError):
            await host.check_quota()
    finally:
        await host.host.close()
        await host.embedder.close()
    assert not (tmp_path / "data" / USAGE_FILE).exists()  # Redis is the counter here


def test_status_cli_shows_the_quota(tmp_path: Path) -> None:
    data = tmp_path / "data"
    asyncio.run(use_up(data, "ivan", 1234))
    env = {"HIVE_MIND_DATA_DIR": str(data), "HIVE_MIND_EMBEDDING_PROVIDER": "test",
           "HIVE_MIND_TIER": "pro", "HIVE_MIND_USER_ID": "ivan", "HF_HUB_OFFLINE": "1"}
    out = run_cli("status", "--no-probe", "--json", env=env)
    assert out.returncode == 0, out.stderr
    quota = json.loads(out.stdout)["embedding_quota"]
    assert (quota["user_id"], quota["tier"], quota["current"], quota["quota"]) == (
        "ivan", "pro", 1234, 1_000_000)
    table = run_cli("status", "--no-probe", env={**env, "COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    assert "1234 of 1000000" in table.stdout
