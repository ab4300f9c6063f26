"""Harvest bookkeeping in the mind file: sources, their syncs, and resumable runs.

- ``harvest_sources``: one row per source name with counters that accumulate over syncs, the
  last content hash and auto-sync settings. ``display_name`` is what the last import was shown
  as (a client's label, ``upload:<name>``, a path, a masked URL: display only). ``source_path``
  is the only thing ever read again: the path or URL the server read because a local user or a
  client allowed server reads named it; labelled imports (inline data, uploads) leave it as it
  was. ``stale()`` lists auto-sync sources whose interval has passed (the maintenance cron
  re-harvests them from ``source_path``). Schema 10 cleared every ``source_path`` recorded
  before this rule (a label could have become one), so older files fail closed.
- ``harvest_runs``: one row per (source, path, content hash). Each committed batch advances the
  run's ``items_done`` and ``cursor`` *in the same transaction as its frames*, so an
  interrupted import resumes exactly after the last committed batch. Its ``source_path`` is
  display only (the label or path the summary shows).
- Re-keying (:meth:`HarvestStore.adopt_previous_keys`): when an adapter changes how it keys
  turns (Claude Code sessions moved from path-based keys to ``sessionId``), each turn names
  the external id it had before (``PREVIOUS_KEY``); a frame still stored under that id gets the
  new one and moves to the new key's session (the old session, once empty, is removed), in the
  batch's transaction, so the re-import finds it, writes nothing new and leaves no empty session.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from mind.errors import ValidationError
from mind.frames.model import FrameToWrite, NewFrame
from mind.harvest.types import PREVIOUS_KEY
from mind.storage.db import Database
from mind.storage.sqlutil import chunked, placeholders
from mind.timeutil import now_iso

_SOURCE_COLUMNS: Final = (
    "source, display_name, source_path, last_synced_at, items_imported, frames_created, "
    "auto_sync, sync_interval_hours, last_content_hash, created_at"
)
_RUN_COLUMNS: Final = (
    "run_id, source, source_path, content_hash, status, items_done, frames_created, cursor, "
    "error, started_at, updated_at, finished_at"
)
MAX_ERROR_CHARS: Final = 2000


def _source_row(row: Any) -> dict[str, Any]:
    out = dict(row)
    out["auto_sync"] = bool(out["auto_sync"])
    return out


class HarvestStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    # -- sources ----------------------------------------------------------------------------

    async def sources(self) -> list[dict[str, Any]]:
        rows = await self._db.fetchall(
            f"SELECT {_SOURCE_COLUMNS} FROM harvest_sources "
            "ORDER BY last_synced_at IS NULL, last_synced_at DESC, source")
        return [_source_row(r) for r in rows]

    async def source(self, source: str) -> dict[str, Any] | None:
        row = await self._db.fetchone(
            f"SELECT {_SOURCE_COLUMNS} FROM harvest_sources WHERE source = ?", (source,))
        return None if row is None else _source_row(row)

    async def record_sync(
        self, source: str, *, items: int, frames: int, path: str | None = None,
        display_name: str | None = None, content_hash: str | None = None,
        auto_sync: bool | None = None, interval_hours: int | None = None,
    ) -> dict[str, Any]:
        """Upsert the source and add this sync's counters (they accumulate).

        ``path``: a path or URL auto-sync may read again (``None`` keeps the one recorded);
        ``display_name``: what this import is shown as."""
        if interval_hours is not None and interval_hours < 1:
            raise ValidationError("sync interval must be at least 1 hour")
        now = now_iso()
        await self._db.execute(
            "INSERT INTO harvest_sources(source, display_name, source_path, last_synced_at, "
            "items_imported, frames_created, auto_sync, sync_interval_hours, last_content_hash) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(source) DO UPDATE SET "
            "display_name = coalesce(?, display_name), source_path = coalesce(?, source_path), "
            "last_synced_at = excluded.last_synced_at, "
            "items_imported = items_imported + excluded.items_imported, "
            "frames_created = frames_created + excluded.frames_created, "
            "auto_sync = coalesce(?, auto_sync), "
            "sync_interval_hours = coalesce(?, sync_interval_hours), "
            "last_content_hash = coalesce(?, last_content_hash)",
            (source, display_name or source, path, now, items, frames, int(bool(auto_sync)),
             interval_hours or 24, content_hash, display_name, path,
             None if auto_sync is None else int(auto_sync), interval_hours, content_hash),
        )
        found = await self.source(source)
        assert found is not None
        return found

    async def stale(self, now: str | None = None) -> list[dict[str, Any]]:
        """Auto-sync sources never synced or whose interval has passed."""
        rows = await self._db.fetchall(
            f"SELECT {_SOURCE_COLUMNS} FROM harvest_sources WHERE auto_sync = 1 AND "
            "(last_synced_at IS NULL OR strftime('%Y-%m-%dT%H:%M:%fZ', last_synced_at, "
            "'+' || sync_interval_hours || ' hours') <= ?) ORDER BY source",
            (now or now_iso(),))
        return [_source_row(r) for r in rows]

    # -- keys -------------------------------------------------------------------------------

    async def adopt_previous_keys(self, frames: Sequence[FrameToWrite]) -> list[FrameToWrite]:
        """``frames`` without their ``PREVIOUS_KEY`` metadata, after re-keying every stored
        frame that still has a previous key to the new ``external_id`` (unless a frame already
        has the new one). Run inside the writer's transaction, before the frames are saved."""
        out: list[FrameToWrite] = []
        renames: dict[str, tuple[str, str]] = {}
        for frame in frames:
            previous = (frame.metadata or {}).get(PREVIOUS_KEY)
            if previous is None:
                out.append(frame)
                continue
            metadata = {k: v for k, v in (frame.metadata or {}).items() if k != PREVIOUS_KEY}
            out.append(NewFrame.of(frame, metadata))
            if isinstance(previous, str) and frame.external_id and previous != frame.external_id:
                renames[previous] = (frame.external_id, frame.gop_id)
        if renames:
            await self._move(renames)
        return out

    async def _move(self, renames: dict[str, tuple[str, str]]) -> None:
        """Each stored frame of ``renames`` (previous key → new key, new session) takes its new
        key and moves to its new session, numbered after that session's frames; the session is
        created from the old one's row (its title and times stay), and an old session left
        with no frame is removed — so a re-key leaves no empty session behind."""
        stored: dict[str, str] = {}
        for part in chunked(list(renames)):
            rows = await self._db.fetchall(
                "SELECT external_id, gop_id FROM memory_frames WHERE external_id IN "
                f"({placeholders(len(part))})", part)
            stored.update({str(r[0]): str(r[1]) for r in rows})
        moves = [(prev, *renames[prev], stored[prev]) for prev in renames if prev in stored]
        if not moves:
            return
        await self._db.executemany(
            "INSERT OR IGNORE INTO sessions(gop_id, project_id, status, started_at, ended_at, "
            "summary) SELECT ?, project_id, status, started_at, ended_at, summary FROM sessions "
            "WHERE gop_id = ?", list(dict.fromkeys((new, old) for _, _, new, old in moves)))
        await self._db.executemany(
            "UPDATE memory_frames SET external_id = ?1, t = CASE WHEN gop_id = ?2 THEN t ELSE "
            "(SELECT coalesce(max(t), -1) + 1 FROM memory_frames WHERE gop_id = ?2) END, "
            "gop_id = ?2 WHERE external_id = ?3 AND NOT EXISTS "
            "(SELECT 1 FROM memory_frames WHERE external_id = ?1)",
            [(key, gop, prev) for prev, key, gop, _ in moves])
        emptied = {old for *_, old in moves} - {new for _, _, new, _ in moves}
        await self._db.executemany(
            "DELETE FROM sessions WHERE gop_id = ?1 AND NOT EXISTS "
            "(SELECT 1 FROM memory_frames WHERE gop_id = ?1)", [(g,) for g in sorted(emptied)])

    # -- runs -------------------------------------------------------------------------------

    async def run(self, run_id: str) -> dict[str, Any] | None:
        row = await self._db.fetchone(
            f"SELECT {_RUN_COLUMNS} FROM harvest_runs WHERE run_id = ?", (run_id,))
        return None if row is None else dict(row)

    async def runs(self, limit: int = 50) -> list[dict[str, Any]]:
        rows = await self._db.fetchall(
            f"SELECT {_RUN_COLUMNS} FROM harvest_runs ORDER BY updated_at DESC LIMIT ?", (limit,))
        return [dict(r) for r in rows]

    async def progress(
        self, run_id: str, *, source: str, path: str, content_hash: str, items: int,
        frames: int, cursor: str | None,
    ) -> None:
        """Advance a run by one committed batch (creates the run on its first batch)."""
        now = now_iso()
        await self._db.execute(
            "INSERT INTO harvest_runs(run_id, source, source_path, content_hash, items_done, "
            "frames_created, cursor, started_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(run_id) DO UPDATE SET items_done = items_done + excluded.items_done, "
            "frames_created = frames_created + excluded.frames_created, "
            "cursor = excluded.cursor, status = 'running', error = NULL, "
            "updated_at = excluded.updated_at",
            (run_id, source, path, content_hash, items, frames, cursor, now, now),
        )

    async def finish(self, run_id: str, *, status: str, error: str | None = None,
                     source: str = "", path: str = "", content_hash: str = "") -> None:
        if status not in ("completed", "failed"):
            raise ValidationError("a run finishes as completed or failed")
        now = now_iso()
        await self._db.execute(
            "INSERT INTO harvest_runs(run_id, source, source_path, content_hash, status, error, "
            "started_at, updated_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(run_id) DO UPDATE SET status = excluded.status, "
            "error = excluded.error, updated_at = excluded.updated_at, "
            "finished_at = excluded.finished_at",
            (run_id, source, path, content_hash, status,
             None if error is None else error[:MAX_ERROR_CHARS], now, now, now),
        )
