"""Sessions (GOPs): the buckets every memory frame belongs to.

A frame's ``gop_id`` is a foreign key to ``sessions.gop_id``, so a session must exist before
any frame is written into it: the frame writer creates a named session (``save:YYYY-MM-DD``,
one per imported conversation) idempotently in the same transaction.

Decisions:

- gop ids and project ids are non-blank strings of at most 200 characters without control
  characters (:class:`InvalidIdError`, a :class:`ValidationError`).
- ``close`` keeps an existing summary when none is given, keeps the first ``ended_at`` when the
  session is already closed, and leaves an archived session archived. ``archive`` leaves
  ``ended_at`` untouched.
"""

from __future__ import annotations

import builtins
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

from mind.errors import ConflictError, NotFoundError, ValidationError
from mind.ids import validate_id
from mind.storage.db import Database
from mind.timeutil import now_iso
from vocabulary.enums import SESSION_STATUSES, SessionStatus

_BASE36: Final = "0123456789abcdefghijklmnopqrstuvwxyz"
_SUFFIX_LEN: Final = 6
_COLUMNS: Final = "id, gop_id, project_id, status, started_at, ended_at, summary"
_NEWEST: Final = "ORDER BY started_at DESC, id DESC"


@dataclass(frozen=True, slots=True)
class Session:
    id: int
    gop_id: str
    project_id: str | None
    status: SessionStatus
    started_at: str
    ended_at: str | None
    summary: str | None


def new_gop_id(now: str | None = None) -> str:
    """``session:<house ISO now>:<6 random base-36 chars>``."""
    suffix = "".join(secrets.choice(_BASE36) for _ in range(_SUFFIX_LEN))
    return f"session:{now or now_iso()}:{suffix}"


def _check_project(project_id: object) -> str | None:
    return None if project_id is None else validate_id(project_id, "project_id")


def _check_summary(summary: object) -> str | None:
    if summary is not None and not isinstance(summary, str):
        raise ValidationError("session summary must be a string")
    return summary


def _from_row(row: Any) -> Session:
    return Session(
        id=int(row["id"]),
        gop_id=row["gop_id"],
        project_id=row["project_id"],
        status=cast(SessionStatus, row["status"]),
        started_at=row["started_at"],
        ended_at=row["ended_at"],
        summary=row["summary"],
    )


class SessionStore:
    """Create, find and close the sessions of one mind."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # -- writes -----------------------------------------------------------------------------

    async def create(self, project_id: str | None = None) -> Session:
        project = _check_project(project_id)
        async with self._db.transaction():
            return await self._insert_new(project)

    async def title_untitled(self, titles: Mapping[str, str]) -> None:
        """Give each named session its summary unless it has one (conversation titles of a
        harvest: a re-import never overwrites a summary)."""
        if titles:
            await self._db.executemany(
                "UPDATE sessions SET summary = ? WHERE gop_id = ? AND summary IS NULL",
                [(title, gop) for gop, title in titles.items()])

    async def close(self, gop_id: str, summary: str | None = None) -> Session:
        gop = validate_id(gop_id)
        text = _check_summary(summary)
        async with self._db.transaction():
            _, count = await self._db.execute(
                "UPDATE sessions SET "
                "status = CASE WHEN status = 'archived' THEN 'archived' ELSE 'closed' END, "
                "ended_at = COALESCE(ended_at, ?), summary = COALESCE(?, summary) "
                "WHERE gop_id = ?",
                (now_iso(), text, gop),
            )
            if count == 0:
                raise NotFoundError(f"Session {gop} not found")
            return await self._require(gop)

    async def archive(self, gop_id: str) -> Session:
        gop = validate_id(gop_id)
        async with self._db.transaction():
            _, count = await self._db.execute(
                "UPDATE sessions SET status = 'archived' WHERE gop_id = ?", (gop,)
            )
            if count == 0:
                raise NotFoundError(f"Session {gop} not found")
            return await self._require(gop)

    # -- reads ------------------------------------------------------------------------------

    async def get_by_gop_id(self, gop_id: str) -> Session | None:
        row = await self._db.fetchone(
            f"SELECT {_COLUMNS} FROM sessions WHERE gop_id = ?", (gop_id,)
        )
        return None if row is None else _from_row(row)

    async def list(
        self, limit: int = 50, status: str | None = None
    ) -> builtins.list[Session]:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValidationError("limit must be a positive integer")
        if status is None:
            rows = await self._db.fetchall(
                f"SELECT {_COLUMNS} FROM sessions {_NEWEST} LIMIT ?", (limit,)
            )
        else:
            if status not in SESSION_STATUSES:
                raise ValidationError(
                    f"invalid session status {status!r}: "
                    f"expected one of {', '.join(SESSION_STATUSES)}"
                )
            rows = await self._db.fetchall(
                f"SELECT {_COLUMNS} FROM sessions WHERE status = ? {_NEWEST} LIMIT ?",
                (status, limit),
            )
        return [_from_row(row) for row in rows]

    # -- internals --------------------------------------------------------------------------

    async def _insert_new(self, project_id: str | None) -> Session:
        for _ in range(5):  # a suffix collision within one millisecond is ~1 in 2 billion
            now = now_iso()
            gop = new_gop_id(now)
            _, inserted = await self._db.execute(
                "INSERT OR IGNORE INTO sessions (gop_id, project_id, status, started_at) "
                "VALUES (?, ?, 'active', ?)",
                (gop, project_id, now),
            )
            if inserted == 1:
                return await self._require(gop)
        raise ConflictError("could not allocate a unique session id")  # pragma: no cover

    async def _require(self, gop_id: str) -> Session:
        session = await self.get_by_gop_id(gop_id)
        if session is None:
            raise NotFoundError(f"Session {gop_id} not found")
        return session
