"""Idempotency keys: a client's retry of a write is applied exactly once.

A caller names a write with a key (CLI ``--idempotency-key``, HTTP/MCP ``idempotency_key``,
the HTTP ``Idempotency-Key`` header, Python ``idempotency_key=``). The key becomes the write-op's
``op_id``, deterministically::

    key:<32 hex: digest of (mind id, key)>:<32 hex: digest of the request>

and the owner's applied-op record (``applied_ops``, in the mind file, so it survives a crash or a
restart) makes a retry exactly-once. For keyed ops the record also keeps the write's result:

- the same key with the same request → the first result again (the same frame id), nothing
  written (:func:`seen` returns it; the actor hands it back as ``Replayed``);
- the same key with a different request → :class:`~mind.errors.ConflictError` (HTTP 409): a key
  names one write, so reusing it for other content is a client bug, never silently answered with
  the old frame;
- keys are per mind: the same key in two workspaces names two writes.

A key is remembered as long as its applied-op row: compaction prunes rows older than
:data:`KEY_RETENTION_DAYS` days. Unkeyed op ids (uuid hex, deterministic job ids) keep the plain
"seen → duplicate" rule and no stored result.

A stored result holds what the write made (an awareness item with its text; a saved frame's id
and content hash). When that is removed — an awareness item removed, cleared, evicted or
expired, a frame forgotten — :func:`retract` replaces the result with ``{"removed": true}``:
the text is gone from the file, and a retry with the key is told the item was removed
(a conflict) instead of being answered with an item that no longer exists, or writing it again.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any, Final, Literal

from mind.errors import ConflictError, ValidationError
from mind.storage.db import Database, SyncDb

MAX_KEY_CHARS: Final = 255
KEY_RETENTION_DAYS: Final = 7
KEYED_PREFIX: Final = "key:"
_KEY: Final = re.compile(rf"[\x21-\x7e]{{1,{MAX_KEY_CHARS}}}")
_DIGEST_HEX: Final = 32
_NO_RESULT: Final = object()


def validate_key(value: object) -> str:
    """An idempotency key: 1-255 printable ASCII characters, no spaces (a UUID fits)."""
    if not isinstance(value, str) or _KEY.fullmatch(value) is None:
        size = f" ({len(value):,} characters)" if isinstance(value, str) else ""
        raise ValidationError(
            f"idempotency key must be 1-{MAX_KEY_CHARS} printable ASCII characters without "
            f"spaces{size} (a UUID is a good key)")
    return value


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:_DIGEST_HEX]


def keyed_op_id(mind_id: str, key: str, operation: str, request: Mapping[str, Any]) -> str:
    """The op id of the write ``operation`` with ``request`` (its caller-given arguments, JSON)
    named by ``key`` in mind ``mind_id``."""
    body = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)
    return f"{KEYED_PREFIX}{_digest(mind_id, validate_key(key))}:{_digest(operation, body)}"


def _key_part(op_id: str) -> str | None:
    """``key:<key digest>:`` of a keyed op id, else None."""
    if not op_id.startswith(KEYED_PREFIX):
        return None
    head, sep, _ = op_id.rpartition(":")
    return head + sep if head != KEYED_PREFIX.rstrip(":") else None


@dataclass(frozen=True, slots=True)
class Applied:
    """An op id found in ``applied_ops``: ``result`` is the stored result of a keyed write
    (``keyed``), else nothing was stored."""

    keyed: bool
    result: Any = None


async def seen(db: Database, op_id: str) -> Applied | None:
    """Whether ``op_id`` was applied before (inside the writer's transaction). A keyed op id whose
    key was used for a different request raises :class:`ConflictError`."""
    prefix = _key_part(op_id)
    if prefix is None:
        found = await db.fetchval("SELECT 1 FROM applied_ops WHERE op_id = ?", (op_id,))
        return Applied(keyed=False) if found else None
    row = await db.fetchone(
        "SELECT op_id, result FROM applied_ops WHERE op_id >= ? AND op_id < ? LIMIT 1",
        (prefix, prefix + "\x7f"))
    if row is None:
        return None
    if row[0] != op_id:
        raise ConflictError(
            "this idempotency key was already used for a different write in this mind "
            "(other content or options); a retry must repeat the request exactly, and a new "
            "write needs a new key")
    return Applied(keyed=True, result=None if row[1] is None else json.loads(row[1]))


async def seen_part(db: Database, op_id: str, whole_id: str) -> Applied | None:
    """Whether a part of an op (:mod:`actors.parts`) or the whole op was applied before, in
    one query: parts are never keyed."""
    found = await db.fetchval("SELECT 1 FROM applied_ops WHERE op_id IN (?, ?)",
                              (op_id, whole_id))
    return Applied(keyed=False) if found else None


async def record(db: Database, op_id: str, result: Any = _NO_RESULT) -> None:
    """Mark ``op_id`` applied; a keyed op keeps ``result`` (JSON) for its retries."""
    if _key_part(op_id) is None or result is _NO_RESULT:
        await db.execute("INSERT INTO applied_ops(op_id) VALUES (?)", (op_id,))
        return
    await db.execute("INSERT INTO applied_ops(op_id, result) VALUES (?, ?)",
                     (op_id, json.dumps(result, separators=(",", ":"), ensure_ascii=False,
                                        default=_plain)))


async def record_whole(db: Database, op_id: str, part_ids: Sequence[str]) -> None:
    """An op applied in parts (:mod:`actors.parts`) is done: its id stands for its parts' (the
    last part's own id need not be recorded first). One round trip."""
    def write(sync: SyncDb) -> None:
        sync.execute("INSERT INTO applied_ops(op_id) VALUES (?)", (op_id,))
        sync.execute(f"DELETE FROM applied_ops WHERE op_id IN ({','.join('?' * len(part_ids))})",
                     tuple(part_ids))

    await db.run(write)


def _plain(value: object) -> Any:
    """A handler's result type (a frozen dataclass, :mod:`actors.results`) as JSON."""
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    raise TypeError(f"cannot store a {type(value).__name__} result as JSON")


REMOVED: Final = {"removed": True}
Made = Literal["awareness", "frames"]


def _names(result: Any, made: Made, ids: Collection[int]) -> bool:
    """Does a stored keyed result name one of ``ids`` (an awareness item, or saved frames)?"""
    if not isinstance(result, dict):
        return False
    if made == "awareness":
        return "category" in result and result.get("id") in ids
    frames = result.get("frames")
    return isinstance(frames, list) and any(
        isinstance(f, dict) and f.get("id") in ids for f in frames)


async def retract(db: Database, made: Made, ids: Collection[int]) -> int:
    """Replace the stored results of keyed writes that made one of ``ids`` with
    :data:`REMOVED` (inside the caller's transaction); how many were replaced."""
    if not ids:
        return 0
    rows = await db.fetchall(
        "SELECT op_id, result FROM applied_ops WHERE op_id >= ? AND op_id < ? "
        "AND result IS NOT NULL", (KEYED_PREFIX, KEYED_PREFIX[:-1] + ";"))
    gone = [(json.dumps(REMOVED), op_id) for op_id, raw in rows
            if _names(json.loads(raw), made, ids)]
    if gone:
        await db.executemany("UPDATE applied_ops SET result = ? WHERE op_id = ?", gone)
    return len(gone)


async def forget_old(db: Database, days: int = KEY_RETENTION_DAYS) -> int:
    """Drop applied-op rows older than ``days`` (compaction): their ops, and keys, are never
    expected again. Returns how many rows went."""
    _, count = await db.execute(
        "DELETE FROM applied_ops WHERE applied_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?)",
        (f"-{int(days)} days",))
    return count
