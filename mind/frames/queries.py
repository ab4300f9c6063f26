"""Read-side queries over frames; usable on the writer or on a read-only connection."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mind.frames.model import FRAME_COLUMNS, Frame
from mind.storage.db import Database, SyncDb
from mind.storage.sqlutil import chunked, placeholders
from mind.timeutil import window_bound

_SELECT = f"SELECT {FRAME_COLUMNS} FROM memory_frames"


def frames_by_id(db: SyncDb, frame_ids: Sequence[int]) -> dict[int, Frame]:
    """The frames with these ids (missing ones left out), in the connection's thread."""
    out: dict[int, Frame] = {}
    for part in chunked(list(dict.fromkeys(frame_ids))):
        for row in db.fetchall(f"{_SELECT} WHERE id IN ({placeholders(len(part))})", part):
            frame = Frame.from_row(row)
            out[frame.id] = frame
    return out


class FrameQueries:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def _frames(self, sql: str, params: Sequence[Any] = ()) -> list[Frame]:
        return [Frame.from_row(r) for r in await self._db.fetchall(sql, params)]

    async def get(self, frame_id: int) -> Frame | None:
        rows = await self._frames(f"{_SELECT} WHERE id = ?", (frame_id,))
        return rows[0] if rows else None

    async def get_many(self, frame_ids: Sequence[int]) -> dict[int, Frame]:
        if not frame_ids:
            return {}
        return await self._db.run(lambda db: frames_by_id(db, frame_ids))

    async def get_latest_i_frame(self, gop_id: str) -> Frame | None:
        rows = await self._frames(
            f"{_SELECT} WHERE gop_id = ? AND frame_type = 'I' ORDER BY t DESC LIMIT 1", (gop_id,)
        )
        return rows[0] if rows else None

    async def get_p_frames_since_last_i(self, gop_id: str) -> list[Frame]:
        return await self._frames(
            f"{_SELECT} WHERE gop_id = ? AND frame_type = 'P' AND t > COALESCE("
            "(SELECT MAX(t) FROM memory_frames WHERE gop_id = ? AND frame_type = 'I'), -1) "
            "ORDER BY t",
            (gop_id, gop_id),
        )

    async def get_gop_frames(self, gop_id: str) -> list[Frame]:
        return await self._frames(f"{_SELECT} WHERE gop_id = ? ORDER BY t", (gop_id,))

    async def reconstruct_state(self, gop_id: str) -> tuple[Frame | None, list[Frame]]:
        """Current state of a session: its latest I-frame and the P-frames after it."""
        return await self.get_latest_i_frame(gop_id), await self.get_p_frames_since_last_i(gop_id)

    async def get_recent(self, limit: int = 50) -> list[Frame]:
        return await self._frames(f"{_SELECT} ORDER BY id DESC LIMIT ?", (limit,))

    async def session_page(self, offset: int, limit: int) -> list[dict[str, Any]]:
        """Sessions by their newest frame, newest first: ``gop_id``, ``frames``, ``first`` and
        ``last`` (source times), ``summary`` (its sessions row's, if any)."""
        rows = await self._db.fetchall(
            "SELECT f.gop_id, f.frames, f.first, f.last, s.summary FROM ("
            "SELECT gop_id, COUNT(*) AS frames, MIN(created_at) AS first, "
            "MAX(created_at) AS last, MAX(id) AS newest FROM memory_frames GROUP BY gop_id "
            "ORDER BY newest DESC LIMIT ? OFFSET ?) AS f "
            "LEFT JOIN sessions AS s ON s.gop_id = f.gop_id ORDER BY f.newest DESC",
            (limit, offset))
        return [dict(row) for row in rows]

    async def in_session(self, gop_id: str, before: int | None, limit: int) -> list[Frame]:
        """A session's frames, newest (highest position) first, those before position
        ``before`` when given."""
        if before is None:
            return await self._frames(
                f"{_SELECT} WHERE gop_id = ? ORDER BY t DESC LIMIT ?", (gop_id, limit))
        return await self._frames(f"{_SELECT} WHERE gop_id = ? AND t < ? ORDER BY t DESC "
                                  "LIMIT ?", (gop_id, before, limit))

    async def get_b_frame_references(self, frame_id: int) -> list[int]:
        rows = await self._db.fetchall(
            "SELECT ref_frame_id FROM frame_references WHERE frame_id = ? ORDER BY position",
            (frame_id,),
        )
        return [r[0] for r in rows]

    async def count(self) -> int:
        return int(await self._db.fetchval("SELECT COUNT(*) FROM memory_frames", default=0))

    async def get_stats(self) -> dict[str, Any]:
        by_type = {
            r[0]: r[1]
            for r in await self._db.fetchall(
                "SELECT frame_type, COUNT(*) FROM memory_frames GROUP BY frame_type"
            )
        }
        by_importance = {
            r[0]: r[1]
            for r in await self._db.fetchall(
                "SELECT importance, COUNT(*) FROM memory_frames GROUP BY importance"
            )
        }
        return {"total": sum(by_type.values()), "by_type": by_type, "by_importance": by_importance}


def time_window_clause(
    since: str | None, until: str | None, column: str = "created_at"
) -> tuple[str, list[str]]:
    """SQL condition + params for an inclusive created_at window (``column`` is ours, not input)."""
    parts: list[str] = []
    params: list[str] = []
    if since:
        parts.append(f"{column} >= ?")
        params.append(window_bound(since, end=False))
    if until:
        parts.append(f"{column} <= ?")
        params.append(window_bound(until, end=True))
    return " AND ".join(parts), params
