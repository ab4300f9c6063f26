"""The HiveMind facade in embedded mode over real mind files (test embedder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hive_mind.facade import HiveMind
from hive_mind.sync import SyncHiveMind
from hive_mind.workspaces import slugify
from mind.errors import InvalidIdError, NotFoundError, ValidationError


async def test_save_recall_forget(hm: HiveMind) -> None:
    saved = await hm.save("Maya's dog is called Biscuit", importance="important", wait=True)
    assert saved["created"] and saved["workspace"] == "personal"
    again = await hm.save("Maya's dog is called Biscuit")
    assert again["id"] == saved["id"] and not again["created"]
    hits = await hm.recall("what is the dog called", limit=5)
    assert hits[0]["id"] == saved["id"]
    assert 0 <= hits[0]["score"] <= 1 and hits[0]["from"] == "personal"
    assert {"rrf", "relevance", "final", "gop_id", "t", "metadata"} <= set(hits[0])
    assert (await hm.stats())["vectors"] == 1
    erased = await hm.forget(saved["id"])
    assert erased["deleted"]
    assert await hm.recall("dog Biscuit") == []
    with pytest.raises(NotFoundError):
        await hm.forget(saved["id"])


async def test_recall_explain_of_a_catch_up_names_the_reason(hm: HiveMind) -> None:
    saved = await hm.save("We decided to ship on Monday", importance="critical", wait=True)
    (hit,) = await hm.recall("catch up", catch_up=True, explain=True)
    explain = hit["explain"]
    assert hit["id"] == saved["id"] and explain["reason"]
    assert explain["keyword_rank"] is None and explain["vector_rank"] is None
    assert explain["fused"] is None and explain["match"] is None
    assert explain["score"] == hit["score"] and explain["final"] == round(hit["final"], 6)
    assert "explain" not in (await hm.catch_up())[0]


@pytest.mark.parametrize("bad", ["../x", "/etc", "a\0b", "UPPER", "x/../../y", ""])
async def test_workspace_ids_never_become_paths(hm: HiveMind, bad: str, tmp_path: Path) -> None:
    if bad == "":  # empty means the personal mind
        assert hm.mind_id(bad) == "personal"
        return
    with pytest.raises(InvalidIdError):
        await hm.save("x", workspace=bad)
    assert not any(p.name == "x" for p in tmp_path.rglob("*"))
    assert (await hm.stats())["frames"] == 0


async def test_workspaces_lifecycle(hm: HiveMind, tmp_path: Path) -> None:
    ws = await hm.create_workspace("Café Zürich", group="travel", icon="☕")
    assert ws["id"] == "cafe-zurich"
    twin = await hm.create_workspace("Cafe Zurich")
    assert twin["id"] == "cafe-zurich-2"
    assert slugify("日本語").startswith("ws-")
    meta = json.loads((tmp_path / "data/workspaces/cafe-zurich/workspace.json").read_text())
    assert meta["name"] == "Café Zürich" and meta["group"] == "travel"
    await hm.save("The café opens in March", workspace="cafe-zurich", wait=True)
    with pytest.raises(NotFoundError):
        await hm.save("x", workspace="unknown-space")
    listed = await hm.list_workspaces()
    assert [w["id"] for w in listed["workspaces"]] == ["cafe-zurich", "cafe-zurich-2"]
    assert listed["workspaces"][0]["frames"] == 1
    await hm.set_default_workspace("cafe-zurich")
    assert (await hm.list_workspaces())["default_workspace"] == "cafe-zurich"
    hits = await hm.recall("café opens", workspace="cafe-zurich")
    assert hits and hits[0]["from"] == "workspace:cafe-zurich"
    assert (await hm.recall("café opens", scope="personal")) == []
    everywhere = await hm.recall("café opens", scope="all")
    assert everywhere[0]["from"] == "workspace:cafe-zurich"
    updated = await hm.update_workspace("cafe-zurich", name="Café Z")
    assert updated["name"] == "Café Z"
    await hm.delete_workspace("cafe-zurich")
    assert not (tmp_path / "data/workspaces/cafe-zurich").exists()
    assert (await hm.list_workspaces())["default_workspace"] is None


async def test_identity_awareness_entities(hm: HiveMind) -> None:
    assert (await hm.get_identity())["configured"] is False
    with pytest.raises(ValidationError, match="No fields"):
        await hm.set_identity()
    created = await hm.set_identity(role="engineer")
    assert created["action"] == "created" and created["name"] == "User"
    updated = await hm.set_identity(name="Maya")
    assert updated["action"] == "updated" and updated["role"] == "engineer"
    item = await hm.set_awareness("task", "ship the release", priority=3, ttl_minutes=10)
    assert item["expires_at"] > item["created_at"]
    with pytest.raises(ValidationError):
        await hm.set_awareness("chores", "x")
    assert [a["content"] for a in await hm.get_awareness(category="task")] == ["ship the release"]
    await hm.clear_awareness(item_id=item["id"])
    assert await hm.get_awareness() == []
    with pytest.raises(ValidationError, match="id or category"):
        await hm.clear_awareness()
    maya = await hm.save_entity("person", "Maya", properties={"team": "core"})
    again = await hm.save_entity("person", "maya", properties={"city": "Lisbon"})
    assert again["id"] == maya["id"] and again["properties"]["team"] == "core"
    hive = await hm.save_entity("project", "Hive")
    rel = await hm.create_relation(maya["id"], hive["id"], "works_on", confidence=0.9)
    assert rel["relation_type"] == "works_on"
    found = await hm.search_entities("may", entity_type="person")
    assert found[0]["relations"]["outgoing"][0]["target_id"] == hive["id"]
    with pytest.raises(ValidationError):
        await hm.search_entities("x", entity_type="spaceship")
    audit = await hm.cleanup_entities("audit")
    assert audit["total_entities"] == 2 and audit["orphan_entities"] == 0
    wiped = await hm.cleanup_entities("wipe_all")
    assert wiped["entities_retired"] == 2
    assert await hm.search_entities("maya") == []


async def test_maintenance_and_cleanup(hm: HiveMind, tmp_path: Path) -> None:
    await hm.save("a note to keep", wait=True)
    await hm.ingest("# Imported\n\nAn imported paragraph about kites.")
    assert (await hm.stats())["frames"] == 2
    for kind in ("compact", "reconcile", "dedupe", "reembed"):
        out = await hm.maintenance(kind, all_minds=True)
        assert out["action"] == kind and "personal" in out["minds"]
    await hm.wait_idle()
    assert (await hm.stats())["pending_index"] == 0
    with pytest.raises(ValidationError):
        await hm.maintenance("defrag")
    wiped = await hm.cleanup_frames("wipe_imports")
    assert wiped["frames_deleted"] == 1
    assert all("kites" not in h["content"] for h in await hm.recall("kites"))
    assert (await hm.cleanup_frames("wipe_all"))["frames_deleted"] == 1


async def test_fts_syntax_in_queries_never_errors(hm: HiveMind) -> None:
    await hm.save("alpha beta gamma", wait=True)
    for query in ['"alpha" AND NOT (beta*', "NEAR(alpha beta)", "col:alpha", "***", "'"]:
        assert isinstance(await hm.recall(query), list)


def test_sync_wrapper(tmp_path: Path) -> None:
    with SyncHiveMind(data_dir=tmp_path / "d", embedding_provider="test") as hm:
        saved = hm.save("synchronous scripts work too", wait=True)
        assert hm.recall("synchronous scripts")[0]["id"] == saved["id"]
        assert hm.mode == "embedded"
