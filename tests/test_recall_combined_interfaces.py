"""Issue #13, "Built but unreachable": combined recall, its conflict notes and the external
source reach every interface — CLI ``recall --json`` and its human output (real
subprocesses), MCP ``recall_memory`` (the SDK's client over stdio), HTTP ``/v1/recall`` (a real
``serve`` over a socket), the Python facade and client — and ``status`` shows the source.

The external source is a real HTTP server on 127.0.0.1 speaking the protocol of
``mind/retrieval/external.py`` (``tests/external_source.py``). The scenario is the issue's: a workspace
says the Acme contract was approved, the company wiki says it was rejected.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from hive_mind.facade import HiveMind
from hive_mind.remote import RemoteHiveMind
from hive_mind.settings import Settings
from mind.errors import ConfigurationError
from tests.external_source import DOC, Behaviour, FakeSearchServer
from tests.http_server import running_server, server_settings
from tests.procs import ROOT, run_cli

QUERY = "acme vendor contract"
WIKI = {**DOC, "id": "wiki-7", "title": "Vendors",
        "content": "Acme vendor contract: rejected by procurement", "score": 0.85}
NAME = "Acme Wiki"
TOKEN = "wiki-token-123"
WS, EXT = "workspace:acme", f"external:{NAME}"


@pytest.fixture
def wiki() -> Iterator[FakeSearchServer]:
    with FakeSearchServer() as srv:
        srv.behaviour = Behaviour(results=[WIKI])
        yield srv


@pytest.fixture
async def data_dir(tmp_path: Path) -> Path:
    """A personal memory and a workspace ``acme`` that says the contract was approved."""
    data = tmp_path / "data"
    async with await HiveMind.open(server_settings(data)) as hm:
        await hm.create_workspace("Acme", workspace_id="acme")
        await hm.save("The Acme vendor contract was approved by legal", workspace="acme",
                      wait=True)
        await hm.save("Lunch with the Acme team on Friday", wait=True)
    return data


def with_wiki(data: Path, wiki: FakeSearchServer, **more: Any) -> Settings:
    values = {"external_url": wiki.url, "external_token": TOKEN, "external_name": NAME, **more}
    return server_settings(data, **values)


def check_conflict(results: list[dict[str, Any]]) -> str:
    """The workspace and the wiki result each carry the note; nothing else does."""
    by_origin = {r["from"]: r for r in results}
    assert {"personal", WS, EXT} <= set(by_origin)
    note = by_origin[WS]["conflict"]
    assert isinstance(note, str) and by_origin[EXT]["conflict"] == note
    assert '"approved"' in note and '"rejected"' in note and NAME in note
    assert 'workspace "acme"' in note
    assert by_origin["personal"]["conflict"] is None
    doc = by_origin[EXT]
    assert doc["id"] == "wiki-7" and doc["source"] == "external" and doc["score"] == 0.85
    assert doc["content"] == WIKI["content"]
    assert doc["metadata"] == {"title": "Vendors", "type": "wiki", "url": DOC["url"],
                               "metadata": {}}
    assert doc["importance"] is None and doc["final"] is None
    return str(note)


# -- HTTP and the Python client ----------------------------------------------------------------


def test_http_recall_carries_attribution_conflicts_and_the_external_answer(
        data_dir: Path, wiki: FakeSearchServer) -> None:
    with running_server(with_wiki(data_dir, wiki)) as url:
        body = httpx.post(f"{url}/v1/recall", json={"query": QUERY, "scope": "all"},
                          timeout=30).json()
        note = check_conflict(body["results"])
        assert body["conflicts"] == [{"note": note, "from": [WS, EXT]}]
        assert body["external"] == {"name": NAME, "queried": True, "error": None}
        assert body["count"] == len(body["results"]) == 3
        [request] = wiki.requests
        assert request["headers"]["Authorization"] == f"Bearer {TOKEN}"
        assert request["body"] == {"query": QUERY, "limit": 10}
        # one mind only: the external source is not asked, the shape is the same
        only = httpx.post(f"{url}/v1/recall", json={"query": QUERY, "workspace": "acme"},
                          timeout=30).json()
        assert [r["from"] for r in only["results"]] == [WS]
        assert only["results"][0]["conflict"] is None and only["conflicts"] == []
        assert only["external"] == {"name": NAME, "queried": False, "error": None}
        assert len(wiki.requests) == 1


def test_http_recall_survives_a_failing_external_source(
        data_dir: Path, wiki: FakeSearchServer) -> None:
    wiki.behaviour = Behaviour(status=503, raw=b"maintenance window")
    settings = with_wiki(data_dir, wiki, external_url=f"http://ops:pw-42@{wiki.url[7:]}")
    with running_server(settings) as url:
        answer = httpx.post(f"{url}/v1/recall", json={"query": QUERY, "scope": "all"},
                            timeout=30)
    assert answer.status_code == 200
    body = answer.json()
    assert {r["from"] for r in body["results"]} == {"personal", WS}
    assert body["conflicts"] == [] and body["external"]["queried"] is True
    error = body["external"]["error"]
    assert "HTTP 503: maintenance window" in error and NAME in error
    assert "pw-42" not in error and TOKEN not in json.dumps(body)


async def test_python_client_and_facade_get_the_same_shape(
        data_dir: Path, wiki: FakeSearchServer, tmp_path: Path) -> None:
    with running_server(with_wiki(data_dir, wiki)) as url:
        client = await HiveMind.open(server_settings(tmp_path / "client", url=url))
        assert isinstance(client, RemoteHiveMind)
        async with client:
            results = await client.recall(QUERY, scope="all", touch=False)
            detail = await client.recall_detail(QUERY, scope="all", touch=False)
    note = check_conflict(results)
    assert detail["results"] == results and detail["conflicts"][0]["note"] == note
    async with await HiveMind.open(with_wiki(data_dir, wiki)) as hm:  # embedded facade
        local = await hm.recall_detail(QUERY, scope="all", touch=False, explain=True)
        assert [r["from"] for r in local["results"]] == [r["from"] for r in results]
        assert local["conflicts"] == detail["conflicts"]
        ext = next(r for r in local["results"] if r["from"] == EXT)
        assert ext["explain"] is None  # a document has no lanes
        assert all(r["explain"] for r in local["results"] if r["from"] != EXT)
        # a single lane is debugging of our own index: the source is not asked
        keyword = await hm.recall_detail(QUERY, scope="all", lanes="keyword", touch=False)
        assert keyword["external"]["queried"] is False


async def test_without_an_external_source_nothing_changes_but_the_shape(
        data_dir: Path) -> None:
    async with await HiveMind.open(server_settings(data_dir)) as hm:
        detail = await hm.recall_detail(QUERY, scope="all", touch=False)
    assert detail["external"] is None and detail["conflicts"] == []
    assert {r["from"] for r in detail["results"]} == {"personal", WS}
    assert all(r["conflict"] is None for r in detail["results"])


# -- CLI (real subprocesses) ----------------------------------------------------------------------


def cli(data: Path, wiki: FakeSearchServer, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, data=data, env={
        "HIVE_MIND_EXTERNAL_URL": wiki.url, "HIVE_MIND_EXTERNAL_TOKEN": TOKEN,
        "HIVE_MIND_EXTERNAL_NAME": NAME})


def test_cli_recall_json_and_human_output_show_the_conflict(
        data_dir: Path, wiki: FakeSearchServer) -> None:
    done = cli(data_dir, wiki, "recall", QUERY, "--scope", "all", "--json")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert isinstance(results, list)  # still a list of results
    note = check_conflict(results)
    assert done.stderr == ""
    human = cli(data_dir, wiki, "recall", QUERY, "--scope", "all")
    assert human.returncode == 0, human.stderr
    assert f"! {note}" in " ".join(human.stdout.split())
    assert EXT in human.stdout and WS in human.stdout


def test_cli_recall_warns_about_a_failing_source_and_still_answers(
        data_dir: Path, wiki: FakeSearchServer) -> None:
    wiki.behaviour = Behaviour(raw=b"<html>not json</html>")
    done = cli(data_dir, wiki, "recall", QUERY, "--scope", "all", "--json")
    assert done.returncode == 0, done.stderr
    assert {r["from"] for r in json.loads(done.stdout)} == {"personal", WS}
    [warning] = done.stderr.strip().splitlines()
    assert warning.startswith("hive-mind: warning: ") and "malformed JSON" in warning


def test_status_shows_the_external_source(data_dir: Path, wiki: FakeSearchServer) -> None:
    done = cli(data_dir, wiki, "status", "--json", "--no-probe")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["external"] == {"name": NAME, "url": wiki.url, "timeout": 5.0,
                                  "reachable": None, "error": None}
    assert report["config"]["external_token"] == "***" and TOKEN not in done.stdout
    assert wiki.requests == []  # no probe, no request
    human = cli(data_dir, wiki, "status", "--no-probe")
    assert "External source" in human.stdout and NAME in human.stdout


async def status(settings: Settings, *, probe: bool) -> dict[str, Any]:
    async with await HiveMind.open(settings) as hm:
        report: dict[str, Any] = await hm.status(probe=probe)
    return report


async def test_status_probe_and_masking(data_dir: Path, wiki: FakeSearchServer) -> None:
    secret_url = f"http://ops:pw-42@{wiki.url[7:]}/kb?api_key=k-99"
    report = await status(with_wiki(data_dir, wiki, external_url=secret_url), probe=True)
    external = report["external"]
    assert external["reachable"] is True and external["error"] is None
    assert external["url"] == f"http://***@{wiki.url[7:]}/kb?api_key=***"
    assert "pw-42" not in json.dumps(report) and "k-99" not in json.dumps(report)
    assert wiki.requests[-1]["body"] == {"query": "hive-mind status probe", "limit": 1}
    wiki.behaviour = Behaviour(status=401, raw=b"bad token")
    down = (await status(with_wiki(data_dir, wiki), probe=True))["external"]
    assert down["reachable"] is False and "HTTP 401" in down["error"]
    assert (await status(server_settings(data_dir), probe=False))["external"] is None


@pytest.mark.parametrize(("field", "value", "message"), [
    ("external_url", "file:///etc/passwd", "http(s) URL"),
    ("external_url", "http://", "http(s) URL"),
    ("external_token", "two words", "HIVE_MIND_EXTERNAL_TOKEN must be printable"),
    ("external_name", "wiki\x1b[31m", "control or bidi"),
])
def test_bad_external_settings_are_refused(tmp_path: Path, field: str, value: str,
                                            message: str) -> None:
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        server_settings(tmp_path, **{field: value})


# -- MCP (the SDK's client over stdio) ------------------------------------------------------------


@asynccontextmanager
async def mcp_session(data: Path, wiki: FakeSearchServer, log: Path
                      ) -> AsyncIterator[ClientSession]:
    """The stdio MCP server as an MCP client spawns it (entered and left in one task: the
    SDK's task groups do not survive a pytest fixture's setup/teardown split)."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "hive_mind.mcp_server"], cwd=str(ROOT),
        env={"HIVE_MIND_DATA_DIR": str(data), "HIVE_MIND_EMBEDDING_PROVIDER": "test",
             "HF_HUB_OFFLINE": "1", "HIVE_MIND_EXTERNAL_URL": wiki.url,
             "HIVE_MIND_EXTERNAL_TOKEN": TOKEN, "HIVE_MIND_EXTERNAL_NAME": NAME})
    with open(log, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def test_mcp_recall_memory_carries_attribution_and_conflicts(
        data_dir: Path, wiki: FakeSearchServer, tmp_path: Path) -> None:
    async with mcp_session(data_dir, wiki, tmp_path / "mcp.log") as mcp:
        result = await mcp.call_tool("recall_memory", {"query": QUERY, "scope": "all"})
    assert not result.is_error
    rows = json.loads(result.content[0].text)  # type: ignore[union-attr]
    by_origin = {r["from"]: r for r in rows}
    note = by_origin[WS]["conflict"]
    assert by_origin[EXT]["conflict"] == note and '"rejected"' in note
    assert by_origin["personal"]["conflict"] is None
    assert by_origin[EXT]["id"] == "wiki-7" and by_origin[EXT]["source"] == "external"

