"""The edges of the knowledge graph: relations, the entity↔frame bridge, and BFS traversal.

:class:`mind.knowledge.store.KnowledgeGraph` exposes all of this as methods; the functions here
take the
:class:`Database` so the traversal can also run on a read-only connection.

Active relations are unique per ``(source, target, type)`` (a partial unique index): creating an
existing one returns it with the higher confidence and merged properties.

Provenance: a relation created here is *asserted* (a caller stated it). Relations cognify derives
(:mod:`mind.knowledge.bulk`) are not, and record their supporting frames in ``relation_sources``; a
derived relation is deleted with its last supporting frame (schema migration 9). Asserting a
relation cognify derived makes it asserted for good: forgetting frames no longer removes it.

For traversal, only active relations (``valid_to IS NULL``) between active entities are
followed. Each BFS level is one query per chunk of at most :data:`SQL_IN_CHUNK` node ids.
``direction`` is ``"out"`` (source → target), ``"in"`` (target → source) or ``"both"``.
Distances default to ``"both"``: a frame about Bob is near Acme whether the edge was written as
``Bob works_at Acme`` or ``Acme employs Bob`` (walks follow edges both ways).

Unknown start entities are not an error here: they simply reach nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mind.errors import ConflictError, NotFoundError, ValidationError
from mind.knowledge.normalizer import (
    Props,
    confidence_arg,
    dump_props,
    load_props,
    props_arg,
    text_arg,
)
from mind.storage.db import Database, Row
from mind.storage.sqlutil import chunked as chunks
from mind.storage.sqlutil import placeholders
from mind.timeutil import now_iso

Direction = Literal["out", "in", "both"]
DIRECTIONS: tuple[Direction, ...] = ("out", "in", "both")

_R = ("id, source_id, target_id, relation_type, confidence, properties, valid_from, valid_to, "
      "recorded_at")


@dataclass(slots=True)
class Relation:
    id: int
    source_id: int
    target_id: int
    relation_type: str
    confidence: float
    properties: Props
    valid_from: str
    valid_to: str | None
    recorded_at: str

    @property
    def active(self) -> bool:
        return self.valid_to is None

    @classmethod
    def from_row(cls, row: Row) -> Relation:
        return cls(row["id"], row["source_id"], row["target_id"], row["relation_type"],
                   float(row["confidence"]), load_props(row["properties"]), row["valid_from"],
                   row["valid_to"], row["recorded_at"])


# (from column, to column) for each way an edge can be walked.
_OUT, _IN = ("source_id", "target_id"), ("target_id", "source_id")
_WAYS: dict[str, tuple[tuple[str, str], ...]] = {"out": (_OUT,), "in": (_IN,), "both": (_OUT, _IN)}


# -- relations ---------------------------------------------------------------------------------


async def put_relation(
    db: Database, source_id: int, target_id: int, relation_type: str, confidence: float,
    props: Mapping[str, Any], *, new_props_win: bool = True, valid_from: str | None = None,
    asserted: bool = True,
) -> Relation:
    """Insert an active relation, or fold into the identical active one: confidence = max,
    properties merged (the new ones win unless ``new_props_win`` is false), asserted if either
    is. Caller checks."""
    row = await db.fetchone(
        f"SELECT {_R}, asserted FROM knowledge_relations WHERE source_id = ? AND target_id = ? "
        "AND relation_type = ? AND valid_to IS NULL", (source_id, target_id, relation_type))
    now = now_iso()
    if row is None:
        row = await db.fetchone(
            "INSERT INTO knowledge_relations (source_id, target_id, relation_type, confidence, "
            "properties, valid_from, recorded_at, asserted) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            f"RETURNING {_R}",
            (source_id, target_id, relation_type, confidence, dump_props(props),
             valid_from or now, now, int(asserted)))
        return Relation.from_row(row)
    old = load_props(row["properties"])
    merged = {**old, **props} if new_props_win else {**props, **old}
    if confidence > row["confidence"] or merged != old or asserted > row["asserted"]:
        row = await db.fetchone(
            "UPDATE knowledge_relations SET confidence = max(confidence, ?), properties = ?, "
            f"recorded_at = ?, asserted = max(asserted, ?) WHERE id = ? RETURNING {_R}",
            (confidence, dump_props(merged), now, int(asserted), row["id"]))
    return Relation.from_row(row)


async def copy_sources(db: Database, from_relation: int, to_relation: int) -> None:
    """``to_relation`` is supported by every frame that supports ``from_relation`` too."""
    await db.execute(
        "INSERT OR IGNORE INTO relation_sources (relation_id, frame_id) "
        "SELECT ?, frame_id FROM relation_sources WHERE relation_id = ?",
        (to_relation, from_relation))


async def create_relation(
    db: Database, source_id: int, target_id: int,
    relation_type: str, confidence: float = 1.0, properties: Mapping[str, Any] | None = None,
) -> Relation:
    """A validated relation between two active entities (:class:`NotFoundError` otherwise),
    deduplicated on ``(source, target, type)``."""
    rtype, conf, props = text_arg(relation_type, "relation type"), confidence_arg(
        confidence), props_arg(properties)
    async with db.transaction():
        rows = await db.fetchall(
            "SELECT id, entity_type, valid_to FROM knowledge_entities WHERE id IN (?, ?)",
            (source_id, target_id))
        found = {row["id"]: row for row in rows}
        for entity_id in (source_id, target_id):
            if entity_id not in found:
                raise NotFoundError(f"entity {entity_id} not found")
            if found[entity_id]["valid_to"] is not None:
                raise NotFoundError(f"entity {entity_id} is retired")
        return await put_relation(db, source_id, target_id, rtype, conf, props)


async def get_relations(
    db: Database, entity_id: int, relation_type: str | None, direction: Direction
) -> list[Relation]:
    """Active relations leaving (``out``), entering (``in``) or touching (``both``) an entity."""
    _check(0, direction)
    relation_type = None if relation_type is None else " ".join(relation_type.split())
    clause = {"out": "source_id = ?1", "in": "target_id = ?1",
              "both": "(source_id = ?1 OR target_id = ?1)"}[direction]
    rows = await db.fetchall(
        f"SELECT {_R} FROM knowledge_relations WHERE {clause} AND valid_to IS NULL "
        "AND (?2 IS NULL OR relation_type = ?2) ORDER BY id", (entity_id, relation_type))
    return [Relation.from_row(row) for row in rows]


async def relation_history(db: Database, entity_id: int, limit: int) -> list[Relation]:
    """Every relation touching an entity, retired ones too, the latest valid first."""
    rows = await db.fetchall(
        f"SELECT {_R} FROM knowledge_relations WHERE source_id = ?1 "
        f"UNION SELECT {_R} FROM knowledge_relations WHERE target_id = ?1 "
        "ORDER BY valid_from DESC, id DESC LIMIT ?2", (entity_id, limit))
    return [Relation.from_row(row) for row in rows]


async def retire_relation(db: Database, relation_id: int) -> Relation:
    """End a relation's validity now (idempotent); :class:`NotFoundError` if unknown."""
    async with db.transaction():
        row = await db.fetchone(
            "UPDATE knowledge_relations SET valid_to = coalesce(valid_to, ?) WHERE id = ? "
            f"RETURNING {_R}", (now_iso(), relation_id))
    if row is None:
        raise NotFoundError(f"relation {relation_id} not found")
    return Relation.from_row(row)


