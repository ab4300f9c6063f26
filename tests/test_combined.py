from __future__ import annotations

import json
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mind.combined import (
    CombinedResult,
    CombinedRetrieval,
    CombinedRetrievalResult,
    detect_conflict,
    polarity,
    should_query_external,
    status_signals,
)
from mind.db import Database
from mind.embeddings.testing import TestEmbedder
from mind.errors import EmbeddingDimMismatchError, ValidationError
from mind.external import ExternalDocument, ExternalSourceError, HttpExternalSource
from mind.frame import NewFrame
from mind.frames import FrameStore
from mind.indexer import index_pending
from mind.migrate import migrate
from mind.search import HybridSearch

EMB = TestEmbedder(dimensions=128)
QUERY = "deploy pipeline runbook"
DOC = {
    "id": "doc-1",
    "title": "Runbook",
    "content": "Deploy pipeline runbook from the wiki",
    "score": 0.8,
    "type": "wiki",
    "url": "https://wiki.example/runbook",
}


# -- a real local HTTP server speaking the external-source protocol ---------------------------


@dataclass
class Behaviour:
    status: int = 200
    results: list[dict[str, Any]] = field(default_factory=lambda: [dict(DOC)])
    raw: bytes | None = None  # sent verbatim instead of {"results": ...}
    delay: float = 0.0


class FakeSearchServer:
    def __init__(self) -> None:
        self.behaviour = Behaviour()
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                server.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": json.loads(body)}
                )
                b = server.behaviour
                if b.delay:
                    server.release.wait(b.delay)
                payload = b.raw if b.raw is not None else json.dumps({"results": b.results}).encode()
                try:
                    self.send_response(b.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the client gave up (timeout test)
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def server() -> Iterator[FakeSearchServer]:
    srv = FakeSearchServer()
    yield srv
    srv.close()


@pytest.fixture
async def source(server: FakeSearchServer) -> AsyncIterator[HttpExternalSource]:
    async with HttpExternalSource(server.url, api_key="s3cret", timeout=0.5, name="Acme Search") as src:
        yield src


# -- two real mind files --------------------------------------------------------------------------


@dataclass
class Minds:
    personal_db: Database
    workspace_db: Database
    personal: HybridSearch
    workspace: HybridSearch


@pytest.fixture
async def minds(tmp_path: Path) -> AsyncIterator[Minds]:
    dbs = []
    for name in ("personal", "workspace"):
        database = await Database.open(tmp_path / f"{name}.mind")
        await migrate(database)
        dbs.append(database)
    m = Minds(dbs[0], dbs[1], HybridSearch(dbs[0], EMB), HybridSearch(dbs[1], EMB))
    yield m
    await m.personal.close()
    await m.workspace.close()
    for database in dbs:
        await database.close()


async def save(db: Database, *texts: str, gop: str = "g", **kw: object) -> list[int]:
    res = await FrameStore(db).insert_many([NewFrame(gop, t, **kw) for t in texts])  # type: ignore[arg-type]
    await index_pending(db, EMB)
    return [r.frame.id for r in res]


async def fill(db: Database, strong: int, tag: str) -> None:
    """``strong`` frames matching QUERY in both lanes (score ≥ 0.7), plus unrelated filler."""
    await save(db, *[f"Deploy pipeline runbook, {tag} part {i}" for i in range(strong)])
    # in a session of their own: a turn right after a runbook turn would carry it as context
    await save(db, f"Gardening tomatoes and soil {tag}", f"Holiday photos from Crete {tag}",
               gop="filler")


# -- retrieval across two minds -----------------------------------------------------------------


async def test_two_minds_searched_together_with_attribution_and_metadata(minds: Minds) -> None:
    [p_id] = await save(minds.personal_db, "My own notes: Postgres billing tuning")
    [w_id] = await save(
        minds.workspace_db, "Team decision: Postgres billing cluster", gop="team",
        importance="important", metadata={"conversation_id": "c1"},
    )
    assert p_id == w_id == 1  # two separate files, each with its own ids
    combined = CombinedRetrieval(minds.personal, minds.workspace, workspace_id="acme")
    res = await combined.search("postgres billing")
    assert res.external_available is False and res.external_skipped is False
    assert res.external_error is None and res.has_conflict is False and res.conflict_note is None
    [p] = [r for r in res.personal_results if r.metadata["frameId"] == p_id]
    [w] = [r for r in res.workspace_results if r.metadata["frameId"] == w_id]
    assert (p.source, p.attribution, p.content) == ("personal", "[personal memory]", "My own notes: Postgres billing tuning")
    assert (w.source, w.attribution) == ("workspace", "[workspace memory]")
    assert p.metadata["from"] == "personal" and w.metadata["from"] == "workspace:acme"
    assert w.metadata["frameType"] == "I" and w.metadata["importance"] == "important"
    assert w.metadata["gopId"] == "team" and w.metadata["createdAt"].endswith("Z")
    assert w.metadata["frameMetadata"] == {"conversation_id": "c1"}
    assert all(0.0 <= r.score <= 1.0 for r in res.merged())
    assert p.score > 0.7 and w.score > 0.7  # normalized scale, not raw RRF
    json.dumps(res.to_dict())  # plain data all the way down


async def test_scope_selects_minds_and_time_window_applies(minds: Minds) -> None:
    await save(minds.personal_db, "standup notes old", created_at="2024-01-01T09:00:00Z")
    await save(minds.personal_db, "standup notes new", created_at="2024-06-01T09:00:00Z")
    await save(minds.workspace_db, "standup notes team")
    combined = CombinedRetrieval(minds.personal, minds.workspace)
    only_personal = await combined.search("standup notes", scope="personal")
    assert only_personal.workspace_results == [] and len(only_personal.personal_results) == 2
    only_ws = await combined.search("standup notes", scope="workspace")
    assert only_ws.personal_results == [] and len(only_ws.workspace_results) == 1
    windowed = await combined.search("standup notes", since="2024-05-01", until="2024-12-31")
    assert [r.content for r in windowed.personal_results] == ["standup notes new"]
    assert windowed.workspace_results == []  # saved today
    no_workspace = await CombinedRetrieval(minds.personal, None).search("standup", scope="workspace")
    assert no_workspace.merged() == []


# -- gating -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("personal_strong", "workspace_strong", "scope", "queried"),
    [
        (3, 0, "all", False),  # sufficient: 3 results ≥ 0.7
        (2, 1, "all", False),  # sufficient counted across both minds
        (2, 0, "all", True),  # insufficient
        (0, 0, "all", True),
        (0, 0, "personal", False),  # scope is not "all": never queried
        (0, 0, "workspace", False),
    ],
)
async def test_gating(
    minds: Minds, server: FakeSearchServer, source: HttpExternalSource,
    personal_strong: int, workspace_strong: int, scope: str, queried: bool,
) -> None:
    await fill(minds.personal_db, personal_strong, "mine")
    await fill(minds.workspace_db, workspace_strong, "team")
    combined = CombinedRetrieval(minds.personal, minds.workspace, source)
    res = await combined.search(QUERY, limit=7, scope=scope)  # type: ignore[arg-type]
    assert res.external_available is True
    assert res.external_skipped is (not queried)
    assert len(server.requests) == (1 if queried else 0)
    if queried:
        [request] = server.requests
        assert request["path"] == "/search" and request["body"] == {"query": QUERY, "limit": 7}
        assert request["headers"]["Authorization"] == "Bearer s3cret"
        [doc] = res.external_results
        assert (doc.source, doc.attribution, doc.score) == ("external", "[Acme Search]", 0.8)
        assert doc.metadata == {
            "documentId": "doc-1", "title": "Runbook", "documentType": "wiki",
            "url": "https://wiki.example/runbook",
        }
    else:
        assert res.external_results == []


