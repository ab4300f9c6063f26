"""Compaction: old temporary and deprecated frames pruned, updates merged into their I-frame.

* ``temporary`` frames older than ``max_temp_age_days`` and ``deprecated`` frames older than
  ``max_deprecated_age_days`` are deleted — aged by ``recorded_at`` (when the mind learned
  them), never by the source time of an import, and imported frames (source ``import`` or an
  ``external_id``) are never pruned or merged.
* In a session with more than 10 P-frames after its latest I-frame, all but the 5 most recent
  are merged into the I-frame (joined by ``\\n---\\n``). The merged I-frame is re-queued for
  indexing and the merged P-frames are deleted with everything derived from them (triggers and
  cascades), so no stale vector or chunk survives.
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
    iframe = await db.fetchone(
        "SELECT id, t, content FROM memory_frames WHERE gop_id = ? AND frame_type = 'I' "
        "ORDER BY t DESC LIMIT 1",
        (gop_id,),
    )
    if iframe is None:
        return 0
    pframes = await db.fetchall(
        f"SELECT id, content FROM memory_frames WHERE gop_id = ? AND frame_type = 'P' "
        f"AND t > ? AND {NOT_IMPORTED} ORDER BY t",
        (gop_id, iframe[1]),
    )
    if len(pframes) <= COMPACT_PFRAME_THRESHOLD:
        return 0
    to_merge = pframes[: len(pframes) - COMPACT_PFRAME_KEEP]
    content = COMPACT_MERGE_SEPARATOR.join([iframe[2], *(p[1] for p in to_merge)])
    await db.execute(
        "UPDATE memory_frames SET content = ?, content_hash = ? WHERE id = ?",
        (content, hash_frame_content(content), iframe[0]),
    )
    ids = [p[0] for p in to_merge]
    await delete_in(db, "memory_frames", "id", ids)
    return len(ids)
