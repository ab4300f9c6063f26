"""Vector tables (sqlite-vec ``vec0``) at the embedding model's native dimension.

The tables are created when the model fingerprint (provider, model, dimension) is first
recorded in ``meta``; afterwards a different dimension or model is refused with an error that
names the fix (``hive-mind maintenance reembed``), so vectors of two models never mix. Upserts
are delete + insert (vec0 has no working ``INSERT OR REPLACE``), the deletes one ``rowid = ?``
each: vec0 answers ``rowid IN (...)`` by scanning the whole table (:func:`_delete_rows`); every
vector is checked for dimension and finite values before it reaches SQLite. Triggers created
with the tables drop a frame's vectors when the frame is deleted or its content changes, and a
chunk's vector when the chunk row goes. Every vector change is appended to ``vector_log`` so
in-memory indexes (:mod:`mind.retrieval.vector_index`) can refresh incrementally.

An upsert of whole-frame vectors — every cognify result a mind's owner applies — runs its
statements (the fingerprint, the tables, which frames still exist, the deletes, the inserts,
the log) in one round trip to the connection's thread (:meth:`Database.run`): they were six,
at 60-100 us of CPU each on top of their SQL (bench/components/host_replay.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mind.constants import (
    META_EMBED_DIM,
    META_EMBED_MODEL,
    META_EMBED_PROVIDER,
    OUTBOX_REEMBED,
    T_CHUNKS_VEC,
    T_FRAMES_VEC,
)
from mind.embeddings.base import backend_switch_hint
from mind.errors import EmbeddingDimMismatchError, EmbeddingFingerprintError, VectorError
from mind.storage.db import Database, SyncDb
from mind.storage.sqlutil import chunked, placeholders, split_statements
from mind.timeutil import now_iso

if TYPE_CHECKING:
    import numpy as np

MAX_DIM = 8192

_VEC_TRIGGERS = f"""
CREATE TRIGGER IF NOT EXISTS memory_frames_vec_ad AFTER DELETE ON memory_frames BEGIN
  DELETE FROM {T_FRAMES_VEC} WHERE rowid = old.id;
  INSERT INTO vector_log(kind, item_id) VALUES ('frame', old.id);
END;
CREATE TRIGGER IF NOT EXISTS memory_frames_vec_au AFTER UPDATE OF content ON memory_frames
WHEN new.content_hash IS NOT old.content_hash BEGIN
  DELETE FROM {T_FRAMES_VEC} WHERE rowid = old.id;
  INSERT INTO vector_log(kind, item_id) VALUES ('frame', old.id);
END;
CREATE TRIGGER IF NOT EXISTS memory_frame_chunks_vec_ad AFTER DELETE ON memory_frame_chunks BEGIN
  DELETE FROM {T_CHUNKS_VEC} WHERE rowid = old.id;
  INSERT INTO vector_log(kind, item_id) VALUES ('chunk', old.id);
END;
"""


def _delete_rows(db: SyncDb, table: str, ids: Sequence[int]) -> int:
    """Delete rows of a vec0 ``table`` by rowid, one point delete each; rows deleted. vec0
    plans ``rowid IN (...)`` as a scan of every row: 32 ids took 46 ms at 100,000 rows against
    0.4 ms as point deletes, so each cognify batch's upsert grew with the mind (a 20,000-frame
    import's writer 0.42 → 0.63 ms a frame)."""
    return db.executemany(f"DELETE FROM {table} WHERE rowid = ?", [(int(i),) for i in ids])


def _log(db: SyncDb, kind: str, ids: Sequence[int]) -> int:
    """Log changes of ``ids``; the first entry's seq (the entries are consecutive: one
    writer, one statement), 0 for none."""
    if not ids:
        return 0
    db.executemany("INSERT INTO vector_log(kind, item_id) VALUES (?, ?)",
                   [(kind, i) for i in ids])
    return int(db.fetchval("SELECT last_insert_rowid()")) - len(ids) + 1


def _fingerprint(db: SyncDb) -> Fingerprint | None:
    rows = db.fetchall("SELECT key, value FROM meta WHERE key IN (?, ?, ?)",
                       (META_EMBED_PROVIDER, META_EMBED_MODEL, META_EMBED_DIM))
    values = {r[0]: r[1] for r in rows}
    if META_EMBED_DIM not in values:
        return None
    return Fingerprint(values.get(META_EMBED_PROVIDER, "unknown"),
                       values.get(META_EMBED_MODEL, "unknown"), int(values[META_EMBED_DIM]))