# -- entity↔frame bridge -----------------------------------------------------------------------


async def link_entities_to_frames(db: Database, pairs: Iterable[tuple[int, int]]) -> int:
    """Bridge rows for ``(entity_id, frame_id)`` pairs (existing ones ignored); returns how many
    were new. An unknown entity or frame fails the whole batch with :class:`NotFoundError`."""
    rows = [(int(entity_id), int(frame_id)) for entity_id, frame_id in pairs]
    if not rows:
        return 0
    try:
        async with db.transaction():
            return await db.executemany(
                "INSERT OR IGNORE INTO kg_entity_frames (entity_id, frame_id) VALUES (?, ?)", rows)
    except ConflictError as exc:
        raise NotFoundError(f"unknown entity or frame in bridge links ({exc})") from None


# -- traversal ---------------------------------------------------------------------------------


def _check(max_depth: int, direction: str) -> None:
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0:
        raise ValidationError(f"max_depth must be a non-negative integer, got {max_depth!r}")
    if direction not in DIRECTIONS:
        raise ValidationError(f"direction must be one of {DIRECTIONS}, got {direction!r}")


def _level_sql(way: tuple[str, str], count: int, typed: bool) -> str:
    src, dst = way  # column names from the fixed table above, never from callers
    type_clause = " AND r.relation_type = ?" if typed else ""
    return (
        f"SELECT r.{src} AS node, r.{dst} AS nb, r.id AS rid FROM knowledge_relations r "
        f"JOIN knowledge_entities e ON e.id = r.{dst} AND e.valid_to IS NULL "
        f"WHERE r.valid_to IS NULL AND r.{src} IN ({placeholders(count)}){type_clause}"
    )


