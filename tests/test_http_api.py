"""The HTTP API over a real socket: every route, errors and their codes, auth, size limits,
traversal ids, OpenAPI, health; and one distributed-mode smoke test (serve + worker + Redis)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import REDIS_URL
from tests.explain_checks import check_explain
from tests.http_server import running_server, server_settings
from tests.procs import ROOT, eventually, spawn, stop

try:
    import hive_mind.harvest  # noqa: F401

    HAVE_HARVEST = True
except ImportError:
    HAVE_HARVEST = False
needs_harvest = pytest.mark.skipif(not HAVE_HARVEST, reason="hive_mind.harvest not available")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def api(data: Path) -> Iterator[httpx.Client]:
    with running_server(server_settings(data)) as url, httpx.Client(base_url=url,
                                                                  timeout=60) as client:
        yield client


def error_of(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return str(body["error"]["message"])


def frames(api: httpx.Client, workspace: str | None = None) -> int:
    params = {"workspace": workspace} if workspace else {}
    response = api.get("/v1/stats", params=params)
    assert response.status_code == 200, response.text
    return int(response.json()["frames"])


# -- health -------------------------------------------------------------------------------


def test_healthz_and_readyz(api: httpx.Client) -> None:
    assert api.get("/healthz").json() == {"status": "ok"}
    ready = api.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "pending": [],
                            "checks": {"facade": True, "data_dir": True, "warm_up": True}}


def test_readyz_writes_nothing_in_the_data_dir(api: httpx.Client, data: Path) -> None:
    """A probe anyone may send (no token) must not create or delete files there: either
    would change the directory's modification time."""
    assert api.get("/readyz").status_code == 200
    before = (data.stat().st_mtime_ns, sorted(p.name for p in data.iterdir()))
    for _ in range(5):
        assert api.get("/readyz").status_code == 200
    assert (data.stat().st_mtime_ns, sorted(p.name for p in data.iterdir())) == before


def test_readyz_503_when_not_ready(data: Path, tmp_path: Path) -> None:
    class Stub:  # a distributed-mode facade whose data dir vanished and whose Redis is down
        settings = server_settings(tmp_path / "gone" / "data", redis_url="redis://nowhere:1/0")

        async def readiness(self) -> dict[str, bool]:  # what its runtime answers (see
            return {"redis": False}  # tests/test_runtime_contract.py for a real one)

        async def close(self) -> None:
            pass

    with running_server(server_settings(data), facade=Stub()) as url:
        response = httpx.get(f"{url}/readyz")
        assert httpx.get(f"{url}/healthz").status_code == 200
    assert response.status_code == 503
    assert response.json() == {"status": "not ready", "pending": [],
                               "checks": {"facade": True, "data_dir": False, "redis": False}}


# -- memories and recall ------------------------------------------------------------------


def test_save_get_recall_forget(api: httpx.Client) -> None:
    saved = api.post("/v1/memories", json={
        "content": "Alice reviews the Apollo budget every Friday", "importance": "important",
        "source": "user_stated", "metadata": {"topic": "budget"}, "wait": True})
    assert saved.status_code == 201, saved.text
    frame = saved.json()
    assert frame["created"] is True and frame["workspace"] == "personal"
    assert frame["importance"] == "important" and frame["metadata"] == {"topic": "budget"}
    again = api.post("/v1/memories", json={"content": "Alice reviews the Apollo budget every Friday"})
    assert again.status_code == 200 and again.json()["created"] is False  # deduplicated

    got = api.get(f"/v1/memories/{frame['id']}")
    assert got.status_code == 200 and got.json()["content"] == frame["content"]
    stats = api.get("/v1/stats").json()
    assert stats["frames"] == 1 and stats["vectors"] == 1 and stats["pending_index"] == 0

    found = api.post("/v1/recall", json={"query": "Apollo budget", "limit": 5}).json()
    assert found["count"] == 1
    hit = found["results"][0]
    assert hit["id"] == frame["id"] and hit["from"] == "personal" and 0 <= hit["score"] <= 1
    assert {"rrf", "relevance", "final", "created_at", "metadata"} <= set(hit)

    catch_up = api.get("/v1/catch-up", params={"limit": 3}).json()
    assert [r["id"] for r in catch_up["results"]] == [frame["id"]]

    assert api.delete(f"/v1/memories/{frame['id']}").json()["id"] == frame["id"]
    error_of(api.get(f"/v1/memories/{frame['id']}"), 404, "not_found")
    error_of(api.delete(f"/v1/memories/{frame['id']}"), 404, "not_found")
    error_of(api.get("/v1/memories/abc"), 422, "invalid")
    error_of(api.get("/v1/memories/0"), 422, "invalid")
    assert frames(api) == 0