@pytest.mark.parametrize(
    ("has_source", "scope", "query", "strong", "expected"),
    [
        (True, "all", "q", 0, True),
        (True, "all", "q", 2, True),
        (True, "all", "q", 3, False),
        (True, "personal", "q", 0, False),
        (True, "workspace", "q", 0, False),
        (False, "all", "q", 0, False),
        (True, "all", "   ", 0, False),
    ],
)
def test_should_query_external_table(
    has_source: bool, scope: str, query: str, strong: int, expected: bool
) -> None:
    local = [CombinedResult("x", "personal", "[personal memory]", 0.7) for _ in range(strong)]
    local += [CombinedResult("y", "workspace", "[workspace memory]", 0.69) for _ in range(5)]
    assert should_query_external(has_source, scope, query, local) is expected


async def test_blank_query_never_reaches_the_source(
    minds: Minds, server: FakeSearchServer, source: HttpExternalSource
) -> None:
    res = await CombinedRetrieval(minds.personal, minds.workspace, source).search("   ")
    assert res.external_skipped and server.requests == [] and res.merged() == []


# -- external failures degrade gracefully ------------------------------------------------------


@pytest.mark.parametrize(
    ("behaviour", "message"),
    [
        (Behaviour(status=500, raw=b"internal kaboom"), "HTTP 500: internal kaboom"),
        (Behaviour(status=401, raw=b'{"error": "bad token"}'), "HTTP 401"),
        (Behaviour(delay=5.0), "timeout"),
        (Behaviour(raw=b"{not json"), "malformed JSON"),
        (Behaviour(raw=b'{"hits": []}'), '"results" list'),
        (Behaviour(results=[{**DOC, "score": 1.7}]), "outside [0, 1]"),
        (Behaviour(results=[{**DOC, "score": "high"}]), "score must be a number"),
        (Behaviour(results=[{**DOC, "content": None}]), "content must be a string"),
        (Behaviour(results=[{**DOC, "metadata": []}]), "metadata must be an object"),
    ],
)
async def test_external_failures_keep_local_results(
    minds: Minds, server: FakeSearchServer, source: HttpExternalSource,
    behaviour: Behaviour, message: str,
) -> None:
    await fill(minds.personal_db, 1, "mine")
    server.behaviour = behaviour
    res = await CombinedRetrieval(minds.personal, minds.workspace, source).search(QUERY)
    assert res.personal_results and res.personal_results[0].content.startswith("Deploy pipeline")
    assert res.external_results == [] and res.external_skipped is False
    assert res.external_error is not None and message in res.external_error
    assert "Acme Search" in res.external_error
    with pytest.raises(ExternalSourceError, match="Acme Search"):  # and directly, a clear error
        await source.search(QUERY, 3)


