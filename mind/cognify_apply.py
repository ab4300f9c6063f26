"""Apply cognify results to a mind (the owner's half of the cognify pipeline, seed §6).

Workers compute, per frame: the whole-frame vector, chunk vectors, extracted entities and
relations. The mind's owner applies them here, in the caller's transaction:

* results only apply to frames still **pending** in the outbox with the **same content hash**
  — a redelivered or stale result (the frame was edited or already indexed) changes nothing,
  so at-least-once delivery has exactly-once effect;
* vectors are upserted, chunks replaced, entities upserted by normalized name + type and bridged
  to the frame, ``co_occurs_with`` (0.8) and semantic relations created without duplicates;
* related frames are linked by vector similarity (``frame_links``);
* the frame's outbox row is cleared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Protocol

import numpy as np

from mind.db import Database
from mind.knowledge import KnowledgeGraph
from mind.outbox import Outbox
from mind.sqlutil import chunked, placeholders
from mind.vector_index import VectorIndex
from mind.vectors import ChunkSpan, VectorStore

CO_OCCURRENCE = "co_occurs_with"
CO_OCCURRENCE_CONFIDENCE = 0.8
MAX_ENTITIES_PER_FRAME = 20
LINK_LIMIT = 5
LINK_MIN_SIMILARITY = 0.5


class EntityLike(Protocol):
    name: str
    entity_type: str
    confidence: float


class RelationLike(Protocol):
    source: str
    target: str
    relation_type: str
    confidence: float


@dataclass(frozen=True, slots=True)
class FrameIndex:
    frame_id: int
    content_hash: str
    vector: np.ndarray
    chunks: Sequence[tuple[ChunkSpan, np.ndarray]] = ()
    entities: Sequence[Any] = ()  # EntityLike
    relations: Sequence[Any] = ()  # RelationLike


@dataclass(slots=True)
class ApplyStats:
    applied: int = 0
    stale: int = 0
    chunks: int = 0
    entities: int = 0
    relations: int = 0
    links: int = 0

    def as_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in self.__slots__}


async def pending_hashes(db: Database, frame_ids: Sequence[int]) -> dict[int, str]:
    """Frames that still await indexing, with their current content hash."""
    out: dict[int, str] = {}
    for part in chunked(list(frame_ids)):
        rows = await db.fetchall(
            "SELECT f.id, f.content_hash FROM memory_frames f JOIN pending_index p "
            f"ON p.frame_id = f.id WHERE f.id IN ({placeholders(len(part))})",
            part,
        )
        out.update({r[0]: r[1] for r in rows})
    return out


async def apply_index(
    db: Database,
    fingerprint: tuple[str, str, int],
    results: Sequence[FrameIndex],
    *,
    link_index: VectorIndex | None = None,
) -> ApplyStats:
    stats = ApplyStats()
    async with db.transaction():
        current = await pending_hashes(db, [r.frame_id for r in results])
        fresh = [r for r in results if current.get(r.frame_id) == r.content_hash]
        stats.stale = len(results) - len(fresh)
        if not fresh:
            return stats
        store = VectorStore(db)
        await store.ensure_fingerprint(*fingerprint)
        await store.upsert_frame_vectors([(r.frame_id, r.vector) for r in fresh])
        for r in fresh:
            if r.chunks:
                spans, vecs = [c for c, _ in r.chunks], [v for _, v in r.chunks]
                stats.chunks += await store.replace_chunks(r.frame_id, spans, vecs)
        kg = KnowledgeGraph(db)
        for r in fresh:
            e, rel = await _apply_graph(kg, r)
            stats.entities += e
            stats.relations += rel
        if link_index is not None:
            stats.links = await _link(db, link_index, fresh)
        await Outbox(db).clear([r.frame_id for r in fresh])
        stats.applied = len(fresh)
    return stats


async def _apply_graph(kg: KnowledgeGraph, result: FrameIndex) -> tuple[int, int]:
    ids: dict[str, int] = {}
    for ent in list(result.entities)[:MAX_ENTITIES_PER_FRAME]:
        entity, _ = await kg.upsert_entity(
            ent.entity_type, ent.name, {"source": "cognify", "confidence": float(ent.confidence)}
        )
        ids.setdefault(ent.name.casefold(), entity.id)
    unique = list(dict.fromkeys(ids.values()))
    if unique:
        await kg.link_entities_to_frames([(eid, result.frame_id) for eid in unique])
    relations = 0
    for a, b in combinations(unique, 2):
        await kg.create_relation(
            a, b, CO_OCCURRENCE, CO_OCCURRENCE_CONFIDENCE, {"source": "cognify"}
        )
        relations += 1
    for rel in result.relations:
        src, tgt = ids.get(rel.source.casefold()), ids.get(rel.target.casefold())
        if src is not None and tgt is not None and src != tgt:
            await kg.create_relation(
                src, tgt, rel.relation_type, float(rel.confidence), {"source": "semantic"}
            )
            relations += 1
    return len(unique), relations


async def _link(db: Database, index: VectorIndex, results: Sequence[FrameIndex]) -> int:
    rows: list[tuple[int, int, float]] = []
    for r in results:
        hits = await index.search(r.vector, LINK_LIMIT + 1)
        rows.extend(
            (r.frame_id, fid, sim)
            for fid, sim in hits
            if fid != r.frame_id and sim >= LINK_MIN_SIMILARITY
        )
    if rows:
        await db.executemany(
            "INSERT OR REPLACE INTO frame_links(frame_id, related_id, score) "
            "SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM memory_frames WHERE id = ?)",
            [(a, b, s, b) for a, b, s in rows],
        )
    return len(rows)