@pytest.mark.parametrize("query", [
    'Apollo AND (budget OR "x', "NEAR(Apollo budget)", "budget*", "content:Apollo",
    '"""', "-Apollo", "Apollo NOT", "^budget", "((", "ünïcödé 日本語", "'; DROP TABLE x; --",
])
def test_recall_accepts_fts_syntax_as_plain_text(api: httpx.Client, query: str) -> None:
    api.post("/v1/memories", json={"content": "Apollo budget review", "wait": True})
    response = api.post("/v1/recall", json={"query": query})
    assert response.status_code == 200, response.text
    assert isinstance(response.json()["results"], list)


def test_recall_filters_and_bad_timestamps(api: httpx.Client) -> None:
    api.post("/v1/memories", json={"content": "Apollo budget review", "wait": True})
    window = api.post("/v1/recall", json={"query": "Apollo", "since": "2000-01-01T00:00:00Z",
                                          "until": "2999-01-01T00:00:00Z", "profile": "recent"})
    assert window.status_code == 200 and window.json()["count"] == 1
    empty = api.post("/v1/recall", json={"query": "Apollo", "until": "2000-01-01T00:00:00Z"})
    assert empty.json()["count"] == 0
    error_of(api.post("/v1/recall", json={"query": "x", "since": "last tuesday"}), 400,
             "invalid_timestamp")
    error_of(api.post("/v1/recall", json={"query": "x", "scope": "workspace"}), 400, "invalid")


def test_recall_min_relevance(api: httpx.Client) -> None:
    """absolute_relevance on every result; min_relevance keeps the likely matches and drops an
    unrelated question's results; out-of-range bounds are refused."""
    api.post("/v1/memories", json={"content": "Porto offsite: we booked the Casa Azul hotel",
                                   "wait": True})
    found = api.post("/v1/recall", json={"query": "Casa Azul hotel Porto offsite"}).json()
    assert all(0.0 <= r["absolute_relevance"] <= 1.0 for r in found["results"])
    kept = api.post("/v1/recall", json={"query": "Casa Azul hotel Porto offsite",
                                        "min_relevance": 0.5}).json()["results"]
    assert kept and kept[0]["content"].startswith("Porto offsite")
    assert all(r["absolute_relevance"] >= 0.5 for r in kept)
    noise = api.post("/v1/recall", json={"query": "quantum chromodynamics lattice gauge",
                                         "min_relevance": 0.5}).json()
    assert noise["count"] == 0
    for bad in (-0.5, 1.01, "high"):
        response = api.post("/v1/recall", json={"query": "hotel", "min_relevance": bad})
        assert response.status_code in (400, 422), response.text


def test_recall_explain_lanes_and_touch(api: httpx.Client) -> None:
    budget = api.post("/v1/memories", json={"content": "Apollo budget review on Friday",
                                            "wait": True}).json()["id"]
    cat = api.post("/v1/memories", json={"content": "The cat sleeps on the warm windowsill",
                                         "wait": True}).json()["id"]

    def recall(**body: Any) -> list[dict[str, Any]]:
        response = api.post("/v1/recall", json={"query": "Apollo budget", **body})
        assert response.status_code == 200, response.text
        results: list[dict[str, Any]] = response.json()["results"]
        return results

    hits = {r["id"]: r for r in recall(explain=True, touch=False)}
    top = check_explain(hits[budget], keyword=True, vector=True)
    assert top["keyword_rank"] == 1 and top["popularity"] == 1.0  # never recalled yet
    check_explain(hits[cat], keyword=False, vector=True)
    keyword = recall(explain=True, lanes="keyword", touch=False)
    assert [r["id"] for r in keyword] == [budget]
    assert check_explain(keyword[0], keyword=True, vector=False)["vector_rank"] is None
    vector = recall(explain=True, lanes="vector", touch=False)
    assert {r["id"] for r in vector} == {budget, cat}
    for r in vector:
        check_explain(r, keyword=False, vector=True)

    # touch=false left access counts (the popularity factor) alone; a plain recall counts
    assert check_explain(recall(explain=True, touch=False)[0])["popularity"] == 1.0
    assert all("explain" not in r for r in recall())
    assert all("explain" not in r for r in recall(explain=False))
    # the access-count write runs after the answer (facade._search_over): it lands shortly
    deadline = time.monotonic() + 10
    while check_explain(recall(explain=True, touch=False)[0])["popularity"] == 1.0:
        assert time.monotonic() < deadline, "the plain recalls' access counts never landed"
        time.sleep(0.02)
    assert check_explain(recall(explain=True, touch=False)[0])["popularity"] > 1.0
    error_of(api.post("/v1/recall", json={"query": "x", "lanes": "both"}), 422, "invalid")
    error_of(api.post("/v1/recall", json={"query": "x", "explain": "very"}), 422, "invalid")


# -- knowledge graph, identity, awareness -------------------------------------------------


