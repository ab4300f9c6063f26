"""Forgetting a frame: every row derived from it goes, and its text is overwritten on disk.

Deleting the frame row does most of it through the schema's cascades and triggers: its FTS
entry (the index deletes in place, ``secure-delete``), the next turn's ``search_context`` (which
quoted it), its vectors and chunk vectors, chunks, outbox row, links, B-frame references,
entity bridge rows and relation sources — and with the last source, every relation cognify
derived only from this frame (``co_occurs_with`` Bob↔Carol after forgetting "Bob Smith is
secretly married to Carol White"). :func:`erase_frame` adds the entities: each one bridged to
the frame (active or retired) that no other frame mentions is erased with all its relations.

Every connection runs with ``secure_delete=ON``, so the freed cells and pages are zeroed;
:func:`scrub_wal` then folds the write-ahead log into the file and truncates it, so the old page
images of the frame do not stay in ``-wal`` either (best effort: a reader in the middle of a
read keeps the log until the next checkpoint).
"""

from __future__ import annotations

import logging

from mind.connection import BUSY_TIMEOUT_MS
from mind.db import Database
from mind.errors import HiveMindError
from mind.knowledge import KnowledgeGraph

log = logging.getLogger(__name__)

# derived relations that lose their last supporting frame when ``?1`` goes
_ONLY_SUPPORTED_BY = (
    "SELECT count(*) FROM relation_sources s JOIN knowledge_relations r ON r.id = s.relation_id "
    "WHERE s.frame_id = ?1 AND r.asserted = 0 AND NOT EXISTS (SELECT 1 FROM relation_sources o "
    "WHERE o.relation_id = s.relation_id AND o.frame_id <> ?1)"
)


async def erase_frame(db: Database, frame_id: int) -> dict[str, int | bool]:
    """Delete a frame with everything derived from it (see the module docstring); returns
    ``{"deleted", "entities_erased", "relations_erased"}``."""
    async with db.transaction():
        mentioned = [int(r[0]) for r in await db.fetchall(
            "SELECT entity_id FROM kg_entity_frames WHERE frame_id = ? ORDER BY entity_id",
            (frame_id,))]
        relations = int(await db.fetchval(_ONLY_SUPPORTED_BY, (frame_id,), default=0))
        _, count = await db.execute("DELETE FROM memory_frames WHERE id = ?", (frame_id,))
        graph, entities = KnowledgeGraph(db), 0
        for entity_id in mentioned:
            if not await graph.get_entity_frames(entity_id):
                relations += (await graph.erase_entity(entity_id))["relations"]
                entities += 1
    return {"deleted": count > 0, "entities_erased": entities, "relations_erased": relations}


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
