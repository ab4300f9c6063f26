"""The ``pending_index`` outbox: frames whose derived indexes (vectors, chunks, entities) are
not yet built. Rows are written in the same transaction as the frame, so the mind file itself
is the source of truth for "what still needs indexing"; queues are only transport.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from mind.constants import OUTBOX_HANDED
from mind.storage.db import Database, SyncDb
from mind.storage.sqlutil import chunked, delete_in, placeholders
from mind.timeutil import days_ago_iso, now_iso, parse_stored


@dataclass(frozen=True, slots=True)
class PendingItem:
    frame_id: int
    reason: str
    enqueued_at: str
    attempts: int
    last_error: str | None


def last_frame(db: SyncDb) -> int:
    """The newest frame id (0: none); frames written later have greater ids."""
    return int(db.fetchval("SELECT MAX(id) FROM memory_frames", default=0))


def hand_off(db: SyncDb, after: int) -> list[int]:
    """Mark the new frames after frame ``after`` (the ones this transaction wrote) as handed
    to another process to index (:mod:`actors.handoff`); their ids."""
    return [int(r[0]) for r in db.fetchall(
        f"UPDATE pending_index SET reason = '{OUTBOX_HANDED}' "
        "WHERE frame_id > ? AND reason = 'new' RETURNING frame_id", (after,))]


def claim_handed(db: SyncDb) -> list[int]:
    """Take the frames other processes handed over (back to ``new``: this process indexes
    them); their ids, in order."""
    return sorted(int(r[0]) for r in db.fetchall(
        f"UPDATE pending_index SET reason = 'new' WHERE reason = '{OUTBOX_HANDED}' "
        "RETURNING frame_id"))


def _waiting(db: SyncDb, frame_ids: Sequence[int]) -> list[tuple[int, str]]:
    return [(int(r[0]), str(r[1])) for part in chunked(frame_ids) for r in db.fetchall(
        f"SELECT frame_id, reason FROM pending_index WHERE frame_id IN "
        f"({placeholders(len(part))})", part)]


class Outbox:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def count(self) -> int:
        return int(await self._db.fetchval("SELECT COUNT(*) FROM pending_index", default=0))

    async def handed(self) -> bool:
        """Whether another process handed frames over that nobody claimed yet."""
        return bool(await self._db.fetchval(
            f"SELECT EXISTS(SELECT 1 FROM pending_index WHERE reason = '{OUTBOX_HANDED}')",
            default=0))

    async def extent(self) -> tuple[int, int]:
        """How many rows the outbox holds, and the newest frame id among them (0: none)."""
        row = await self._db.fetchone("SELECT COUNT(*), MAX(frame_id) FROM pending_index")
        return (int(row[0]), int(row[1] or 0)) if row else (0, 0)

    async def waiting_after(self, after: int, upto: int, limit: int) -> dict[int, str]:
        """Pending frames above ``after`` and at most ``upto``, in id order, ``limit`` of
        them, each with its reason: one piece of a backlog read with a cursor
        (:mod:`workers.backlog`)."""
        return {int(r[0]): str(r[1]) for r in await self._db.fetchall(
            "SELECT frame_id, reason FROM pending_index WHERE frame_id > ? AND frame_id <= ? "
            "ORDER BY frame_id LIMIT ?", (after, upto, limit))}

    async def waiting(self, frame_ids: Sequence[int]) -> dict[int, str]:
        """Those of ``frame_ids`` (a piece: at most a few thousand) still pending, in id order,
        each with its reason."""
        return dict(sorted(await self._db.run(lambda db: _waiting(db, frame_ids))))

    async def oldest_age_seconds(self) -> float | None:
        """How long the oldest pending row has waited (None: nothing pending)."""
        oldest = await self._db.fetchval("SELECT MIN(enqueued_at) FROM pending_index")
        if oldest is None:
            return None
        return max(0.0, (datetime.now(UTC) - parse_stored(str(oldest))).total_seconds())

    async def holds(self, frame_ids: Sequence[int]) -> bool:
        """Whether any of ``frame_ids`` (a few: one save's) is still waiting to be indexed."""
        ids = list(frame_ids)[:500]
        if not ids:
            return False
        marks = ",".join("?" * len(ids))
        return bool(await self._db.fetchval(
            f"SELECT EXISTS(SELECT 1 FROM pending_index WHERE frame_id IN ({marks}))", ids,
            default=0))

    async def pending(
        self, limit: int = 500, *, older_than_seconds: float | None = None, after_id: int = 0
    ) -> list[PendingItem]:
        """Oldest-first pending rows; ``older_than_seconds`` keeps only stale ones."""
        sql = (
            "SELECT frame_id, reason, enqueued_at, attempts, last_error FROM pending_index "
            "WHERE frame_id > ?"
        )
        params: list[object] = [after_id]
        if older_than_seconds is not None:
            sql += " AND enqueued_at <= ?"
            params.append(days_ago_iso(older_than_seconds / 86400))
        sql += " ORDER BY frame_id LIMIT ?"
        params.append(limit)
        return [PendingItem(*r) for r in await self._db.fetchall(sql, params)]

    async def enqueue(self, frame_ids: Sequence[int], reason: str = "requeue") -> int:
        now = now_iso()
        async with self._db.transaction():
            return await self._db.executemany(
                "INSERT OR REPLACE INTO pending_index(frame_id, reason, enqueued_at, attempts) "
                "SELECT id, ?, ?, 0 FROM memory_frames WHERE id = ?",
                [(reason, now, fid) for fid in frame_ids],
            )

    async def clear(self, frame_ids: Sequence[int]) -> int:
        async with self._db.transaction():
            return await delete_in(self._db, "pending_index", "frame_id", frame_ids)

    async def touch(self, frame_ids: Sequence[int]) -> None:
        """Mark rows as re-sent now (the reconcile sweep does this when it re-enqueues)."""
        now = now_iso()
        async with self._db.transaction():
            await self._db.executemany(
                "UPDATE pending_index SET enqueued_at = ?, attempts = attempts + 1 "
                "WHERE frame_id = ?",
                [(now, fid) for fid in frame_ids],
            )

