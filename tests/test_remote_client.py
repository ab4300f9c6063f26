"""Client mode: ``RemoteHiveMind`` against a live server over a real socket — the facade's
methods (their signatures are the contract's: mypy checks them, hive_mind/contract.py), and
errors mapped back to the facade's exception classes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from hive_mind.api.codes import (
    PayloadTooLargeError,
    RemoteError,
    ServerUnavailableError,
    UnauthorizedError,
    exception_for,
)
from hive_mind.facade import HiveMind
from hive_mind.remote import RemoteHiveMind
from mind.errors import (
    ConflictError,
    EmbeddingDimMismatchError,
    HiveMindError,
    InvalidIdError,
    InvalidTimestampError,
    NotFoundError,
    ValidationError,
)
from tests.explain_checks import check_explain
from tests.http_server import running_server, server_settings

TOKEN = "client-token"
try:
    import hive_mind.harvest  # noqa: F401

    HAVE_HARVEST = True
except ImportError:
    HAVE_HARVEST = False


@pytest.fixture
def server_url(tmp_path: Path) -> Iterator[str]:
    with running_server(server_settings(tmp_path / "data", api_token=TOKEN,
                                        max_request_bytes=64 * 1024)) as url:
        yield url


@pytest.fixture
async def hm(server_url: str, tmp_path: Path) -> AsyncIterator[Any]:
    mind = await HiveMind.open(server_settings(tmp_path / "client", url=server_url,
                                               api_token=TOKEN))
    assert isinstance(mind, RemoteHiveMind)
    async with mind:
        yield mind


async def test_recall_explain_and_lanes(hm: Any) -> None:
    saved = await hm.save("Grace maintains the Hubble archive", wait=True)
    other = await hm.save("Lunch is at noon in the cafeteria", wait=True)
    assert all("explain" not in r for r in await hm.recall("Hubble archive", touch=False))
    hits = {r["id"]: r for r in await hm.recall("Hubble archive", explain=True, touch=False)}
    assert check_explain(hits[saved["id"]], keyword=True, vector=True)["keyword_rank"] == 1
    check_explain(hits[other["id"]], keyword=False, vector=True)
    keyword = await hm.recall("Hubble archive", explain=True, lanes="keyword")
    assert [r["id"] for r in keyword] == [saved["id"]]
    check_explain(keyword[0], keyword=True, vector=False)
    with pytest.raises(ValidationError):
        await hm.recall("Hubble", lanes="both")


async def test_memory_scenario(hm: Any) -> None:
    saved = await hm.save("Grace maintains the Hubble archive", importance="important",
                          metadata={"k": "v"}, wait=True)
    assert saved["created"] is True and saved["metadata"] == {"k": "v"}
    assert await hm.wait_idle() is True
    assert (await hm.get_frame(saved["id"]))["content"] == saved["content"]
    results = await hm.recall("Hubble archive", limit=5)
    assert results[0]["id"] == saved["id"] and results[0]["from"] == "personal"
    assert (await hm.recall('Hubble AND (archive OR "x'))[0]["id"] == saved["id"]
    assert [r["id"] for r in await hm.catch_up(limit=3)] == [saved["id"]]
    stats = await hm.stats()
    assert stats["frames"] == 1 and stats["vectors"] == 1 and stats["pending_index"] == 0

    grace = await hm.save_entity("person", "Grace", properties={"team": "archive"})
    hubble = await hm.save_entity("project", "Hubble")
    await hm.create_relation(grace["id"], hubble["id"], "maintains", confidence=0.8)
    found = await hm.search_entities("Grace", entity_type="person")
    assert found[0]["relations"]["outgoing"][0]["target_id"] == hubble["id"]

    assert (await hm.get_identity())["configured"] is False
    assert (await hm.set_identity(name="Ada", role="pilot"))["action"] == "created"
    assert (await hm.get_identity())["role"] == "pilot"
    item = await hm.set_awareness("task", "check telescope", priority=1, ttl_minutes=5)
    assert [i["id"] for i in await hm.get_awareness(category="task")] == [item["id"]]
    assert (await hm.clear_awareness(item_id=item["id"]))["removed"] is True

    assert (await hm.forget(saved["id"]))["id"] == saved["id"]
    with pytest.raises(NotFoundError):
        await hm.get_frame(saved["id"])
    with pytest.raises(NotFoundError):
        await hm.forget(saved["id"])


async def test_workspace_scenario(hm: Any) -> None:
    created = await hm.create_workspace("Deep Space", workspace_id="deep-space", group="astro")
    assert created["id"] == "deep-space"
    with pytest.raises(ConflictError):
        await hm.create_workspace("again", workspace_id="deep-space")
    await hm.save("Voyager telemetry is nominal", workspace="deep-space", wait=True)
    await hm.save("Voyager poster on the wall", wait=True)
    scoped = await hm.recall("Voyager", workspace="deep-space")
    assert [r["from"] for r in scoped] == ["workspace:deep-space"]
    everywhere = await hm.recall("Voyager", scope="all")
    assert sorted(r["from"] for r in everywhere) == ["personal", "workspace:deep-space"]
    listing = await hm.list_workspaces()
    assert [w["id"] for w in listing["workspaces"]] == ["deep-space"]
    assert (await hm.get_workspace("deep-space"))["frames"] == 1
    assert (await hm.update_workspace("deep-space", name="Far Space"))["name"] == "Far Space"
    assert (await hm.set_default_workspace("deep-space")) == {"default_workspace": "deep-space"}
    assert (await hm.set_default_workspace(None)) == {"default_workspace": None}
    assert (await hm.maintenance("reconcile", all_minds=True))["action"] == "reconcile"
    assert (await hm.cleanup_frames("compact", workspace="deep-space"))["action"] == "compact"
    assert (await hm.cleanup_entities("audit"))["action"] == "audit"
    status = await hm.status(probe=False)
    assert status["mode"] == "embedded" and status["config"]["api_token"] == "***"
    assert (await hm.delete_workspace("deep-space")) == {"deleted": "deep-space"}
    with pytest.raises(NotFoundError):
        await hm.get_workspace("deep-space")


@pytest.mark.parametrize("bad", ["../x", "..", ".", "/etc/passwd", "a\x00b", "a/b"])
async def test_bad_ids_raise_invalid_id(hm: Any, bad: str) -> None:
    for call in (hm.get_workspace(bad), hm.delete_workspace(bad),
                 hm.update_workspace(bad, name="x"), hm.save("x", workspace=bad),
                 hm.stats(workspace=bad), hm.create_workspace("x", workspace_id=bad)):
        with pytest.raises(InvalidIdError):
            await call
    assert (await hm.stats())["frames"] == 0
    assert (await hm.list_workspaces())["workspaces"] == []


async def test_errors_map_to_the_facade_classes(hm: Any) -> None:
    with pytest.raises(NotFoundError):
        await hm.save("x", workspace="ghost")
    with pytest.raises(ValidationError):  # 422 from the schema
        await hm.recall("x", profile="fastest")
    with pytest.raises(ValidationError):
        await hm.set_awareness("mood", "x")
    with pytest.raises(ValidationError):
        await hm.maintenance("defrag")
    with pytest.raises(ValidationError):
        await hm.clear_awareness()
    with pytest.raises(InvalidTimestampError):
        await hm.recall("x", since="yesterday-ish")
    with pytest.raises(PayloadTooLargeError) as too_large:
        await hm.save("y" * 100_000)
    assert isinstance(too_large.value, ValidationError) and too_large.value.code == "too_large"


async def test_auth_and_unreachable_server(server_url: str, tmp_path: Path) -> None:
    async with RemoteHiveMind(server_settings(tmp_path, url=server_url,
                                              api_token="wrong")) as wrong:
        with pytest.raises(UnauthorizedError, match="HIVE_MIND_API_TOKEN is not one"):
            await wrong.stats()
    async with RemoteHiveMind(server_settings(tmp_path, url=server_url)) as anonymous:
        with pytest.raises(UnauthorizedError, match="set HIVE_MIND_API_TOKEN to the server"):
            await anonymous.recall("x")
    async with RemoteHiveMind(server_settings(tmp_path, url="http://127.0.0.1:9")) as down:
        with pytest.raises(ServerUnavailableError):
            await down.stats()


def test_exception_for_unknown_and_special_codes() -> None:
    unknown = exception_for("internal", "boom", 500)
    assert isinstance(unknown, RemoteError) and unknown.code == "internal"
    assert unknown.status == 500
    mismatch = exception_for("embedding_dim_mismatch", "reembed", 409)
    assert isinstance(mismatch, EmbeddingDimMismatchError) and str(mismatch) == "reembed"
    assert isinstance(exception_for("error", "x", 500), HiveMindError)


@pytest.mark.skipif(not HAVE_HARVEST, reason="hive_mind.harvest not available")
async def test_harvest_and_ingest_upload_local_files(hm: Any, tmp_path: Path) -> None:
    export = tmp_path / "chat.jsonl"
    export.write_text("\n".join(json.dumps(m) for m in [
        {"conversation_id": "c9", "message_id": "1", "speaker": "Lin", "role": "user",
         "text": "Remember the Quasar migration is on hold"},
        {"conversation_id": "c9", "message_id": "2", "speaker": "Bot", "role": "assistant",
         "text": "Noted: Quasar migration paused"},
    ]), encoding="utf-8")
    summary = await hm.harvest("universal", export)
    assert summary["workspace"] == "personal"
    assert (await hm.stats())["frames"] >= 2
    assert any(s.get("source") == "universal" for s in await hm.harvest_sources())

    doc = tmp_path / "notes.md"
    doc.write_text("# Notes\n\nThe Pulsar dashboard lives on port 3000.", encoding="utf-8")
    ingested = await hm.ingest(str(doc), tags=["ops"])
    assert ingested["source_type"] == "markdown" and ingested["frames_created"] >= 1
    raw = await hm.ingest("Plain text about the Nebula rollout.")
    assert raw["frames_created"] >= 1
    hits = await hm.recall("Pulsar dashboard")
    assert any("Pulsar" in h["content"] for h in hits)

    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    from mind.harvest.errors import HarvestError

    with pytest.raises(HarvestError):
        await hm.harvest("universal", bad)
