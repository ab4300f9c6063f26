"""The MCP server end to end: the SDK's real client over stdio against ``python -m
hive_mind.mcp_server`` (one subprocess for the module, deterministic test embedder)."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio.from_thread
import pytest
from mcp.shared.exceptions import MCPError

from hive_mind.mcp_tools import TOOL_NAMES
from tests.explain_checks import check_explain
from tests.support import McpClient, mcp_stdio_session

HAS_HARVEST = importlib.util.find_spec("hive_mind.harvest") is not None
needs_harvest = pytest.mark.skipif(not HAS_HARVEST, reason="hive_mind.harvest not present yet")


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpClient]:
    data_dir = tmp_path_factory.mktemp("mcp-data")
    with (data_dir.parent / "server.log").open("w") as errlog, \
            anyio.from_thread.start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(mcp_stdio_session(data_dir, errlog)) as session:
        yield McpClient(portal, session, data_dir)


# -- surface ----------------------------------------------------------------------------------

def test_lists_all_tools_and_resources(mcp: McpClient) -> None:
    tools = mcp.portal.call(mcp.session.list_tools).tools
    assert sorted(t.name for t in tools) == sorted(TOOL_NAMES)
    assert len(tools) == len(TOOL_NAMES) == 20
    assert all(t.description and len(t.description) > 40 for t in tools)
    by_name = {t.name: t for t in tools}
    schema = by_name["recall_memory"].input_schema
    assert schema["properties"]["limit"]["default"] == 10
    assert schema["properties"]["limit"]["minimum"] == 1
    assert by_name["save_memory"].input_schema["properties"]["source"]["default"] \
        == "agent_inferred"
    assert by_name["save_memory"].input_schema["required"] == ["content"]
    assert by_name["forget_memory"].annotations.destructive_hint is True
    resources = mcp.portal.call(mcp.session.list_resources).resources
    assert {str(r.uri) for r in resources} == {
        "memory://personal/stats", "memory://identity", "memory://awareness"}
    templates = mcp.portal.call(mcp.session.list_resource_templates).resource_templates
    assert [t.uri_template for t in templates] == ["memory://workspace/{id}"]
    assert templates[0].mime_type == "application/json"


def test_unknown_tool_is_an_error(mcp: McpClient) -> None:
    assert "no_such_tool" in mcp.error("no_such_tool", {})


# -- frames -----------------------------------------------------------------------------------

def test_save_then_recall(mcp: McpClient) -> None:
    saved = mcp.json("save_memory", {"content": "Marguerite prefers oolong tea in the morning"})
    assert saved["importance"] == "normal" and saved["source"] == "agent_inferred"
    assert saved["workspace"] == "personal" and saved["created"] is True
    again = mcp.json("save_memory", {"content": "Marguerite prefers oolong tea in the morning",
                                     "importance": "critical", "source": "user_stated"})
    assert again["id"] == saved["id"] and again["created"] is False
    rows = mcp.recall("oolong tea Marguerite", limit=5)
    hit = next(r for r in rows if r["id"] == saved["id"])
    assert set(hit) == {"id", "content", "importance", "source", "score", "absolute_relevance",
                        "created_at", "from", "conflict"}
    assert 0.0 <= hit["score"] <= 1.0 and hit["from"] == "personal"
    assert rows == sorted(rows, key=lambda r: r["score"], reverse=True)
    assert hit["absolute_relevance"] > 0.5  # the words and the meaning match
    # min_relevance: an unrelated question keeps nothing, a bad bound is refused
    noise = mcp.text("recall_memory", {"query": "quantum chromodynamics lattice gauge",
                                       "min_relevance": 0.5})
    assert noise.startswith("No memories found")
    assert "min_relevance" in mcp.error("recall_memory", {"query": "tea", "min_relevance": 1.5})
    kept = mcp.recall("oolong tea Marguerite", limit=5, min_relevance=0.5)
    assert saved["id"] in [r["id"] for r in kept]
    assert all(r["absolute_relevance"] >= 0.5 for r in kept)


def test_recall_explain(mcp: McpClient) -> None:
    saved = mcp.json("save_memory", {"content": "Zebulon repaints the lighthouse each spring"})
    schema = mcp.portal.call(mcp.session.list_tools).tools
    recall_schema = next(t for t in schema if t.name == "recall_memory").input_schema
    assert recall_schema["properties"]["explain"]["default"] is False
    plain = mcp.recall("Zebulon lighthouse", limit=5)
    assert plain and all("explain" not in r for r in plain)
    rows = mcp.recall("Zebulon lighthouse", limit=5, explain=True)
    assert set(rows[0]) == {"id", "content", "importance", "source", "score",
                            "absolute_relevance", "created_at", "from", "conflict", "explain"}
    hit = next(r for r in rows if r["id"] == saved["id"])
    assert check_explain(hit, keyword=True)["keyword_rank"] == 1
    for row in rows:
        check_explain(row)
    assert "explain" in mcp.error("recall_memory", {"query": "x", "explain": "very"})


def test_recall_nothing_and_search_syntax(mcp: McpClient) -> None:
    empty = mcp.text("recall_memory", {"query": "zzqxv"})
    assert empty.startswith("No memories found") or isinstance(json.loads(empty), list)
    for query in ('"foo" AND NOT (bar*', "NEAR(a b)", "col:value", "***", '"'):
        result = mcp.call("recall_memory", {"query": query})
        assert not result.is_error, result.content[0].text


def test_forget_memory(mcp: McpClient) -> None:
    saved = mcp.json("save_memory", {"content": "The vault code is 4471 for the blue locker"})
    assert any(r["id"] == saved["id"] for r in mcp.recall("vault code blue locker"))
    before = mcp.frames()
    erased = mcp.json("forget_memory", {"id": saved["id"]})
    assert erased["id"] == saved["id"] and erased["deleted"]
    assert mcp.frames() == before - 1
    assert all(r["id"] != saved["id"] for r in mcp.recall("vault code blue locker"))
    assert mcp.error("forget_memory", {"id": saved["id"]}).startswith("not_found:")
    assert mcp.error("forget_memory", {"id": 0}).startswith("invalid")


# -- knowledge graph --------------------------------------------------------------------------

def test_entities_and_relations(mcp: McpClient) -> None:
    alice = mcp.json("save_entity", {"type": "person", "name": "Zelda Quist",
                                     "properties": {"role": "engineer"}})
    assert alice["created"] is True and alice["type"] == "person"
    project = mcp.json("save_entity", {"type": "project", "name": "Hyperion Rewrite"})
    merged = mcp.json("save_entity", {"type": "person", "name": "zelda quist",
                                      "properties": {"team": "core"}})
    assert merged["id"] == alice["id"] and merged["updated"] is True
    assert merged["properties"]["role"] == "engineer" and merged["properties"]["team"] == "core"
    relation = mcp.json("create_relation", {"source_id": alice["id"],
                                            "target_id": project["id"],
                                            "relation_type": "works_on", "confidence": 0.9})
    assert relation["type"] == "works_on" and relation["confidence"] == 0.9
    found = mcp.json("search_entities", {"query": "Zelda"})
    row = next(e for e in found if e["id"] == alice["id"])
    assert {"target_id": project["id"], "type": "works_on", "confidence": 0.9} \
        in row["relations"]["outgoing"]
    typed = mcp.json("search_entities", {"query": "hyperion", "type": "project"})
    assert [e["id"] for e in typed] == [project["id"]]
    incoming = typed[0]["relations"]["incoming"]
    assert incoming == [{"source_id": alice["id"], "type": "works_on", "confidence": 0.9}]
    assert mcp.text("search_entities", {"query": "Nobody Qwxz"}) \
        == 'No entities found matching "Nobody Qwxz"'
    assert mcp.error("save_entity", {"type": "alien", "name": "X"}).startswith("invalid")
    assert mcp.error("create_relation", {"source_id": alice["id"], "target_id": project["id"],
                                         "relation_type": "x", "confidence": 2}
                     ).startswith("invalid")


def test_cleanup_entities_modes(mcp: McpClient) -> None:
    audit = mcp.json("cleanup_entities", {"mode": "audit"})
    assert audit["action"] == "audit" and audit["total_entities"] >= 0
    assert mcp.json("cleanup_entities", {"mode": "dedup"})["action"] == "dedup"
    assert "entities_retired" in mcp.json("cleanup_entities", {"mode": "remove_noise"})
    assert "entities_retired" in mcp.json("cleanup_entities", {"mode": "retire_orphans"})
    mcp.json("create_workspace", {"name": "Entity Scratch"})
    mcp.json("save_entity", {"type": "tool", "name": "Hammer", "workspace": "entity-scratch"})
    wiped = mcp.json("cleanup_entities", {"mode": "wipe_all", "workspace": "entity-scratch"})
    assert wiped["entities_retired"] == 1
    assert mcp.error("cleanup_entities", {"mode": "explode"}).startswith("invalid")


# -- identity and awareness -------------------------------------------------------------------

def test_export_memories_pages(mcp: McpClient) -> None:
    mcp.json("save_memory", {"content": "The export page test owns a teal kayak"})
    texts, cursor, pages = [], None, 0
    while True:
        page = mcp.json("export_memories", {"limit": 2, **({"cursor": cursor} if cursor
                                                            else {})})
        assert page["part"] == "frames" and page["count"] <= 2
        texts += [m["text"] for m in page["records"]]
        cursor, pages = page["next"], pages + 1
        if cursor is None:
            break
    assert "The export page test owns a teal kayak" in texts and len(texts) == mcp.frames()
    assert pages == (len(texts) + 1) // 2 or pages == len(texts) // 2 + 1
    assert "cursor" in mcp.error("export_memories", {"cursor": "../../etc/passwd"})
    assert mcp.error("export_memories", {"limit": 100_000})
    entities = mcp.json("export_memories", {"part": "entities", "limit": 500})
    assert all("valid_from" in e and "valid_to" in e for e in entities["records"])


def test_identity(mcp: McpClient) -> None:
    assert mcp.read("memory://identity")["configured"] in (True, False)
    first = mcp.json("set_identity", {"name": "Ada", "role": "analyst",
                                      "system_prompt": "be brief"})
    assert first["name"] == "Ada" and first["action"] in ("created", "updated")
    second = mcp.json("set_identity", {"department": "research"})
    assert second == {**second, "action": "updated", "name": "Ada", "role": "analyst",
                      "department": "research"}
    got = mcp.json("get_identity")
    assert got["configured"] is True and got["system_prompt"] == "be brief"
    resource = mcp.read("memory://identity")
    assert resource["name"] == "Ada" and "system_prompt" not in resource
    assert "No fields provided" in mcp.error("set_identity", {})


def test_awareness(mcp: McpClient) -> None:
    mcp.text("clear_awareness", {"category": "task"})
    mcp.text("clear_awareness", {"category": "flag"})
    item = mcp.json("set_awareness", {"category": "task", "content": "review the PR",
                                      "priority": 5, "ttl_minutes": 30})
    assert item["priority"] == 5 and item["expires_at"]
    mcp.json("set_awareness", {"category": "flag", "content": "user is in a hurry"})
    listed = mcp.json("get_awareness", {"category": "task"})
    assert [i["id"] for i in listed] == [item["id"]]
    assert any(i["id"] == item["id"] for i in mcp.read("memory://awareness"))
    assert mcp.text("clear_awareness", {"id": item["id"]}) \
        == f"Removed awareness item #{item['id']}"
    assert mcp.text("get_awareness", {"category": "task"}) == "No active awareness items."
    assert mcp.text("clear_awareness", {"category": "flag"}) \
        == 'Cleared all "flag" awareness items'
    assert "Provide either an id or category" in mcp.error("clear_awareness", {})
    assert mcp.error("clear_awareness", {"id": 999999}).startswith("not_found:")
    assert mcp.error("set_awareness", {"category": "mood", "content": "x"}).startswith("invalid")
    assert mcp.error("set_awareness", {"category": "task", "content": "x", "priority": 11}
                     ).startswith("invalid")


# -- workspaces -------------------------------------------------------------------------------

def test_workspace_save_and_recall(mcp: McpClient) -> None:
    ws = mcp.json("create_workspace", {"name": "Project Apollo", "icon": "rocket"})
    assert ws["id"] == "project-apollo" and ws["group"] == "general" and ws["icon"] == "rocket"
    text = "Apollo launch window opens on the ninth of March"
    saved = mcp.json("save_memory", {"content": text, "workspace": "project-apollo"})
    assert saved["workspace"] == "project-apollo"
    # workspace given, no scope: that workspace
    rows = mcp.recall("Apollo launch window", workspace="project-apollo")
    assert [r["from"] for r in rows if r["id"] == saved["id"]] == ["workspace:project-apollo"]
    current = mcp.recall("Apollo launch window", workspace="project-apollo", scope="current")
    assert any(r["content"] == text for r in current)
    assert all(r["content"] != text for r in mcp.recall("Apollo launch window"))
    everywhere = mcp.recall("Apollo launch window", scope="all", limit=50)
    assert any(r["content"] == text and r["from"] == "workspace:project-apollo"
               for r in everywhere)
    assert mcp.error("recall_memory", {"query": "x", "scope": "personal",
                                       "workspace": "project-apollo"}).startswith("invalid")
    listing = mcp.json("list_workspaces")
    entry = next(w for w in listing["workspaces"] if w["id"] == "project-apollo")
    assert entry["frames"] == 1 and entry["name"] == "Project Apollo"
    assert "frames" in listing["personal"] and "default_workspace" in listing
    info = mcp.read("memory://workspace/project-apollo")
    assert info["id"] == "project-apollo" and info["frames"] == 1
    with pytest.raises(MCPError):
        mcp.read("memory://workspace/no-such-workspace")


def test_cleanup_frames_modes(mcp: McpClient) -> None:
    compact = mcp.json("cleanup_frames", {"mode": "compact"})
    assert compact["action"] == "compact" and "temporary_pruned" in compact
    assert mcp.json("cleanup_frames", {"mode": "reconcile"})["action"] == "reconcile"
    mcp.json("create_workspace", {"name": "Frame Scratch"})
    mcp.json("save_memory", {"content": "scratch one", "workspace": "frame-scratch"})
    mcp.json("save_memory", {"content": "scratch two", "workspace": "frame-scratch"})
    assert mcp.text("cleanup_frames", {"mode": "wipe_imports", "workspace": "frame-scratch"}) \
        == "No imported frames found."
    wiped = mcp.json("cleanup_frames", {"mode": "wipe_all", "workspace": "frame-scratch"})
    assert wiped["frames_deleted"] == 2 and wiped["warning"]
    assert mcp.frames("frame-scratch") == 0
    assert mcp.error("cleanup_frames", {"mode": "compact", "workspace": "nope"}
                     ).startswith("not_found:")


# -- harvest and ingest -----------------------------------------------------------------------

UNIVERSAL = [
    {"conversation_id": "c1", "message_id": "m1", "speaker": "Alice", "role": "user",
     "text": "Our quarterly offsite will be held in Lisbon this year", "timestamp":
     "2025-01-02T10:00:00Z"},
    {"conversation_id": "c1", "message_id": "m2", "speaker": "Bot", "role": "assistant",
     "text": "Noted: the offsite is in Lisbon.", "timestamp": "2025-01-02T10:00:05Z"},
]


@needs_harvest
def test_harvest_import_data_and_file(mcp: McpClient, tmp_path: Path) -> None:
    before = mcp.frames()
    summary = mcp.json("harvest_import", {"source": "universal", "data": json.dumps(UNIVERSAL)})
    assert summary["frames_created"] >= 1
    assert mcp.frames() == before + summary["frames_created"]
    assert any("Lisbon" in r["content"] for r in mcp.recall("quarterly offsite Lisbon"))
    sources = mcp.json("harvest_sources")
    assert any(s["source"] == "universal" for s in sources)
    again = mcp.text("harvest_import", {"source": "universal", "data": json.dumps(UNIVERSAL)})
    assert mcp.frames() == before + summary["frames_created"]
    assert again
    # into a workspace, from a file
    mcp.json("create_workspace", {"name": "Harvest Target"})
    export = tmp_path / "export.json"
    export.write_text(json.dumps(UNIVERSAL), encoding="utf-8")
    into = mcp.json("harvest_import", {"source": "universal", "file_path": str(export),
                                       "workspace": "harvest-target"})
    assert into["frames_created"] >= 1
    assert mcp.frames("harvest-target") == into["frames_created"]


GROK = Path(__file__).parent / "fixtures" / "harvest" / "grok" / "prod-grok-backend.json"


@needs_harvest
def test_harvest_import_auto(mcp: McpClient, tmp_path: Path) -> None:
    mcp.json("create_workspace", {"name": "Auto Harvest"})
    ws = {"workspace": "auto-harvest"}
    inline = mcp.json("harvest_import", {"source": "auto", "data": GROK.read_text(), **ws})
    assert (inline["source"], inline["items"], inline["frames_created"]) == ("grok", 2, 6)
    assert inline["detected"].startswith("auto: grok (the file: Grok conversations")
    renamed = tmp_path / "export.txt"  # its name says nothing: the content decides
    renamed.write_text(json.dumps(UNIVERSAL), encoding="utf-8")
    by_path = mcp.json("harvest_import", {"source": "auto", "file_path": str(renamed), **ws})
    assert (by_path["source"], by_path["frames_created"]) == ("universal", 2)
    assert "universal-format messages" in by_path["detected"]
    again = mcp.json("harvest_import", {"source": "auto", "data": GROK.read_text(), **ws})
    assert (again["status"], again["frames_created"], again["source"]) == ("unchanged", 0, "grok")
    assert again["detected"] == inline["detected"]
    assert mcp.frames("auto-harvest") == 8
    refused = mcp.error("harvest_import", {"source": "auto", "data": '{"theme": "dark"}', **ws})
    assert "cannot tell which export this is" in refused and "--source grok" in refused
    assert mcp.frames("auto-harvest") == 8


def test_harvest_import_refusals(mcp: McpClient) -> None:
    before = mcp.frames()
    assert "provide either" in mcp.error("harvest_import", {"source": "universal"})
    assert "not valid JSON" in mcp.error("harvest_import", {"source": "universal",
                                                            "data": "{not json"})
    assert mcp.error("harvest_import", {"source": "myspace", "data": "[]"}).startswith("invalid")
    assert "create_workspace" in mcp.error(
        "harvest_import", {"source": "universal", "data": "[]", "workspace": "ghost"})
    assert mcp.frames() == before


@needs_harvest
def test_ingest_source_honors_workspace(mcp: McpClient) -> None:
    mcp.json("create_workspace", {"name": "Docs"})
    doc = ("# Runbook\n\n## Restart\n\nTo restart the zephyr cluster run the drain script "
           "first, then reboot nodes one at a time.\n")
    personal_before = mcp.frames()
    summary = mcp.json("ingest_source", {"content": doc, "workspace": "docs",
                                         "tags": ["ops"], "importance": "important"})
    assert summary["frames_created"] >= 1
    assert mcp.frames("docs") == summary["frames_created"]
    assert mcp.frames() == personal_before
    rows = mcp.recall("restart zephyr cluster", workspace="docs")
    assert any("zephyr" in r["content"] for r in rows)


# -- bad arguments ----------------------------------------------------------------------------

def _workspace_dirs(mcp: McpClient) -> set[str]:
    root = mcp.data_dir / "workspaces"
    return {p.name for p in root.iterdir()} if root.is_dir() else set()


def test_bad_arguments_are_clear_errors_and_write_nothing(mcp: McpClient) -> None:
    frames, dirs = mcp.frames(), _workspace_dirs(mcp)
    listing = [w["id"] for w in mcp.json("list_workspaces")["workspaces"]]
    outside = set(mcp.data_dir.parent.iterdir())

    unknown = mcp.error("save_memory", {"content": "x", "workspace": "never-created"})
    assert unknown.startswith("not_found:") and "create_workspace" in unknown
    for bad in ("../x", "/etc", "a\x00b", "..", "UPPER", "a/b"):
        text = mcp.error("save_memory", {"content": "secret", "workspace": bad})
        assert text.startswith("invalid_id:"), text
        assert mcp.error("recall_memory", {"query": "x", "workspace": bad}
                         ).startswith("invalid_id:")
    assert "importance" in mcp.error("save_memory", {"content": "x", "importance": "urgent"})
    assert "source" in mcp.error("save_memory", {"content": "x", "source": "rumor"})
    assert "content" in mcp.error("save_memory", {})
    assert mcp.error("save_memory", {"content": "   "}).startswith("invalid")
    assert "limit" in mcp.error("recall_memory", {"query": "x", "limit": 0})
    assert "limit" in mcp.error("recall_memory", {"query": "x", "limit": 101})
    assert "limit" in mcp.error("recall_memory", {"query": "x", "limit": "many"})
    assert "scope" in mcp.error("recall_memory", {"query": "x", "scope": "galaxy"})
    assert "query" in mcp.error("recall_memory", {})
    assert "id" in mcp.error("forget_memory", {})
    assert "mode" in mcp.error("cleanup_frames", {"mode": "nuke"})
    assert mcp.error("create_workspace", {"name": ""}).startswith("invalid")
    assert "workspace" in mcp.error("recall_memory", {"query": "x", "scope": "current"})

    assert mcp.frames() == frames
    assert _workspace_dirs(mcp) == dirs
    assert [w["id"] for w in mcp.json("list_workspaces")["workspaces"]] == listing
    assert set(mcp.data_dir.parent.iterdir()) == outside
    assert not (mcp.data_dir.parent / "x").exists()
    with pytest.raises(MCPError):
        mcp.read("memory://workspace/..%2Fx")


def test_stats_resource(mcp: McpClient) -> None:
    stats = mcp.read("memory://personal/stats")
    assert set(stats) >= {"frames", "knowledge_graph", "embedding"}
    assert stats["embedding"]["provider"] == "test"
    assert stats["frames"]["total"] >= 0 and "entities" in stats["knowledge_graph"]


# -- streamable HTTP (in process, mounted the way the HTTP API mounts it) ----------------------

async def test_streamable_http_app_mounted_in_fastapi(tmp_path: Path) -> None:
    import httpx
    from fastapi import FastAPI

    from hive_mind.mcp_server import LazyFacade, build_server, streamable_http_app
    from hive_mind.settings import load_settings

    facade = LazyFacade(load_settings(data_dir=tmp_path, embedding_provider="test"))
    mcp_app = streamable_http_app(build_server(facade))  # loopback: DNS-rebinding checks on
    api = FastAPI()
    api.add_route("/mcp", mcp_app, methods=["GET", "POST", "DELETE"])
    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "MCP-Protocol-Version": "2025-06-18"}

    def rpc(ident: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}}

    try:
        async with mcp_app.lifespan(), httpx.AsyncClient(
                transport=httpx.ASGITransport(app=api), base_url="http://localhost:8000") as http:
            init = await http.post("/mcp", headers=headers, json=rpc(1, "initialize", {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}))
            assert init.status_code == 200, init.text
            assert init.json()["result"]["serverInfo"]["name"] == "hive-mind-memory"
            listed = await http.post("/mcp", headers=headers, json=rpc(2, "tools/list"))
            assert len(listed.json()["result"]["tools"]) == len(TOOL_NAMES)
            saved = await http.post("/mcp", headers=headers, json=rpc(3, "tools/call", {
                "name": "save_memory", "arguments": {"content": "saved over streamable HTTP"}}))
            result = saved.json()["result"]
            assert result["isError"] is False
            assert json.loads(result["content"][0]["text"])["id"] == 1
            bad = await http.post("/mcp", headers=headers, json=rpc(4, "tools/call", {
                "name": "save_memory", "arguments": {"content": "x", "workspace": "../x"}}))
            assert bad.json()["result"]["isError"] is True
            rebinding = await http.post("/mcp", headers={**headers, "Host": "evil.example"},
                                        json=rpc(5, "tools/list"))
            assert rebinding.status_code >= 400
    finally:
        await facade.close()