async def test_connection_refused_keeps_local_results(minds: Minds) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    await fill(minds.workspace_db, 1, "team")
    async with HttpExternalSource(f"http://127.0.0.1:{port}", timeout=2) as dead:
        res = await CombinedRetrieval(minds.personal, minds.workspace, dead).search(QUERY)
    assert res.workspace_results and res.external_results == []
    assert res.external_error is not None and "cannot connect" in res.external_error


async def test_a_crashing_custom_source_is_contained(minds: Minds) -> None:
    class Broken:
        name = "broken"

        async def search(self, query: str, limit: int) -> list[ExternalDocument]:
            raise RuntimeError("index offline")

    await fill(minds.personal_db, 1, "mine")
    res = await CombinedRetrieval(minds.personal, None, Broken()).search(QUERY)
    assert res.personal_results and res.external_error is not None
    assert "RuntimeError: index offline" in res.external_error


async def test_http_source_protocol_details(server: FakeSearchServer) -> None:
    server.behaviour = Behaviour(results=[
        {"id": 7, "title": "A", "content": "a", "score": 1, "type": "ticket"},
        {**DOC, "metadata": {"owner": "ops"}},
        {**DOC, "id": "doc-3"},
    ])
    async with HttpExternalSource(server.url + "/", name="kb") as src:  # no key: no auth header
        docs = await src.search("q", 2)
    assert [d.document_id for d in docs] == ["7", "doc-1"]  # truncated to the limit
    assert docs[0] == ExternalDocument("7", "A", "a", 1, "ticket")
    assert docs[1].metadata == {"owner": "ops"} and docs[1].url == DOC["url"]
    assert "Authorization" not in server.requests[0]["headers"]
    with pytest.raises(ValidationError):
        HttpExternalSource("ftp://example")
    with pytest.raises(ValidationError):
        ExternalDocument("x", "t", "c", 1.5)


# -- conflicts ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The vendor contract was approved.", [("approved", "positive")]),
        ("APPROVED by legal", [("approved", "positive")]),
        ("Option B selected; option A rejected", [("selected", "positive"), ("rejected", "negative")]),
        ("The launch was cancelled", [("cancelled", "negative")]),
        ("Canceled, then postponed", [("canceled", "negative"), ("postponed", "negative")]),
        ("Budget not approved yet", [("not approved", "negative")]),
        ("It wasn't formally accepted", [("not accepted", "negative")]),
        ("The release is not blocked", []),  # a negated negative asserts nothing
        ("Not sure. Contract signed", [("signed", "positive")]),  # negation stays in its clause
        ("unapproved, preselected, blockedness", []),  # whole words only
        ("Project greenlit!", [("greenlit", "positive")]),
        ("no status words here", []),
    ],
)
def test_status_signals_table(text: str, expected: list[tuple[str, str]]) -> None:
    assert status_signals(text) == expected


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["approved", "confirmed by finance"], "positive"),
        (["declined", "denied"], "negative"),
        (["approved", "rejected"], "mixed"),
        (["nothing to see"], None),
        ([], None),
    ],
)
def test_polarity_table(texts: list[str], expected: str | None) -> None:
    assert polarity(texts) == expected


def _ws(text: str, score: float = 0.9) -> CombinedResult:
    return CombinedResult(text, "workspace", "[workspace memory]", score)


def _ext(text: str, score: float = 0.9) -> CombinedResult:
    return CombinedResult(text, "external", "[kb]", score)


