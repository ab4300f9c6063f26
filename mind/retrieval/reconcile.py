"""Index reconciliation: FTS, vectors, chunks and the outbox brought back in line.

Repairs what a crash or an old bug can leave behind, idempotently:
* the FTS index is checked with FTS5's ``integrity-check`` and rebuilt from the frames if
  it disagrees;
* vectors and chunk vectors whose frame or chunk is gone are deleted;
* frames that have no vector (or whose long content lacks chunks) and are not already pending
  are put back in the outbox — the embedding itself is done by whoever drains the outbox.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from mind.constants import T_CHUNKS_VEC, T_FRAMES_FTS, T_FRAMES_VEC
from mind.errors import StorageError
from mind.retrieval.vectors import VectorStore
from mind.storage.db import Database
from mind.timeutil import now_iso


@dataclass(frozen=True, slots=True)
class ReconcileResult:
    fts_rebuilt: bool
    orphan_vectors: int
    orphan_chunk_vectors: int
    requeued: int

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


async def fts_consistent(db: Database) -> bool:
    try:
        await db.execute(
            f"INSERT INTO {T_FRAMES_FTS}({T_FRAMES_FTS}, rank) VALUES ('integrity-check', 1)"
        )
    except StorageError:
        return False
    return True


async def reconcile_fts(db: Database) -> bool:
    """Rebuild the FTS index if it is inconsistent. Returns True if it was rebuilt."""
    async with db.transaction():
        if await fts_consistent(db):
            return False
        await db.execute(f"INSERT INTO {T_FRAMES_FTS}({T_FRAMES_FTS}) VALUES ('rebuild')")
    return True


async def clean_orphan_vectors(db: Database) -> tuple[int, int]:
    if not await VectorStore(db).tables_exist():
        return 0, 0
    async with db.transaction():
        await db.execute(
            "INSERT INTO vector_log(kind, item_id) SELECT 'frame', rowid FROM "
            f"{T_FRAMES_VEC} WHERE rowid NOT IN (SELECT id FROM memory_frames)"
        )
        await db.execute(
            "INSERT INTO vector_log(kind, item_id) SELECT 'chunk', rowid FROM "
            f"{T_CHUNKS_VEC} WHERE rowid NOT IN (SELECT id FROM memory_frame_chunks)"
        )
        _, frames = await db.execute(
            f"DELETE FROM {T_FRAMES_VEC} WHERE rowid NOT IN (SELECT id FROM memory_frames)"
        )
        _, chunks = await db.execute(
            f"DELETE FROM {T_CHUNKS_VEC} WHERE rowid NOT IN (SELECT id FROM memory_frame_chunks)"
        )
    return frames, chunks


async def requeue_unindexed(db: Database, *, chunk_min_chars: int | None = None) -> int:
    """Put frames lacking a vector (or, when ``chunk_min_chars`` is set, lacking chunks for long
    content) back into the outbox. Returns how many were queued."""
    if not await VectorStore(db).tables_exist():
        return 0
    chunk_clause = ""
    params: list[object] = [now_iso()]
    if chunk_min_chars is not None:
        chunk_clause = (
            " OR (length(f.content) > ? AND NOT EXISTS "
            "(SELECT 1 FROM memory_frame_chunks c WHERE c.frame_id = f.id))"
        )
        params.append(chunk_min_chars)
    async with db.transaction():
        _, n = await db.execute(
            "INSERT OR IGNORE INTO pending_index(frame_id, reason, enqueued_at) "
            "SELECT f.id, 'reconcile', ? FROM memory_frames f "
            f"WHERE (f.id NOT IN (SELECT rowid FROM {T_FRAMES_VEC}){chunk_clause}) "
            "AND f.id NOT IN (SELECT frame_id FROM pending_index)",
            params,
        )
    return n


async def reconcile_indexes(db: Database, *, chunk_min_chars: int | None = None) -> ReconcileResult:
    rebuilt = await reconcile_fts(db)
    frames, chunks = await clean_orphan_vectors(db)
    queued = await requeue_unindexed(db, chunk_min_chars=chunk_min_chars)
    return ReconcileResult(rebuilt, frames, chunks, queued)
