"""A recall records its hits (access counts) without waiting for that write: the answer comes
first, the write follows on the mind's actor, and ``close`` waits for writes still running, so
none is lost (issue #14: waiting for the commit, at times a WAL checkpoint, was ~10 ms of a
served recall's p95). The hits of recalls close together are one write, and each still
counts."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hive_mind import touches
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
        await asyncio.sleep(touches.FLUSH_SECONDS * 2)
        assert hm._touches.waiting == 1  # the write is still waiting
        gate.set()
    finally:
        await hm.close()  # waits for the pending write
    assert (await _counts(data / "personal.mind"))[saved["id"]] == 1


async def test_the_hits_of_recalls_close_together_are_one_write_and_each_counts(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    hm = await HiveMind.open(data_dir=data, embedding_provider="test")
    writes: list[list[int]] = []
    try:
        keeper = await hm.save("the lighthouse keeper feeds the gulls", wait=True)
        boat = await hm.save("the ferry boat leaves at nine", wait=True)
        submit = hm.runtime.submit

        async def counted(mind_id: str, op: object, **kw: object) -> object:
            if type(op).__name__ == "Touch":
                writes.append(list(op.frame_ids))  # type: ignore[attr-defined]
            return await submit(mind_id, op, **kw)  # type: ignore[arg-type]

        hm.runtime.submit = counted  # type: ignore[method-assign]
        for query in ("lighthouse keeper", "lighthouse gulls", "ferry boat"):
            await hm.recall(query, limit=1)
        assert writes == []  # nothing written yet: the window is open
        await asyncio.sleep(touches.FLUSH_SECONDS * 3)
        assert len(writes) == 1 and sorted(writes[0]) == sorted(
            [keeper["id"], keeper["id"], boat["id"]])
        assert hm._touches.waiting == 0
        counts = await _counts(data / "personal.mind")
        assert counts[keeper["id"]] == 2 and counts[boat["id"]] == 1
        await hm.recall("ferry boat", limit=1, touch=False)
        await hm.recall("ferry boat", limit=1)
    finally:
        await hm.close()  # writes the last recall's hit at once
    assert len(writes) == 2 and writes[1] == [boat["id"]]
    assert (await _counts(data / "personal.mind"))[boat["id"]] == 2
