from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import numpy as np
import pytest

from mind.embeddings.testing import MockEmbedder, TestEmbedder
from mind.errors import EmbeddingDimMismatchError, EmbeddingFingerprintError
from mind.frames.model import NewFrame
from mind.frames.store import FrameStore
from mind.knowledge.store import KnowledgeGraph
from mind.retrieval.search import HybridSearch
from mind.retrieval.vectors import VectorStore
from mind.storage.db import Database
from tests.support import cognify

EMB = TestEmbedder(dimensions=128)


@pytest.fixture
async def search(db: Database) -> AsyncIterator[HybridSearch]:
    hs = HybridSearch(db, EMB)
    yield hs
    await hs.close()


async def save(db: Database, *texts: str, gop: str = "g", **kw: object) -> list[int]:
    return await cognify(db, EMB, *[NewFrame(gop, t, **kw) for t in texts])  # type: ignore[arg-type]


async def ids(search: HybridSearch, query: str, **kw: object) -> list[int]:
    return [r.frame.id for r in (await search.search(query, **kw)).results]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("stored", "query"),
    [
        ("Meeting at the Café in Zürich", "zürich café"),
        ("The hive-mind project ships soon", "hive-mind"),
        ("Our AI strategy for Q2", "AI"),
        ("We write the backend in Go", "Go backend"),
        ("Москва office opens", "москва"),
        ("don't deploy on Friday", "don't"),
    ],
)
async def test_keyword_lane_unicode_and_short_terms(db: Database, stored: str, query: str) -> None:
    hs = HybridSearch(db)  # keyword only
    [fid] = await save(db, stored)
    await save(db, "something unrelated entirely")
    resp = await hs.search(query)
    assert resp.mode == "keyword"
    assert resp.results and resp.results[0].frame.id == fid


@pytest.mark.parametrize(
    "query",
    ['"unbalanced', "a:b", "C++", "node.js", "NOT AND OR", "NEAR(x y)", "*", "co-operate",
     "'; DROP TABLE memory_frames; --", "\x00", "💥" * 50, "x" * 10000],
)
async def test_no_query_string_raises(search: HybridSearch, db: Database, query: str) -> None:
    await save(db, "C++ and node.js co-operate nicely")
    resp = await search.search(query)
    assert isinstance(resp.results, list)
    assert await FrameStore(db).count() == 1


async def test_hybrid_finds_by_either_lane_and_scores_are_normalized(search: HybridSearch, db: Database) -> None:
    target, _other, _ = await save(
        db, "Postgres migration finished for billing", "Billing dashboard colours", "Lunch order"
    )
    resp = await search.search("postgres billing migration")
    assert resp.mode == "hybrid"
    top = resp.results[0]
    assert top.frame.id == target
    assert top.keyword_rank == 0 and top.vector_rank == 0
    assert top.score == pytest.approx(1.0)  # first in both lanes, fresh normal frame
    for r in resp.results:
        assert 0.0 <= r.score <= 1.0
        assert r.final == pytest.approx(r.factors["fused"] * r.factors["match"] * r.relevance)
        assert r.factors["fused"] >= r.rrf  # conversation signals only add
    assert [r.final for r in resp.results] == sorted((r.final for r in resp.results), reverse=True)


async def test_session_scope_filters_inside_the_lanes(search: HybridSearch, db: Database) -> None:
    # 60 strongly matching frames elsewhere would fill any post-filtered top-k
    await save(db, *[f"quarterly revenue report draft {i}" for i in range(60)], gop="noise")
    [mine] = await save(db, "revenue report, final version", gop="mine")
    got = await ids(search, "quarterly revenue report", limit=5, session="mine")
    assert got == [mine]


async def test_date_window_inclusive_whole_days(search: HybridSearch, db: Database) -> None:
    a = await save(db, "standup notes alpha", created_at="2024-05-01T23:59:59Z")
    b = await save(db, "standup notes beta", created_at="2024-05-02T00:00:00Z")
    await save(db, "standup notes gamma", created_at="2024-04-30T12:00:00Z")
    assert await ids(search, "standup notes", since="2024-05-01", until="2024-05-01") == a
    assert sorted(await ids(search, "standup notes", since="2024-05-01")) == sorted(a + b)


