"""A mind file's counts and content version, from one short blocking look, and the file
stamp that says when to look again.

Reports over every mind of a data dir (``status``, the workspace list) and the scope-wide
recall's routing read thousands of files; opening each as a ``Mind`` (an aiosqlite thread, a
migration check) cost ~25 ms a file. Here a mind is read on a plain connection in a worker
thread, and only when its :func:`stamp` changed: the main file's and the WAL's size and
modification time, which every commit (WAL append) and checkpoint moves.

The :class:`Census` ``version`` changes when what a search can find changes (frames added or
removed, vectors written or dropped), not on access-count updates — so a caller that keeps
derived data per mind (the routing summaries) re-reads it only for a new version.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mind.constants import T_CHUNKS_VEC, T_FRAMES_VEC

FileStamp = tuple[int, int, int, int]
"""(main file mtime ns, size, WAL mtime ns, size); the WAL's are 0 when it does not exist."""

Version = tuple[int, int, int]
"""(frames, highest frame id, last vector_log seq)."""


def stamp(path: Path) -> FileStamp | None:
    """The file's stamp, None when the mind file does not exist."""
    try:
        main = os.stat(path)
    except FileNotFoundError:
        return None
    try:
        wal = os.stat(f"{path}-wal")
        wal_part = (wal.st_mtime_ns, wal.st_size)
    except FileNotFoundError:
        wal_part = (0, 0)
    return (main.st_mtime_ns, main.st_size, *wal_part)


COUNTS = ("frames", "pending_index", "vectors", "entities")


@dataclass(frozen=True, slots=True)
class Census:
    frames: int
    pending_index: int
    vectors: int
    entities: int
    version: Version
    modified_ns: int  # the later of the file's and its WAL's modification times

    def as_dict(self) -> dict[str, int]:
        return {"frames": self.frames, "pending_index": self.pending_index,
                "vectors": self.vectors, "entities": self.entities}


def tables(conn: Any) -> set[str]:
    return {str(r[0]) for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}


def take_census(conn: Any, file_stamp: FileStamp) -> Census:
    """The counts of the mind open on ``conn`` (a file not yet migrated lacks some tables:
    those count 0)."""
    present = tables(conn)

    def scalar(sql: str, table: str) -> int:
        return int(conn.execute(sql).fetchone()[0] or 0) if table in present else 0

    row = (conn.execute("SELECT COUNT(*), COALESCE(MAX(id), 0) FROM memory_frames").fetchone()
           if "memory_frames" in present else (0, 0))
    return Census(
        frames=int(row[0]),
        pending_index=scalar("SELECT COUNT(*) FROM pending_index", "pending_index"),
        vectors=scalar(f"SELECT COUNT(*) FROM {T_FRAMES_VEC}", T_FRAMES_VEC),
        entities=scalar("SELECT COUNT(*) FROM knowledge_entities WHERE valid_to IS NULL",
                        "knowledge_entities"),
        version=(int(row[0]), int(row[1]),
                 scalar("SELECT COALESCE(MAX(seq), 0) FROM vector_log", "vector_log")),
        modified_ns=max(file_stamp[0], file_stamp[2]),
    )


def has_vector_tables(present: set[str]) -> bool:
    return T_FRAMES_VEC in present and T_CHUNKS_VEC in present
