"""More minds than the LRU keeps open: leased readers stay open for their search, the LRU
catches up after, and a scope-wide recall over them finds every workspace's memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from actors.handlers import HANDLERS
from actors.host import MindHost
from hive_mind.facade import HiveMind


async def test_leased_minds_are_never_closed_and_the_cap_returns(tmp_path: Path) -> None:
    async with MindHost(tmp_path, HANDLERS, max_open=2) as host:
        async with host.lease("workspace:a") as a, host.lease("workspace:b") as b:
            async with host.lease("workspace:c") as c:
                assert len(host.open_ids) == 3  # over the cap while all three are leased
                for reader in (a, b, c):
                    assert await reader.frames.count() == 0  # still open
            await host.reader("workspace:d")  # c is free now: the LRU closes it, not a or b
            assert "workspace:c" not in host.open_ids
            assert {"workspace:a", "workspace:b"} <= set(host.open_ids)
            assert await a.frames.count() == 0
        await host.reader("workspace:e")
        assert len(host.open_ids) <= 2


async def test_scope_wide_recall_over_more_workspaces_than_open_minds(tmp_path: Path) -> None:
    async with await HiveMind.open(data_dir=tmp_path, embedding_provider="test",
                                   max_open_minds=3) as hm:
        for k in range(12):
            await hm.create_workspace(f"Team {k}", workspace_id=f"team-{k}")
            await hm.save(f"team {k} codeword zephyr{k} for the offsite", workspace=f"team-{k}",
                          wait=True)
        detail = await hm.recall_detail("codeword zephyr offsite", scope="all", limit=20)
        found = {r["from"] for r in detail["results"]}
        assert found == {f"workspace:team-{k}" for k in range(12)}
        assert len(hm.runtime.host.open_ids) <= 3


@pytest.mark.slow
async def test_lru_bound_holds_over_50_workspaces_with_a_limit_of_10(tmp_path: Path) -> None:
    import asyncio

    async with await HiveMind.open(data_dir=tmp_path, embedding_provider="test",
                                   max_open_minds=10, scope_minds=0) as hm:
        host = hm.runtime.host
        peak = 0

        async def save(k: int) -> None:
            nonlocal peak
            await hm.save(f"workspace {k} keeps the tapir{k} ledger", workspace=f"ws-{k}")
            peak = max(peak, len(host.open_ids))

        for k in range(50):
            await hm.create_workspace(f"WS {k}", workspace_id=f"ws-{k}")
        await asyncio.gather(*(save(k) for k in range(50)))  # 50 minds written at once
        await hm.wait_idle()
        assert len(host.open_ids) <= 10
        # (touch=False: access-count writes would still be in flight, pinning their minds)
        detail = await hm.recall_detail("tapir ledger", scope="all", limit=60, touch=False)
        assert {r["from"] for r in detail["results"]} == {f"workspace:ws-{k}" for k in range(50)}
        assert len(host.open_ids) <= 10
        listed = await hm.list_workspaces()
        assert sorted(w["frames"] for w in listed["workspaces"]) == [1] * 50
        assert len(host.open_ids) <= 10  # the list opened none


async def test_the_lru_keeps_the_personal_mind_open(tmp_path: Path) -> None:
    async with MindHost(tmp_path, HANDLERS, max_open=2) as host:
        await host.reader("personal")
        for k in range(5):
            await host.reader(f"workspace:w{k}")
        assert "personal" in host.open_ids and len(host.open_ids) <= 3
        assert "workspace:w0" not in host.open_ids  # workspaces still take turns
