"""A one-shot process (a CLI save) beside another process writing the same mind
(actors.handoff, mind.storage.writer_locks): its frame commits with its keyword row and is
indexed by the other process, which has the model loaded; a save from another process waits
for at most the one commit of an import running when it took its turn. Two actors or facades in one process stand for
two processes: ``flock`` locks belong to the open file, not to the process."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from actors.actor import MindActor
from actors.handlers import HANDLERS
from actors.results import FramesSaved, expect
from hive_mind.facade import HiveMind
from mind.mind import Mind
from mind.storage.writer_locks import NOTICE_AFTER, WriterLocks
from queue_schemas import ops
from vocabulary.ids import PERSONAL_MIND


def _save(text: str, frames: int = 1) -> ops.SaveFrames:
    return ops.SaveFrames(mind_id=PERSONAL_MIND, frames=[
        ops.NewFrameOp(gop_id="g", content=f"{text} {i}") for i in range(frames)])


async def _reasons(path: Path) -> dict[int, str]:
    async with await Mind.open(path, readonly=True) as reader:
        rows = await reader.db.fetchall("SELECT frame_id, reason FROM pending_index")
    return {int(r[0]): str(r[1]) for r in rows}


class _Claims:
    """A registered writer's ``on_handed`` hook: the frames it claimed, in order."""

    def __init__(self) -> None:
        self.frames: list[int] = []
        self.arrived = asyncio.Event()

    async def __call__(self, frame_ids: list[int]) -> None:
        self.frames.extend(frame_ids)
        self.arrived.set()


async def test_a_one_shot_writer_hands_its_new_frames_to_a_registered_writer(
        tmp_path: Path) -> None:
    path = tmp_path / "p.mind"
    claims = _Claims()
    handed: list[frozenset[int]] = []

    async def hook(committed: list[tuple[Any, Any]], frames: frozenset[int]) -> None:
        handed.append(frames)

    keeper = MindActor(await Mind.open(path), HANDLERS, on_handed=claims)
    one_shot = MindActor(await Mind.open(path), HANDLERS, one_shot=True, on_commit=hook)
    try:
        await keeper.submit(_save("the keeper's own"))
        saved = expect(await one_shot.submit(_save("handed over")), FramesSaved).frames
        assert handed == [frozenset({saved[0].id})]  # its hook queues no indexing for it
        async with await Mind.open(path, readonly=True) as reader:  # found by keyword at once
            hits = await reader.db.fetchall(
                "SELECT rowid FROM memory_frames_fts WHERE memory_frames_fts MATCH 'handed'")
        assert [r[0] for r in hits] == [saved[0].id]
        await asyncio.wait_for(claims.arrived.wait(), 10)  # the idle keeper claims it
        assert claims.frames == [saved[0].id]
        assert (await _reasons(path))[saved[0].id] == "new"  # claimed: an ordinary pending row
    finally:
        await one_shot.stop()
        await keeper.stop()


async def test_alone_a_one_shot_writer_keeps_its_frames(tmp_path: Path) -> None:
    """No registered writer (none, or one that left): nothing is handed; a one-shot writer is
    not registered itself, so a second one-shot writer indexes its own frames too."""
    path = tmp_path / "p.mind"
    keeper = MindActor(await Mind.open(path), HANDLERS, on_handed=_Claims())
    await keeper.stop()  # left: it unregistered first
    first = MindActor(await Mind.open(path), HANDLERS, one_shot=True)
    second = MindActor(await Mind.open(path), HANDLERS, one_shot=True)
    try:
        await first.submit(_save("first"))
        await second.submit(_save("second"))
        assert set((await _reasons(path)).values()) == {"new"}
    finally:
        await first.stop()
        await second.stop()