def test_entities_and_relations(api: httpx.Client) -> None:
    alice = api.post("/v1/entities", json={"type": "person", "name": "Alice",
                                           "properties": {"role": "lead"}})
    assert alice.status_code == 201, alice.text
    same = api.post("/v1/entities", json={"entity_type": "person", "name": "Alice"})
    assert same.status_code == 200 and same.json()["id"] == alice.json()["id"]
    apollo = api.post("/v1/entities", json={"type": "project", "name": "Apollo"}).json()
    relation = api.post("/v1/relations", json={
        "source_id": alice.json()["id"], "target_id": apollo["id"], "relation_type": "leads",
        "confidence": 0.9})
    assert relation.status_code == 201, relation.text
    found = api.get("/v1/entities", params={"query": "Alice", "type": "person"}).json()
    assert found["count"] == 1
    assert found["entities"][0]["relations"]["outgoing"][0]["target_id"] == apollo["id"]
    assert api.get("/v1/entities", params={"query": "Alice", "type": "project"}).json()[
        "count"] == 0
    error_of(api.get("/v1/entities", params={"query": "x", "type": "planet"}), 422, "invalid")
    error_of(api.post("/v1/entities", json={"type": "planet", "name": "Mars"}), 422, "invalid")
    error_of(api.post("/v1/relations", json={"source_id": 1, "target_id": 2,
                                             "relation_type": "x", "confidence": 2}),
             422, "invalid")


def test_identity(api: httpx.Client) -> None:
    assert api.get("/v1/identity").json()["configured"] is False
    created = api.put("/v1/identity", json={"name": "Ada", "role": "engineer"})
    assert created.status_code == 200 and created.json()["action"] == "created"
    updated = api.put("/v1/identity", json={"personality": "curious"}).json()
    assert updated["action"] == "updated" and updated["name"] == "Ada"
    got = api.get("/v1/identity").json()
    assert got["configured"] is True and got["role"] == "engineer"
    error_of(api.put("/v1/identity", json={}), 400, "invalid")
    error_of(api.put("/v1/identity", json={"favourite_colour": "red"}), 422, "invalid")


def test_awareness(api: httpx.Client) -> None:
    added = api.post("/v1/awareness", json={"category": "task", "content": "ship the API",
                                            "priority": 2, "ttl_minutes": 60})
    assert added.status_code == 201, added.text
    api.post("/v1/awareness", json={"category": "flag", "content": "CI is red"})
    assert api.get("/v1/awareness").json()["count"] == 2
    assert api.get("/v1/awareness", params={"category": "task"}).json()["count"] == 1
    assert api.delete("/v1/awareness", params={"id": added.json()["id"]}).json()["removed"]
    error_of(api.delete("/v1/awareness", params={"id": 9999}), 404, "not_found")
    assert api.delete("/v1/awareness", params={"category": "flag"}).json()["cleared"] == 1
    assert api.get("/v1/awareness").json()["count"] == 0
    error_of(api.delete("/v1/awareness"), 400, "invalid")
    error_of(api.post("/v1/awareness", json={"category": "mood", "content": "x"}), 422,
             "invalid")


# -- workspaces ---------------------------------------------------------------------------


def test_workspace_routes(api: httpx.Client) -> None:
    created = api.post("/v1/workspaces", json={"name": "Project X", "id": "proj-x",
                                               "group": "work"})
    assert created.status_code == 201 and created.json()["id"] == "proj-x"
    error_of(api.post("/v1/workspaces", json={"name": "again", "id": "proj-x"}), 409,
             "conflict")
    assert api.post("/v1/memories", json={"content": "Workspace note about Zephyr",
                                          "workspace": "proj-x", "wait": True}).status_code == 201
    api.post("/v1/memories", json={"content": "Personal note about Zephyr", "wait": True})
    assert frames(api, "proj-x") == 1 and frames(api) == 1

    ws_only = api.post("/v1/recall", json={"query": "Zephyr", "workspace": "proj-x"}).json()
    assert [r["from"] for r in ws_only["results"]] == ["workspace:proj-x"]
    both = api.post("/v1/recall", json={"query": "Zephyr", "scope": "all"}).json()
    assert sorted(r["from"] for r in both["results"]) == ["personal", "workspace:proj-x"]

    listing = api.get("/v1/workspaces").json()
    assert [w["id"] for w in listing["workspaces"]] == ["proj-x"]
    assert listing["workspaces"][0]["frames"] == 1 and listing["default_workspace"] is None
    got = api.get("/v1/workspaces/proj-x").json()
    assert got["name"] == "Project X" and got["frames"] == 1
    patched = api.patch("/v1/workspaces/proj-x", json={"name": "Project Y"})
    assert patched.status_code == 200 and patched.json()["name"] == "Project Y"
    error_of(api.patch("/v1/workspaces/proj-x", json={"colour": "red"}), 422, "invalid")
    assert api.put("/v1/workspaces/default", json={"workspace": "proj-x"}).json() == {
        "default_workspace": "proj-x"}
    assert api.get("/v1/workspaces").json()["default_workspace"] == "proj-x"
    error_of(api.put("/v1/workspaces/default", json={"workspace": "nope"}), 404, "not_found")
    assert api.put("/v1/workspaces/default", json={"workspace": None}).status_code == 200

    assert api.delete("/v1/workspaces/proj-x").json() == {"deleted": "proj-x"}
    error_of(api.get("/v1/workspaces/proj-x"), 404, "not_found")
    error_of(api.delete("/v1/workspaces/proj-x"), 404, "not_found")


