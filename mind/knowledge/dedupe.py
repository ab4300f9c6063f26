"""Merge duplicate entities of a mind's knowledge graph (``maintenance dedupe``).

Active entities with the same identity — ``normalize_entity_name(name)`` + folded type, so
"Acme"/"ACME" and "Postgres"/"pg" — are merged, in one transaction, into one survivor: the member
with the most active relations (tie: lowest id). For each duplicate (in id order):

- every active relation is retired and re-created on the survivor, keeping its type,
  confidence, properties, ``valid_from`` and provenance (asserted or derived, and the frames
  that support it); if the survivor already has that active ``(source, target, type)`` the two
  become one (max confidence, survivor's properties win, asserted if either was), and a
  relation that only becomes a self-loop because of the merge is dropped;
- its entity↔frame bridge rows move to the survivor;
- it is retired, with ``properties.merged_into`` = the survivor's id.

The survivor's properties become ``{...duplicates, ...survivor}`` with ``seen_count`` = the sum
over the whole group (every duplicate's, not only the last one's) and ``aliases`` = the
other spellings (unique, in order, never the survivor's own name).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mind.knowledge.graph import copy_sources, put_relation
from mind.knowledge.normalizer import Props, dump_props, find_duplicates, load_props, seen_count
from mind.storage.db import Database
from mind.storage.sqlutil import chunked as chunks
from mind.storage.sqlutil import placeholders
from mind.timeutil import now_iso


def pick_survivor(members: Sequence[tuple[int, int]]) -> int:
    """``(entity_id, active relation count)`` pairs → the id with most relations, then lowest."""
    if not members:
        raise ValueError("a duplicate group has at least one member")
    return min(members, key=lambda m: (-m[1], m[0]))[0]


def _names(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def merge_properties(
    survivor_name: str, survivor: Mapping[str, Any], duplicates: Sequence[tuple[str, Props]]
) -> Props:
    """The survivor's merged properties, given its own and the ``(name, properties)`` of each
    duplicate (later duplicates win over earlier ones; the survivor wins over all)."""
    merged: Props = {}
    for _name, props in duplicates:
        merged.update(props)
    merged.update(survivor)
    merged["seen_count"] = seen_count(survivor) + sum(seen_count(p) for _n, p in duplicates)
    aliases = _names(survivor.get("aliases"))
    for name, props in duplicates:
        aliases += [*_names(props.get("aliases")), name]
    unique = [a for a in dict.fromkeys(aliases) if a != survivor_name]
    if unique:
        merged["aliases"] = unique
    else:
        merged.pop("aliases", None)
    return merged


def repoint(
    source_id: int, target_id: int, duplicate: int, survivor: int
) -> tuple[int, int] | None:
    """New endpoints of a duplicate's relation, or None when the merge would make it a
    self-loop (a relation that already was a self-loop stays one)."""
    src = survivor if source_id == duplicate else source_id
    tgt = survivor if target_id == duplicate else target_id
    if src == tgt and source_id != target_id:
        return None
    return src, tgt


async def _degrees(db: Database, ids: list[int]) -> dict[int, int]:
    """Active relation count (as source plus as target) of each entity id."""
    degree: dict[int, int] = {}
    for part in chunks(ids):
        marks = placeholders(len(part))
        rows = await db.fetchall(
            "SELECT source_id AS id FROM knowledge_relations "
            f"WHERE valid_to IS NULL AND source_id IN ({marks}) UNION ALL "
            "SELECT target_id AS id FROM knowledge_relations "
            f"WHERE valid_to IS NULL AND target_id IN ({marks})",
            [*part, *part],
        )
        for row in rows:
            degree[int(row["id"])] = degree.get(int(row["id"]), 0) + 1
    return degree


async def _absorb(db: Database, duplicate: int, props: Props, survivor: int, now: str) -> None:
    """Move one duplicate's relations and bridge rows onto the survivor, then retire it."""
    rows = await db.fetchall(
        "SELECT id, source_id, target_id, relation_type, confidence, properties, valid_from, "
        "asserted FROM knowledge_relations WHERE valid_to IS NULL "
        "AND (source_id = ? OR target_id = ?) ORDER BY id",
        (duplicate, duplicate),
    )
    for row in rows:
        await db.execute("UPDATE knowledge_relations SET valid_to = ? WHERE id = ?",
                         (now, row["id"]))
        ends = repoint(int(row["source_id"]), int(row["target_id"]), duplicate, survivor)
        if ends is not None:
            moved = await put_relation(db, ends[0], ends[1], row["relation_type"],
                                       float(row["confidence"]), load_props(row["properties"]),
                                       new_props_win=False, valid_from=row["valid_from"],
                                       asserted=bool(row["asserted"]))
            await copy_sources(db, int(row["id"]), moved.id)
    await db.execute(
        "INSERT OR IGNORE INTO kg_entity_frames (entity_id, frame_id) "
        "SELECT ?, frame_id FROM kg_entity_frames WHERE entity_id = ?",
        (survivor, duplicate),
    )
    await db.execute("DELETE FROM kg_entity_frames WHERE entity_id = ?", (duplicate,))
    await db.execute(
        "UPDATE knowledge_entities SET valid_to = ?, properties = ? WHERE id = ?",
        (now, dump_props({**props, "merged_into": survivor}), duplicate),
    )


async def dedupe_by_name(db: Database) -> dict[str, int]:
    """Merge every group of duplicate active entities; returns ``{"groups", "merged"}``
    (groups with more than one member, and duplicates retired)."""
    async with db.transaction():
        rows = await db.fetchall(
            "SELECT id, entity_type, name, properties FROM knowledge_entities "
            "WHERE valid_to IS NULL ORDER BY id"
        )
        groups = [
            [rows[i] for i in group]
            for group in find_duplicates([(row["name"], row["entity_type"]) for row in rows])
            if len(group) > 1
        ]
        degree = await _degrees(db, [int(m["id"]) for group in groups for m in group])
        now, merged = now_iso(), 0
        for members in groups:
            keep = pick_survivor([(int(m["id"]), degree.get(int(m["id"]), 0)) for m in members])
            survivor = next(m for m in members if m["id"] == keep)
            duplicates = [m for m in members if m["id"] != keep]
            for dup in duplicates:
                await _absorb(db, int(dup["id"]), load_props(dup["properties"]), keep, now)
            props = merge_properties(
                survivor["name"],
                load_props(survivor["properties"]),
                [(d["name"], load_props(d["properties"])) for d in duplicates],
            )
            await db.execute(
                "UPDATE knowledge_entities SET properties = ?, recorded_at = ? WHERE id = ?",
                (dump_props(props), now, keep),
            )
            merged += len(duplicates)
    return {"groups": len(groups), "merged": merged}
