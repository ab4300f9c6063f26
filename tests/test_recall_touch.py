"""A recall records its hits (access counts) without waiting for that write: the answer comes
first, the write follows on the mind's actor, and ``close`` waits for writes still running, so
none is lost (issue #14: waiting for the commit, at times a WAL checkpoint, was ~10 ms of a
served recall's p95)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hive_mind.facade import HiveMind
from mind.mind import Mind


async def _counts(path: Path) -> dict[int, int]:
    async with await Mind.open(path, readonly=True) as mind:
        return dict(await mind.db.fetchall("SELECT id, access_count FROM memory_frames"))


async def test_a_recall_answers_before_its_hits_are_written_and_close_keeps_them(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    hm = await HiveMind.open(data_dir=data, embedding_provider="test")
    try:
        saved = await hm.save("the lighthouse keeper feeds the gulls", wait=True)
        gate = asyncio.Event()
        submit = hm.runtime.submit

        async def slow_submit(mind_id: str, op: object, **kw: object) -> object:
            if type(op).__name__ == "Touch":
                await gate.wait()  # the write cannot finish before the recall answers
            return await submit(mind_id, op, **kw)  # type: ignore[arg-type]

        hm.runtime.submit = slow_submit  # type: ignore[method-assign]
        hits = await asyncio.wait_for(hm.recall("lighthouse keeper", limit=3), 30)
        assert hits[0]["id"] == saved["id"]
        assert len(hm._touches) == 1  # still waiting
        gate.set()
    finally:
        await hm.close()  # waits for the pending write
    assert (await _counts(data / "personal.mind"))[saved["id"]] == 1