def test_unknown_workspace_is_404_and_creates_nothing(api: httpx.Client, data: Path) -> None:
    error_of(api.post("/v1/memories", json={"content": "x", "workspace": "ghost"}), 404,
             "not_found")
    error_of(api.get("/v1/stats", params={"workspace": "ghost"}), 404, "not_found")
    error_of(api.post("/v1/recall", json={"query": "x", "workspace": "ghost"}), 404, "not_found")
    error_of(api.get("/v1/workspaces/ghost"), 404, "not_found")
    assert not (data / "workspaces" / "ghost").exists()


BAD_IDS = ["../x", "..", "/etc/passwd", "a\x00b", "UPPER", "x/../../y", "..\\x", " x"]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_traversal_workspace_ids_are_refused(api: httpx.Client, data: Path, bad: str) -> None:
    before = sorted(p.relative_to(data.parent) for p in data.parent.rglob("*"))
    error_of(api.post("/v1/memories", json={"content": "leak", "workspace": bad}), 400,
             "invalid_id")
    error_of(api.get("/v1/stats", params={"workspace": bad}), 400, "invalid_id")
    error_of(api.post("/v1/recall", json={"query": "leak", "workspace": bad}), 400, "invalid_id")
    error_of(api.post("/v1/workspaces", json={"name": "evil", "id": bad}), 400, "invalid_id")
    error_of(api.post("/v1/maintenance/compact", json={"workspace": bad}), 400, "invalid_id")
    error_of(api.put("/v1/workspaces/default", json={"workspace": bad}), 400, "invalid_id")
    assert frames(api) == 0
    assert api.get("/v1/workspaces").json()["workspaces"] == []
    after = sorted(p.relative_to(data.parent) for p in data.parent.rglob("*"))
    assert [p for p in after if p not in before and p.name != "personal.mind"
            and not p.name.startswith("personal.mind-")] == []


@pytest.mark.parametrize("raw_path", [
    "/v1/workspaces/%2e%2e%2fx", "/v1/workspaces/..%2Fx", "/v1/workspaces/%2Fetc%2Fpasswd",
    "/v1/workspaces/a%00b", "/v1/workspaces/%2E%2E",
])
def test_traversal_in_url_path(api: httpx.Client, raw_path: str) -> None:
    for method in ("GET", "PATCH", "DELETE"):
        kwargs: dict[str, Any] = {"json": {"name": "x"}} if method == "PATCH" else {}
        error_of(api.request(method, raw_path, **kwargs), 400, "invalid_id")
    assert api.get("/v1/workspaces").json()["workspaces"] == []


# -- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "body"), [
    ("POST", "/v1/recall", {"query": "x", "scope": "everything"}),
    ("POST", "/v1/recall", {"query": "x", "profile": "fastest"}),
    ("POST", "/v1/recall", {"query": "x", "limit": 0}),
    ("POST", "/v1/recall", {"query": "x", "limit": 101}),
    ("POST", "/v1/recall", {"query": "x", "surprise": True}),
    ("POST", "/v1/recall", {}),
    ("POST", "/v1/memories", {"content": "x", "importance": "urgent"}),
    ("POST", "/v1/memories", {"content": "x", "source": "rumour"}),
    ("POST", "/v1/memories", {"content": ""}),
    ("POST", "/v1/maintenance/defrag", {}),
    ("POST", "/v1/cleanup/frames", {"mode": "shred"}),
    ("POST", "/v1/cleanup/entities", {"mode": "shred"}),
    ("POST", "/v1/harvest", {"source": "myspace", "path": "/tmp/x"}),
    ("POST", "/v1/ingest", {"content": "x", "type_hint": "docx"}),
    ("GET", "/v1/catch-up?limit=1000", None),
    ("GET", "/v1/awareness?category=mood", None),
])
def test_invalid_input_is_422_in_the_error_shape(api: httpx.Client, method: str, path: str,
                                                 body: Any) -> None:
    response = api.request(method, path, json=body)
    error_of(response, 422, "invalid")
    details = response.json()["error"]["details"]
    assert details and all({"loc", "msg", "type"} <= set(d) for d in details)


def test_malformed_json_and_unknown_routes(api: httpx.Client) -> None:
    error_of(api.post("/v1/recall", content=b"{not json",
                      headers={"Content-Type": "application/json"}), 422, "invalid")
    error_of(api.get("/v1/nothing-here"), 404, "not_found")
    error_of(api.put("/v1/memories"), 405, "method_not_allowed")


