"""Apply cognify results to a mind (the owner's half of the cognify pipeline).

Workers compute, per frame: the whole-frame vector, chunk vectors, extracted entities and
relations. The mind's owner applies them here, in the caller's transaction:

* results only apply to frames still **pending** in the outbox with the **same content hash**
  — a redelivered or stale result (the frame was edited or already indexed) changes nothing,
  so at-least-once delivery has exactly-once effect;
* vectors are upserted, chunks replaced, entities upserted by normalized name + type and bridged
  to the frame — every one of them: a name extracted under two types is two entities, both
  bridged, so erasing the frame finds both — ``co_occurs_with`` (0.8, never between two types of
  one name) and semantic relations created without duplicates, each recording the frame that
  supports it (``relation_sources``: forgetting the frame removes what only it supported);
* supersession pairs (:mod:`mind.knowledge.supersession`): which turns of the batch decide or
  change something said before, and which earlier turns they replace. Their candidates come
  from one search for the whole batch (:func:`_nearest`): its vectors against the mind's
  in-memory vector index in one matrix product, the :data:`~mind.knowledge.supersession.
  CANDIDATES_PER_FRAME` nearest frames with cosine ≥ the loosest pair's floor among the
  :data:`NEAR_WINDOW_ROWS` most recently indexed vectors for a turn that carries a cue, among
  the stored turns that carry one for the others (a pair needs a cue on its newer side). The
  window bounds a frame's cost whatever the mind's size (a scan of the whole mind per frame
  made a 200,000-message import quadratic; bench/components/link_cost.py). This search once
  also wrote related-frame links
  (``frame_links``); recall never read them, and used as a recall signal they lowered every
  eval (LoCoMo dev R@10 0.8083 → 0.7906 at a 0.1 share, synthetic chats R@5 0.880 → 0.827,
  SciFact nDCG@10 0.7405 → 0.7225), so migration 14 dropped them;
* the frame's outbox row is cleared.

Round trips: the batch's conversation neighbours and texts and the recent stored frames with a
cue are read first (one trip: the texts give the batch's cues), then the nearest-frame search
runs (on the index's own connection, which sees only committed rows whatever the order), then
the vectors, the graph, the supersession pairs and the outbox rows are written in **one** trip
to the connection's thread
(:meth:`Database.run`); with the fingerprint check and the pending read that is three trips a
batch where it was ~20, at 60-100 us of CPU each on top of the SQL
(bench/components/host_replay.py). Chunks (long frames only) keep their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from itertools import combinations
from typing import TYPE_CHECKING, Any, Protocol

from mind.knowledge import supersession
from mind.knowledge.bulk import (
    DerivedRelation,
    entity_key,
    put_relations_sync,
    upsert_entities_sync,
)
from mind.retrieval.vectors import (
    ChunkSpan,
    VectorStore,
    WrittenVectors,
    upsert_frame_vectors_sync,
)
from mind.storage.db import Database, SyncDb
from mind.storage.sqlutil import chunked, delete_in_sync, placeholders

if TYPE_CHECKING:  # numpy and the vector index load with the first index result applied
    import numpy as np

    from mind.retrieval.vector_index import VectorIndex

CO_OCCURRENCE = "co_occurs_with"
CO_OCCURRENCE_CONFIDENCE = 0.8
MAX_ENTITIES_PER_FRAME = 20
NEAR_WINDOW_ROWS = 50_000  # nearest frames are searched among the most recent vectors (docstring)


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
    supersessions: int = 0

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
        found = supersession.Candidates()
        await supersession.gather(
            db, {r.frame_id: _float32(r.vector) for r in fresh}, link_index, found,
            recent=0 if link_index is None else NEAR_WINDOW_ROWS)
        if link_index is not None:
            await _nearest(link_index, fresh, found)
        for r in fresh:
            if r.chunks:
                spans, vecs = [c for c, _ in r.chunks], [v for _, v in r.chunks]
                stats.chunks += await store.replace_chunks(r.frame_id, spans, vecs)
        dim = fingerprint[2]  # ensure_fingerprint checked it: the tables exist at this dim
        written, (stats.entities, stats.relations), stats.supersessions = await db.run(
            lambda sync: _write(sync, fresh, dim, found))
        if link_index is not None:  # once committed, the index takes them without reading
            db.after_commit(partial(link_index.handoff, written.first_seq, written.rows))
        stats.applied = len(fresh)
    return stats


def _write(db: SyncDb, results: Sequence[FrameIndex], dim: int, found: supersession.Candidates,
           ) -> tuple[WrittenVectors, tuple[int, int], int]:
    """Everything of a batch but its chunks, on the connection's thread (one round trip);
    returns the vectors, the numbers of entities and relations written and the supersession
    pairs found (after the graph: the pairs compare the frames' entities)."""
    written = upsert_frame_vectors_sync(db, [(r.frame_id, r.vector) for r in results], dim)
    graph = _apply_graph(db, results)
    pairs = supersession.detect_sync(db, [r.frame_id for r in results], found)
    delete_in_sync(db, "pending_index", "frame_id", [r.frame_id for r in results])
    return written, graph, pairs


def _apply_graph(db: SyncDb, results: Sequence[FrameIndex]) -> tuple[int, int]:
    """Entities, bridge rows and relations of a whole batch in a few bulk statements."""
    per_frame: list[list[tuple[str, str, dict[str, Any]]]] = []
    for r in results:
        per_frame.append([
            (e.entity_type, e.name, {"source": "cognify", "confidence": float(e.confidence)})
            for e in list(r.entities)[:MAX_ENTITIES_PER_FRAME]
        ])
    ids = upsert_entities_sync(db, [item for items in per_frame for item in items])
    bridge: list[tuple[int, int]] = []
    relations: list[DerivedRelation] = []
    for r, items in zip(results, per_frame, strict=True):
        keys = [entity_key(etype, name) for etype, name, _ in items]
        # semantic relations name their ends without a type: the last type seen, as before
        by_name = {name.casefold(): ids[key] for (_, name, _), key in zip(items, keys, strict=True)}
        name_of = {ids[key]: key[0] for key in keys}
        frame_entities = list(name_of)
        bridge.extend((eid, r.frame_id) for eid in frame_entities)
        relations.extend(
            (a, b, CO_OCCURRENCE, CO_OCCURRENCE_CONFIDENCE, {"source": "cognify"}, r.frame_id)
            for a, b in combinations(frame_entities, 2)
            if name_of[a] != name_of[b]
        )
        for rel in r.relations:
            src, tgt = by_name.get(rel.source.casefold()), by_name.get(rel.target.casefold())
            if src is not None and tgt is not None:
                relations.append((src, tgt, rel.relation_type, float(rel.confidence),
                                  {"source": "semantic"}, r.frame_id))
    if bridge:
        db.executemany(
            "INSERT OR IGNORE INTO kg_entity_frames(entity_id, frame_id) VALUES (?, ?)", bridge
        )
    return len(set(bridge)), put_relations_sync(db, relations)


async def _nearest(index: VectorIndex, results: Sequence[FrameIndex],
                   found: supersession.Candidates) -> None:
    """Each result's nearest frames go to ``found`` as supersession candidates (module
    docstring). A pair needs a cue on its newer side, so a frame of the batch that carries a cue
    (``found.cues``, from :func:`supersession.gather`) is searched against the whole window, and
    one without only against the stored frames that carry one among the
    :data:`NEAR_WINDOW_ROWS` most recent frames (``found.stored_cued``): about one turn in a
    hundred, so most of a batch scores a few hundred rows where it scored the window."""
    import numpy as np

    cued = [r for r in results if r.frame_id in found.cues]
    plain = [r for r in results if r.frame_id not in found.cues]
    searches: list[tuple[list[FrameIndex], dict[str, Any]]] = [
        (cued, {"window": NEAR_WINDOW_ROWS})]
    if plain and found.stored_cued:
        searches.append((plain, {"allowed": np.asarray(found.stored_cued, dtype=np.int64)}))
    for part, scope in searches:
        if not part:
            continue
        queries = np.stack([_float32(r.vector) for r in part])
        for r, hits in zip(part, await index.search_many(
                queries, supersession.CANDIDATES_PER_FRAME + 1,
                floor=supersession.CANDIDATE_FLOOR, **scope), strict=True):
            for fid, sim in hits:
                found.add(r.frame_id, fid, sim)


def _float32(vector: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.asarray(vector, dtype=np.float32)