@pytest.mark.parametrize(
    ("workspace", "external", "conflict"),
    [
        ([_ws("Vendor X approved")], [_ext("Vendor X rejected")], True),
        ([_ws("Vendor X was cancelled")], [_ext("Vendor X contract signed")], True),
        ([_ws("Vendor X approved")], [_ext("Vendor X approved")], False),  # agree
        ([_ws("Vendor X approved", 0.59)], [_ext("Vendor X rejected")], False),  # weak side
        ([_ws("Vendor X approved")], [_ext("Vendor X rejected", 0.5)], False),
        ([_ws("Vendor X approved")], [], False),
        ([_ws("X approved, Y rejected")], [_ext("Vendor X rejected")], False),  # mixed
        ([_ws("Vendor X approved")], [_ext("No decision yet")], False),
        # only the top 3 strong texts count
        ([_ws("a", 0.99), _ws("b", 0.98), _ws("c", 0.97), _ws("d rejected", 0.96)],
         [_ext("approved")], False),
    ],
)
def test_detect_conflict_table(
    workspace: list[CombinedResult], external: list[CombinedResult], conflict: bool
) -> None:
    note = detect_conflict(workspace, external, "kb")
    assert (note is not None) is conflict
    if note:
        assert "out of sync" in note and "kb" in note


async def test_conflict_between_workspace_and_external(
    minds: Minds, server: FakeSearchServer, source: HttpExternalSource
) -> None:
    await save(minds.workspace_db, "The Acme vendor contract was approved by legal")
    server.behaviour = Behaviour(results=[{**DOC, "content": "Acme vendor contract: rejected by procurement", "score": 0.85}])
    combined = CombinedRetrieval(minds.personal, minds.workspace, source)
    res = await combined.search("acme vendor contract")
    assert res.workspace_results[0].score >= 0.6
    assert res.has_conflict and res.conflict_note is not None
    assert '"approved"' in res.conflict_note and '"rejected"' in res.conflict_note
    assert "Acme Search" in res.conflict_note and "out of sync" in res.conflict_note
    # the external side agreeing → no conflict
    server.behaviour = Behaviour(results=[{**DOC, "content": "Acme vendor contract approved", "score": 0.85}])
    res = await combined.search("acme vendor contract")
    assert not res.has_conflict and res.conflict_note is None


async def test_personal_memory_does_not_take_part_in_conflicts(
    minds: Minds, server: FakeSearchServer, source: HttpExternalSource
) -> None:
    await save(minds.personal_db, "The Acme vendor contract was approved by legal")
    server.behaviour = Behaviour(results=[{**DOC, "content": "Acme vendor contract rejected", "score": 0.85}])
    res = await CombinedRetrieval(minds.personal, minds.workspace, source).search("acme vendor contract")
    assert res.external_results and not res.has_conflict


# -- merging and validation --------------------------------------------------------------------------


def test_merged_sorts_by_normalized_score_and_keeps_attribution() -> None:
    res = CombinedRetrievalResult(
        "q",
        workspace_results=[_ws("w1", 0.9), _ws("w2", 0.4)],
        personal_results=[CombinedResult("p1", "personal", "[personal memory]", 0.95),
                          CombinedResult("p2", "personal", "[personal memory]", 0.4)],
        external_results=[_ext("e1", 0.6)],
    )
    merged = res.merged()
    assert [r.content for r in merged] == ["p1", "w1", "e1", "w2", "p2"]  # ties: workspace first
    assert [r.attribution for r in merged][:3] == ["[personal memory]", "[workspace memory]", "[kb]"]
    assert [r.content for r in res.merged(2)] == ["p1", "w1"]
    with pytest.raises(ValidationError):
        res.merged(0)


async def test_merged_end_to_end(minds: Minds, server: FakeSearchServer, source: HttpExternalSource) -> None:
    await fill(minds.personal_db, 1, "mine")
    await fill(minds.workspace_db, 1, "team")
    res = await CombinedRetrieval(minds.personal, minds.workspace, source).search(QUERY, limit=5)
    merged = res.merged()
    assert {r.source for r in merged} == {"personal", "workspace", "external"}
    assert [r.score for r in merged] == sorted((r.score for r in merged), reverse=True)
    assert len(merged) == len(res.personal_results) + len(res.workspace_results) + 1
    assert all(0.0 <= r.score <= 1.0 for r in merged)


async def test_invalid_options_and_mind_errors(minds: Minds) -> None:
    combined = CombinedRetrieval(minds.personal, minds.workspace)
    for kwargs in ({"scope": "everything"}, {"limit": 0}, {"limit": True}, {"limit": 10_000},
                   {"profile": "fastest"}):
        with pytest.raises(ValidationError):
            await combined.search("x", **kwargs)
    with pytest.raises(ValidationError):
        await combined.search(None)  # type: ignore[arg-type]
    # an error of a mind itself is not swallowed: it names its fix
    await save(minds.workspace_db, "stored with 128 dimensions")
    wrong = HybridSearch(minds.workspace_db, TestEmbedder(dimensions=64))
    with pytest.raises(EmbeddingDimMismatchError, match="reembed"):
        await CombinedRetrieval(minds.personal, wrong).search("anything")
    await wrong.close()