def test_unexpected_errors_are_500_internal_without_details(data: Path) -> None:
    class Exploding:
        settings = server_settings(data)

        async def stats(self, **kwargs: Any) -> dict[str, Any]:
            raise RuntimeError("secret internals /etc/shadow")

        async def close(self) -> None:
            pass

    with running_server(server_settings(data), facade=Exploding()) as url:
        response = httpx.get(f"{url}/v1/stats")
    error_of(response, 500, "internal")
    assert "secret" not in response.text and "Traceback" not in response.text


# -- maintenance, cleanup, status ---------------------------------------------------------


def test_maintenance_cleanup_and_status(api: httpx.Client) -> None:
    api.post("/v1/workspaces", json={"name": "W", "id": "w"})
    api.post("/v1/memories", json={"content": "Temporary scratch note", "importance": "temporary",
                                   "wait": True})
    for kind in ("compact", "reconcile", "dedupe", "reembed"):
        response = api.post(f"/v1/maintenance/{kind}", json={})
        assert response.status_code == 200, response.text
        assert response.json()["action"] == kind and "personal" in response.json()["minds"]
    everywhere = api.post("/v1/maintenance/reconcile", json={"all": True}).json()
    assert set(everywhere["minds"]) == {"personal", "w"}
    no_body = api.post("/v1/maintenance/compact")
    assert no_body.status_code == 200, no_body.text

    assert api.post("/v1/cleanup/frames", json={"mode": "compact"}).json()["action"] == "compact"
    audit = api.post("/v1/cleanup/entities", json={"mode": "audit"}).json()
    assert audit["action"] == "audit" and "total_entities" in audit
    wiped = api.post("/v1/cleanup/frames", json={"mode": "wipe_all", "workspace": "w"})
    assert wiped.status_code == 200, wiped.text

    assert api.post("/v1/recall", json={"query": "scratch note"}).status_code == 200
    # the served process's own search indexes: a small mind's keyword index stays off (once
    # the thread the recall started has found the mind small)
    for _ in range(200):
        status = api.get("/v1/status").json()
        if status["memory_indexes"]["personal"]["keyword"]["state"] != "building":
            break
        time.sleep(0.05)
    assert status["memory_indexes"]["personal"]["keyword"]["state"] == "off"
    assert status["mode"] == "embedded"
    assert {m["id"] for m in status["minds"]} == {"personal", "workspace:w"}
    assert status["config"]["api_token"] is None
    probed = api.get("/v1/status", params={"probe": True}).json()
    assert probed["embedder"]["provider"] == "test" and probed["embedder"]["degraded"] is False


# -- harvest and ingest -------------------------------------------------------------------

UNIVERSAL = "\n".join(json.dumps(m) for m in [
    {"conversation_id": "c1", "message_id": "m1", "speaker": "Ada", "role": "user",
     "text": "Let us plan the Orion launch", "timestamp": "2024-05-01T10:00:00Z", "title": "Orion"},
    {"conversation_id": "c1", "message_id": "m2", "speaker": "Bot", "role": "assistant",
     "text": "Orion launch checklist drafted", "timestamp": "2024-05-01T10:01:00Z"},
])


@needs_harvest
def test_harvest_inline_upload_and_server_path(api: httpx.Client, tmp_path: Path) -> None:
    inline = api.post("/v1/harvest", json={"source": "universal", "data": UNIVERSAL,
                                           "filename": "export.jsonl"})
    assert inline.status_code == 200, inline.text
    before = frames(api)
    assert before >= 2
    found = api.post("/v1/recall", json={"query": "Orion launch"}).json()["results"]
    assert found and found[0]["metadata"].get("conversation_id") == "c1"

    again = api.post("/v1/harvest/upload", data={"source": "universal", "wait": "true"},
                     files={"file": ("export.jsonl", UNIVERSAL.encode(), "application/json")})
    assert again.status_code == 200, again.text
    assert frames(api) == before  # re-import is idempotent: no new frames
    on_disk = tmp_path / "export.jsonl"
    on_disk.write_text(UNIVERSAL, encoding="utf-8")
    by_path = api.post("/v1/harvest", json={"source": "universal", "path": str(on_disk)})
    assert by_path.status_code == 200, by_path.text
    assert frames(api) == before

    sources = api.get("/v1/harvest/sources").json()
    assert sources["count"] >= 1 and any(s.get("source") == "universal"
                                         for s in sources["sources"])
    error_of(api.post("/v1/harvest", json={"source": "universal"}), 400, "invalid")
    error_of(api.post("/v1/harvest", json={"source": "universal", "data": "{not json"}), 422,
             "harvest_input")


GROK = ROOT / "tests" / "fixtures" / "harvest" / "grok" / "prod-grok-backend.json"


