"""Moving minds between shards, one host's side (actors/moves.py, issue #17), on real mind
files; the rebalance plan (hive_mind/rebalance.py) from holdings; the forwarding hop rules
(hive_mind/forwarding.py) and the cross-shard merge of recalls (hive_mind/sharded.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from actors.host import MindHost, mind_path
from actors.moves import MoveBook
from actors.placement import parse_shards
from hive_mind.forwarding import ForwardingContext, forwarded, may_forward
from hive_mind.rebalance import make_plan
from hive_mind.sharded import merge_recalls
from mind.errors import ConflictError
from mind.mind import Mind
from mind.storage.fencing import Fence, FencedError, read_file_fence
from tests.support import HANDLERS, Save

SHARDS = parse_shards("shard-0=http://h0:1,shard-1=http://h1:1")
MIND = next(f"workspace:w{i}" for i in range(100) if SHARDS.owner(f"workspace:w{i}") == "shard-1")


def host(root: Path, shard: str, epoch: int = 0) -> MindHost:
    """A shard host that believes in the map ``SHARDS`` — except that shard-0 is also given
    MIND by an older map (its owner function says so), as before a rebalance."""
    def old_map(mind_id: str) -> str:
        return "shard-0" if mind_id == MIND else SHARDS.owner(mind_id)

    owner = old_map if shard == "shard-0" else SHARDS.owner
    return MindHost(root / shard, HANDLERS, fence=Fence(shard, epoch), owner=owner)


async def test_a_mind_moves_with_every_acknowledged_write_and_is_fenced_throughout(
        tmp_path: Path) -> None:
    old, new = host(tmp_path, "shard-0"), host(tmp_path, "shard-1", epoch=3)
    async with old, new:
        for n in range(5):
            await old.submit(MIND, Save(f"note {n}"))
        source = old.path(MIND)
        (source.parent / "workspace.json").write_text('{"id": "w", "name": "W"}')

        new.expect(MIND, '{"id": "w", "name": "W"}')
        with pytest.raises(FencedError, match="moving to this host"):
            await new.submit(MIND, Save("too early"))  # never a fresh empty file
        assert not new.path(MIND).exists()

        gone = await old.release(MIND, Fence("shard-1", 3), "http://h1:1", "map")
        assert (gone.to, gone.state) == ("shard-1", "released")
        assert read_file_fence(source) == Fence("shard-1", 3)
        with pytest.raises(FencedError, match="moved to shard-1") as refused:
            await old.submit(MIND, Save("after the release"))
        assert refused.value.owner == "shard-1"
        assert MIND not in old.list_minds() and not old.serves(MIND)
        again = await old.release(MIND, Fence("shard-1", 3), "http://h1:1", "map")  # resumed: no-op
        assert again == gone

        copy = tmp_path / "copy.mind"
        await old.snapshot(MIND, copy)
        incoming = new.data_dir / "incoming.mind"
        copy.rename(incoming)
        await new.admit(MIND, incoming)
        await new.submit(MIND, Save("on the new owner"))
        reader = await new.reader(MIND)
        assert await reader.frames.count() == 6
        assert (new.path(MIND).parent / "workspace.json").read_text() == '{"id": "w", "name": "W"}'
        assert read_file_fence(new.path(MIND)) == Fence("shard-1", 3)

        old.retire(MIND)
        assert not source.exists() and not source.parent.exists()
        assert not list((old.data_dir / "moves").glob("workspace-*.*/"))  # no copy kept
        old.retire(MIND)  # idempotent

    # the departure survives a restart: the old host, even on the old map, never re-creates it
    async with host(tmp_path, "shard-0") as restarted:
        with pytest.raises(FencedError, match="moved to shard-1"):
            await restarted.submit(MIND, Save("stale host"))
        assert not restarted.path(MIND).exists()
    assert MoveBook(tmp_path / "shard-0").departed[MIND].state == "retired"


async def test_admit_refuses_copies_not_fenced_for_it(tmp_path: Path) -> None:
    a = host(tmp_path, "shard-0")
    b = host(tmp_path, "shard-1", epoch=1)
    async with a, b:
        await a.submit(MIND, Save("x"))
        unfenced = tmp_path / "raw.mind"
        async with await Mind.open(unfenced) as m:  # a mind file with no fencing record
            await m.db.execute("SELECT 1")
        with pytest.raises(ConflictError, match="not awaited"):
            await b.admit(MIND, unfenced)
        b.expect(MIND, '{"name": "W"}')
        with pytest.raises(FencedError, match="no fencing record"):
            await b.admit(MIND, unfenced)
        await a.release(MIND, Fence("shard-1", 7), "http://h1:1", "map")  # epoch b may not claim
        newer = tmp_path / "newer.mind"
        await a.snapshot(MIND, newer)
        with pytest.raises(FencedError, match="newer than this host"):
            await b.admit(MIND, newer)
        assert not b.path(MIND).exists()
        # a file already at the target's place that is not this shard's: never overwritten
        stray = mind_path(b.data_dir, MIND)
        stray.parent.mkdir(parents=True)
        async with await Mind.open(stray) as m:
            await m.db.execute("SELECT 1")
        with pytest.raises(ConflictError):
            b.expect(MIND)
        await a.snapshot(MIND, newer)
        with pytest.raises(ConflictError):
            await b.admit(MIND, newer)


def holdings(shard: str, epoch: int, *rows: dict[str, Any]) -> dict[str, Any]:
    return {"shard": shard, "epoch": epoch, "minds": list(rows)}


def file(mind: str, fence: str | None) -> dict[str, Any]:
    return {"mind_id": mind, "bytes": 1, "fence": None if fence is None else
            {"shard": fence, "epoch": 0}}


def test_the_plan_moves_what_changed_owner_and_resumes_cut_off_moves() -> None:
    grown = parse_shards("shard-0=http://h0:1,shard-1=http://h1:1,shard-2=http://h2:1")
    minds = [f"workspace:m{i}" for i in range(60)]
    to_new = [m for m in minds if grown.owner(m) == "shard-2"]
    stay = [m for m in minds if grown.owner(m) != "shard-2"]
    first, second, third = to_new[:3]
    held = {
        "shard-0": holdings("shard-0", 0, *(file(m, SHARDS.owner(m)) for m in minds
                                            if SHARDS.owner(m) == "shard-0" and m != second)),
        "shard-1": holdings("shard-1", 0, *(file(m, SHARDS.owner(m)) for m in minds
                                            if SHARDS.owner(m) == "shard-1")),
        "shard-2": holdings("shard-2", 4),
    }
    holder = SHARDS.owner(second)
    if holder == "shard-0":  # ``second`` was handed over already, not yet copied
        held["shard-0"]["minds"].append(file(second, "shard-2"))
        held["shard-0"]["minds"].append({"mind_id": second, "departed": {
            "to": "shard-2", "epoch": 4, "state": "released"}})
    else:
        held["shard-1"]["minds"] = [r for r in held["shard-1"]["minds"] if r["mind_id"] != second]
        held["shard-1"]["minds"] += [file(second, "shard-2"), {"mind_id": second, "departed": {
            "to": "shard-2", "epoch": 4, "state": "released"}}]
    # ``third`` arrived already; its old copy still waits to be put aside
    old_third = SHARDS.owner(third)
    held[old_third]["minds"] = [r for r in held[old_third]["minds"] if r["mind_id"] != third]
    held[old_third]["minds"] += [file(third, "shard-2"), {"mind_id": third, "departed": {
        "to": "shard-2", "epoch": 4, "state": "released"}}]
    held["shard-2"]["minds"].append(file(third, "shard-2"))

    plan = make_plan(held, dict(grown.shards), grown)
    moves = {m.mind_id: m for m in plan.moves}
    assert set(moves) == set(to_new) - {third}
    assert moves[first].release and moves[first].source == SHARDS.owner(first)
    assert not moves[second].release and moves[second].source == holder
    assert plan.retire == [(third, old_third)]
    assert plan.epochs["shard-2"] == 4 and plan.problems == []
    assert not set(moves) & set(stay)


def test_the_plan_never_moves_a_mind_with_two_live_copies() -> None:
    mind = next(f"workspace:m{i}" for i in range(60) if SHARDS.owner(f"workspace:m{i}") == "shard-1")
    held = {"shard-0": holdings("shard-0", 0, file(mind, None)),
            "shard-1": holdings("shard-1", 0)}
    held["shard-1"]["minds"].append(file(mind, None))
    held["shard-0"]["minds"].append(file("workspace:other", None))
    plan = make_plan(held, dict(SHARDS.shards), SHARDS)
    assert [m.mind_id for m in plan.moves] == (
        ["workspace:other"] if SHARDS.owner("workspace:other") == "shard-1" else [])
    assert any(mind in p for p in plan.problems)
    wrong = {"shard-0": holdings("shard-1", 0), "shard-1": holdings("shard-1", 0)}
    with pytest.raises(RuntimeError, match="answers as shard-1"):
        make_plan(wrong, dict(SHARDS.shards), SHARDS)


@pytest.mark.parametrize(("header", "seen"), [
    (None, (False, True)), ("1", (True, True)), ("2", (True, False)),
    ("7", (True, False)), ("junk", (True, False)), ("-1", (True, False)),
])
async def test_forwarded_requests_travel_at_most_two_hops(header: str | None,
                                                         seen: tuple[bool, bool]) -> None:
    got: list[tuple[bool, bool]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        got.append((forwarded(), may_forward()))
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    transport = httpx.ASGITransport(app=ForwardingContext(app))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        headers = {} if header is None else {"X-Hive-Mind-Forwarded": header}
        await client.get("/", headers=headers)
    assert got == [seen]
    assert (forwarded(), may_forward()) == (False, True)  # reset after the request


def answer(*results: tuple[str, int, float], routing: dict[str, int] | None = None
           ) -> dict[str, Any]:
    return {"results": [{"from": f, "id": i, "score": s} for f, i, s in results],
            "conflicts": [], "external": None, "routing": routing}


def test_scope_wide_answers_merge_by_score_keeping_each_shards_order() -> None:
    merged = merge_recalls({
        "shard-0": answer(("workspace:a", 1, 0.9), ("workspace:a", 2, 0.5)),
        "shard-1": answer(("workspace:b", 1, 0.7), ("workspace:b", 2, 0.6),
                          routing={"searched": 16, "workspaces": 40}),
        "shard-2": answer(("workspace:a", 1, 0.9)),  # the same frame twice: once
    }, 4, {"shard-3": "down"})
    assert [(r["from"], r["id"]) for r in merged["results"]] == [
        ("workspace:a", 1), ("workspace:b", 1), ("workspace:b", 2), ("workspace:a", 2)]
    assert merged["count"] == 4
    assert merged["routing"] == {"searched": 16, "workspaces": 40}
    assert merged["unreachable"] == {"shard-3": "down"}
    assert merge_recalls({"shard-0": answer()}, 5, {})["routing"] is None


def jobs_answer(mode: str, minds: list[tuple[str, int | None]], letters: list[str],
                queued: int) -> dict[str, Any]:
    return {"mode": mode, "queued": queued, "running": 0, "dead_letters": len(letters),
            "minds": [{"id": m, "pending_index": p, "queued": 0, "running": 0,
                       "dead_letters": 0} for m, p in minds],
            "running_jobs": [], "failures": [{"id": i} for i in letters]}


def test_jobs_reports_merge_each_mind_from_its_holder_and_each_letter_once() -> None:
    from hive_mind.sharded import merge_jobs

    shared = merge_jobs({  # two hosts on one Redis: the same queue and dead letters
        "shard-0": jobs_answer("distributed", [("workspace:a", 3), ("workspace:b", None)],
                               ["d1", "d2"], queued=7),
        "shard-1": jobs_answer("distributed", [("workspace:b", 0), ("workspace:a", None)],
                               ["d1", "d2"], queued=7),
    })
    assert [(m["id"], m["pending_index"]) for m in shared["minds"]] == [
        ("workspace:a", 3), ("workspace:b", 0)]
    assert [f["id"] for f in shared["failures"]] == ["d1", "d2"]
    assert (shared["queued"], shared["dead_letters"], shared["shared_queue"]) == (7, 2, True)
    own = merge_jobs({  # embedded shard hosts: each its own runner and dead-letter file
        "shard-0": jobs_answer("embedded", [("workspace:a", 1)], ["d1"], queued=2),
        "shard-1": jobs_answer("embedded", [("workspace:b", 2)], ["d2"], queued=3),
    })
    assert (own["queued"], own["dead_letters"], own["shared_queue"]) == (5, 2, False)


async def test_the_rebalancer_raises_the_hosts_own_error_classes(tmp_path: Path) -> None:
    """A refusal of a real shard host's cluster API reaches the rebalancer as the host's
    error class (a release of a mind it does not hold: not found), not a bare HTTP error."""
    from hive_mind.api import create_app
    from hive_mind.facade import HiveMind
    from hive_mind.rebalance import Rebalancer
    from hive_mind.settings import load_settings
    from mind.errors import NotFoundError

    shards = "shard-0=http://127.0.0.1:1,shard-1=http://127.0.0.1:2"
    settings = load_settings(data_dir=tmp_path, embedding_provider="test", shards=shards,
                             host_id="shard-0")
    facade = await HiveMind.open(settings)
    try:
        transport = httpx.ASGITransport(app=create_app(settings, facade, mcp=False))
        tool = Rebalancer(settings, parse_shards(shards), transport=transport)
        try:
            with pytest.raises(NotFoundError, match="shard-0: mind workspace:nope has no file"):
                await tool._call("shard-0", "POST", f"{tool._mind('workspace:nope')}/release",
                                 json={"to": "shard-1", "epoch": 0, "url": "http://127.0.0.1:2"})
            held = (await tool._call("shard-0", "GET", "/minds")).json()
            assert (held["shard"], held["minds"]) == ("shard-0", [])
        finally:
            await tool.close()
    finally:
        await facade.close()
