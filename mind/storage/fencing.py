"""Fencing records: which shard owns a mind file, and since which epoch (issue #17).

A sharded deployment gives each host a shard id and an epoch (raised when a mind moves to it).
Before a host writes a mind file it claims it (:func:`claim`): a file recorded for another
shard, or for this shard at a newer epoch than the host's, is refused with
:class:`FencedError` — so a misconfigured or stale host never becomes a second writer, even on
shared storage. A file with no record (or an older epoch of this shard) is recorded as the
host's, in the same write transaction as the check. Readers check without writing
(:func:`check`). Unsharded hosts claim nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mind.constants import META_FENCE_EPOCH, META_FENCE_SHARD
from mind.errors import StorageError
from mind.storage.connection import connect_peek
from mind.storage.db import Database
from mind.storage.shown import shown


class FencedError(StorageError):
    """This host may not open the mind file: another shard (or a newer epoch) owns it.
    ``owner``: the shard that does, when known (a host forwards the mind's queued ops there)."""

    code = "fenced"
    status = 503
    retry_after = 5

    def __init__(self, message: str, *, owner: str | None = None) -> None:
        super().__init__(message)
        self.owner = owner


@dataclass(frozen=True, slots=True)
class Fence:
    shard: str
    epoch: int


_READ = "SELECT key, value FROM meta WHERE key IN (?, ?)"
_KEYS = (META_FENCE_SHARD, META_FENCE_EPOCH)


def _fence_of(rows: list[Any]) -> Fence | None:
    values = {r[0]: r[1] for r in rows}
    if META_FENCE_SHARD not in values:
        return None
    return Fence(str(values[META_FENCE_SHARD]), int(values.get(META_FENCE_EPOCH, 0)))


async def read_fence(db: Database) -> Fence | None:
    return _fence_of(await db.fetchall(_READ, _KEYS))


def refusal(where: str, found: Fence | None, mine: Fence) -> FencedError | None:
    """Why ``mine`` may not open a file fenced ``found`` (None: it may); ``where`` names the
    file in the message (:func:`mind.storage.shown.shown`, never a server path)."""
    if found is None:
        return None
    if found.shard != mine.shard:
        return FencedError(f"{where} belongs to {found.shard} (epoch {found.epoch}), not to "
                           f"this host's {mine.shard}: route the request to its owner",
                           owner=found.shard)
    if found.epoch > mine.epoch:
        return FencedError(f"{where} was claimed by {found.shard} at epoch {found.epoch}, "
                           f"newer than this host's {mine.epoch}: this host is stale, restart it "
                           "with the current epoch")
    return None


def check_file(path: Path, mine: Fence) -> None:
    """(blocking) Refuse a file this host may not open, before anything writes to it (a
    migration of another shard's file would be a second writer's write)."""
    error = refusal(shown(path), read_file_fence(path), mine)
    if error is not None:
        raise error


async def check(db: Database, mine: Fence) -> None:
    """Refuse (raise) a file this host may not read."""
    error = refusal(shown(db.path), await read_fence(db), mine)
    if error is not None:
        raise error


async def claim(db: Database, mine: Fence) -> Fence:
    """Check and record ``mine`` on the file in one write transaction; returns the record."""
    async with db.transaction():
        found = await read_fence(db)
        error = refusal(shown(db.path), found, mine)
        if error is not None:
            raise error
        if found != mine:
            await db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [
                (META_FENCE_SHARD, mine.shard), (META_FENCE_EPOCH, str(mine.epoch))])
    return mine


def read_file_fence(path: Path) -> Fence | None:
    """(blocking) The fencing record of a mind file (None: unfenced), on a read-only look."""
    conn = connect_peek(path)
    try:
        return fence_on(conn)
    finally:
        conn.close()


def fence_on(conn: Any) -> Fence | None:
    """(blocking) The fencing record of the file open on the sqlite3 connection ``conn``."""
    present = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone()
    return _fence_of(conn.execute(_READ, _KEYS).fetchall() if present else [])


def hand_over(path: Path, mine: Fence, to: Fence) -> None:
    """(blocking) Record ``to`` as the file's owner, in one write transaction checked against
    ``mine`` (a file already handed to ``to`` is left as it is: a resumed move). The caller has
    closed its own writer: from here on this host refuses the file."""
    from mind.storage.connection import connect_sync

    conn = connect_sync(path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        found = _fence_of(conn.execute(_READ, _KEYS).fetchall())
        if found != to:
            error = refusal(shown(path), found, mine)
            if error is not None:
                raise error
            conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [
                (META_FENCE_SHARD, to.shard), (META_FENCE_EPOCH, str(to.epoch))])
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()


def snapshot(path: Path, dest: Path) -> None:
    """(blocking) A consistent copy of the mind file at ``dest`` (SQLite's online backup: the
    WAL's committed pages included), for a move to another shard."""
    from mind.storage.backup import online_copy

    online_copy(path, dest)