@needs_harvest
def test_harvest_auto_inline_upload_and_server_path(api: httpx.Client, tmp_path: Path) -> None:
    inline = api.post("/v1/harvest", json={"source": "auto", "data": UNIVERSAL})
    assert inline.status_code == 200, inline.text
    body = inline.json()  # no filename: the content alone decides
    assert body["source"] == "universal" and body["items"] == 1 and body["frames_created"] == 2
    assert body["detected"].startswith("auto: universal (the file: universal-format")

    upload = api.post("/v1/harvest/upload", data={"source": "auto"},
                      files={"file": ("renamed.txt", GROK.read_bytes(), "text/plain")})
    assert upload.status_code == 200, upload.text
    grok = upload.json()
    assert (grok["source"], grok["items"], grok["frames_created"]) == ("grok", 2, 6)
    assert "Grok conversations" in grok["detected"]
    before = frames(api)
    assert before == 8

    by_path = api.post("/v1/harvest", json={"source": "auto", "path": str(GROK)})
    assert by_path.status_code == 200, by_path.text
    again = by_path.json()  # the same export through the server's path: nothing new
    assert (again["source"], again["frames_created"], again["duplicates_skipped"]) == (
        "grok", 0, 6)
    assert again["detected"] == grok["detected"]
    assert frames(api) == before

    stray = tmp_path / "settings.json"
    stray.write_text(json.dumps({"theme": "dark", "font": [12, 14]}), encoding="utf-8")
    for response in (api.post("/v1/harvest", json={"source": "auto", "path": str(stray)}),
                     api.post("/v1/harvest", json={"source": "auto",
                                                   "data": stray.read_text()})):
        message = error_of(response, 422, "harvest_input")
        assert "cannot tell which export this is" in message and "--source chatgpt" in message
    assert frames(api) == before
    unknown = error_of(api.post("/v1/harvest", json={"source": "guess", "data": "[]"}), 422,
                       "invalid")
    assert "'auto', 'chatgpt'" in unknown


@needs_harvest
def test_ingest_text_and_upload(api: httpx.Client) -> None:
    text = "# Runbook\n\n## Restart\n\nRestart the Vega cluster with the blue button."
    result = api.post("/v1/ingest", json={"content": text, "tags": ["ops"]})
    assert result.status_code == 200, result.text
    assert result.json()["source_type"] == "markdown" and result.json()["frames_created"] >= 1
    uploaded = api.post("/v1/ingest/upload", data={"type_hint": "plaintext"},
                        files={"file": ("notes.txt", b"The Lyra service owns billing.",
                                        "text/plain")})
    assert uploaded.status_code == 200, uploaded.text
    hits = api.post("/v1/recall", json={"query": "Lyra billing"}).json()["results"]
    assert any("Lyra" in h["content"] for h in hits)


# -- auth and limits ----------------------------------------------------------------------


def test_bearer_auth(data: Path) -> None:
    settings = server_settings(data, api_token="s3cret-token")
    with running_server(settings) as url, httpx.Client(base_url=url, timeout=30) as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-token"},
                        {"Authorization": "Basic czNjcmV0LXRva2Vu"},
                        {"Authorization": "Bearer s3cret-token-and-more"}):
            response = client.get("/v1/stats", headers=headers)
            error_of(response, 401, "unauthorized")
            assert response.headers["www-authenticate"].startswith("Bearer")
        assert client.get("/openapi.json").status_code == 200  # the docs are public
        error_of(client.post("/mcp", json={}), 401, "unauthorized")
        error_of(client.post("/v1/memories", json={"content": "sneaky"}), 401, "unauthorized")
        good = {"Authorization": "Bearer s3cret-token"}
        assert client.get("/v1/stats", headers=good).json()["frames"] == 0
        assert client.post("/v1/memories", json={"content": "ok"}, headers=good).status_code == 201
        assert client.get("/openapi.json", headers=good).status_code == 200


def test_request_size_limit(data: Path) -> None:
    with running_server(server_settings(data, max_request_bytes=4096)) as url, \
            httpx.Client(base_url=url) as client:
        big = {"content": "x" * 10_000}
        message = error_of(client.post("/v1/memories", json=big), 413, "too_large")
        assert "4096" in message

        def chunks() -> Iterator[bytes]:
            payload = json.dumps(big).encode()
            for i in range(0, len(payload), 1000):
                yield payload[i:i + 1000]

        chunked = client.post("/v1/memories", content=chunks(),
                              headers={"Content-Type": "application/json"})
        assert "content-length" not in chunked.request.headers
        error_of(chunked, 413, "too_large")
        upload = client.post("/v1/harvest/upload", data={"source": "universal"},
                             files={"file": ("big.jsonl", b"y" * 10_000)})
        error_of(upload, 413, "too_large")

        small = client.post("/v1/memories", json={"content": "small enough"})
        assert small.status_code == 201
        assert client.get("/v1/stats").json()["frames"] == 1


# -- OpenAPI and MCP ----------------------------------------------------------------------

