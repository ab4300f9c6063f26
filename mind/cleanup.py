"""Bulk cleanup of a mind: the modes of ``cleanup_entities`` and ``cleanup_frames``.

Entity modes: ``audit`` (read-only report), ``remove_noise`` (retire junk names and their
relations), ``dedup`` (merge duplicates, :mod:`mind.knowledge.dedupe`), ``retire_orphans`` (retire
active entities without an active relation *and* without a frame), ``wipe_all`` (retire every
entity and relation; their history is kept).

Frame modes: ``wipe_imports`` (every imported frame) and ``wipe_all`` (every frame and session).
Both go through the same consistent delete path as a single delete (FTS, vectors, chunks,
bridge rows and outbox follow the frames: no orphaned derived row).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from mind.errors import ValidationError
from mind.frames.forget import Erasure, erase_frames
from mind.knowledge.dedupe import dedupe_by_name
from mind.knowledge.normalizer import find_duplicates, is_noise_name
from mind.storage.db import Database
from mind.timeutil import now_iso
from vocabulary.enums import ENTITY_CLEANUP_MODES, FRAME_WIPES

_ACTIVE: Final = "SELECT id, entity_type, name FROM knowledge_entities WHERE valid_to IS NULL"
_ORPHANS: Final = (
    "SELECT id FROM knowledge_entities e WHERE valid_to IS NULL "
    "AND NOT EXISTS (SELECT 1 FROM knowledge_relations r WHERE r.valid_to IS NULL "
    "  AND (r.source_id = e.id OR r.target_id = e.id)) "
    "AND NOT EXISTS (SELECT 1 FROM kg_entity_frames b WHERE b.entity_id = e.id)"
)


@dataclass(frozen=True, slots=True)
class EntityAudit:
    """``audit``: what ``remove_noise``, ``dedup`` and ``retire_orphans`` would find."""

    total_entities: int
    noise_entities: int
    noise_sample: tuple[str, ...]
    duplicate_groups: int
    duplicate_sample: tuple[tuple[str, ...], ...]
    orphan_entities: int
    action: str = "audit"


@dataclass(frozen=True, slots=True)
class EntitiesDeduped:
    duplicate_groups: int
    entities_merged: int
    action: str = "dedup"


@dataclass(frozen=True, slots=True)
class EntitiesRetired:
    """``remove_noise``, ``retire_orphans`` and ``wipe_all`` (which also counts relations)."""

    action: str
    entities_retired: int
    relations_retired: int | None = None


EntityCleanup = EntityAudit | EntitiesDeduped | EntitiesRetired


@dataclass(frozen=True, slots=True)
class FramesWiped:
    action: str
    erased: Erasure
    warning: str | None = None


async def _retire(db: Database, ids: list[int]) -> int:
    now = now_iso()
    await db.executemany(
        "UPDATE knowledge_relations SET valid_to = ? WHERE valid_to IS NULL "
        "AND (source_id = ? OR target_id = ?)", [(now, i, i) for i in ids])
    await db.executemany(
        "UPDATE knowledge_entities SET valid_to = ? WHERE id = ? AND valid_to IS NULL",
        [(now, i) for i in ids])
    return len(ids)


async def cleanup_entities(db: Database, mode: str) -> EntityCleanup:
    if mode not in ENTITY_CLEANUP_MODES:
        raise ValidationError(f"mode must be one of {list(ENTITY_CLEANUP_MODES)}, got {mode!r}")
    if mode == "dedup":
        result = await dedupe_by_name(db)
        return EntitiesDeduped(result["groups"], result["merged"])
    async with db.transaction():
        rows = await db.fetchall(_ACTIVE)
        noise = [r for r in rows if is_noise_name(r["name"])]
        if mode == "audit":
            groups = [g for g in find_duplicates([(r["name"], r["entity_type"]) for r in rows])
                      if len(g) > 1]
            orphans = await db.fetchall(_ORPHANS)
            return EntityAudit(
                total_entities=len(rows), noise_entities=len(noise),
                noise_sample=tuple(r["name"] for r in noise[:20]),
                duplicate_groups=len(groups),
                duplicate_sample=tuple(tuple(rows[i]["name"] for i in g) for g in groups[:10]),
                orphan_entities=len(orphans),
            )
        if mode == "remove_noise":
            return EntitiesRetired(mode, await _retire(db, [r["id"] for r in noise]))
        if mode == "retire_orphans":
            orphans = [r["id"] for r in await db.fetchall(_ORPHANS)]
            return EntitiesRetired(mode, await _retire(db, orphans))
        relations = await db.fetchval(
            "SELECT count(*) FROM knowledge_relations WHERE valid_to IS NULL")
        retired = await _retire(db, [r["id"] for r in rows])
        return EntitiesRetired(mode, retired, int(relations))


async def wipe_frames(db: Database, mode: str) -> FramesWiped:
    if mode not in FRAME_WIPES:
        raise ValidationError(f"mode must be one of {list(FRAME_WIPES)}, got {mode!r}")
    where = "WHERE source = 'import'" if mode == "wipe_imports" else ""
    async with db.transaction():
        ids = [r[0] for r in await db.fetchall(f"SELECT id FROM memory_frames {where}")]
        erased = await erase_frames(db, ids)  # with their entities and relations (#12 item 5)
        if mode != "wipe_all":
            return FramesWiped(mode, erased)
        await db.execute("DELETE FROM sessions")
        return FramesWiped(mode, erased, "every frame and session of this mind was deleted")
