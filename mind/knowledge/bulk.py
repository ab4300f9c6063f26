"""Bulk knowledge-graph writes for the cognify pipeline: a handful of statements per batch.

Same identity rules as :meth:`KnowledgeGraph.upsert_entity` (normalized name + folded type,
``seen_count`` counting every sighting, new properties win) and as relation creation (one
active relation per source, target and type; confidence = max; properties merged), but for
hundreds of frames at once. Validation schemas do not apply here (cognify output).

Relations written here are *derived*: each records the frame it was extracted from in
``relation_sources`` and is deleted with its last supporting frame, unless a user asserted it
(see :mod:`mind.knowledge.graph`).

Each write runs on the connection's thread in one round trip (:meth:`Database.run`): the
``*_sync`` functions take a :class:`SyncDb`, so a caller already there (the cognify apply,
:mod:`mind.cognify_apply`) runs a whole batch's graph in one trip; a new entity's insert was a
trip of its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from mind.knowledge.normalizer import (
    dump_props,
    load_props,
    normalize_entity_name,
    normalize_entity_type,
    seen_count,
    text_arg,
)
from mind.storage.db import Database, SyncDb
from mind.storage.sqlutil import chunked, placeholders
from mind.timeutil import now_iso

Key = tuple[str, str]  # (normalized name, folded type)


def entity_key(entity_type: str, name: str) -> Key:
    return normalize_entity_name(text_arg(name, "entity name")), normalize_entity_type(
        text_arg(entity_type, "entity type")
    )


async def upsert_entities(
    db: Database, items: Sequence[tuple[str, str, Mapping[str, Any]]]
) -> dict[Key, int]:
    """Upsert ``(type, name, properties)`` items; returns the entity id of every key."""
    if not items:
        return {}
    return await db.run(lambda sync: upsert_entities_sync(sync, items))


def upsert_entities_sync(
    db: SyncDb, items: Sequence[tuple[str, str, Mapping[str, Any]]]
) -> dict[Key, int]:
    """:func:`upsert_entities` on the connection's thread."""
    if not items:
        return {}
    first: dict[Key, tuple[str, str, dict[str, Any]]] = {}
    sightings: Counter[Key] = Counter()
    for etype, name, props in items:
        key = entity_key(etype, name)
        sightings[key] += 1
        previous = first.get(key)
        merged = {**(previous[2] if previous else {}), **props}
        first[key] = (key[1], name.strip() if previous is None else previous[1], merged)
    ids: dict[Key, int] = {}
    existing: dict[Key, tuple[int, dict[str, Any]]] = {}
    names = sorted({k[0] for k in first})
    for part in chunked(names):
        rows = db.fetchall(
            "SELECT id, normalized_name, entity_type, properties FROM knowledge_entities "
            f"WHERE valid_to IS NULL AND normalized_name IN ({placeholders(len(part))}) "
            "ORDER BY id",
            part,
        )
        for row in rows:
            existing.setdefault((row[1], row[2]), (row[0], load_props(row[3])))
    now = now_iso()
    updates = []
    for key, (etype, name, props) in first.items():
        if key in existing:
            eid, old = existing[key]
            merged = {**old, **props, "seen_count": seen_count(old) + sightings[key]}
            updates.append((dump_props(merged), now, eid))
            ids[key] = eid
        else:
            if sightings[key] > 1:
                props = {**props, "seen_count": sightings[key]}
            ids[key] = int(db.fetchval(
                "INSERT INTO knowledge_entities (entity_type, name, normalized_name, properties, "
                "valid_from, recorded_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (etype, name, key[0], dump_props(props), now, now),
            ))
    if updates:
        db.executemany(
            "UPDATE knowledge_entities SET properties = ?, recorded_at = ? WHERE id = ?", updates
        )
    return ids


DerivedRelation = tuple[int, int, str, float, Mapping[str, Any], int]
"""``(source id, target id, type, confidence, properties, supporting frame id)``."""


def put_relations_sync(db: SyncDb, relations: Sequence[DerivedRelation]) -> int:
    """Insert derived relations (on the connection's thread), folding each into an identical
    active one (confidence = max), and record the frames that support them; returns how many
    distinct relations."""
    unique: dict[tuple[int, int, str], tuple[float, Mapping[str, Any]]] = {}
    sources: set[tuple[int, int, int, str]] = set()
    for src, tgt, rtype, conf, props, frame_id in relations:
        if src == tgt:
            continue
        key = (src, tgt, rtype)
        old = unique.get(key)
        unique[key] = (max(conf, old[0]) if old else conf, {**(old[1] if old else {}), **props})
        sources.add((frame_id, src, tgt, rtype))
    if not unique:
        return 0
    now = now_iso()
    db.executemany(
        "INSERT INTO knowledge_relations (source_id, target_id, relation_type, confidence, "
        "properties, valid_from, recorded_at, asserted) VALUES (?, ?, ?, ?, ?, ?, ?, 0) "
        "ON CONFLICT (source_id, target_id, relation_type) WHERE valid_to IS NULL DO UPDATE SET "
        "confidence = max(confidence, excluded.confidence), "
        "properties = json_patch(properties, excluded.properties)",
        [(s, t, r, c, dump_props(p), now, now) for (s, t, r), (c, p) in unique.items()],
    )
    db.executemany(
        "INSERT OR IGNORE INTO relation_sources (relation_id, frame_id) SELECT id, ? "
        "FROM knowledge_relations WHERE source_id = ? AND target_id = ? AND relation_type = ? "
        "AND valid_to IS NULL",
        sorted(sources),
    )
    return len(unique)
