"""P- and B-frames through every interface: the facade (a real data dir), HTTP over a real
server, MCP over a real stdio client and the CLI as a subprocess. A P-frame updates an I-frame
of its session, a B-frame cross-references earlier frames, a session's state is its latest
I-frame and the P-frames after it, compaction folds old updates into their I-frame, and recall
ranks an update as current and its base as outdated."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio.from_thread
import httpx
import pytest

from hive_mind.facade import HiveMind
from hive_mind.remote import RemoteHiveMind
from mind.errors import ConflictError, NotFoundError, ValidationError
from mind.mind import Mind
from tests.http_server import running_server, server_settings
from tests.procs import run_cli
from tests.support import McpClient, mcp_stdio_session


@pytest.fixture
async def hm(tmp_path: Path) -> AsyncIterator[HiveMind]:
    facade = await HiveMind.open(data_dir=tmp_path / "data", embedding_provider="test")
    try:
        yield facade
    finally:
        await facade.close()


async def test_update_joins_its_base_session_and_makes_the_state(hm: HiveMind) -> None:
    base = await hm.save("The Atlas project stores its data in MongoDB", session="atlas")
    assert base["frame_type"] == "I" and "base_frame_id" not in base
    update = await hm.save("Atlas moved its data to PostgreSQL 16", updates=base["id"])
    assert (update["frame_type"], update["gop_id"], update["base_frame_id"]) == \
        ("P", "atlas", base["id"])
    again = await hm.save("Atlas now runs PostgreSQL 16 on Hetzner", updates=base["id"],
                          session="atlas")
    state = await hm.session_state("atlas")
    assert state["session"] == "atlas" and state["workspace"] == "personal"
    assert state["i_frame"]["id"] == base["id"]
    assert [p["id"] for p in state["p_frames"]] == [update["id"], again["id"]]
    assert all(p["base_frame_id"] == base["id"] for p in state["p_frames"])
    # a new statement starts a new state; the updates of the old one stay stored
    fresh = await hm.save("Atlas was rewritten: one SQLite file per tenant", session="atlas")
    state = await hm.session_state("atlas")
    assert state["i_frame"]["id"] == fresh["id"] and state["p_frames"] == []
    assert (await hm.get_frame(update["id"]))["frame_type"] == "P"


async def test_an_update_repeated_under_its_key_is_written_once(hm: HiveMind) -> None:
    base = await hm.save("The cat weighs 4 kg", session="cat")
    other = await hm.save("The cat eats twice a day", session="cat")
    first = await hm.save("The cat weighs 5 kg now", updates=base["id"], idempotency_key="k1")
    again = await hm.save("The cat weighs 5 kg now", updates=base["id"], idempotency_key="k1")
    assert again["id"] == first["id"] and again["replayed"] and again["base_frame_id"] == base["id"]
    with pytest.raises(ConflictError):
        await hm.save("The cat weighs 5 kg now", updates=other["id"], idempotency_key="k1")
    assert [p["id"] for p in (await hm.session_state("cat"))["p_frames"]] == [first["id"]]


async def test_cross_reference(hm: HiveMind) -> None:
    a = await hm.save("Ana leads the Atlas project")
    b = await hm.save("Ben reviews every Atlas schema change", session="reviews")
    link = await hm.save("Ana and Ben pair on Atlas migrations", refs=[b["id"], a["id"], b["id"]])
    assert (link["frame_type"], link["base_frame_id"], link["references"]) == \
        ("B", b["id"], [b["id"], a["id"]])
    async with hm.reading(None) as reader:
        assert await reader.frames.get_b_frame_references(link["id"]) == [b["id"], a["id"]]


async def test_bad_links_are_clear_errors_and_write_nothing(hm: HiveMind) -> None:
    base = await hm.save("The deploy window is Tuesday 9 am", session="ops")
    other = await hm.save("Lunch is at noon", session="team")
    update = await hm.save("The deploy window moved to Wednesday", updates=base["id"])
    await hm.create_workspace("side")
    for i in range(5):
        await hm.save(f"side note {i}", workspace="side")
    async with hm.reading(None) as reader:
        before = await reader.frames.count()
    cases: list[tuple[dict[str, Any], type[Exception], str]] = [
        ({"updates": 999}, NotFoundError, "frame 999 not found in the personal mind"),
        ({"updates": 5, "workspace": None}, NotFoundError, "frame 5 not found"),
        ({"updates": update["id"]}, ValidationError, f"names the I-frame it updates (frame "
                                                     f"{base['id']})"),
        ({"updates": base["id"], "session": "team"}, ValidationError,
         "is in session 'ops', not 'team'"),
        ({"updates": base["id"], "refs": [other["id"]]}, ValidationError, "not both"),
        ({"refs": []}, ValidationError, "non-empty list"),
        ({"refs": [other["id"], 0]}, ValidationError, "refs id"),
        ({"refs": list(range(1, 102))}, ValidationError, "the limit is 100"),
        ({"refs": [before + 1]}, NotFoundError, f"frame {before + 1} not found"),  # itself
        ({"updates": -1}, ValidationError, "updates"),
        ({"updates": base["id"], "session": "../../etc/passwd\n"}, ValidationError, "session"),
    ]
    for kwargs, error, text in cases:
        with pytest.raises(error, match=None) as caught:
            await hm.save("a linked memory", **kwargs)
        assert text in str(caught.value), (kwargs, str(caught.value))
    # an id of another workspace is no frame here; the same id inside that workspace works
    side = await hm.save("side update", workspace="side", updates=5)
    assert side["base_frame_id"] == 5 and side["workspace"] == "side"
    with pytest.raises(NotFoundError, match="frame 9 not found in workspace 'side'"):
        await hm.save("x", workspace="side", updates=9)
    with pytest.raises(NotFoundError, match="session 'nowhere' not found"):
        await hm.session_state("nowhere")
    with pytest.raises(ValidationError):
        await hm.session_state("bad\nid")
    async with hm.reading(None) as reader:
        assert await reader.frames.count() == before


async def test_engine_refuses_self_and_forward_links(tmp_path: Path) -> None:
    """The store itself (what every write path reaches) keeps links pointing back in time."""
    from mind.frames.model import NewFrame

    async with await Mind.open(tmp_path / "m.mind") as mind:
        i = (await mind.frames.create_i_frame("g", "root")).frame
        with pytest.raises(ValidationError, match="not an earlier frame"):
            await mind.frames.insert_many([NewFrame("g", "self", "B", base_frame_id=i.id,
                                                    references=[i.id + 1])])
        with pytest.raises(ValidationError, match="not an earlier frame"):
            await mind.frames.insert_many([NewFrame("g", "ahead", "P", base_frame_id=i.id + 2),
                                           NewFrame("g", "later")])
        with pytest.raises(ValidationError, match="only a B-frame"):
            await mind.frames.insert_many([NewFrame("g", "x", references=[i.id])])
        p = await mind.frames.create_p_frame("g", "delta")
        with pytest.raises(ValidationError, match="a P-frame updates an I-frame"):
            await mind.frames.create_p_frame("g", "delta of a delta", base_frame_id=p.id)
        assert await mind.frames.count() == 2


async def test_compaction_folds_all_but_five_updates_into_their_i_frame(hm: HiveMind) -> None:
    base = await hm.save("Sprint goals: ship login", session="sprint")
    ids = [(await hm.save(f"Sprint goal update {i}", updates=base["id"]))["id"]
           for i in range(12)]
    await hm.maintenance("compact")
    state = await hm.session_state("sprint")
    assert [p["id"] for p in state["p_frames"]] == ids[7:]
    assert state["i_frame"]["content"] == "\n---\n".join(
        ["Sprint goals: ship login", *(f"Sprint goal update {i}" for i in range(7))])
    with pytest.raises(NotFoundError):
        await hm.get_frame(ids[0])


async def test_recall_ranks_the_update_as_current(hm: HiveMind) -> None:
    """An update the save declared is an explicit supersession: the update ranks above its
    base even when its words match the query less, and the base stays findable."""
    base = await hm.save("The team standup meeting is at 9 am in room Oslo every day",
                         session="standup", wait=True)
    update = await hm.save("From now on it is 10:30", updates=base["id"], wait=True)
    detail = await hm.recall_detail("team standup meeting room", explain=True)
    ids = [r["id"] for r in detail["results"]]
    assert ids.index(update["id"]) < ids.index(base["id"]), ids
    by_id = {r["id"]: r for r in detail["results"]}
    assert by_id[base["id"]]["explain"]["superseded_by"] == [update["id"]]
    history = await hm.recall("what was the standup time before?")
    assert base["id"] in [r["id"] for r in history]
    async with hm.reading(None) as reader:
        rows = await reader.db.fetchall(
            "SELECT superseded_id, frame_id, cue FROM frame_supersessions")
        assert [tuple(r) for r in rows] == [(base["id"], update["id"], "explicit")]
    await hm.forget(update["id"])  # the base is current again
    async with hm.reading(None) as reader:
        assert await reader.db.fetchval("SELECT COUNT(*) FROM frame_supersessions") == 0


# -- HTTP ------------------------------------------------------------------------------------

@pytest.mark.integration
def test_http(tmp_path: Path) -> None:
    with running_server(server_settings(tmp_path / "data")) as url, \
            httpx.Client(base_url=url, timeout=30) as http:
        base = http.post("/v1/memories", json={"content": "Office moves to Lisbon",
                                               "session": "office/2024"}).json()
        update = http.post("/v1/memories", json={"content": "Office move slips to May",
                                                 "updates": base["id"]})
        assert update.status_code == 201, update.text
        assert (update.json()["frame_type"], update.json()["base_frame_id"],
                update.json()["gop_id"]) == ("P", base["id"], "office/2024")
        link = http.post("/v1/memories", json={"content": "see both", "refs": [base["id"]]})
        assert link.json()["references"] == [base["id"]]
        state = http.get("/v1/sessions/office%2F2024/state")
        assert state.status_code == 200, state.text
        assert state.json()["i_frame"]["id"] == base["id"]
        assert [p["id"] for p in state.json()["p_frames"]] == [update.json()["id"]]
        plain = http.post("/v1/memories", json={"content": "a plain save"}).json()
        assert "base_frame_id" not in plain and "references" not in plain
        for body, status, code in [
            ({"content": "x", "updates": 999}, 404, "not_found"),
            ({"content": "x", "updates": 0}, 422, "invalid"),
            ({"content": "x", "refs": []}, 422, "invalid"),
            ({"content": "x", "refs": list(range(1, 102))}, 422, "invalid"),
            ({"content": "x", "updates": update.json()["id"]}, 400, None),
        ]:
            answer = http.post("/v1/memories", json=body)
            assert answer.status_code == status, (body, answer.text)
            if code:
                assert answer.json()["error"]["code"] == code, answer.text
        assert http.get("/v1/sessions/nowhere/state").status_code == 404
        assert http.get("/v1/sessions/office%2F2024/state",
                        params={"workspace": "../etc"}).status_code == 400
        assert "/v1/sessions/{session}/state" in http.get("/openapi.json").json()["paths"]


@pytest.mark.integration
async def test_remote_client(tmp_path: Path) -> None:
    """The Python client of a running server offers the same calls, errors included."""
    with running_server(server_settings(tmp_path / "data")) as url:
        async with RemoteHiveMind(server_settings(tmp_path / "client", url=url)) as remote:
            base = await remote.save("Billing runs on the 1st", session="billing")
            update = await remote.save("Billing moved to the 15th", updates=base["id"])
            assert (update["frame_type"], update.get("base_frame_id")) == ("P", base["id"])
            state = await remote.session_state("billing")
            assert [p["id"] for p in state["p_frames"]] == [update["id"]]
            link = await remote.save("see billing", refs=[base["id"]])
            assert link.get("references") == [base["id"]]
            with pytest.raises(NotFoundError, match="frame 99 not found"):
                await remote.save("x", updates=99)
            with pytest.raises(NotFoundError, match="session 'nowhere' not found"):
                await remote.session_state("nowhere")


# -- MCP over stdio ----------------------------------------------------------------------------

@pytest.fixture
def mcp(tmp_path: Path) -> Iterator[McpClient]:
    data_dir = tmp_path / "mcp-data"
    data_dir.mkdir()
    with (tmp_path / "server.log").open("w") as errlog, \
            anyio.from_thread.start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(mcp_stdio_session(data_dir, errlog)) as session:
        yield McpClient(portal, session, data_dir)


@pytest.mark.integration
def test_mcp(mcp: McpClient) -> None:
    base = mcp.json("save_memory", {"content": "Priya's cat weighs 4 kg"})
    assert "base_frame_id" not in base
    update = mcp.json("save_memory", {"content": "Priya's cat is 5 kg now",
                                      "updates": base["id"]})
    assert update["base_frame_id"] == base["id"] and update["session"].startswith("mcp:")
    link = mcp.json("save_memory", {"content": "both about the cat",
                                    "refs": [base["id"], update["id"]]})
    assert link["references"] == [base["id"], update["id"]]
    state = mcp.json("session_state", {"session": update["session"]})
    assert state["i_frame"]["id"] == base["id"]
    assert [p["id"] for p in state["p_frames"]] == [update["id"]]
    assert mcp.error("save_memory", {"content": "x", "updates": 999}).startswith("not_found:")
    assert "P-frame" in mcp.error("save_memory", {"content": "x", "updates": update["id"]})
    assert mcp.error("session_state", {"session": "nowhere"}).startswith("not_found:")
    assert "refs" in mcp.error("save_memory", {"content": "x", "refs": []})


# -- CLI subprocess ----------------------------------------------------------------------------

@pytest.mark.integration
def test_cli(tmp_path: Path) -> None:
    data = tmp_path / "data"

    def run(*args: str) -> Any:
        done = run_cli(*args, "--json", data=data)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    base = run("save", "Release train leaves Thursdays", "--session", "release")
    update = run("save", "Release train now leaves Fridays", "--updates", str(base["id"]))
    assert (update["frame_type"], update["gop_id"]) == ("P", "release")
    link = run("save", "see the release notes", "--refs", f"{base['id']},{update['id']}")
    assert link["references"] == [base["id"], update["id"]]
    state = run("session", "state", "release")
    assert [p["id"] for p in state["p_frames"]] == [update["id"]]
    human = run_cli("session", "state", "release", data=data)
    assert human.returncode == 0 and "Fridays" in human.stdout
    for args, text in [(("save", "x", "--updates", "999"), "frame 999 not found"),
                       (("save", "x", "--refs", "1,two"), "frame ids separated by commas"),
                       (("session", "state", "nowhere"), "session 'nowhere' not found")]:
        done = run_cli(*args, data=data)
        assert done.returncode != 0 and text in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
