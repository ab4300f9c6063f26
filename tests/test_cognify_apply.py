from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mind.cognify_apply import FrameIndex, apply_index
from mind.embeddings.testing import TestEmbedder
from mind.frames.store import FrameStore
from mind.knowledge.store import KnowledgeGraph
from mind.retrieval.vector_index import VectorIndex
from mind.retrieval.vectors import ChunkSpan, VectorStore
from mind.storage.db import Database

EMB = TestEmbedder(dimensions=32)
FP = ("test", EMB.model_id, 32)


@dataclass
class Ent:
    name: str
    entity_type: str
    confidence: float = 0.9


@dataclass
class Rel:
    source: str
    target: str
    relation_type: str
    confidence: float = 0.9


def vec(text: str) -> np.ndarray:
    return EMB.encode([text])[0]


async def test_applies_vectors_entities_relations_and_clears_outbox(db: Database) -> None:
    f = (await FrameStore(db).create_i_frame("g", "Alice leads Project Apollo at Acme")).frame
    result = FrameIndex(
        f.id, f.content_hash, vec(f.content),
        chunks=((ChunkSpan(0, "Alice leads", 0, 11), vec("Alice leads")),),
        entities=[Ent("Alice", "person"), Ent("Project Apollo", "project"), Ent("Acme", "organization")],
        relations=[Rel("Project Apollo", "Alice", "led_by")],
    )
    stats = await apply_index(db, FP, [result])
    assert (stats.applied, stats.stale, stats.chunks, stats.entities) == (1, 0, 1, 3)
    kg = KnowledgeGraph(db)
    names = sorted(e.name for e in await kg.get_frame_entities(f.id))
    assert names == ["Acme", "Alice", "Project Apollo"]
    apollo = await kg.find_entity_by_name("Project Apollo")
    alice = await kg.find_entity_by_name("alice")
    assert apollo is not None and alice is not None
    assert [r.target_id for r in await kg.get_relations_from(apollo.id, "led_by")] == [alice.id]
    co = await db.fetchval("SELECT COUNT(*) FROM knowledge_relations WHERE relation_type='co_occurs_with'")
    assert co == 3  # one per entity pair
    assert await db.fetchval("SELECT COUNT(*) FROM pending_index") == 0
    assert (await VectorStore(db).counts())["chunk_vectors"] == 1


async def test_redelivery_and_stale_results_change_nothing(db: Database) -> None:
    frames = FrameStore(db)
    f = (await frames.create_i_frame("g", "Bob reviews the budget")).frame
    result = FrameIndex(f.id, f.content_hash, vec(f.content), entities=[Ent("Bob", "person")])
    assert (await apply_index(db, FP, [result])).applied == 1
    again = await apply_index(db, FP, [result])  # a duplicate delivery of the same work
    assert (again.applied, again.stale) == (0, 1)
    bob = await KnowledgeGraph(db).find_entity_by_name("Bob")
    assert bob is not None and bob.properties.get("seen_count", 1) == 1
    # the frame is edited after the worker read it: the old result must not land
    await frames.update(f.id, content="Bob approves the budget")
    stale = await apply_index(db, FP, [result])
    assert (stale.applied, stale.stale) == (0, 1)
    assert await db.fetchval("SELECT COUNT(*) FROM memory_frames_vec WHERE rowid = ?", (f.id,)) == 0
    assert await db.fetchval("SELECT COUNT(*) FROM pending_index WHERE frame_id = ?", (f.id,)) == 1


async def test_nearest_frames_feed_supersession_across_batches(db: Database) -> None:
    """An update indexed in a later batch finds the earlier statement of another conversation
    through the vector index (committed rows), and the pair goes when the update is forgotten;
    nothing writes related-frame links any more (migration 14)."""
    frames = FrameStore(db)
    old = (await frames.create_i_frame("trip", "We fly to Lisbon on May 4, 2025.")).frame
    await apply_index(db, FP, [FrameIndex(old.id, old.content_hash, vec("lisbon flight"),
                                          entities=[Ent("Lisbon", "location")])])
    new = (await frames.create_i_frame(
        "trip-2", "Change of plans: the Lisbon flight moved to May 18, 2025.")).frame
    index = VectorIndex(db.path, 32)
    stats = await apply_index(
        db, FP, [FrameIndex(new.id, new.content_hash, vec("lisbon flight"),
                            entities=[Ent("Lisbon", "location")])], link_index=index)
    index.close()
    assert stats.supersessions == 1
    pairs = await db.fetchall("SELECT superseded_id, frame_id, cue FROM frame_supersessions")
    assert [tuple(r) for r in pairs] == [(old.id, new.id, "change")]
    assert not await db.fetchall(
        "SELECT name FROM sqlite_master WHERE name = 'frame_links'")
    await frames.delete(new.id)
    assert await db.fetchval("SELECT COUNT(*) FROM frame_supersessions") == 0


async def test_an_earlier_statement_indexed_after_its_update_is_paired(db: Database) -> None:
    """Indexing order does not matter: a statement without a cue, indexed after the update of
    another conversation that replaces it, finds that update among the stored turns that carry
    a cue (a ChatGPT export lists its newest conversation first)."""
    frames = FrameStore(db)
    index = VectorIndex(db.path, 32)
    new = (await frames.create_i_frame(
        "trip-2", "Change of plans: the Lisbon flight moved to May 18, 2025.",
        created_at="2025-04-20T10:00:00Z")).frame
    await apply_index(db, FP, [FrameIndex(new.id, new.content_hash, vec("lisbon flight"),
                                          entities=[Ent("Lisbon", "location")])], link_index=index)
    unrelated = (await frames.create_i_frame("misc", "We fly to Oslo on June 2, 2025.",
                                             created_at="2025-03-01T10:00:00Z")).frame
    await apply_index(db, FP, [FrameIndex(unrelated.id, unrelated.content_hash,
                                          vec("oslo trip"), entities=[Ent("Oslo", "location")])],
                      link_index=index)
    old = (await frames.create_i_frame("trip", "We fly to Lisbon on May 4, 2025.",
                                       created_at="2025-03-02T10:00:00Z")).frame
    stats = await apply_index(db, FP, [FrameIndex(old.id, old.content_hash, vec("lisbon flight"),
                                                  entities=[Ent("Lisbon", "location")])],
                              link_index=index)
    index.close()
    assert stats.supersessions == 1
    pairs = await db.fetchall("SELECT superseded_id, frame_id FROM frame_supersessions")
    assert [tuple(r) for r in pairs] == [(old.id, new.id)]
