"""Compaction: old temporary and deprecated frames pruned, updates merged into their I-frame.

* ``temporary`` frames older than ``max_temp_age_days`` and ``deprecated`` frames older than
  ``max_deprecated_age_days`` are deleted — aged by ``recorded_at`` (when the mind learned
  them), never by the source time of an import, and imported frames (source ``import`` or an
  ``external_id``) are never pruned or merged.
* In a session with more than 10 P-frames, all but the 5 most recent are merged into their
  base I-frames (an I-frame's content, then its deltas in turn order, joined by
  ``\\n---\\n``). A merged I-frame is re-queued for indexing and the merged P-frames are
  deleted with everything derived from them (triggers and cascades), so no stale vector or
  chunk survives. A P-frame whose base was forgotten, or an imported one, is left as it is.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from mind.constants import COMPACT_MERGE_SEPARATOR, COMPACT_PFRAME_KEEP, COMPACT_PFRAME_THRESHOLD
from mind.frames.content_hash import hash_frame_content
from mind.storage.db import Database
from mind.storage.sqlutil import delete_in
from mind.timeutil import days_ago_iso
from vocabulary.limits import COMPACT_DEPRECATED_DAYS, COMPACT_TEMP_DAYS

NOT_IMPORTED = "source <> 'import' AND external_id IS NULL"


@dataclass(frozen=True, slots=True)
class CompactResult:
    temporary_pruned: int
    deprecated_pruned: int
    pframes_merged: int

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


async def compact(
    db: Database,
    max_temp_age_days: float = COMPACT_TEMP_DAYS,
    max_deprecated_age_days: float = COMPACT_DEPRECATED_DAYS,
) -> CompactResult:
    async with db.transaction():
        temporary = await _prune(db, "temporary", max_temp_age_days)
        deprecated = await _prune(db, "deprecated", max_deprecated_age_days)
        merged = 0
        gops = await db.fetchall(
            f"SELECT gop_id FROM memory_frames WHERE frame_type = 'P' AND {NOT_IMPORTED} "
            "GROUP BY gop_id HAVING COUNT(*) > ?",
            (COMPACT_PFRAME_THRESHOLD,),
        )
        for (gop_id,) in gops:
            merged += await _merge_gop(db, gop_id)
    return CompactResult(temporary, deprecated, merged)


async def _prune(db: Database, importance: str, days: float) -> int:
    _, n = await db.execute(
        f"DELETE FROM memory_frames WHERE importance = ? AND recorded_at < ? AND {NOT_IMPORTED}",
        (importance, days_ago_iso(days)),
    )
    return n


async def _merge_gop(db: Database, gop_id: str) -> int:
    """Merge all but the session's :data:`COMPACT_PFRAME_KEEP` most recent P-frames into their
    base I-frames (each into its own, in turn order); returns how many were merged."""
    pframes = await db.fetchall(
        "SELECT p.id, p.base_frame_id, p.content FROM memory_frames p "
        "JOIN memory_frames b ON b.id = p.base_frame_id AND b.frame_type = 'I' "
        "WHERE p.gop_id = ? AND p.frame_type = 'P' AND p.source <> 'import' "
        "AND p.external_id IS NULL AND b.source <> 'import' AND b.external_id IS NULL ORDER BY p.t",
        (gop_id,),
    )
    if len(pframes) <= COMPACT_PFRAME_THRESHOLD:
        return 0
    to_merge = pframes[: len(pframes) - COMPACT_PFRAME_KEEP]
    deltas: dict[int, list[str]] = {}
    for _, base, content in to_merge:
        deltas.setdefault(base, []).append(content)
    for base, contents in deltas.items():
        current = await db.fetchval("SELECT content FROM memory_frames WHERE id = ?", (base,))
        content = COMPACT_MERGE_SEPARATOR.join([current, *contents])
        await db.execute(
            "UPDATE memory_frames SET content = ?, content_hash = ? WHERE id = ?",
            (content, hash_frame_content(content), base),
        )
    await delete_in(db, "memory_frames", "id", [p[0] for p in to_merge])
    return len(to_merge)
