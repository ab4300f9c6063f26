"""CombinedRetrieval (mind/retrieval/combined.py) over real mind files and a real local HTTP server
speaking the external-source protocol (mind/retrieval/external.py): attribution, the merge that keeps
every mind's order, the coverage gate, conflict notes, failures and the bounds of what the
source may answer."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mind.embeddings.testing import TestEmbedder
from mind.errors import EmbeddingDimMismatchError, ValidationError
from mind.frames.model import NewFrame
from mind.retrieval.combined import (
    CombinedResult,
    CombinedRetrieval,
    CombinedRetrievalResult,
    SearchOptions,
    detect_conflict,
    merge_by_score,
    polarity,
    should_query_external,
    status_signals,
)
from mind.retrieval.external import (
    MAX_CONTENT_CHARS,
    MAX_RESPONSE_BYTES,
    MAX_TITLE_CHARS,
    ExternalDocument,
    ExternalSourceError,
    HttpExternalSource,
)
from mind.retrieval.search import HybridSearch
from mind.storage.db import Database
from mind.storage.migrate import migrate
from tests.external_source import DOC, Behaviour, FakeSearchServer
from tests.support import cognify

EMB = TestEmbedder(dimensions=128)
QUERY = "deploy pipeline runbook"


@pytest.fixture
def server() -> Iterator[FakeSearchServer]:
    with FakeSearchServer() as srv:
        yield srv


@pytest.fixture
async def source(server: FakeSearchServer) -> AsyncIterator[HttpExternalSource]:
    async with HttpExternalSource(server.url, api_key="s3cret", timeout=0.5,
                                  name="Acme Search") as src:
        yield src


# -- real mind files ------------------------------------------------------------------------------


@dataclass
class Minds:
    personal_db: Database
    workspace_db: Database
    other_db: Database
    personal: HybridSearch
    workspace: HybridSearch
    other: HybridSearch

    def both(self) -> list[tuple[str, HybridSearch]]:
        return [("personal", self.personal), ("workspace:acme", self.workspace)]


@pytest.fixture
async def minds(tmp_path: Path) -> AsyncIterator[Minds]:
    dbs = []
    for name in ("personal", "workspace", "other"):
        database = await Database.open(tmp_path / f"{name}.mind")
        await migrate(database)
        dbs.append(database)
    p, w, o = dbs
    m = Minds(p, w, o, HybridSearch(p, EMB), HybridSearch(w, EMB), HybridSearch(o, EMB))
    yield m
    for search in (m.personal, m.workspace, m.other):
        await search.close()
    for database in dbs:
        await database.close()


async def save(db: Database, *texts: str, gop: str = "g", **kw: object) -> list[int]:
    return await cognify(db, EMB, *[NewFrame(gop, t, **kw) for t in texts])  # type: ignore[arg-type]


async def fill(db: Database, strong: int, tag: str) -> None:
    """``strong`` frames matching QUERY in both lanes (score ≥ 0.7), plus unrelated filler."""
    await save(db, *[f"Deploy pipeline runbook, {tag} part {i}" for i in range(strong)])
    # in a session of their own: a turn right after a runbook turn would carry it as context
    await save(db, f"Gardening tomatoes and soil {tag}", f"Holiday photos from Crete {tag}",
               gop="filler")


# -- retrieval across minds -----------------------------------------------------------------------


async def test_minds_searched_together_with_attribution(minds: Minds) -> None:
    [p_id] = await save(minds.personal_db, "My own notes: Postgres billing tuning")
    [w_id] = await save(minds.workspace_db, "Team decision: Postgres billing cluster",
                        gop="team", importance="important")
    assert p_id == w_id == 1  # two separate files, each with its own ids
    res = await CombinedRetrieval(minds.both()).search("postgres billing")
    assert res.external_name is None and res.external_queried is False
    assert res.external_error is None and res.conflicts == []
    personal, workspace = res.per_mind
    [p] = [r for r in personal if r.hit is not None and r.hit.frame.id == p_id]
    [w] = [r for r in workspace if r.hit is not None and r.hit.frame.id == w_id]
    assert (p.origin, p.kind, p.content) == (
        "personal", "personal", "My own notes: Postgres billing tuning")
    assert (w.origin, w.kind) == ("workspace:acme", "workspace")
    assert w.hit is not None and w.hit.frame.importance == "important"
    assert p.score > 0.7 and w.score > 0.7  # normalized scale, not raw RRF
    assert all(0.0 <= r.score <= 1.0 for r in res.merged(10))
    assert p.conflict is None and w.conflict is None


async def test_options_reach_every_mind(minds: Minds) -> None:
    await save(minds.personal_db, "standup notes old", created_at="2024-01-01T09:00:00Z")
    await save(minds.personal_db, "standup notes new", created_at="2024-06-01T09:00:00Z")
    await save(minds.workspace_db, "standup notes team")
    combined = CombinedRetrieval(minds.both())
    windowed = await combined.search(
        "standup notes", options=SearchOptions(since="2024-05-01", until="2024-12-31"))
    assert [r.content for r in windowed.per_mind[0]] == ["standup notes new"]
    assert windowed.per_mind[1] == []  # saved today
    access = "SELECT id, access_count FROM memory_frames ORDER BY id"
    before = await minds.personal_db.fetchall(access)
    keyword = await combined.search("standup", options=SearchOptions(lanes="keyword",
                                                                     touch=False))
    assert keyword.per_mind[0] and all(r.hit is not None and r.hit.vector_rank is None
                                       for rows in keyword.per_mind for r in rows)
    assert await minds.personal_db.fetchall(access) == before  # touch=False reached the minds
    await combined.search("standup")
    assert await minds.personal_db.fetchall(access) != before  # (a touch does change them)
    assert (await CombinedRetrieval([]).search("standup")).merged(10) == []


# -- merging ----------------------------------------------------------------------------------------


def _r(origin: str, score: float) -> CombinedResult:
    return CombinedResult(origin, f"{origin} {score}", score)


def test_merge_keeps_every_minds_own_order() -> None:
    # a mind whose own order is not by score (conversation signals, catch-up): never reordered
    a = [_r("personal", 0.6), _r("personal", 0.9)]
    b = [_r("workspace:x", 0.7), _r("workspace:x", 0.2)]
    ext = [_r("external:kb", 0.65)]
    merged = merge_by_score([a, b, ext], 10)
    assert [(r.origin, r.score) for r in merged] == [
        ("workspace:x", 0.7), ("external:kb", 0.65), ("personal", 0.6), ("personal", 0.9),
        ("workspace:x", 0.2)]
    assert [r.score for r in merge_by_score([a, b, ext], 2)] == [0.7, 0.65]
    tie = merge_by_score([[_r("personal", 0.5)], [_r("workspace:x", 0.5)]], 2)
    assert [r.origin for r in tie] == ["personal", "workspace:x"]  # ties: the earlier list
    res = CombinedRetrievalResult("q", per_mind=[a, b], external_results=ext)
    assert res.merged(10) == merged


async def test_merged_end_to_end(minds: Minds, server: FakeSearchServer,
                                 source: HttpExternalSource) -> None:
    await fill(minds.personal_db, 1, "mine")
    await fill(minds.workspace_db, 1, "team")
    res = await CombinedRetrieval(minds.both(), source).search(QUERY, limit=5)
    merged = res.merged(20)
    assert {r.kind for r in merged} == {"personal", "workspace", "external"}
    assert len(merged) == sum(len(rows) for rows in res.per_mind) + 1
    assert all(0.0 <= r.score <= 1.0 for r in merged)
    for rows in res.per_mind:  # each mind's order survives the merge
        assert [r for r in merged if r in rows] == rows


# -- gating -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("personal_strong", "workspace_strong", "allowed", "queried"),
    [
        (3, 0, True, False),  # sufficient: 3 results ≥ 0.7
        (2, 1, True, False),  # sufficient counted across both minds
        (2, 0, True, True),  # insufficient
        (0, 0, True, True),
        (0, 0, False, False),  # the caller did not allow it (scope is not "all")
    ],
)
async def test_gating(
    minds: Minds, server: FakeSearchServer, source: HttpExternalSource,
    personal_strong: int, workspace_strong: int, allowed: bool, queried: bool,
) -> None:
    await fill(minds.personal_db, personal_strong, "mine")
    await fill(minds.workspace_db, workspace_strong, "team")
    res = await CombinedRetrieval(minds.both(), source).search(QUERY, limit=7,
                                                               external=allowed)
    assert res.external_name == "Acme Search"
    assert res.external_queried is queried
    assert len(server.requests) == (1 if queried else 0)
    if queried:
        [request] = server.requests
        assert request["path"] == "/search" and request["body"] == {"query": QUERY, "limit": 7}
        assert request["headers"]["Authorization"] == "Bearer s3cret"
        [doc] = res.external_results
        assert (doc.origin, doc.kind, doc.score) == ("external:Acme Search", "external", 0.8)
        assert doc.document == ExternalDocument("doc-1", "Runbook", str(DOC["content"]), 0.8,
                                                "wiki", "https://wiki.example/runbook")
    else:
        assert res.external_results == []


@pytest.mark.parametrize(
    ("has_source", "allowed", "query", "strong", "expected"),
    [
        (True, True, "q", 0, True),
        (True, True, "q", 2, True),
        (True, True, "q", 3, False),
        (True, False, "q", 0, False),
        (False, True, "q", 0, False),
        (True, True, "   ", 0, False),
    ],
)
def test_should_query_external_table(
    has_source: bool, allowed: bool, query: str, strong: int, expected: bool
) -> None:
    local = [_r("personal", 0.7) for _ in range(strong)]
    local += [_r("workspace:x", 0.69) for _ in range(5)]
    assert should_query_external(has_source, allowed, query, local) is expected


async def test_blank_query_catch_up_and_single_lanes_never_reach_the_source(
    minds: Minds, server: FakeSearchServer, source: HttpExternalSource
) -> None:
    await save(minds.personal_db, "We were planning the deploy pipeline runbook")
    combined = CombinedRetrieval(minds.both(), source)
    assert (await combined.search("   ")).merged(10) == []
    caught_up = await combined.search("where were we")  # a catch-up briefing, not a query
    assert caught_up.merged(10) and not caught_up.external_queried
    for lanes in ("keyword", "vector"):
        res = await combined.search(QUERY, options=SearchOptions(lanes=lanes))
        assert not res.external_queried
    assert server.requests == []
    assert (await combined.search(QUERY)).external_queried  # the plain recall does ask


# -- external failures degrade gracefully ------------------------------------------------------


@pytest.mark.parametrize(
    ("behaviour", "message"),
    [
        (Behaviour(status=500, raw=b"internal kaboom"), "HTTP 500: internal kaboom"),
        (Behaviour(status=401, raw=b'{"error": "bad token"}'), "HTTP 401"),
        (Behaviour(status=302, raw=b"", headers={"Location": "http://169.254.169.254/"}),
         "HTTP 302"),  # redirects are not followed
        (Behaviour(delay=5.0), "timeout"),
        (Behaviour(drip=0.05), "timeout"),  # every read is quick, the whole answer is not
        (Behaviour(raw=b"{not json"), "malformed JSON"),
        (Behaviour(raw=b"[" * 100_000), "malformed JSON"),  # nesting: no RecursionError escapes
        (Behaviour(raw=b" " * (MAX_RESPONSE_BYTES + 1)), "answer larger than"),
        (Behaviour(raw=b'{"hits": []}'), '"results" list'),
        (Behaviour(results=[{**DOC, "score": 1.7}]), "outside [0, 1]"),
        (Behaviour(results=[{**DOC, "score": "high"}]), "score must be a number"),
        (Behaviour(results=[{**DOC, "content": None}]), "content must be a string"),
        (Behaviour(results=[{**DOC, "metadata": []}]), "metadata must be an object"),
        (Behaviour(results=[{**DOC, "metadata": {"blob": "x" * 70_000}}]), "the limit is"),
        (Behaviour(results=[{**DOC, "url": "https://x/" + "a" * 5_000}]), "url is longer"),
    ],
)
async def test_external_failures_keep_local_results(
    minds: Minds, server: FakeSearchServer, source: HttpExternalSource,
    behaviour: Behaviour, message: str,
) -> None:
    await fill(minds.personal_db, 1, "mine")
    server.behaviour = behaviour
    res = await CombinedRetrieval(minds.both(), source).search(QUERY)
    assert res.per_mind[0] and res.per_mind[0][0].content.startswith("Deploy pipeline")
    assert res.external_results == [] and res.external_queried is True
    assert res.external_error is not None and message in res.external_error
    assert "Acme Search" in res.external_error
    with pytest.raises(ExternalSourceError, match="Acme Search"):  # and directly, a clear error
        await source.search(QUERY, 3)


async def test_connection_refused_keeps_local_results_and_masks_the_url(minds: Minds) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    await fill(minds.workspace_db, 1, "team")
    url = f"http://svc:hunter2@127.0.0.1:{port}/api?api_key=abc123"
    async with HttpExternalSource(url, timeout=2) as dead:
        res = await CombinedRetrieval(minds.both(), dead).search(QUERY)
    assert res.per_mind[1] and res.external_results == []
    assert res.external_error is not None and "cannot connect" in res.external_error
    assert "hunter2" not in res.external_error and "abc123" not in res.external_error


async def test_a_crashing_custom_source_is_contained(minds: Minds) -> None:
    class Broken:
        name = "broken"

        async def search(self, query: str, limit: int) -> list[ExternalDocument]:
            raise RuntimeError("index offline")

    await fill(minds.personal_db, 1, "mine")
    res = await CombinedRetrieval(minds.both()[:1], Broken()).search(QUERY)
    assert res.per_mind[0] and res.external_error is not None
    assert "RuntimeError: index offline" in res.external_error


async def test_http_source_protocol_details_and_bounds(server: FakeSearchServer) -> None:
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
        huge = {**DOC, "id": "i" * 10_000, "title": "t" * 10_000, "type": "y" * 10_000,
                "content": "c" * (MAX_CONTENT_CHARS * 2)}
        server.behaviour = Behaviour(results=[huge, *[DOC] * 499])
        docs = await src.search("q", 100)
    assert len(docs) == 100  # a source answering 500 results gives at most the limit
    doc = docs[0]
    assert len(doc.content) == MAX_CONTENT_CHARS and doc.content.endswith("…")
    assert {len(doc.title), len(doc.document_id), len(doc.document_type)} == {MAX_TITLE_CHARS}
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
    return CombinedResult("workspace:acme", text, score)


def _ext(text: str, score: float = 0.9) -> CombinedResult:
    return CombinedResult("external:kb", text, score)


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
    note = detect_conflict(workspace, external, "kb", 'workspace "acme"')
    assert (note is not None) is conflict
    if note:
        assert "out of sync" in note and "kb" in note and 'workspace "acme"' in note


async def test_conflict_between_workspace_and_external(
    minds: Minds, server: FakeSearchServer, source: HttpExternalSource
) -> None:
    await save(minds.workspace_db, "The Acme vendor contract was approved by legal")
    await save(minds.other_db, "Acme vendor contract notes, nothing decided")
    server.behaviour = Behaviour(results=[
        {**DOC, "content": "Acme vendor contract: rejected by procurement", "score": 0.85}])
    combined = CombinedRetrieval([*minds.both(), ("workspace:beta", minds.other)], source)
    res = await combined.search("acme vendor contract")
    ws = res.per_mind[1][0]
    assert ws.score >= 0.6
    [conflict] = res.conflicts  # workspace beta reads neither way: no conflict of its own
    assert conflict.origins == ("workspace:acme", "external:Acme Search")
    assert '"approved"' in conflict.note and '"rejected"' in conflict.note
    assert 'workspace "acme"' in conflict.note and "Acme Search" in conflict.note
    [ext] = res.external_results
    assert ws.conflict == ext.conflict == conflict.note  # on the results it concerns
    assert all(r.conflict is None for r in res.per_mind[2])
    # the external side agreeing → no conflict
    server.behaviour = Behaviour(results=[
        {**DOC, "content": "Acme vendor contract approved", "score": 0.85}])
    res = await combined.search("acme vendor contract")
    assert res.conflicts == [] and all(r.conflict is None for r in res.merged(20))


async def test_personal_memory_does_not_take_part_in_conflicts(
    minds: Minds, server: FakeSearchServer, source: HttpExternalSource
) -> None:
    await save(minds.personal_db, "The Acme vendor contract was approved by legal")
    server.behaviour = Behaviour(results=[
        {**DOC, "content": "Acme vendor contract rejected", "score": 0.85}])
    res = await CombinedRetrieval(minds.both(), source).search("acme vendor contract")
    assert res.external_results and res.conflicts == []


async def test_mind_errors_propagate(minds: Minds) -> None:
    # an error of a mind itself is not swallowed: it names its fix
    await save(minds.workspace_db, "stored with 128 dimensions")
    wrong = HybridSearch(minds.workspace_db, TestEmbedder(dimensions=64))
    with pytest.raises(EmbeddingDimMismatchError, match="reembed"):
        await CombinedRetrieval([("personal", minds.personal),
                                 ("workspace:acme", wrong)]).search("anything")
    await wrong.close()
    json.dumps([r.content for r in (await CombinedRetrieval(minds.both()).search("x")).merged(5)])
