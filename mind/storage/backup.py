"""Copies of one mind file: taken online, checked, and put back.

- :func:`online_copy`: SQLite's online backup API in one step, through the project's
  connector (so with sqlite-vec loaded): the copy is the file as of one read transaction —
  every transaction committed before it began, the WAL's pages included — while the file's
  writer and readers go on (a reader in WAL mode blocks no writer). A copy in several steps
  would start over at every write of another connection, and never end under steady saves.
- :func:`check_copy`: a copy's SHA-256, ``PRAGMA integrity_check`` and schema version, read
  without writing a byte (``immutable``: no ``-wal``/``-shm`` beside it is made or read).
- :func:`restore_copy`: the backup API again, into the destination file (created, or replaced
  in place under SQLite's own locks — never a rename over a file whose ``-wal`` would then be
  replayed onto the wrong pages), and the fencing record (:mod:`mind.storage.fencing`) set
  for the host it now belongs to.
"""

from __future__ import annotations

import hashlib
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from mind.constants import META_FENCE_EPOCH, META_FENCE_SHARD
from mind.errors import StorageError
from mind.storage.connection import connect_peek, connect_sync, driver
from mind.storage.private_files import prepare_mind_file
from mind.storage.shown import shown

HASH_BLOCK: Final = 1024 * 1024


def online_copy(path: Path, dest: Path) -> None:
    """(blocking) A consistent copy of the mind file ``path`` at ``dest`` (a new file)."""
    source = connect_peek(path)
    try:
        prepare_mind_file(dest)  # owner-only, like every mind file
        target = driver().connect(str(dest))
        try:
            source.backup(target)
        finally:
            target.close()
    finally:
        source.close()


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class CopyCheck:
    sha256: str
    size: int
    integrity: str  # "ok", or what PRAGMA integrity_check found
    schema_version: int
    frames: int = 0


def read_only(path: Path) -> Any:
    """(blocking) A connection that reads the copy at ``path`` and writes nothing beside it."""
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro&immutable=1"
    return driver().connect(uri, uri=True, isolation_level=None, check_same_thread=False)


def schema_version_of(conn: Any) -> int:
    present = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if not present:
        return 0
    return int(conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] or 0)


def check_copy(path: Path) -> CopyCheck:
    """(blocking) What a copy holds, read-only: its checksum, integrity and schema version."""
    size, digest = path.stat().st_size, sha256_of(path)
    try:
        conn = read_only(path)
        try:
            rows = conn.execute("PRAGMA integrity_check").fetchall()
            integrity = "; ".join(str(r[0]) for r in rows[:5])
            if integrity != "ok":
                return CopyCheck(digest, size, integrity, 0)
            version = schema_version_of(conn)
            frames = conn.execute("SELECT count(*) FROM memory_frames").fetchone()[0]
            return CopyCheck(digest, size, integrity, version, int(frames))
        finally:
            conn.close()
    except driver().DatabaseError as exc:
        return CopyCheck(digest, size, f"not a readable SQLite database ({exc})", 0)


def restore_copy(copy: Path, dest: Path, owner: tuple[str, int] | None) -> None:
    """(blocking) Write the checked ``copy`` into the mind file ``dest`` and record ``owner``
    (shard, epoch) as its fencing record (None: none — an unsharded host claims nothing)."""
    source = read_only(copy)
    try:
        target = connect_sync(dest)
        try:
            source.backup(target)
            target.execute("BEGIN IMMEDIATE")
            target.execute("DELETE FROM meta WHERE key IN (?, ?)",
                           (META_FENCE_SHARD, META_FENCE_EPOCH))
            if owner is not None:
                target.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", [
                    (META_FENCE_SHARD, owner[0]), (META_FENCE_EPOCH, str(owner[1]))])
            target.execute("COMMIT")
        except driver().DatabaseError as exc:
            raise StorageError(f"cannot restore {shown(dest)}: {exc}") from exc
        finally:
            target.close()
    finally:
        source.close()
