"""Fencing records (mind/storage/fencing.py, issue #17): a sharded host claims the files it
writes and refuses another shard's, or its own at a newer epoch — writer and reader alike,
before anything is written; an unsharded host opens anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from actors.host import MindHost, mind_path
from mind.mind import Mind
from mind.storage.fencing import Fence, FencedError, read_fence
from tests.support import HANDLERS, Save


async def fence_of(path: Path) -> Fence | None:
    async with await Mind.open(path, readonly=True) as mind:
        return await read_fence(mind.db)


async def test_a_host_claims_its_minds_and_refuses_another_shards(tmp_path: Path) -> None:
    path = mind_path(tmp_path, "workspace:a")
    async with MindHost(tmp_path, HANDLERS, fence=Fence("shard-0", 1)) as host:
        await host.submit("workspace:a", Save("owned by shard 0"))
    assert await fence_of(path) == Fence("shard-0", 1)
    before = path.stat().st_mtime_ns, Path(f"{path}-wal").exists()

    async with MindHost(tmp_path, HANDLERS, fence=Fence("shard-1", 5)) as other:
        with pytest.raises(FencedError, match="belongs to shard-0"):
            await other.submit("workspace:a", Save("a second writer"))
        with pytest.raises(FencedError, match="belongs to shard-0"):
            await other.reader("workspace:a")
        assert other.open_ids == []
    assert (path.stat().st_mtime_ns, Path(f"{path}-wal").exists()) == before  # untouched

    async with MindHost(tmp_path, HANDLERS, fence=Fence("shard-0", 0)) as stale:
        with pytest.raises(FencedError, match="stale"):
            await stale.submit("workspace:a", Save("from an old epoch"))

    async with MindHost(tmp_path, HANDLERS, fence=Fence("shard-0", 2)) as newer:
        await newer.submit("workspace:a", Save("the next epoch"))
    assert await fence_of(path) == Fence("shard-0", 2)

    async with MindHost(tmp_path, HANDLERS) as unsharded:  # no shards configured: as before
        reader = await unsharded.reader("workspace:a")
        assert await reader.frames.count() == 2