EXPECTED_ROUTES = {
    ("post", "/v1/memories"), ("get", "/v1/memories/{frame_id}"),
    ("delete", "/v1/memories/{frame_id}"), ("post", "/v1/recall"), ("get", "/v1/catch-up"),
    ("get", "/v1/entities"), ("post", "/v1/entities"), ("post", "/v1/relations"),
    ("get", "/v1/identity"), ("put", "/v1/identity"), ("get", "/v1/awareness"),
    ("post", "/v1/awareness"), ("delete", "/v1/awareness"), ("get", "/v1/workspaces"),
    ("post", "/v1/workspaces"), ("get", "/v1/workspaces/{workspace_id}"),
    ("patch", "/v1/workspaces/{workspace_id}"), ("delete", "/v1/workspaces/{workspace_id}"),
    ("put", "/v1/workspaces/default"), ("post", "/v1/harvest"), ("post", "/v1/harvest/upload"),
    ("get", "/v1/harvest/sources"), ("post", "/v1/ingest"), ("post", "/v1/ingest/upload"),
    ("post", "/v1/maintenance/{kind}"), ("post", "/v1/cleanup/frames"),
    ("post", "/v1/cleanup/entities"), ("get", "/v1/stats"), ("get", "/v1/status"),
    ("get", "/healthz"), ("get", "/readyz"),
}
METHODS = {"get", "put", "post", "delete", "patch", "options", "head", "trace"}


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _resolve(spec: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = spec
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        assert isinstance(node, dict) and part in node, f"unresolved $ref {ref}"
        node = node[part]
    return node


def test_openapi_schema_is_structurally_valid(api: httpx.Client) -> None:
    spec = api.get("/openapi.json").json()
    assert str(spec["openapi"]).startswith("3.")
    assert spec["info"]["title"] == "hive-mind" and spec["info"]["version"]
    seen = set()
    for path, item in spec["paths"].items():
        assert path.startswith("/")
        operations = {k: v for k, v in item.items() if k in METHODS}
        assert operations, path
        for method, operation in operations.items():
            seen.add((method, path))
            assert operation["responses"], (method, path)
            for status in operation["responses"]:
                assert status == "default" or 100 <= int(status) < 600
            for param in operation.get("parameters", []):
                assert param["in"] in {"path", "query", "header", "cookie"} and param["name"]
                if param["in"] == "path":
                    assert param["required"] is True and "{" + param["name"] + "}" in path
    assert seen >= EXPECTED_ROUTES, EXPECTED_ROUTES - seen
    refs = set(_refs(spec))
    assert refs
    for ref in refs:
        _resolve(spec, ref)
    error_schema = spec["paths"]["/v1/recall"]["post"]["responses"]["422"]
    assert "ErrorBody" in json.dumps(error_schema)
    docs = api.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


def test_mcp_is_mounted(api: httpx.Client) -> None:
    pytest.importorskip("hive_mind.mcp_server")
    response = api.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                        headers={"Accept": "application/json, text/event-stream"})
    assert response.status_code == 200, response.text
    tools = {t["name"] for t in response.json()["result"]["tools"]}
    assert {"save_memory", "recall_memory"} <= tools


# -- distributed mode ---------------------------------------------------------------------



def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_distributed_serve_with_worker(tmp_path: Path) -> None:
    from workers.queue import connect

    try:
        redis = await connect(REDIS_URL)
        await redis.ping()
    except Exception as exc:
        pytest.skip(f"no Redis at {REDIS_URL}: {exc}")
    await redis.flushdb()
    port = _free_port()
    env = {"HIVE_MIND_DATA_DIR": str(tmp_path / "data"), "HIVE_MIND_REDIS_URL": REDIS_URL,
           "HIVE_MIND_HOST_ID": "http-smoke", "HIVE_MIND_EMBEDDING_PROVIDER": "test"}
    full = {**os.environ, "HF_HUB_OFFLINE": "1", **env}
    with open(tmp_path / "serve.log", "ab") as log:
        serve = subprocess.Popen(
            [sys.executable, "-m", "hive_mind.server", "--port", str(port)], cwd=ROOT, env=full,
            stdout=log, stderr=subprocess.STDOUT)
    worker = spawn(["worker"], env, tmp_path / "worker.log")
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            async def up() -> bool:
                try:
                    return (await client.get("/readyz")).status_code == 200
                except httpx.HTTPError:
                    return False

            await eventually(up, 60, "the server to be ready")
            ready = (await client.get("/readyz")).json()
            assert ready["checks"]["redis"] is True
            saved = await client.post("/v1/memories", json={"content": "Nova ships on Monday"})
            assert saved.status_code == 201, saved.text

            async def indexed() -> bool:
                stats = (await client.get("/v1/stats")).json()
                return bool(stats["pending_index"] == 0 and stats["vectors"] == 1)

            await eventually(indexed, 60, "the worker's index result applied by the host")
            hits = (await client.post("/v1/recall", json={"query": "Nova Monday"})).json()
            assert hits["results"][0]["id"] == saved.json()["id"]
            status = (await client.get("/v1/status")).json()
            assert status["mode"] == "distributed"
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(30) == 0  # graceful: facade and worker closed, exit code 0
    except BaseException:
        print((tmp_path / "serve.log").read_text()[-4000:])
        print((tmp_path / "worker.log").read_text()[-2000:])
        raise
    finally:
        stop(serve)
        stop(worker)
        await redis.flushdb()
        await redis.aclose()
    assert "Traceback" not in (tmp_path / "serve.log").read_text()