async def test_a_registered_writer_closing_claims_what_was_handed_until_then(
        tmp_path: Path) -> None:
    path = tmp_path / "p.mind"
    claims = _Claims()
    keeper = MindActor(await Mind.open(path), HANDLERS, on_handed=claims)
    one_shot = MindActor(await Mind.open(path), HANDLERS, one_shot=True)
    try:
        await keeper.submit(_save("opened"))
        saved = expect(await one_shot.submit(_save("handed at closing")), FramesSaved).frames
    finally:
        await keeper.stop()  # whether its idle look or its closing claims it: claimed once
        await one_shot.stop()
    assert claims.frames == [saved[0].id]
    assert (await _reasons(path))[saved[0].id] == "new"


async def test_an_import_starts_no_commit_while_another_process_saves(tmp_path: Path) -> None:
    """Another process's save holds the mind's turn from before its ``BEGIN IMMEDIATE`` until
    its commit: the import's writer finishes the commit it is running and starts no other, so
    the save waits for at most that one, not for the import's queue of commits; then the import
    goes on, in short commits while saves of other processes keep coming."""
    path = tmp_path / "p.mind"
    importer = MindActor(await Mind.open(path), HANDLERS, bulk_frames=200, part_frames=50)
    other = WriterLocks(path)  # the writer of the saving process
    try:
        batches = [asyncio.create_task(importer.submit(_save(f"import {b}", 200)))
                   for b in range(20)]
        while importer.commits < 2:
            await asyncio.sleep(0.001)
        async with other.interactive("mind p"):
            at_turn = importer.commits
            await asyncio.sleep(0.3)  # a slow save
            async with await Mind.open(path) as saving:  # its commit goes in
                await saving.frames.create_i_frame("s", "the other process's save")
            assert importer.commits <= at_turn + 1  # the commit running when the turn was taken
            after_save = importer.commits
        while importer.commits == after_save:  # the import goes on ...
            await asyncio.sleep(0.001)
        # ... in short parts for a while: it let a save of another process go first
        assert importer.bulk_limit("save_frames") == 50
        await asyncio.gather(*batches)
    finally:
        other.close()
        await importer.stop()


async def test_a_save_that_waits_for_another_process_says_what_it_waits_for(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "p.mind"
    saver = MindActor(await Mind.open(path), HANDLERS, one_shot=True)
    other = WriterLocks(path)  # another process, in the middle of its own save
    try:
        with caplog.at_level(logging.WARNING):
            async with other.interactive("mind p"):
                saving = asyncio.create_task(saver.submit(_save("a save that waits")))
                await asyncio.sleep(NOTICE_AFTER + 0.3)
                assert not saving.done()
            await asyncio.wait_for(saving, 10)  # then it goes in
        said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert any("waiting for the mind file's write lock (held by another process)" in m
                   for m in said), said
    finally:
        other.close()
        await saver.stop()


async def test_a_one_shot_save_beside_a_process_writing_the_mind_loads_no_model(
        tmp_path: Path) -> None:
    """A CLI save (a one-shot facade) beside a process keeping the mind's writer open returns
    once its frame is committed: it loads no embedding model, and the other process indexes
    the frame with its own."""
    async with await HiveMind.open(data_dir=tmp_path) as keeper:
        await keeper.save("the keeper writes the mind")
        await keeper.wait_idle()  # idle: it claims the handed frame as the mind's WAL moves
        async with await HiveMind.open(data_dir=tmp_path, one_shot=True) as cli:
            frame = await cli.save("a note the keeper indexes")
            assert await cli.wait_idle(10)  # ... and nothing of its own was indexed:
            assert cli.runtime.embedder.active is None  # no model loaded
        assert await _indexed(keeper, frame["id"])
        found = await keeper.recall("a note the keeper indexes", lanes="vector", touch=False)
        assert frame["id"] in [hit["id"] for hit in found]  # by its vector


async def _indexed(hm: Any, frame_id: int, timeout: float = 60) -> bool:
    """Whether ``hm``'s process indexed the frame within ``timeout`` seconds (its runtime's
    ``wait_indexed`` says False at once while the frame is handed but not yet claimed)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if await hm.runtime.wait_indexed(PERSONAL_MIND, [frame_id], timeout=1):
            return True
        await asyncio.sleep(0.1)
    return False
