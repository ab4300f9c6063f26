"""Layer 1 — awareness: the mind's short-term working state (≤ 10 live items).

Decisions:

- **Liveness.** An item is live while ``expires_at IS NULL OR expires_at > now``; both sides are
  house-format strings (``expires_at`` is normalized on write), so the comparison is a time
  comparison. Reads never return expired items. Expired items are deleted lazily, at the start of
  every write (``add``, ``update``, ``remove``, ``clear*``), so writing to an
  item that has expired behaves as if it were gone (``NotFoundError`` / ``False``).
- **The cap is enforced on write**, not only on reads. After ``add`` there are at
  most :data:`AWARENESS_MAX_ITEMS` live items: if the new item would make it 11, the
  lowest-priority live item among the *others* is removed, ties going to the oldest
  (``created_at``, then ``id``). The item being added is always kept — the caller just said it
  matters, and awareness is a rolling window. Reads still apply ``LIMIT 10`` defensively.
- ``update(id, expires_at=None)`` clears the expiry (makes the item permanent); ``content`` and
  ``priority`` given as ``None`` are left unchanged. Columns come from a fixed list.
- ``get(id)`` returns ``None`` for an unknown or expired item. ``add`` accepts an ``expires_at``
  already in the past (the item is simply never live).
- ``content`` must be non-blank text of at most :data:`MAX_AWARENESS_CHARS` characters,
  ``priority`` a 64-bit ``int`` (the public surfaces take 0-10), ``metadata`` a
  JSON-serializable ``dict`` of at most :data:`MAX_JSON_BYTES`; item ids are SQLite integers
  (``1 … 2**63-1``, else :class:`ValidationError`). Stored metadata that is not a JSON object
  reads back as ``{}`` (tolerant parse).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Final, cast

from mind.bounds import bounded_int, bounded_json, bounded_text, row_id
from mind.constants import AWARENESS_MAX_ITEMS
from mind.errors import NotFoundError, ValidationError
from mind.storage import idempotency
from mind.storage.db import Database
from mind.storage.jsonfields import dump_object, load_object
from mind.timeutil import normalize_ts, now_iso
from vocabulary.enums import AWARENESS_CATEGORIES, AwarenessCategory
from vocabulary.limits import INT64_MAX, MAX_AWARENESS_CHARS, MAX_JSON_BYTES

log = logging.getLogger(__name__)

_SECTIONS: Final = (
    ("task", "Active Tasks:"), ("action", "Recent Actions:"),
    ("pending", "Pending Items:"), ("flag", "Context Flags:"),
)
_EMPTY_CONTEXT: Final = "No active awareness items."
_COLUMNS: Final = "id, category, content, priority, metadata, created_at, expires_at"
_LIVE: Final = "(expires_at IS NULL OR expires_at > ?)"
_ORDER: Final = "ORDER BY priority DESC, id ASC"


class _Unset:
    """Marker for "argument not given" where ``None`` has a meaning."""


UNSET: Final = _Unset()


@dataclass(frozen=True, slots=True)
class AwarenessItem:
    id: int
    category: AwarenessCategory
    content: str
    priority: int
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    expires_at: str | None = None


parse_metadata = load_object


def _check_category(category: object) -> AwarenessCategory:
    if category not in AWARENESS_CATEGORIES:
        raise ValidationError(
            f"invalid awareness category {category!r}: "
            f"expected one of {', '.join(AWARENESS_CATEGORIES)}"
        )
    return category


def _check_content(content: object) -> str:
    if not isinstance(content, str) or not content.strip():
        raise ValidationError("awareness content must be non-empty text")
    return bounded_text(content, "awareness content", MAX_AWARENESS_CHARS)


def _check_priority(priority: object) -> int:
    return bounded_int(priority, "awareness priority", -INT64_MAX, INT64_MAX)


def _check_expiry(expires_at: object) -> str | None:
    if expires_at is None or isinstance(expires_at, str):
        return None if expires_at is None else normalize_ts(expires_at)
    raise ValidationError("expires_at must be an ISO-8601 timestamp string or None")


def _dump_metadata(metadata: object) -> str:
    if not isinstance(metadata, dict):
        raise ValidationError("awareness metadata must be a dict")
    bounded_json(metadata, "awareness metadata", MAX_JSON_BYTES)
    return dump_object(metadata, "awareness metadata")


def _from_row(row: Any) -> AwarenessItem:
    return AwarenessItem(
        id=int(row["id"]),
        category=cast(AwarenessCategory, row["category"]),
        content=row["content"],
        priority=int(row["priority"]),
        metadata=parse_metadata(row["metadata"]),
        created_at=row["created_at"],
        expires_at=row["expires_at"],
    )


class AwarenessLayer:
    """Add, read, update and expire the mind's working-state items."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # -- writes -----------------------------------------------------------------------------

    async def add(
        self,
        category: str,
        content: str,
        priority: int = 0,
        expires_at: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> AwarenessItem:
        cat = _check_category(category)
        text = _check_content(content)
        prio = _check_priority(priority)
        expiry = _check_expiry(expires_at)
        meta = _dump_metadata({} if metadata is None else metadata)
        async with self._db.transaction():
            now = await self._purge_expired()
            new_id, _ = await self._db.execute(
                "INSERT INTO awareness (category, content, priority, metadata, created_at, "
                "expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                (cat, text, prio, meta, now, expiry),
            )
            await self._enforce_cap(new_id, now)
            return await self._require(new_id, live_only=False)

    async def update(
        self,
        item_id: int,
        content: str | None = None,
        priority: int | None = None,
        expires_at: str | _Unset | None = UNSET,
    ) -> AwarenessItem:
        """Change content / priority / expiry; ``expires_at=None`` clears the expiry."""
        # Fixed column list: caller input only ever becomes a bound parameter.
        changes: list[tuple[str, object]] = []
        if content is not None:
            changes.append(("content", _check_content(content)))
        if priority is not None:
            changes.append(("priority", _check_priority(priority)))
        if not isinstance(expires_at, _Unset):
            changes.append(("expires_at", _check_expiry(expires_at)))
        async with self._db.transaction():
            await self._purge_expired()
            current = await self._require(item_id)
            if not changes:
                return current
            assignments = ", ".join(f"{column} = ?" for column, _ in changes)
            await self._db.execute(
                f"UPDATE awareness SET {assignments} WHERE id = ?",
                (*(value for _, value in changes), item_id),
            )
            return await self._require(item_id, live_only=False)

    async def remove(self, item_id: int) -> bool:
        item_id = row_id(item_id, "awareness item id")
        async with self._db.transaction():
            await self._purge_expired()
            count = await self._delete("DELETE FROM awareness WHERE id = ?", (item_id,))
        return count > 0

    async def clear(self) -> int:
        """Remove every item; returns how many live items were removed."""
        async with self._db.transaction():
            await self._purge_expired()
            count = await self._delete("DELETE FROM awareness")
        return count

    async def clear_category(self, category: str) -> int:
        cat = _check_category(category)
        async with self._db.transaction():
            await self._purge_expired()
            count = await self._delete("DELETE FROM awareness WHERE category = ?", (cat,))
        return count

    # -- reads ------------------------------------------------------------------------------

    async def get_all(self) -> list[AwarenessItem]:
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM awareness WHERE {_LIVE} {_ORDER} LIMIT ?",
            (now_iso(), AWARENESS_MAX_ITEMS),
        )
        return [_from_row(row) for row in rows]

    async def get_by_category(self, category: str) -> list[AwarenessItem]:
        cat = _check_category(category)
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM awareness WHERE category = ? AND {_LIVE} {_ORDER} LIMIT ?",
            (cat, now_iso(), AWARENESS_MAX_ITEMS),
        )
        return [_from_row(row) for row in rows]

    async def get(self, item_id: int) -> AwarenessItem | None:
        """The live item ``item_id``, or ``None`` when unknown or expired."""
        return await self._fetch(item_id, live_only=True)

    # -- internals --------------------------------------------------------------------------

    async def _purge_expired(self) -> str:
        """Delete expired items (inside the caller's transaction); returns the "now" used."""
        now = now_iso()
        await self._delete(
            "DELETE FROM awareness WHERE expires_at IS NOT NULL AND expires_at <= ?", (now,))
        return now

    async def _enforce_cap(self, keep_id: int, now: str) -> None:
        """Evict the lowest-priority, then oldest, live items other than ``keep_id``."""
        evicted = await self._delete(
            f"DELETE FROM awareness WHERE id IN (SELECT id FROM awareness WHERE id != ? "
            f"AND {_LIVE} ORDER BY priority ASC, created_at ASC, id ASC "
            f"LIMIT max(0, (SELECT COUNT(*) FROM awareness WHERE {_LIVE}) - ?))",
            (keep_id, now, now, AWARENESS_MAX_ITEMS),
        )
        if evicted:
            log.debug("awareness cap: evicted %d item(s) to make room for %d", evicted, keep_id)

    async def _delete(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        """Run a ``DELETE`` of items (inside the caller's transaction); the keyed writes that
        added them keep none of their text (:func:`mind.storage.idempotency.retract`)."""
        ids = [int(row[0]) for row in await self._db.fetchall(f"{sql} RETURNING id", params)]
        await idempotency.retract(self._db, "awareness", ids)
        return len(ids)

    async def _fetch(self, item_id: int, *, live_only: bool) -> AwarenessItem | None:
        item_id = row_id(item_id, "awareness item id")
        sql = f"SELECT {_COLUMNS} FROM awareness WHERE id = ?"
        params: tuple[object, ...] = (item_id,)
        if live_only:
            sql, params = f"{sql} AND {_LIVE}", (item_id, now_iso())
        row = await self._db.fetchone(sql, params)
        return None if row is None else _from_row(row)

    async def _require(self, item_id: int, *, live_only: bool = True) -> AwarenessItem:
        item = await self._fetch(item_id, live_only=live_only)
        if item is None:
            raise NotFoundError(f"Awareness item {item_id} not found")
        return item
