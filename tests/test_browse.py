"""Looking through a mind a page at a time (``hive_mind/browse.py``): sessions newest first,
a session's frames, an entity's neighbourhood with retired relations, the harvest runs — the
same answers from the facade and over HTTP (a real server, the remote client)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hive_mind.facade import HiveMind
from hive_mind.remote import RemoteHiveMind
from mind.errors import NotFoundError, ValidationError
from tests.http_server import running_server, server_settings


async def _fill(hm: HiveMind) -> dict[str, int]:
    for n in range(5):
        await hm.save(f"Standup {n}: the Vega migration step {n} is done", session="standups")
    await hm.save("Ada prefers tea", session="breakfast")
    vega = await hm.save_entity("project", "Vega")
    ada = await hm.save_entity("person", "Ada")
    await hm.create_relation(ada["id"], vega["id"], "works_on")
    return {"vega": vega["id"], "ada": ada["id"]}


async def _check(facade: Any, ids: dict[str, int]) -> None:
    first = await facade.list_sessions(limit=1)
    assert [s["gop_id"] for s in first["sessions"]] == ["breakfast"]
    assert first["more"] is True
    second = await facade.list_sessions(page=2, limit=1)
    row = second["sessions"][0]
    assert (row["gop_id"], row["frames"], second["more"]) == ("standups", 5, False)

    page = await facade.session_frames("standups", limit=3)
    texts = [f["content"] for f in page["frames"]]
    assert texts[0].startswith("Standup 4") and len(texts) == 3
    rest = await facade.session_frames("standups", before=page["next"], limit=3)
    assert [f["content"][:9] for f in rest["frames"]] == ["Standup 1", "Standup 0"]
    assert rest["next"] is None

    graph = await facade.entity_graph(ids["vega"])
    assert {n["name"] for n in graph["nodes"]} == {"Vega", "Ada"}
    edge = graph["edges"][0]
    assert (edge["source"], edge["target"], edge["type"], edge["active"]) == (
        ids["ada"], ids["vega"], "works_on", True)
    assert edge["valid_to"] is None
    assert await facade.harvest_runs() == []

    frame_id = page["frames"][0]["id"]
    for level in ("critical", "temporary"):
        changed = await facade.set_importance(frame_id, level)
        assert (changed["id"], changed["importance"]) == (frame_id, level)
        assert (await facade.get_frame(frame_id))["importance"] == level
    with pytest.raises(NotFoundError):
        await facade.set_importance(99_999, "normal")
    with pytest.raises(ValidationError):
        await facade.set_importance(frame_id, "urgent")


async def test_sessions_frames_graph_runs_and_importance_locally_and_over_http(
        tmp_path: Path) -> None:
    settings = server_settings(tmp_path / "data")
    async with await HiveMind.open(settings) as hm:
        ids = await _fill(hm)
        await _check(hm, ids)
    with running_server(settings) as url:  # the server opens the data dir itself
        remote = RemoteHiveMind(settings.replace(url=url))
        try:
            await _check(remote, ids)
        finally:
            await remote.close()


async def test_bad_pages_and_unknown_entities_are_refused(tmp_path: Path) -> None:
    async with await HiveMind.open(server_settings(tmp_path / "data")) as hm:
        with pytest.raises(ValidationError):
            await hm.list_sessions(page=0)
        with pytest.raises(ValidationError):
            await hm.session_frames("s", limit=10_000)
        with pytest.raises(NotFoundError):
            await hm.entity_graph(12345)
        with pytest.raises(NotFoundError):
            await hm.list_sessions(workspace="nope")