# -- server-side reads (paths on the server's disk, URLs it fetches) ------------------------


MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "MCP-Protocol-Version": "2025-06-18"}


def mcp_call(client: httpx.Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    init = client.post("/mcp", headers=MCP_HEADERS, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}})
    assert init.status_code == 200, init.text
    called = client.post("/mcp", headers=MCP_HEADERS, json={
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}})
    assert called.status_code == 200, called.text
    return dict(called.json()["result"])


@needs_harvest
def test_server_reads_off_refuses_paths_and_urls_but_takes_text(data: Path,
                                                                 tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("The vault code is 4242.", encoding="utf-8")
    settings = server_settings(data, api_server_reads=False)
    with running_server(settings) as url, httpx.Client(base_url=url, timeout=60) as client:
        for source in ("plaintext", "auto"):  # auto chooses the source, never the policy
            message = error_of(client.post("/v1/harvest", json={
                "source": source, "path": str(secret)}), 403, "server_reads_disabled")
            assert "upload" in message
        for content, hint in ((str(secret), "auto"), ("~/notes.md", "auto"), ("secret.txt", "auto"),
                              ("../../etc/passwd", "auto"), ("http://127.0.0.1:9/x", "auto"),
                              ("file:///etc/passwd", "auto"), ("anything", "url"),
                              ("anything", "pdf")):
            error_of(client.post("/v1/ingest", json={"content": content, "type_hint": hint}),
                     403, "server_reads_disabled")
        assert frames(client) == 0  # nothing was read, nothing written

        text = client.post("/v1/ingest", json={"content": "The Lyra service owns billing."})
        assert text.status_code == 200, text.text
        assert text.json()["source_type"] == "plaintext" and text.json()["frames_created"] == 1
        doc = client.post("/v1/ingest", json={"content": "# Runbook\n\n## Restart\n\nPush it."})
        assert doc.json()["source_type"] == "markdown"
        inline = client.post("/v1/harvest", json={"source": "universal", "data": UNIVERSAL,
                                                  "filename": "export.jsonl"})
        assert inline.status_code == 200, inline.text
        hits = client.post("/v1/recall", json={"query": "vault code"}).json()["results"]
        assert not any("4242" in h["content"] for h in hits)

        for source in ("universal", "auto"):
            refused = mcp_call(client, "harvest_import", {"source": source,
                                                          "file_path": str(secret)})
            assert refused["isError"] is True
            assert "does not read" in refused["content"][0]["text"]
        refused = mcp_call(client, "ingest_source", {"content": str(secret)})
        assert refused["isError"] is True
        taken = mcp_call(client, "ingest_source", {"content": "Orion ships on Friday."})
        assert taken["isError"] is False
        assert json.loads(taken["content"][0]["text"])["frames_created"] == 1


@needs_harvest
def test_server_reads_default_follows_the_bind_address(data: Path, tmp_path: Path) -> None:
    on_disk = tmp_path / "export.jsonl"
    on_disk.write_text(UNIVERSAL, encoding="utf-8")
    body = {"source": "universal", "path": str(on_disk)}
    auth = {"Authorization": "Bearer exposed-token"}  # an exposed bind needs a token
    exposed = server_settings(data, api_token="exposed-token")
    with running_server(exposed, bind_host="0.0.0.0") as url, \
            httpx.Client(base_url=url, timeout=60, headers=auth) as client:
        error_of(client.post("/v1/harvest", json=body), 403, "server_reads_disabled")
    allowed = server_settings(data, api_server_reads=True, api_token="exposed-token")
    with running_server(allowed, bind_host="0.0.0.0") as url, \
            httpx.Client(base_url=url, timeout=60, headers=auth) as client:
        assert client.post("/v1/harvest", json=body).status_code == 200


def test_loopback_detection() -> None:
    from hive_mind.server_reads import is_loopback, reads_allowed

    assert all(is_loopback(h) for h in ("127.0.0.1", "::1", "[::1]", "localhost", "127.8.0.1"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.5", "example.com", ""))
    assert reads_allowed(None, "127.0.0.1") and not reads_allowed(None, "0.0.0.0")
    assert reads_allowed(True, "0.0.0.0") and not reads_allowed(False, "127.0.0.1")
