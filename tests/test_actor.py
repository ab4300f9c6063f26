from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any

import pytest

from actors.actor import Duplicate, MindActor
from actors.host import MindHost, mind_path
from mind.errors import InvalidIdError, NotFoundError, ValidationError
from mind.mind import Mind
from tests.support import HANDLERS, Boom, Save, save_handler


@pytest.fixture
async def actor(tmp_path: Path):  # type: ignore[no-untyped-def]
    a = MindActor(await Mind.open(tmp_path / "a.mind"), HANDLERS, max_wait=0.01)
    yield a
    await a.stop()


async def test_many_concurrent_submits_group_commit_gap_free(actor: MindActor) -> None:
    ids = await asyncio.gather(*(actor.submit(Save(f"note {i}")) for i in range(300)))
    assert len(set(ids)) == 300
    assert actor.commits < 300  # ops were grouped into shared transactions
    frames = await actor.mind.frames.get_gop_frames("g")
    assert [f.t for f in frames] == list(range(300))


async def test_a_bad_op_fails_alone(actor: MindActor) -> None:
    ops: list[Any] = [Save("before"), Boom(), Save("after")]
    results = await asyncio.gather(*(actor.submit(op) for op in ops), return_exceptions=True)
    assert isinstance(results[1], ValidationError)
    assert isinstance(results[0], int) and isinstance(results[2], int)
    contents = sorted(f.content for f in await actor.mind.frames.get_recent())
    assert contents == ["after", "before"]  # the bad op's partial write was rolled back


async def test_duplicate_op_id_applies_once(actor: MindActor) -> None:
    op = Save("only once")
    first = await actor.submit(op)
    again = await actor.submit(op)
    assert isinstance(first, int) and isinstance(again, Duplicate)
    assert await actor.mind.frames.count() == 1


async def test_ack_means_committed_and_visible_to_readers(actor: MindActor, tmp_path: Path) -> None:
    reader = await Mind.open(tmp_path / "a.mind", readonly=True)
    try:
        for i in range(5):
            fid = await actor.submit(Save(f"visible {i}"))
            assert await reader.frames.get(fid) is not None
    finally:
        await reader.close()


async def test_bounded_mailbox_backpressure(tmp_path: Path) -> None:
    gate = asyncio.Event()

    async def slow(mind: Mind, op: Save) -> int:
        await gate.wait()
        return await save_handler(mind, op)

    a = MindActor(await Mind.open(tmp_path / "b.mind"), {"save": slow}, mailbox=3, max_ops=1)
    tasks = [asyncio.create_task(a.submit(Save(f"n{i}"))) for i in range(10)]
    await asyncio.sleep(0.05)
    assert a.queued <= 3  # the rest wait in submit()
    gate.set()
    assert len(await asyncio.gather(*tasks)) == 10
    await a.stop()


async def test_stop_applies_queued_ops_then_refuses(tmp_path: Path) -> None:
    a = MindActor(await Mind.open(tmp_path / "c.mind"), HANDLERS)
    pending = [asyncio.create_task(a.submit(Save(f"q{i}"))) for i in range(20)]
    await asyncio.sleep(0)
    await a.stop()
    assert all(isinstance(t.result(), int) for t in pending)
    from actors.actor import ActorClosedError

    with pytest.raises(ActorClosedError):
        await a.submit(Save("late"))
    async with await Mind.open(tmp_path / "c.mind") as m:
        assert await m.frames.count() == 20


async def test_commit_hook_sees_committed_ops_only(tmp_path: Path) -> None:
    seen: list[tuple[Any, Any]] = []

    async def hook(committed: list[tuple[Any, Any]], handed: frozenset[int]) -> None:
        seen.extend(committed)

    a = MindActor(await Mind.open(tmp_path / "d.mind"), HANDLERS, on_commit=hook)
    await asyncio.gather(a.submit(Save("x")), a.submit(Boom()), return_exceptions=True)
    await a.stop()
    assert [op.kind for op, _ in seen] == ["save"]


async def test_each_commit_is_logged_with_its_ops_for_a_trace(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    a = MindActor(await Mind.open(tmp_path / "t.mind"), HANDLERS, max_wait=0.05)
    before = time.perf_counter()
    with caplog.at_level(logging.DEBUG, logger="actors.actor"):
        await asyncio.gather(*(a.submit(Save(f"note {i}")) for i in range(5)))
    await a.stop()
    commits = [r for r in caplog.records if hasattr(r, "ops")]
    assert len(commits) == a.commits >= 1
    assert sorted(op.text for r in commits for op in r.ops) == [f"note {i}" for i in range(5)]
    assert all(before <= r.started <= time.perf_counter() for r in commits)


@pytest.mark.parametrize(
    "bad", ["../x", "workspace:../x", "workspace:/etc", "workspace:a/b", "workspace:", "workspace:A",
            "workspace:a\x00b", "/abs/path", "personal/../x", "workspace:" + "a" * 65, ""],
)
def test_mind_ids_are_validated(tmp_path: Path, bad: str) -> None:
    with pytest.raises(InvalidIdError):
        mind_path(tmp_path, bad)


async def test_host_opens_lru(tmp_path: Path) -> None:
    async with MindHost(tmp_path, HANDLERS, max_open=2) as host:
        assert mind_path(tmp_path, "workspace:alpha") == tmp_path / "workspaces" / "alpha" / "workspace.mind"
        with pytest.raises(NotFoundError):
            await host.actor("workspace:missing", create=False)
        await host.submit("personal", Save("mine"))
        fid = await host.submit("workspace:alpha", Save("alpha note"))
        await host.submit("workspace:beta", Save("beta note"))
        # alpha evicted (LRU); the personal mind stays open (every scope-wide recall reads it)
        assert host.open_ids == ["personal", "workspace:beta"]
        reader = await host.reader("workspace:alpha")
        assert (await reader.frames.get(fid)) is not None  # reopened on demand, data durable
        assert sorted(host.list_minds()) == ["personal", "workspace:alpha", "workspace:beta"]
