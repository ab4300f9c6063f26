"""Big bulk writes applied in parts (actors/parts.py): interactive saves commit between the parts,
exactly-once per part and per op, later parts wait for earlier ones, a harvest's resume point
moves with the last part only."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from actors.actor import Duplicate, MindActor
from actors.handlers import HANDLERS
from actors.results import FramesSaved
from mind.cognify_apply import ApplyStats
from mind.errors import ValidationError
from mind.mind import Mind
from mind.storage.idempotency import seen
from queue_schemas import ops
from queue_schemas.vector import Fingerprint, Vector


def frames(prefix: str, n: int) -> list[ops.NewFrameOp]:
    return [ops.NewFrameOp(gop_id=f"{prefix}-conv", content=f"{prefix} turn {i}",
                           external_id=f"{prefix}:{i}", dedup=False) for i in range(n)]


def big_save(n: int = 200, op_id: str = "bulk-op", prefix: str = "bulk") -> ops.SaveFrames:
    return ops.SaveFrames(mind_id="personal", op_id=op_id, frames=frames(prefix, n))


async def actor(tmp_path: Path, handlers: dict[str, Any] | None = None,
                **settings: Any) -> MindActor:
    a = MindActor(await Mind.open(tmp_path / "p.mind"), handlers or HANDLERS,
                  bulk_weight=settings.pop("bulk_weight", 64),
                  bulk_frames=settings.pop("bulk_frames", 64),
                  part_frames=settings.pop("part_frames", 64), **settings)
    a.start()
    return a


async def frame_count(a: MindActor) -> int:
    return int(await a.mind.db.fetchval("SELECT count(*) FROM memory_frames"))


async def applied_ids(a: MindActor) -> list[str]:
    rows = await a.mind.db.fetchall("SELECT op_id FROM applied_ops ORDER BY op_id")
    return [r[0] for r in rows]


async def test_a_save_commits_between_the_parts_of_a_big_import(tmp_path: Path) -> None:
    release, reached = asyncio.Event(), asyncio.Event()

    async def gated(mind: Mind, op: Any) -> Any:
        if op.op_id == "bulk-op#1/4":
            reached.set()
            await release.wait()  # the save arrives while the first part's commit runs
        return await HANDLERS["save_frames"](mind, op)

    a = await actor(tmp_path, {**HANDLERS, "save_frames": gated})
    try:
        commits = []
        original = a._apply

        async def apply(batch: list[Any]) -> None:
            await original(batch)
            commits.append([p.op.op_id for p in batch])

        a._apply = apply  # type: ignore[method-assign]
        bulk = asyncio.create_task(a.submit(big_save(200)))
        await reached.wait()
        save = asyncio.create_task(a.submit(
            ops.SaveFrames(mind_id="personal", op_id="live", frames=frames("live", 1))))
        await asyncio.sleep(0.01)
        release.set()
        result, saved = await bulk, await save
        assert isinstance(result, FramesSaved) and len(result.frames) == 200
        ids = [f.id for f in result.frames]
        assert ids == sorted(ids)
        # committed after the first part, ahead of the three queued ones
        assert commits == [["bulk-op#1/4"], ["live"], ["bulk-op#2/4"], ["bulk-op#3/4"],
                           ["bulk-op#4/4"]]
        assert saved.frames[0].id == 65
        # the op's id stands for its parts' once the last part is in
        assert await applied_ids(a) == ["bulk-op", "live"]
        assert await frame_count(a) == 201
    finally:
        await a.stop()


async def test_a_redelivered_import_applies_nothing_again(tmp_path: Path) -> None:
    a = await actor(tmp_path)
    try:
        first = await a.submit(big_save(130))
        again = await a.submit(big_save(130))
        assert isinstance(first, FramesSaved) and len(first.frames) == 130
        assert again == Duplicate("bulk-op")
        assert await frame_count(a) == 130
    finally:
        await a.stop()


async def test_a_failing_part_stops_the_later_ones_and_a_retry_applies_only_the_rest(
    tmp_path: Path,
) -> None:
    broken = {"on": True}

    async def flaky(mind: Mind, op: Any) -> Any:
        if broken["on"] and any(f.content == "bulk turn 70" for f in op.frames):
            raise ValidationError("frame 70 is refused")
        return await HANDLERS["save_frames"](mind, op)

    a = await actor(tmp_path, {**HANDLERS, "save_frames": flaky})
    try:
        with pytest.raises(ValidationError, match="frame 70"):
            await a.submit(big_save(200))
        # part 1 (frames 0-63) is committed; part 2 failed; parts 3 and 4 were not applied
        assert await frame_count(a) == 64
        assert await applied_ids(a) == ["bulk-op#1/4"]
        broken["on"] = False
        retried = await a.submit(big_save(200))
        assert isinstance(retried, FramesSaved)
        assert [f.id for f in retried.frames] == list(range(65, 201))  # only parts 2-4
        assert await frame_count(a) == 200
        contents = await a.mind.db.fetchall("SELECT content FROM memory_frames ORDER BY id")
        assert [c[0] for c in contents] == [f"bulk turn {i}" for i in range(200)]
        assert await applied_ids(a) == ["bulk-op"]
        assert await seen(a.mind.db, "bulk-op") is not None
    finally:
        await a.stop()


async def test_a_harvest_resume_point_moves_with_the_last_part_only(tmp_path: Path) -> None:
    release = asyncio.Event()
    reached = asyncio.Event()

    async def gated(mind: Mind, op: Any) -> Any:
        if op.op_id.endswith("#3/3"):
            reached.set()
            await release.wait()
        return await HANDLERS["harvest_batch"](mind, op)

    a = await actor(tmp_path, {**HANDLERS, "harvest_batch": gated})
    batch = ops.HarvestBatch(mind_id="personal", op_id="h-1", source="chatgpt",
                             conversation_ids=["c"], frames=frames("h", 150), items=3,
                             cursor="3", run_id="run-1", source_path="x.json",
                             titles={"h-conv": "Trip planning", "other-conv": "Not here"})
    try:
        task = asyncio.create_task(a.submit(batch))
        await reached.wait()  # parts 1 and 2 are committed, the last one is running
        run = await a.mind.db.fetchone(
            "SELECT items_done, frames_created FROM harvest_runs WHERE run_id = 'run-1'")
        assert tuple(run) == (0, 128)
        release.set()
        result = await task
        assert isinstance(result, FramesSaved) and len(result.frames) == 150
        run = await a.mind.db.fetchone(
            "SELECT items_done, frames_created, cursor FROM harvest_runs WHERE run_id = 'run-1'")
        assert tuple(run) == (3, 150, "3")
        titles = await a.mind.db.fetchall("SELECT gop_id, summary FROM sessions")
        assert [tuple(t) for t in titles] == [("h-conv", "Trip planning")]
    finally:
        await a.stop()


async def test_small_and_keyed_ops_are_applied_whole(tmp_path: Path) -> None:
    a = await actor(tmp_path, bulk_weight=64)
    try:
        await a.submit(big_save(64, op_id="small"))
        keyed = "key:" + "a" * 32 + ":" + "b" * 32
        await a.submit(big_save(100, op_id=keyed, prefix="keyed"))
        assert await applied_ids(a) == [keyed, "small"]
        assert await frame_count(a) == 164
    finally:
        await a.stop()


async def test_index_results_are_applied_in_parts_once(tmp_path: Path) -> None:
    """A cognify job's results (more than ``bulk_weight`` frames) commit in parts; the stats
    add up, and a redelivered op changes nothing (its id stands for its parts')."""
    a = await actor(tmp_path, bulk_weight=32)
    try:
        saved = await a.submit(big_save(70))
        fp = Fingerprint(provider="test", model="unit", dim=3)
        rng = np.random.default_rng(1)
        results = [ops.FrameIndexResult(
            frame_id=f.id, content_hash=f.content_hash,
            vector=Vector.from_floats((v / np.linalg.norm(v)).tolist()),
            entities=[ops.EntityResult(name=f"Topic{f.id % 5}", entity_type="concept")])
            for f, v in zip(saved.frames, rng.normal(size=(70, 3)), strict=True)]
        op = ops.ApplyIndex(mind_id="personal", op_id="index-op", fingerprint=fp,
                            results=results)
        stats = await a.submit(op)
        assert isinstance(stats, ApplyStats)
        assert (stats.applied, stats.stale, stats.entities) == (70, 0, 70)
        assert await a.mind.db.fetchval("SELECT count(*) FROM pending_index") == 0
        assert await a.submit(op) == Duplicate("index-op")
        assert "index-op" in await applied_ids(a)
        assert not [i for i in await applied_ids(a) if i.startswith("index-op#")]
    finally:
        await a.stop()


async def test_index_results_come_in_smaller_parts_while_saves_arrive(tmp_path: Path) -> None:
    """Without interactive ops a cognify job's results commit in parts of ``bulk_weight``
    frames; right after a save (an urgent op) in parts of a quarter of it, so the next save
    waits for a shorter commit. The results are applied the same either way."""
    seen_parts: list[str] = []

    async def recording(mind: Mind, op: Any) -> Any:
        seen_parts.append(op.op_id)
        return await HANDLERS["apply_index"](mind, op)

    a = await actor(tmp_path, {**HANDLERS, "apply_index": recording}, bulk_weight=64)
    try:
        saved = await a.submit(big_save(64))  # 64 frames: bulk, not an interactive save
        fp = Fingerprint(provider="test", model="unit", dim=3)

        def index_op(op_id: str, chosen: list[Any]) -> ops.ApplyIndex:
            return ops.ApplyIndex(mind_id="personal", op_id=op_id, fingerprint=fp, results=[
                ops.FrameIndexResult(frame_id=f.id, content_hash=f.content_hash,
                                     vector=Vector.from_floats([1.0, 0.0, 0.0]))
                for f in chosen])

        assert a.bulk_limit() == 64
        first = await a.submit(index_op("quiet", saved.frames[:40]))
        assert seen_parts == ["quiet"]  # 40 results: one commit
        await a.submit(ops.SaveFrames(mind_id="personal", frames=frames("live", 1)))
        assert a.bulk_limit() == 16
        seen_parts.clear()
        second = await a.submit(index_op("busy", saved.frames[40:]))
        assert sorted(seen_parts) == ["busy#1/2", "busy#2/2"]  # 24 results: 16 + 8, not one 32
        assert (first.applied, second.applied) == (40, 24)
        assert await a.mind.db.fetchval("SELECT count(*) FROM pending_index") == 1  # the save
    finally:
        await a.stop()


async def test_the_bulk_weight_is_whole_again_once_saves_stop(tmp_path: Path,
                                                               monkeypatch: Any) -> None:
    """The reduced weight lasts ``INTERACTIVE_WINDOW`` after the last save; bulk writes do not
    extend it."""
    a = await actor(tmp_path, bulk_weight=64)
    try:
        await a.submit(ops.SaveFrames(mind_id="personal", frames=frames("live", 1)))
        assert a.bulk_limit() == 16
        await asyncio.sleep(0.3)
        await a.submit(big_save(40, op_id="bulk"))  # bulk: does not count as interactive
        monkeypatch.setattr("actors.actor.INTERACTIVE_WINDOW", 0.2)
        assert a.bulk_limit() == 64  # the save is 0.3 s old; the import would be younger
    finally:
        await a.stop()


async def test_an_import_commits_in_bigger_parts_until_saves_arrive(tmp_path: Path) -> None:
    """New frames commit in parts of ``bulk_frames`` while no one saves (fewer commits: each has
    a fixed cost), in parts of ``part_frames`` right after a save; consecutive small bulk saves
    share one commit up to the limit of the moment. Every frame is written either way."""
    commits: list[list[str]] = []
    a = await actor(tmp_path, bulk_frames=256, part_frames=64)
    original = a._apply

    async def apply(batch: list[Any]) -> None:
        commits.append([p.op.op_id for p in batch])
        await original(batch)

    a._apply = apply  # type: ignore[method-assign]
    try:
        assert a.bulk_limit("save_frames") == 256 and a.bulk_limit("harvest_batch") == 256
        await a.submit(big_save(600, op_id="quiet", prefix="quiet"))
        assert commits == [["quiet#1/3"], ["quiet#2/3"], ["quiet#3/3"]]  # 256 + 256 + 88
        commits.clear()
        await asyncio.gather(*(a.submit(big_save(40, op_id=f"small-{i}", prefix=f"s{i}"))
                               for i in range(8)))
        assert commits == [[f"small-{i}" for i in range(6)], ["small-6", "small-7"]]
        await a.submit(ops.SaveFrames(mind_id="personal", frames=frames("live", 1)))
        assert a.bulk_limit("save_frames") == 64
        assert a.bulk_limit() == 16  # index results: a quarter of bulk_weight, as before
        commits.clear()
        await a.submit(big_save(150, op_id="busy", prefix="busy"))
        assert commits == [["busy#1/3"], ["busy#2/3"], ["busy#3/3"]]  # 64 + 64 + 22
        assert await frame_count(a) == 600 + 320 + 1 + 150
    finally:
        await a.stop()