def _tables_exist(db: SyncDb) -> bool:
    n = db.fetchval("SELECT COUNT(*) FROM sqlite_master WHERE name IN (?, ?)",
                    (T_FRAMES_VEC, T_CHUNKS_VEC))
    return int(n) == 2


def _dim(db: SyncDb) -> int:
    fp = _fingerprint(db)
    if fp is None or not _tables_exist(db):
        raise VectorError("this mind has no vector tables yet: record a fingerprint first")
    return fp.dim


def _existing_frames(db: SyncDb, ids: Sequence[int]) -> set[int]:
    live: set[int] = set()
    for part in chunked(list(ids)):
        rows = db.fetchall(
            f"SELECT id FROM memory_frames WHERE id IN ({placeholders(len(part))})", part)
        live.update(r[0] for r in rows)
    return live


@dataclass(frozen=True, slots=True)
class WrittenVectors:
    """Frame vectors as written: ``(frame id, blob)`` rows, logged from seq ``first_seq`` on
    in this order (what :meth:`VectorIndex.handoff` takes)."""

    rows: list[tuple[int, bytes]]
    first_seq: int


def upsert_frame_vectors_sync(
    db: SyncDb, items: Sequence[tuple[int, Sequence[float] | np.ndarray]],
    dim: int | None = None,
) -> WrittenVectors:
    """:meth:`VectorStore.upsert_frame_vectors` on the connection's thread; ``dim``: the
    dimension a caller that just checked the fingerprint knows (else read, tables checked)."""
    dim = _dim(db) if dim is None else dim
    blobs = [(int(fid), to_blob(vec, dim)) for fid, vec in items]
    live = _existing_frames(db, [fid for fid, _ in blobs])
    rows = [(fid, blob) for fid, blob in blobs if fid in live]
    _delete_rows(db, T_FRAMES_VEC, [fid for fid, _ in rows])
    db.executemany(f"INSERT INTO {T_FRAMES_VEC}(rowid, embedding) VALUES (?, ?)", rows)
    return WrittenVectors(rows, _log(db, "frame", [fid for fid, _ in rows]))


@dataclass(frozen=True, slots=True)
class Fingerprint:
    provider: str
    model: str
    dim: int

    def as_dict(self) -> dict[str, object]:
        return {"provider": self.provider, "model": self.model, "dim": self.dim}


@dataclass(frozen=True, slots=True)
class ChunkSpan:
    chunk_idx: int
    content: str
    char_start: int
    char_end: int


def to_blob(vector: Sequence[float] | np.ndarray, dim: int) -> bytes:
    """Validate one vector and encode it as little-endian float32."""
    import numpy as np  # here: a process that writes no vector never loads numpy

    arr = np.asarray(vector, dtype="<f4")
    if arr.ndim != 1 or arr.shape[0] != dim:
        got = arr.shape[0] if arr.ndim == 1 else f"shape {arr.shape}"
        raise VectorError(f"vector has dimension {got}, this mind stores {dim}")
    if not np.all(np.isfinite(arr)):
        raise VectorError("vector contains NaN or infinite values")
    return arr.tobytes()


class VectorStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def fingerprint(self) -> Fingerprint | None:
        return await self._db.run(_fingerprint)

    async def tables_exist(self) -> bool:
        return await self._db.run(_tables_exist)

    async def ensure_fingerprint(self, provider: str, model: str, dim: int) -> str:
        """Record the fingerprint (creating the tables) or check it. Returns recorded|match."""
        runtime = Fingerprint(provider, model, int(dim))
        async with self._db.transaction():
            stored = await self.fingerprint()
            if stored is None:
                await self._create(runtime)
                return "recorded"
        if stored.dim != runtime.dim:
            raise EmbeddingDimMismatchError(
                f"this mind stores {stored.dim}-dimensional vectors from {stored.provider}/"
                f"{stored.model}, but the embedder produces {runtime.dim} dimensions "
                f"({runtime.provider}/{runtime.model}); run `hive-mind maintenance reembed` "
                "to re-embed the mind with the new model",
                stored=stored.as_dict(),
                runtime=runtime.as_dict(),
            )
        if (stored.provider, stored.model) != (runtime.provider, runtime.model):
            raise EmbeddingFingerprintError(
                f"this mind's vectors were made by {stored.provider}/{stored.model}, the "
                f"embedder is {runtime.provider}/{runtime.model}; mixing models corrupts "
                "search — run `hive-mind maintenance reembed` to switch models"
                f"{backend_switch_hint(stored.model, runtime.model)}",
                stored=stored.as_dict(),
                runtime=runtime.as_dict(),
            )
        return "match"

    async def reset(self, provider: str, model: str, dim: int) -> int:
        """Drop every vector, record a new fingerprint and queue all frames for re-indexing
        (outbox reason :data:`~mind.constants.OUTBOX_REEMBED`)."""
        async with self._db.transaction():
            await self._db.execute("DELETE FROM memory_frame_chunks")
            for table in (T_FRAMES_VEC, T_CHUNKS_VEC):
                await self._db.execute(f"DROP TABLE IF EXISTS {table}")
            await self._create(Fingerprint(provider, model, int(dim)))
            await self._log("reset", [0])
            _, n = await self._db.execute(
                "INSERT OR REPLACE INTO pending_index(frame_id, reason, enqueued_at, attempts) "
                f"SELECT id, '{OUTBOX_REEMBED}', ?, 0 FROM memory_frames",
                (now_iso(),),
            )
        return n

    async def unfinished(self, provider: str, model: str, dim: int) -> int:
        """The frames an earlier re-embed to this model left pending (0: none, or the mind
        has another model): a process stopped before its re-embed was done."""
        if await self.fingerprint() != Fingerprint(provider, model, int(dim)):
            return 0
        return int(await self._db.fetchval(
            f"SELECT COUNT(*) FROM pending_index WHERE reason = '{OUTBOX_REEMBED}'", default=0))

    async def _create(self, fp: Fingerprint) -> None:
        if not 0 < fp.dim <= MAX_DIM:
            raise VectorError(f"embedding dimension must be 1..{MAX_DIM}, got {fp.dim}")
        for table in (T_FRAMES_VEC, T_CHUNKS_VEC):
            await self._db.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0(embedding float[{fp.dim}])"
            )
        for statement in split_statements(_VEC_TRIGGERS):
            await self._db.execute(statement)
        await self._db.executemany(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
            [
                (META_EMBED_PROVIDER, fp.provider),
                (META_EMBED_MODEL, fp.model),
                (META_EMBED_DIM, str(fp.dim)),
            ],
        )

    async def _dim(self) -> int:
        return await self._db.run(_dim)

    async def upsert_frame_vectors(
        self, items: Sequence[tuple[int, Sequence[float] | np.ndarray]]
    ) -> int:
        """Store whole-frame vectors (replacing old ones), in one round trip (module
        docstring). Frames that vanished are skipped."""
        if not items:
            return 0
        async with self._db.transaction():
            written = await self._db.run(lambda db: upsert_frame_vectors_sync(db, items))
        return len(written.rows)

    async def _log(self, kind: str, ids: Sequence[int]) -> None:
        await self._db.run(lambda db: _log(db, kind, ids))

    async def replace_chunks(
        self,
        frame_id: int,
        chunks: Sequence[ChunkSpan],
        vectors: Sequence[Sequence[float] | np.ndarray],
    ) -> int:
        """Replace a frame's chunks and their vectors. Returns the number stored."""
        if len(chunks) != len(vectors):
            raise VectorError(f"{len(chunks)} chunks but {len(vectors)} vectors")
        dim = await self._dim()
        blobs = [to_blob(v, dim) for v in vectors]
        async with self._db.transaction():
            if not await self._db.run(lambda db: _existing_frames(db, [frame_id])):
                return 0
            await self._db.execute(
                "DELETE FROM memory_frame_chunks WHERE frame_id = ?", (frame_id,)
            )
            for chunk, blob in zip(chunks, blobs, strict=True):
                chunk_id, _ = await self._db.execute(
                    "INSERT INTO memory_frame_chunks(frame_id, chunk_idx, content, char_start, "
                    "char_end) VALUES (?,?,?,?,?)",
                    (frame_id, chunk.chunk_idx, chunk.content, chunk.char_start, chunk.char_end),
                )
                await self._db.execute(
                    f"INSERT INTO {T_CHUNKS_VEC}(rowid, embedding) VALUES (?, ?)", (chunk_id, blob)
                )
                await self._log("chunk", [chunk_id])
        return len(chunks)

    async def counts(self) -> dict[str, int]:
        if not await self.tables_exist():
            return {"frame_vectors": 0, "chunks": 0, "chunk_vectors": 0}
        row: Any = await self._db.fetchone(
            f"SELECT (SELECT COUNT(*) FROM {T_FRAMES_VEC}), "
            "(SELECT COUNT(*) FROM memory_frame_chunks), "
            f"(SELECT COUNT(*) FROM {T_CHUNKS_VEC})"
        )
        return {"frame_vectors": row[0], "chunks": row[1], "chunk_vectors": row[2]}
