"""The actor's urgent lane: small interactive ops commit ahead of queued bulk work, in groups of
their own, each lane in FIFO order; and cognify's extraction on its one thread."""

from __future__ import annotations

import asyncio
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from actors.actor import MindActor
from mind.mind import Mind
from queue_schemas import jobs
from workers import cognify


@dataclass(frozen=True)
class Op:
    kind: str
    frames: tuple[str, ...] = ("x",)
    op_id: str = field(default_factory=lambda: uuid.uuid4().hex)


class Recorder:
    """Handlers that write one frame per op and log (commit group, kind, first text)."""

    def __init__(self) -> None:
        self.applied: list[tuple[str, str]] = []
        self.gate = asyncio.Event()
        self.groups: list[list[str]] = []

    async def handle(self, mind: Mind, op: Op) -> int:
        if op.frames[0] == "blocker":
            await self.gate.wait()  # holds the first commit open while the others queue
        self.applied.append((op.kind, op.frames[0]))
        return (await mind.frames.create_i_frame("g", op.frames[0])).frame.id

    def handlers(self) -> dict[str, Any]:
        return {kind: self.handle for kind in ("save_frames", "apply_index", "harvest_batch")}


async def run_queue(tmp_path: Path, ops: list[Op], **settings: Any) -> tuple[Recorder, MindActor]:
    rec = Recorder()
    actor = MindActor(await Mind.open(tmp_path / "a.mind"), rec.handlers(), max_wait=0.01,
                      **settings)
    original = actor._apply

    async def apply(batch: list[Any]) -> None:
        rec.groups.append([p.op.frames[0] for p in batch])
        await original(batch)

    actor._apply = apply  # type: ignore[method-assign]
    first = asyncio.create_task(actor.submit(Op("apply_index", ("blocker",))))
    await asyncio.sleep(0.05)  # the blocker's commit is running
    tasks = []
    for op in ops:
        tasks.append(asyncio.create_task(actor.submit(op)))
        await asyncio.sleep(0)  # queued in this order
    await asyncio.sleep(0.05)
    rec.gate.set()
    await asyncio.gather(first, *tasks)
    return rec, actor


def bulk(name: str, n: int = 64, kind: str = "apply_index") -> Op:
    return Op(kind, (name,) + ("y",) * (n - 1))


async def test_a_small_save_commits_before_queued_bulk_work_and_alone(tmp_path: Path) -> None:
    ops = [bulk("index 1"), bulk("index 2"), Op("save_frames", ("live save",)),
           bulk("index 3"), Op("save_frames", ("second save",))]
    rec, actor = await run_queue(tmp_path, ops)
    try:
        order = [text for _, text in rec.applied]
        assert order == ["blocker", "live save", "second save", "index 1", "index 2", "index 3"]
        # the saves were committed together, in a group without bulk work
        assert ["live save", "second save"] in rec.groups
    finally:
        await actor.stop()


async def test_urgent_weight_zero_keeps_one_fifo(tmp_path: Path) -> None:
    ops = [bulk("index 1"), Op("save_frames", ("live save",)), bulk("index 2")]
    rec, actor = await run_queue(tmp_path, ops, urgent_weight=0)
    try:
        assert [t for _, t in rec.applied] == ["blocker", "index 1", "live save", "index 2"]
    finally:
        await actor.stop()


async def test_large_saves_and_small_harvest_batches_stay_in_order(tmp_path: Path) -> None:
    # a big save is bulk work; a harvest's last, small batch must not overtake its earlier ones
    ops = [bulk("harvest 1", kind="harvest_batch"), bulk("big save", 100, "save_frames"),
           Op("harvest_batch", ("harvest 2",))]
    rec, actor = await run_queue(tmp_path, ops)
    try:
        assert [t for _, t in rec.applied] == ["blocker", "harvest 1", "big save", "harvest 2"]
    finally:
        await actor.stop()


async def test_bulk_groups_respect_bulk_weight(tmp_path: Path) -> None:
    ops = [bulk(f"index {i}") for i in range(4)]
    rec, actor = await run_queue(tmp_path, ops, bulk_weight=128)
    try:
        assert rec.groups[1:] == [["index 0", "index 1"], ["index 2", "index 3"]]
    finally:
        await actor.stop()


async def test_stop_applies_both_lanes_first(tmp_path: Path) -> None:
    rec = Recorder()
    rec.gate.set()
    actor = MindActor(await Mind.open(tmp_path / "a.mind"), rec.handlers())
    tasks = [asyncio.create_task(actor.submit(op)) for op in
             (bulk("index"), Op("save_frames", ("save",)))]
    await asyncio.sleep(0)
    await actor.stop()
    assert sorted(await asyncio.gather(*tasks)) == [1, 2]
    assert sorted(t for _, t in rec.applied) == ["index", "save"]


async def test_extraction_runs_on_its_one_thread_and_gives_the_same_graphs() -> None:
    items = [jobs.CognifyItem(frame_id=i + 1, content=text, content_hash=None)
             for i, text in enumerate(["Alice met Bob in Lisbon.", "Biscuit barks at Bob.",
                                       "Then Alice called Acme Corp about the invoice."])]
    names: list[str] = []
    paused: list[int] = []

    def on_thread() -> Any:
        names.append(threading.current_thread().name)
        return cognify.extract_graphs(items, lambda: paused.append(1))

    threaded = await asyncio.get_running_loop().run_in_executor(cognify.EXTRACTION, on_thread)
    assert names[0].startswith("hm-extract")
    assert threaded == cognify.extract_graphs(items)  # pausing changes nothing in the result
    assert len(paused) == 2 * len(items)  # once per item of each pass
    assert any(entities for entities, _ in threaded)


async def test_a_bulk_group_never_passes_the_bulk_weight(tmp_path: Path) -> None:
    """An op that would take a bulk group past ``bulk_weight`` frames starts the next group
    (a save waits for at most one bulk commit: the bound is what keeps that commit short)."""
    ops = [bulk("a", 40), bulk("b", 40), bulk("c", 20), bulk("d", 30)]
    rec, actor = await run_queue(tmp_path, ops, bulk_weight=64)
    try:
        assert [g for g in rec.groups if g != ["blocker"]] == [["a"], ["b", "c"], ["d"]]
        assert [text for _, text in rec.applied] == ["blocker", "a", "b", "c", "d"]
    finally:
        await actor.stop()
