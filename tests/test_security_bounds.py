"""Issue #12 items 6 and 11: integer bounds at every edge and bounded text fields.

The attacks from the issue, literally, against a real ``serve`` over a real socket (REST and
MCP over HTTP): out-of-range integers are 422 ``invalid`` (never 500 ``internal``), huge text
and names with bidi controls are refused in our error shape and nothing is stored. The same
values through the Python facade (what the CLI and MCP stdio use) are a ValidationError, and
through the CLI (a real subprocess) a one-line error with exit code 2. The legitimate use at the
limit still works.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hive_mind.facade import HiveMind
from mind.bounds import name_text, shown
from mind.errors import ValidationError
from tests.http_server import running_server, server_settings
from tests.procs import run_cli
from vocabulary import limits as C

HUGE = 99999999999999999999999  # the id from the issue: above 2**63
RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[httpx.Client]:
    with running_server(server_settings(tmp_path / "data")) as url, \
            httpx.Client(base_url=url, timeout=60) as client:
        yield client


def refused(response: httpx.Response, *statuses: int) -> str:
    """An error in our shape with one of ``statuses`` (default 400/422), code ``invalid``."""
    assert response.status_code in (statuses or (400, 422)), response.text[:500]
    error = response.json()["error"]
    assert set(response.json()) == {"error"} and error["code"] == "invalid", error
    assert len(error["message"]) < 1000, "the refused value must not be echoed back"
    return str(error["message"])


def ok(response: httpx.Response) -> Any:
    assert response.status_code in (200, 201), response.text[:500]
    return response.json()


def mcp_call(api: httpx.Client, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    response = api.post("/mcp", headers=MCP_HEADERS, json={
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}})
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    return bool(result.get("isError")), str(result["content"][0]["text"])


# -- item 6: integers over HTTP --------------------------------------------------------------

def test_frame_ids_above_int64_are_422_not_500(api: httpx.Client) -> None:
    for method in ("GET", "DELETE"):
        message = refused(api.request(method, f"/v1/memories/{HUGE}"), 422)
        assert "frame_id" in message and str(C.INT64_MAX) in message
    # the largest SQLite id is a valid id that names no frame
    assert api.get(f"/v1/memories/{C.INT64_MAX}").status_code == 404
    saved = ok(api.post("/v1/memories", json={"content": "the boiler was serviced in May"}))
    assert ok(api.get(f"/v1/memories/{saved['id']}"))["content"].startswith("the boiler")
    assert ok(api.delete(f"/v1/memories/{saved['id']}"))["deleted"]


def test_other_ids_above_int64_are_422(api: httpx.Client) -> None:
    refused(api.delete("/v1/awareness", params={"id": str(HUGE)}), 422)
    refused(api.post("/v1/relations", json={"source_id": HUGE, "target_id": 1,
                                            "relation_type": "knows"}), 422)
    refused(api.post("/v1/relations", json={"source_id": 1, "target_id": HUGE,
                                            "relation_type": "knows"}), 422)


def test_mcp_forget_memory_with_a_huge_id_is_a_tool_error(api: httpx.Client) -> None:
    is_error, text = mcp_call(api, "forget_memory", {"id": HUGE})
    assert is_error and text.startswith("invalid"), text
    assert str(C.INT64_MAX) in text and "internal" not in text and "storage" not in text
    for tool, args in (("set_awareness", {"category": "task", "content": "x",
                                          "ttl_minutes": 10**14}),
                       ("cleanup_frames", {"mode": "compact", "max_temp_age_days": 10**14}),
                       ("create_relation", {"source_id": HUGE, "target_id": 1,
                                            "relation_type": "knows"})):
        is_error, text = mcp_call(api, tool, args)
        assert is_error and text.startswith("invalid"), (tool, text)
    saved = ok(api.post("/v1/memories", json={"content": "forget me over MCP"}))
    is_error, text = mcp_call(api, "forget_memory", {"id": saved["id"]})
    assert not is_error, text
    assert api.get(f"/v1/memories/{saved['id']}").status_code == 404


def test_awareness_ttl_and_priority_bounds(api: httpx.Client) -> None:
    for body in ({"ttl_minutes": 10**14}, {"ttl_minutes": C.MAX_TTL_MINUTES + 1},
                 {"priority": 10**30}, {"priority": 11}, {"priority": -1}):
        message = refused(api.post("/v1/awareness", json={"category": "task",
                                                          "content": "x", **body}), 422)
        assert next(iter(body)) in message
    assert ok(api.get("/v1/awareness"))["count"] == 0  # nothing stored
    item = ok(api.post("/v1/awareness", json={"category": "task", "content": "ten years",
                                              "priority": 10,
                                              "ttl_minutes": C.MAX_TTL_MINUTES}))
    assert item["expires_at"] > "2035"  # ten years from now, rendered in the house format


def test_cleanup_ages_are_bounded(api: httpx.Client) -> None:
    for field in ("max_temp_age_days", "max_deprecated_age_days"):
        message = refused(api.post("/v1/cleanup/frames",
                                   json={"mode": "compact", field: 10**14}), 422)
        assert field in message and str(C.MAX_AGE_DAYS) in message
    result = ok(api.post("/v1/cleanup/frames", json={
        "mode": "compact", "max_temp_age_days": C.MAX_AGE_DAYS,
        "max_deprecated_age_days": C.MAX_AGE_DAYS}))
    assert result["action"] == "compact"


def test_sync_interval_is_bounded_in_json_and_multipart(api: httpx.Client) -> None:
    message = refused(api.post("/v1/harvest", json={
        "source": "plaintext", "data": "harmless", "sync_interval_hours": 10**14}), 422)
    assert "sync_interval_hours" in message
    message = refused(api.post(
        "/v1/harvest/upload", files={"file": ("notes.txt", b"harmless", "text/plain")},
        data={"source": "plaintext", "sync_interval_hours": str(10**14)}), 422)
    assert "sync_interval_hours" in message
    refused(api.post("/v1/ingest/upload", files={"file": ("n.txt", b"text", "text/plain")},
                     data={"tags": [f"t{i}" for i in range(C.MAX_TAGS + 1)]}), 422)
    assert ok(api.get("/v1/stats"))["frames"] == 0


# -- item 11: text fields over HTTP ----------------------------------------------------------

def test_huge_system_prompt_is_refused(api: httpx.Client) -> None:
    refused(api.put("/v1/identity", json={"system_prompt": "x" * 5_000_000}), 422, 413)
    refused(api.put("/v1/identity", json={"name": "x" * (C.MAX_SHORT_NAME_CHARS + 1)}), 422)
    assert ok(api.get("/v1/identity"))["configured"] is False
    prompt = "be brief. " * (C.MAX_SYSTEM_PROMPT_CHARS // 10)
    assert ok(api.put("/v1/identity", json={"system_prompt": prompt}))["system_prompt"] == prompt


def test_huge_entity_names_and_relation_types_are_refused(api: httpx.Client) -> None:
    refused(api.post("/v1/entities", json={"type": "person", "name": "x" * 1_000_000}), 422)
    alice = ok(api.post("/v1/entities", json={"type": "person", "name": "Alice"}))
    acme = ok(api.post("/v1/entities", json={"type": "organization", "name": "Acme"}))
    refused(api.post("/v1/relations", json={"source_id": alice["id"], "target_id": acme["id"],
                                            "relation_type": "x" * 1_000_000}), 422)
    big_props = {"blob": "x" * (C.MAX_JSON_BYTES + 1)}
    refused(api.post("/v1/entities", json={"type": "person", "name": "Bob",
                                           "properties": big_props}))
    found = ok(api.get("/v1/entities"))["entities"]
    assert sorted(e["name"] for e in found) == ["Acme", "Alice"]
    assert all(not e["relations"]["outgoing"] for e in found)
    relation = ok(api.post("/v1/relations", json={
        "source_id": alice["id"], "target_id": acme["id"], "relation_type": "works_at"}))
    assert relation["relation_type"] == "works_at"


def test_self_relation_is_refused(api: httpx.Client) -> None:
    alice = ok(api.post("/v1/entities", json={"type": "person", "name": "Alice"}))
    message = refused(api.post("/v1/relations", json={
        "source_id": alice["id"], "target_id": alice["id"], "relation_type": "knows"}), 400)
    assert "itself" in message
    (entity,) = ok(api.get("/v1/entities", params={"query": "Alice"}))["entities"]
    assert entity["relations"] == {"outgoing": [], "incoming": []}


def test_workspace_group_and_rtl_name_are_refused(api: httpx.Client) -> None:
    refused(api.post("/v1/workspaces", json={"name": "Team", "group": "x" * 5_000_000}),
            422, 413)
    message = refused(api.post("/v1/workspaces", json={"name": f"invoice{RLO}fdp.exe"}), 400)
    assert "U+202E" in message and "workspace name" in message
    for field, value in (("group", f"ops{RLO}"), ("icon", "\x1b[31m"), ("model", "gpt\u2066")):
        refused(api.post("/v1/workspaces", json={"name": "Team", field: value}), 400)
    assert ok(api.get("/v1/workspaces"))["workspaces"] == []
    made = ok(api.post("/v1/workspaces", json={"name": "Café Zürich", "group": "clients",
                                               "icon": "👩\u200d💻", "model": "gpt-4o"}))
    assert (made["id"], made["icon"]) == ("cafe-zurich", "👩\u200d💻")  # emoji ZWJ is fine
    refused(api.patch(f"/v1/workspaces/{made['id']}", json={"name": f"a{RLO}b"}), 400)
    assert ok(api.get(f"/v1/workspaces/{made['id']}"))["name"] == "Café Zürich"


def test_names_with_controls_are_refused_below_the_schema_limits(api: httpx.Client) -> None:
    """Short enough for the schema, refused by the engine (400): every surface gets it."""
    refused(api.post("/v1/entities", json={"type": "person", "name": f"Bob{RLO}evil"}), 400)
    refused(api.put("/v1/identity", json={"name": "Ada\u200f"}), 400)
    refused(api.put("/v1/identity", json={"role": "admin\nrole: root"}), 400)
    refused(api.post("/v1/recall", json={"query": "x" * (C.MAX_QUERY_CHARS + 1)}), 422)
    refused(api.post("/v1/memories", json={"content": "x", "session": "s" * 201}), 422)
    refused(api.post("/v1/memories", json={"content": "x", "metadata": {
        "blob": "x" * (C.MAX_JSON_BYTES + 1)}}))
    assert ok(api.get("/v1/stats"))["frames"] == 0
    assert ok(api.get("/v1/identity"))["configured"] is False


def test_limits_are_announced_in_the_schemas(api: httpx.Client) -> None:
    schemas = ok(api.get("/openapi.json"))["components"]["schemas"]
    assert schemas["IdentityRequest"]["properties"]["system_prompt"]["anyOf"][0][
        "maxLength"] == C.MAX_SYSTEM_PROMPT_CHARS
    assert schemas["AwarenessRequest"]["properties"]["ttl_minutes"]["anyOf"][0][
        "maximum"] == C.MAX_TTL_MINUTES
    tools = api.post("/mcp", headers=MCP_HEADERS, json={
        "jsonrpc": "2.0", "id": 1, "method": "tools/list"}).json()["result"]["tools"]
    forget = next(t for t in tools if t["name"] == "forget_memory")
    assert forget["inputSchema"]["properties"]["id"]["maximum"] == C.INT64_MAX


# -- the Python facade (CLI and MCP stdio) -------------------------------------------------

FACADE_REFUSALS: list[tuple[str, dict[str, Any], str]] = [
    ("get_frame", {"frame_id": HUGE}, "frame id"),
    ("forget", {"frame_id": HUGE}, "frame id"),
    ("forget", {"frame_id": 0}, "frame id"),
    ("set_awareness", {"category": "task", "content": "x", "ttl_minutes": 10**14},
     "ttl_minutes"),
    ("set_awareness", {"category": "task", "content": "x", "priority": 10**30}, "priority"),
    ("set_awareness", {"category": "task", "content": "x" * (C.MAX_AWARENESS_CHARS + 1)},
     "awareness content"),
    ("clear_awareness", {"item_id": HUGE}, "awareness item id"),
    ("cleanup_frames", {"mode": "compact", "max_temp_age_days": 10**14}, "max_temp_age_days"),
    ("cleanup_frames", {"mode": "compact", "max_deprecated_age_days": 10**14},
     "max_deprecated_age_days"),
    ("harvest", {"source": "plaintext", "path": "notes.txt", "sync_interval_hours": 10**14},
     "sync_interval_hours"),
    ("create_relation", {"source_id": HUGE, "target_id": 1, "relation_type": "knows"},
     "source_id"),
    ("save_entity", {"entity_type": "person", "name": "x" * 1_000_000}, "entity name"),
    ("set_identity", {"system_prompt": "x" * 5_000_000}, "system_prompt"),
    ("set_identity", {"name": f"Ada{RLO}"}, "identity name"),
    ("create_workspace", {"name": "Team", "group": "x" * 5_000_000}, "workspace group"),
    ("create_workspace", {"name": f"a{RLO}b"}, "workspace name"),
    ("recall", {"query": "x" * (C.MAX_QUERY_CHARS + 1)}, "query"),
    ("search_entities", {"query": "x" * (C.MAX_NAME_CHARS + 1)}, "query"),
    ("save", {"content": "x" * 2_000_001}, "content"),
    ("save", {"content": "x", "session": "s" * 201}, "session"),
    ("save", {"content": "x", "metadata": {"k": "x" * C.MAX_JSON_BYTES}}, "metadata"),
    ("ingest", {"content": "some text", "tags": ["t"] * (C.MAX_TAGS + 1)}, "tags"),
    ("ingest", {"content": "some text", "tags": [f"a{RLO}"]}, "tag"),
]


@pytest.mark.parametrize(("method", "args", "names"), FACADE_REFUSALS,
                         ids=[f"{m}-{n}" for m, _, n in FACADE_REFUSALS])
async def test_facade_refuses_out_of_range_values(hm: HiveMind, method: str,
                                                  args: dict[str, Any], names: str) -> None:
    with pytest.raises(ValidationError, match=names) as caught:
        await getattr(hm, method)(**args)
    assert len(str(caught.value)) < 1000
    assert (await hm.stats())["frames"] == 0
    assert (await hm.get_identity())["configured"] is False
    assert (await hm.get_awareness()) == [] and (await hm.list_workspaces())["workspaces"] == []


async def test_facade_self_relation_and_limits_that_hold(hm: HiveMind) -> None:
    bob = await hm.save_entity("person", "Bob")
    with pytest.raises(ValidationError, match="itself"):
        await hm.create_relation(bob["id"], bob["id"], "knows")
    carol = await hm.save_entity("person", "C" * C.MAX_NAME_CHARS)
    relation = await hm.create_relation(bob["id"], carol["id"], "k" * C.MAX_LABEL_CHARS)
    assert relation["relation_type"] == "k" * C.MAX_LABEL_CHARS
    identity = await hm.set_identity(name="N" * C.MAX_SHORT_NAME_CHARS, role="",
                                     system_prompt="p" * C.MAX_SYSTEM_PROMPT_CHARS)
    assert len(identity["system_prompt"]) == C.MAX_SYSTEM_PROMPT_CHARS
    item = await hm.set_awareness("task", "a" * C.MAX_AWARENESS_CHARS, priority=10,
                                  ttl_minutes=C.MAX_TTL_MINUTES)
    assert item["priority"] == 10
    result = await hm.cleanup_frames("compact", max_temp_age_days=C.MAX_AGE_DAYS,
                                     max_deprecated_age_days=C.MAX_AGE_DAYS)
    assert result["action"] == "compact"
    with pytest.raises(ValidationError):
        await hm.get_frame(True)  # a bool is not an id
    assert (await hm.get_workspace((await hm.create_workspace(
        "G" * C.MAX_SHORT_NAME_CHARS, group="g" * C.MAX_GROUP_CHARS))["id"]))["group"] \
        == "g" * C.MAX_GROUP_CHARS


# -- the CLI, as a real process ------------------------------------------------------------

def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, data=tmp_path / "data")


@pytest.mark.parametrize("args", [
    ("awareness", "set", "task", "x", "--ttl-minutes", str(10**14)),
    ("awareness", "clear", "--id", str(HUGE)),
    ("entities", "relate", str(HUGE), "1", "knows"),
    ("identity", "set", "--name", f"Ada{RLO}"),
    ("workspace", "create", "Team", "--group", "g" * (C.MAX_GROUP_CHARS + 1)),
], ids=["ttl", "awareness-id", "relate-id", "identity-bidi", "workspace-group"])
def test_cli_refuses_with_one_line_and_exit_2(tmp_path: Path, args: tuple[str, ...]) -> None:
    done = _cli(tmp_path, *args)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hive-mind: error: "), done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


# -- the rules themselves ------------------------------------------------------------------

@pytest.mark.parametrize("char", ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066",
                                  "\u2067", "\u2068", "\u2069", "\u200e", "\u200f", "\u061c",
                                  "\x00", "\x1b", "\n", "\t", "\x7f", "\x85", "\u2028",
                                  "\ud800"])
def test_names_refuse_bidi_and_control_characters(char: str) -> None:
    with pytest.raises(ValidationError, match=f"U\\+{ord(char):04X}"):
        name_text(f"a{char}b", "name", 100)


def test_names_keep_real_text() -> None:
    for text in ("Zoë", "日本語", "نام", "👩\u200d💻", "a-b_c.d", "ZWNJ\u200cok"):
        assert name_text(text, "name", 100) == text
    with pytest.raises(ValidationError, match="limit is 3"):
        name_text("abcd", "name", 3)
    with pytest.raises(ValidationError, match="must not be empty"):
        name_text("   ", "name", 3)


def test_refused_values_are_never_echoed_whole() -> None:
    assert len(shown("x" * 1_000_000)) < 80 and "1,000,000" in shown("x" * 1_000_000)
    assert shown(10**5000).startswith("an integer of")  # repr() itself would refuse it
    assert shown(HUGE) == str(HUGE)
