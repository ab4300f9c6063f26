"""Writers of one mind in several processes (mind.storage.writer_locks): a writer sees another
process's writer, a save's turn holds bulk commits back, and a process leaves the outbox of a
mind another process writes to that process. Two lock holders in one process stand for two
processes: ``flock`` locks belong to the open file, not to the process."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hive_mind.facade import HiveMind
from mind.storage.writer_locks import WriterLocks, others_writing


def test_a_writer_sees_the_other_writers_of_its_mind(tmp_path: Path) -> None:
    path = tmp_path / "p.mind"
    assert not others_writing(path)  # no writer ever opened it
    mine = WriterLocks(path)
    try:
        assert not mine.others_present()
        assert others_writing(path)  # asked from a process without a writer on it
        theirs = WriterLocks(path)
        assert mine.others_present() and theirs.others_present()
        assert mine.others_present()  # asking keeps its own place
        theirs.close()
        assert not mine.others_present()
    finally:
        mine.close()
    assert not others_writing(path)
    assert WriterLocks.for_mind(":memory:") is None


async def test_bulk_commits_wait_for_another_writers_save(tmp_path: Path) -> None:
    path = tmp_path / "p.mind"
    saver, importer = WriterLocks(path), WriterLocks(path)
    try:
        await asyncio.wait_for(importer.bulk_turn("mind p"), 1)  # nobody saving: no wait
        async with saver.interactive("mind p"):
            waiting = asyncio.create_task(importer.bulk_turn("mind p"))
            await asyncio.sleep(0.1)
            assert not waiting.done()  # the import does not start its next commit
        await asyncio.wait_for(waiting, 1)  # ... until the save committed
    finally:
        saver.close()
        importer.close()


async def test_two_saves_take_turns(tmp_path: Path) -> None:
    path = tmp_path / "p.mind"
    a, b = WriterLocks(path), WriterLocks(path)
    order: list[str] = []
    try:
        async with a.interactive("mind p"):
            second = asyncio.create_task(_save(b, order))
            await asyncio.sleep(0.1)
            order.append("a")
        await asyncio.wait_for(second, 1)
        assert order == ["a", "b"]
    finally:
        a.close()
        b.close()


async def _save(locks: WriterLocks, order: list[str]) -> None:
    async with locks.interactive("mind p"):
        order.append("b")


async def test_a_process_leaves_another_writers_outbox_to_it(tmp_path: Path) -> None:
    """On first use of a mind a process re-queues what its outbox holds, unless a writer in
    another process has the mind open: that one queued it (an import's backlog is not a
    save's to index); it asks again at its next use."""
    async with await HiveMind.open(data_dir=tmp_path, embedding_provider="mock") as hm:
        await hm.save("left in the outbox: the degraded embedder indexes nothing")
    other = WriterLocks(tmp_path / "personal.mind")  # another process's writer
    try:
        async with await HiveMind.open(data_dir=tmp_path, embedding_provider="mock") as hm:
            assert await hm.runtime.resume("personal") == 0
            other.close()
            assert await hm.runtime.resume("personal") == 1  # asked again: now it is its own
            assert await hm.runtime.resume("personal") == 0  # once per process
    finally:
        other.close()