async def test_chunk_lane_is_fused_with_frame_lane(search: HybridSearch, db: Database) -> None:
    filler = "\n\n".join(f"Paragraph {i} talks about gardening, tomatoes and soil." for i in range(60))
    long_text = filler + "\n\nThe secret launch code word is periwinkle-nebula."
    [long_id] = await save(db, long_text)
    [short_id] = await save(db, "kubernetes cluster autoscaling settings")
    counts = await VectorStore(db).counts()
    assert counts["chunks"] >= 2  # the long frame was chunked
    vec_only = HybridSearch(db, EMB)
    # the short frame has no chunks but must still be found by the vector lane
    resp = await vec_only.search("kubernetes autoscaling cluster")
    assert resp.results[0].frame.id == short_id and resp.results[0].vector_rank == 0
    # the long frame is found through its chunk even though its whole vector is diluted
    resp = await vec_only.search("periwinkle nebula launch code")
    assert resp.results[0].frame.id == long_id
    await vec_only.close()


async def test_vector_lane_finds_without_keyword_overlap(db: Database) -> None:
    await save(db, "deployment pipeline configuration", "deploys of the pipeline")
    hs = HybridSearch(db, EMB)
    # "deploying" shares no exact word but shares trigrams with "deploy…"
    resp = await hs.search("deploying")
    assert resp.results, resp
    await hs.close()


async def test_index_sees_updates_and_deletes(search: HybridSearch, db: Database) -> None:
    [a, b] = await save(db, "zebra crossing rules", "giraffe feeding times")
    assert (await ids(search, "zebra"))[0] == a
    await FrameStore(db).update(a, content="penguin colony census")
    await cognify(db, EMB)
    got = await ids(search, "penguin census")
    assert got[0] == a
    await FrameStore(db).delete(b)
    assert b not in await ids(search, "giraffe feeding times")


async def test_degraded_embedder_means_keyword_only_and_says_so(db: Database) -> None:
    await save(db, "alpha release checklist")
    hs = HybridSearch(db, MockEmbedder(dimensions=128))
    resp = await hs.search("alpha release")
    assert resp.degraded and resp.mode == "keyword"
    assert any("degraded" in n for n in resp.notes)
    assert resp.results[0].score == pytest.approx(1.0)  # one lane active: top of it = 1.0


async def test_dimension_and_model_mismatch_are_clear_errors(db: Database) -> None:
    await save(db, "stored with the 128-dim test model")
    hs = HybridSearch(db, TestEmbedder(dimensions=64))
    with pytest.raises(EmbeddingDimMismatchError, match="reembed"):
        await hs.search("anything")

    class Renamed(TestEmbedder):
        model_id = "another-model"

    renamed = Renamed(dimensions=128)
    renamed.model_id = "another-model"
    with pytest.raises(EmbeddingFingerprintError):
        await HybridSearch(db, renamed).search("anything")


async def test_recall_touches_access_counts(search: HybridSearch, db: Database) -> None:
    [fid] = await save(db, "touch me when recalled")
    await search.search("recalled")
    frame = await FrameStore(db).get(fid)
    assert frame is not None and frame.access_count == 1
    await search.search("recalled", touch=False)
    frame = await FrameStore(db).get(fid)
    assert frame is not None and frame.access_count == 1


async def test_graph_proximity_boosts_connected_frames(db: Database) -> None:
    kg = KnowledgeGraph(db)
    a, b = await save(db, "Notes on the Apollo budget", "Notes on the Zephyr budget")
    apollo = await kg.find_entity_by_name("Apollo")  # cognify's extraction named it
    assert apollo is not None and await kg.get_entity_frames(apollo.id) == [a]
    hs = HybridSearch(db, EMB)
    resp = await hs.search("Apollo budget notes", profile="connected")
    by_id = {r.frame.id: r for r in resp.results}
    assert by_id[a].relevance > by_id[b].relevance
    resp = await hs.search("budget notes", profile="connected", recent_entity_ids=[apollo.id])
    assert resp.results[0].frame.id == a
    await hs.close()


async def test_graph_depth_follows_the_profile(db: Database) -> None:
    """Two hops away counts for `connected` only: the balanced profile walks one hop (three hops
    of a co-occurrence graph reach nearly everything and cost ~100 ms for < 1 % of a score)."""
    kg = KnowledgeGraph(db)
    near, far = await save(db, "Ledger notes, first part", "Ledger notes, second part",
                           gop="save:2024-01-01")
    apollo, _ = await kg.upsert_entity("project", "Apollo")
    hub, _ = await kg.upsert_entity("concept", "Hub")
    zephyr, _ = await kg.upsert_entity("project", "Zephyr")
    await kg.create_relation(apollo.id, hub.id, "related_to")
    await kg.create_relation(hub.id, zephyr.id, "related_to")
    await kg.link_entities_to_frames([(hub.id, near), (zephyr.id, far)])
    hs = HybridSearch(db, EMB)
    for profile, expected in (("balanced", {near: 0.7, far: 0.0}),
                              ("connected", {near: 0.7, far: 0.4})):
        resp = await hs.search("Apollo ledger notes", profile=profile)  # type: ignore[arg-type]
        got = {r.frame.id: r.factors["proximity"] for r in resp.results}
        assert got == expected, profile
    await hs.close()