async def _expand(
    db: Database, frontier: list[int], relation_type: str | None, direction: str
) -> dict[int, list[tuple[int, int]]]:
    """Neighbours of every frontier node: node -> [(relation id, neighbour)].

    One statement per chunk of the frontier (a UNION ALL when walking both ways).
    """
    found: dict[int, list[tuple[int, int]]] = {}
    typed = relation_type is not None
    relation_type = None if relation_type is None else " ".join(relation_type.split())
    for part in chunks(frontier):
        ways = _WAYS[direction]
        sql = " UNION ALL ".join(_level_sql(way, len(part), typed) for way in ways)
        params: list[object] = []
        for _way in ways:
            params.extend(part)
            if typed:
                params.append(relation_type)
        for row in await db.fetchall(sql, params):
            found.setdefault(int(row["node"]), []).append((int(row["rid"]), int(row["nb"])))
    return found


async def bfs(
    db: Database,
    seeds: Iterable[int],
    max_depth: int,
    *,
    relation_type: str | None = None,
    direction: Direction = "both",
) -> dict[int, int]:
    """Multi-source BFS: ``{entity_id: distance}`` in BFS order, the seeds at distance 0.

    Within a level, nodes are expanded in frontier order and their neighbours in relation-id
    order, so the result order is deterministic.
    """
    _check(max_depth, direction)
    dist: dict[int, int] = {}
    for seed in seeds:
        dist.setdefault(int(seed), 0)
    frontier = list(dist)
    depth = 0
    while frontier and depth < max_depth:
        depth += 1
        neighbours = await _expand(db, frontier, relation_type, direction)
        nxt: list[int] = []
        for node in frontier:
            for _rid, nb in sorted(neighbours.get(node, ())):
                if nb not in dist:
                    dist[nb] = depth
                    nxt.append(nb)
        frontier = nxt
    return dist


async def traverse(
    db: Database,
    start_id: int,
    relation_type: str | None,
    max_depth: int,
    direction: Direction = "out",
) -> list[int]:
    """Ids of the active entities reachable from ``start_id`` within ``max_depth`` hops over
    relations of ``relation_type`` (``None`` = any type), in BFS order, start excluded."""
    dist = await bfs(db, [start_id], max_depth, relation_type=relation_type, direction=direction)
    return [node for node, d in dist.items() if d > 0]


async def bfs_distances(
    db: Database, start_id: int, max_depth: int, direction: Direction = "both"
) -> dict[int, int]:
    """``{entity_id: hops}`` (1..max_depth) over relations of any type, start excluded."""
    dist = await bfs(db, [start_id], max_depth, direction=direction)
    return {node: d for node, d in dist.items() if d > 0}


async def frame_distances_from_entities(
    db: Database, seeds: Iterable[int], max_depth: int = 3, direction: Direction = "both"
) -> dict[int, int]:
    """``{frame_id: min distance}``: every frame bridged to an entity at BFS distance ``d`` from
    the nearest seed (seeds themselves at 0) gets ``d``; the smallest distance wins."""
    dist = await bfs(db, seeds, max_depth, direction=direction)
    frames: dict[int, int] = {}
    ids = list(dist)
    for part in chunks(ids):
        rows = await db.fetchall(
            "SELECT entity_id, frame_id FROM kg_entity_frames "
            f"WHERE entity_id IN ({placeholders(len(part))})",
            list(part),
        )
        for row in rows:
            d = dist[int(row["entity_id"])]
            frame_id = int(row["frame_id"])
            if d < frames.get(frame_id, d + 1):
                frames[frame_id] = d
    return frames


SESSION_SCAN_LIMIT = 20_000  # frames read to find the graph-nearest frame of a few sessions


async def with_session_proximity(
    db: Database, candidates: Mapping[int, str], distances: Mapping[int, int]
) -> dict[int, int]:
    """``distances`` extended to ``candidates`` (frame id → session id) through their session:
    a frame whose session holds a frame at distance ``d`` gets at most ``d + 1``. A message that
    says "she's 13.5 kg now" is about the dog its conversation named, though it names nobody.
    Callers leave out sessions that are not conversations (the daily bucket of loose saves)."""
    out = dict(distances)
    sessions = sorted({gop for fid, gop in candidates.items() if out.get(fid) != 0})
    if not sessions or not distances:
        return out
    best: dict[str, int] = {}
    for part in chunks(sessions):
        rows = await db.fetchall(  # the frame_type prefix lets idx_frames_type_gop serve it
            "SELECT id, gop_id FROM memory_frames WHERE frame_type IN ('I', 'P', 'B') "
            f"AND gop_id IN ({placeholders(len(part))}) LIMIT {SESSION_SCAN_LIMIT}", list(part))
        for row in rows:
            d = distances.get(int(row["id"]))
            if d is not None and d < best.get(row["gop_id"], d + 1):
                best[row["gop_id"]] = d
    for fid, gop in candidates.items():
        if gop in best and best[gop] + 1 < out.get(fid, best[gop] + 2):
            out[fid] = best[gop] + 1
    return out
