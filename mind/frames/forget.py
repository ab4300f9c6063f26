"""Forgetting a frame: every row derived from it goes, and its text is overwritten on disk.

Deleting the frame row does most of it through the schema's cascades and triggers: its FTS
entry (the index deletes in place, ``secure-delete``), the next turn's ``search_context`` (which
quoted it), its vectors and chunk vectors, chunks, outbox row, supersession pairs and cue
(either end: the older statement becomes current again), B-frame references,
entity bridge rows and relation sources — and with the last source, every relation cognify
derived only from this frame (``co_occurs_with`` Bob↔Carol after forgetting "Bob Smith is
secretly married to Carol White"). :func:`erase_frames` adds the entities: each one bridged to
a deleted frame (active or retired) that no other frame mentions is erased with all its
relations. A forget and a frame wipe (``cleanup_frames``) both come here; compaction's pruning
of old temporary frames runs the same triggers (its entities stay, as ``retire_orphans`` finds
them).

Every connection runs with ``secure_delete=ON``, so the freed cells and pages are zeroed;
:func:`scrub_wal` then folds the write-ahead log into the file and truncates it, so the old page
images of the frame do not stay in ``-wal`` either (best effort: a reader in the middle of a
read keeps the log until the next checkpoint).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from mind.errors import HiveMindError
from mind.storage import idempotency
from mind.storage.connection import BUSY_TIMEOUT_MS
from mind.storage.db import Database
from mind.storage.sqlutil import chunked, delete_in, placeholders

log = logging.getLogger(__name__)


async def _select_ids(db: Database, sql: str, ids: Sequence[int], *more: object) -> set[int]:
    """The first column of ``sql`` (one ``{marks}`` placeholder list, then ``more``
    parameters) over chunks of ``ids``."""
    found: set[int] = set()
    for part in chunked(list(ids)):
        rows = await db.fetchall(sql.format(marks=placeholders(len(part))), [*part, *more])
        found.update(int(r[0]) for r in rows)
    return found


async def _relations_losing_support(db: Database, frame_ids: set[int]) -> int:
    """Derived relations whose every supporting frame is in ``frame_ids``."""
    touched = await _select_ids(
        db, "SELECT DISTINCT s.relation_id FROM relation_sources s JOIN knowledge_relations r "
        "ON r.id = s.relation_id WHERE r.asserted = 0 AND s.frame_id IN ({marks})",
        sorted(frame_ids))
    kept = await _select_ids(
        db, "SELECT relation_id FROM relation_sources WHERE relation_id IN ({marks}) "
        "AND frame_id NOT IN (SELECT value FROM json_each(?))",
        sorted(touched), json.dumps(sorted(frame_ids)))
    return len(touched - kept)


@dataclass(frozen=True, slots=True)
class Erasure:
    """What a forget or a frame wipe deleted."""

    frames: int
    entities_erased: int
    relations_erased: int

    @property
    def deleted(self) -> bool:
        return self.frames > 0


async def erase_frames(db: Database, frame_ids: Sequence[int]) -> Erasure:
    """Delete frames with everything derived from them (see the module docstring)."""
    ids = sorted({int(i) for i in frame_ids})
    async with db.transaction():
        mentioned = await _select_ids(
            db, "SELECT entity_id FROM kg_entity_frames WHERE frame_id IN ({marks})", ids)
        relations = await _relations_losing_support(db, set(ids))
        frames = await delete_in(db, "memory_frames", "id", ids)
        await idempotency.retract(db, "frames", ids)  # a keyed save's result names it
        orphans = sorted(mentioned - await _select_ids(
            db, "SELECT entity_id FROM kg_entity_frames WHERE entity_id IN ({marks})",
            sorted(mentioned)))
        relations += await delete_in(db, "knowledge_relations", "source_id", orphans)
        relations += await delete_in(db, "knowledge_relations", "target_id", orphans)
        entities = await delete_in(db, "knowledge_entities", "id", orphans)
    return Erasure(frames, entities, relations)


async def erase_frame(db: Database, frame_id: int) -> Erasure:
    """:func:`erase_frames` of one frame (``deleted`` is False when there was none)."""
    return await erase_frames(db, [frame_id])


async def scrub_wal(db: Database) -> bool:
    """Checkpoint the WAL into the file and truncate it, without waiting for readers (outside
    any transaction). True if the log is now empty."""
    try:
        await db.execute("PRAGMA busy_timeout=0")
        try:
            row = await db.fetchone("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            await db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    except HiveMindError as exc:
        log.info("mind %s: WAL not truncated after a forget (%s)", db.path, exc)
        return False
    return row is not None and int(row[0]) == 0