async def test_catch_up_returns_important_decisions_and_recent(search: HybridSearch, db: Database) -> None:
    crit = await save(db, "Production DB password rotates monthly", importance="critical")
    dec = await save(db, "We decided to use Postgres for billing")
    await save(db, *[f"routine note {i}" for i in range(5)])
    resp = await search.search("where were we?", limit=4)
    assert resp.mode == "catch_up"
    got = [r.frame.id for r in resp.results]
    assert got[0] == crit[0] and dec[0] in got and len(got) == 4
    assert len(set(got)) == 4
    reasons = {r.frame.id: r.reason for r in resp.results}
    assert reasons[crit[0]] == "important" and reasons[dec[0]] == "decision"
    assert all(0 <= r.score <= 1 for r in resp.results)


class ReverseReranker:
    """Scores documents by how late their text sorts: an order RRF would never produce."""

    async def score_batch(self, query: str, documents: Sequence[str]) -> Sequence[float]:
        order = sorted(range(len(documents)), key=lambda i: documents[i])
        logits = [0.0] * len(documents)
        for rank, i in enumerate(order):
            logits[i] = float(rank)
        return logits


class BrokenReranker:
    async def score_batch(self, query: str, documents: Sequence[str]) -> Sequence[float]:
        raise RuntimeError("model not loaded")


async def test_reranker_replaces_scores_without_mixing(db: Database) -> None:
    await save(db, *[f"report {c}" for c in "abcdefghij"])
    hs = HybridSearch(db, EMB, reranker=ReverseReranker(), rerank_pool=5)
    resp = await hs.search("report", limit=3)
    assert all(r.reranked for r in resp.results)
    contents = [r.frame.content for r in resp.results]
    assert contents == sorted(contents, reverse=True)
    assert all(0 < r.score < 1 for r in resp.results)
    broken = HybridSearch(db, EMB, reranker=BrokenReranker())
    resp = await broken.search("report", limit=3)
    assert not any(r.reranked for r in resp.results) and resp.notes
    await hs.close()
    await broken.close()


async def test_invalid_options_are_clear_errors(search: HybridSearch) -> None:
    from mind.errors import InvalidTimestampError, ValidationError

    with pytest.raises(ValidationError):
        await search.search("x", limit=0)
    with pytest.raises(ValidationError):
        await search.search("x", profile="fastest")  # type: ignore[arg-type]
    with pytest.raises(InvalidTimestampError):
        await search.search("x", since="last week")
    assert (await search.search("   ")).results == []


async def test_query_vector_dimension_checked_by_index(db: Database) -> None:
    from mind.errors import VectorError
    from mind.retrieval.vector_index import VectorIndex

    await save(db, "anything")
    index = VectorIndex(db.path, 128)
    with pytest.raises(VectorError):
        await index.search(np.zeros(64, dtype=np.float32), 5)
    index.close()


async def test_graph_proximity_reaches_a_conversation_but_not_the_daily_bucket(
    db: Database, search: HybridSearch
) -> None:
    named, weight = await save(db, "We adopted a beagle called Biscuit.",
                               "Vet check: she weighs 13.5 kg now.", gop="harvest:chat:dog")
    bath, loose = await save(db, "Gave Biscuit a bath today.", "Gym check: I weigh 80 kg now.",
                             gop="save:2026-01-05")
    linked = await db.fetchall(  # cognify's extraction linked the name to both mentions
        "SELECT ef.frame_id FROM kg_entity_frames ef JOIN knowledge_entities e "
        "ON e.id = ef.entity_id WHERE e.normalized_name = 'biscuit' ORDER BY ef.frame_id")
    assert [r[0] for r in linked] == [named, bath]
    results = {r.frame.id: r for r in (await search.search("How much does Biscuit weigh",
                                                            limit=5)).results}
    assert weight in results and loose in results
    assert results[weight].relevance > results[loose].relevance  # same conversation
    assert results[named].relevance > results[weight].relevance  # named it

