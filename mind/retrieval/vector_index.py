"""An exact in-memory vector index over one mind's frame and chunk vectors.

sqlite-vec (0.1.9, no SIMD in the PyPI wheel) scans 100,000 × 384 float vectors in ~55 ms
here, and random access to single vectors reads whole 1,024-vector chunks, so neither a flat
KNN nor a quantized pass with float re-scoring meets the latency target (docs/benchmarks.md).
The vec0 tables stay the durable store; this index mirrors them in a NumPy matrix and answers
queries with one matrix-vector product (exact, ~6 ms at 100,000 vectors on 2 cores).

Freshness: every vector change is appended to ``vector_log`` in the same transaction
(:mod:`mind.retrieval.vectors`). Before a search the index reads the log past its last
sequence number and reloads just those rows; a ``reset`` entry, or a gap (the log was
pruned), reloads all.
All SQLite and NumPy work runs in a worker thread on the index's own read-only connection.

Concurrency: the refresh runs under a lock; the matrix products do not. Rows are append-only
(a changed vector gets a new row, the old one is masked; growth reallocates), so a search
reads a view of the rows that existed when it started, with a copy of their owners, while the
next refresh appends; masked rows are compacted by a full reload once they outnumber the
live ones.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mind.constants import T_CHUNKS_VEC, T_FRAMES_VEC
from mind.errors import VectorError
from mind.storage.connection import connect_sync

FULL_RELOAD_AFTER = 20_000  # changed rows beyond which a full reload is cheaper
MIN_DEAD_ROWS_TO_COMPACT = 1024  # masked rows are dropped by a reload once they outnumber live


@dataclass(frozen=True)
class _Snapshot:
    vectors: np.ndarray  # a view: rows below this size are never written again
    owners: np.ndarray  # a copy; -1 = removed
    live: int


@dataclass
class _Matrix:
    """Rows of vectors addressed by item id, with owner frame ids (itself for frames)."""

    dim: int
    ids: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    owners: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    vectors: np.ndarray = field(default_factory=lambda: np.empty((0, 0), dtype=np.float32))
    size: int = 0
    rows: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.vectors = np.zeros((0, self.dim), dtype=np.float32)

    def _grow(self, need: int) -> None:
        cap = len(self.ids)
        if self.size + need <= cap:
            return
        new_cap = max(1024, cap * 2, self.size + need)
        ids = np.full(new_cap, -1, dtype=np.int64)
        owners = np.full(new_cap, -1, dtype=np.int64)
        vecs = np.zeros((new_cap, self.dim), dtype=np.float32)
        ids[: self.size] = self.ids[: self.size]
        owners[: self.size] = self.owners[: self.size]
        vecs[: self.size] = self.vectors[: self.size]
        self.ids, self.owners, self.vectors = ids, owners, vecs

    def put(self, item_id: int, owner: int, vector: np.ndarray) -> None:
        """Append-only: a changed vector goes to a new row and its old row is masked, so rows a
        search is reading (below the size it saw) are never written (:class:`_Snapshot`)."""
        self.remove(item_id)
        self._grow(1)
        row = self.size
        self.ids[row] = item_id
        self.owners[row] = owner
        self.vectors[row] = vector
        self.rows[item_id] = row
        self.size += 1

    def remove(self, item_id: int) -> None:
        row = self.rows.pop(item_id, None)
        if row is not None:  # the vector stays: a search may be reading it
            self.ids[row] = -1
            self.owners[row] = -1

    def dead(self) -> int:
        return self.size - len(self.rows)

    def snapshot(self) -> _Snapshot:
        """What a search reads outside the lock: a view of the rows written so far (never
        written again) and a copy of their owners (removals after this do not show)."""
        return _Snapshot(self.vectors[: self.size], self.owners[: self.size].copy(),
                         len(self.rows))

    def live(self) -> int:
        return len(self.rows)


class VectorIndex:
    """Exact cosine search over normalized vectors; results are (frame_id, similarity)."""

    def __init__(self, path: str | Path, dim: int) -> None:
        self.path = str(path)
        self.dim = dim
        self._frames = _Matrix(dim)
        self._chunks = _Matrix(dim)
        self._seq = -1
        self._conn: Any = None
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        return self._frames.live()

    def _connection(self) -> Any:
        if self._conn is None:
            self._conn = connect_sync(self.path, readonly=True)
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- freshness --------------------------------------------------------------------------

    def _refresh_sync(self) -> None:
        conn = self._connection()
        top = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM vector_log").fetchone()[0]
        if top == self._seq:
            return
        if self._seq < 0:
            self._reload_all(conn, top)
            return
        first = conn.execute("SELECT MIN(seq) FROM vector_log").fetchone()[0]
        changes = conn.execute(
            "SELECT kind, item_id FROM vector_log WHERE seq > ? AND seq <= ?", (self._seq, top)
        ).fetchall()
        if (first is not None and first > self._seq + 1) or len(changes) > FULL_RELOAD_AFTER or any(
            c[0] == "reset" for c in changes
        ):
            self._reload_all(conn, top)
            return
        for kind, item_id in {(c[0], c[1]) for c in changes}:
            self._reload_one(conn, kind, item_id)
        self._seq = top
        if any(m.dead() > max(MIN_DEAD_ROWS_TO_COMPACT, m.live()) for m in (self._frames,
                                                                         self._chunks)):
            self._reload_all(conn, top)  # updates are appends: compact the masked rows

    def _reload_all(self, conn: Any, top: int) -> None:
        self._frames = _Matrix(self.dim)
        self._chunks = _Matrix(self.dim)
        if self._tables_exist(conn):
            for rid, blob in conn.execute(f"SELECT rowid, embedding FROM {T_FRAMES_VEC}"):
                self._frames.put(rid, rid, np.frombuffer(blob, dtype="<f4"))
            owners = dict(conn.execute("SELECT id, frame_id FROM memory_frame_chunks").fetchall())
            for rid, blob in conn.execute(f"SELECT rowid, embedding FROM {T_CHUNKS_VEC}"):
                if rid in owners:
                    self._chunks.put(rid, owners[rid], np.frombuffer(blob, dtype="<f4"))
        self._seq = top

    def _reload_one(self, conn: Any, kind: str, item_id: int) -> None:
        if kind == "frame":
            row = conn.execute(
                f"SELECT embedding FROM {T_FRAMES_VEC} WHERE rowid = ?", (item_id,)
            ).fetchone()
            if row is None:
                self._frames.remove(item_id)
            else:
                self._frames.put(item_id, item_id, np.frombuffer(row[0], dtype="<f4"))
            return
        owner = conn.execute(
            "SELECT frame_id FROM memory_frame_chunks WHERE id = ?", (item_id,)
        ).fetchone()
        row = conn.execute(
            f"SELECT embedding FROM {T_CHUNKS_VEC} WHERE rowid = ?", (item_id,)
        ).fetchone()
        if owner is None or row is None:
            self._chunks.remove(item_id)
        else:
            self._chunks.put(item_id, owner[0], np.frombuffer(row[0], dtype="<f4"))

    @staticmethod
    def _tables_exist(conn: Any) -> bool:
        n = conn.execute(
            "SELECT COUNT(*) FROM sqlite_master WHERE name IN (?, ?)", (T_FRAMES_VEC, T_CHUNKS_VEC)
        ).fetchone()[0]
        return int(n) == 2

    # -- search -----------------------------------------------------------------------------

    async def search(
        self, query: np.ndarray, k: int, allowed_frames: list[int] | None = None
    ) -> list[tuple[int, float]]:
        """Top ``k`` frames by cosine similarity (frame vector or best chunk), optionally
        restricted to ``allowed_frames`` (filtering happens before ranking)."""
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dim:
            raise VectorError(f"query vector has dimension {q.shape[0]}, the index has {self.dim}")
        allowed = None if allowed_frames is None else np.asarray(allowed_frames, dtype=np.int64)
        return (await asyncio.to_thread(self._search_many_sync, q[None, :], k, allowed))[0]

    def _snapshots(self) -> tuple[_Snapshot, _Snapshot]:
        """Refresh and take both matrices' snapshots under the lock; the products run outside
        it, so concurrent searches are not serialized (NumPy releases the GIL)."""
        with self._lock:
            self._refresh_sync()
            return self._frames.snapshot(), self._chunks.snapshot()

    def _search_many_sync(
        self, queries: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> list[list[tuple[int, float]]]:
        frames, chunks = self._snapshots()
        out: list[dict[int, float]] = [{} for _ in range(len(queries))]
        for matrix in (frames, chunks):
            if matrix.live == 0:
                continue
            owners = matrix.owners
            # one product over the rows written so far, no copy of them: removed rows
            # (owner −1) and rows outside ``allowed`` are masked out of the result instead
            sims = matrix.vectors @ queries.T  # (rows, queries)
            keep = owners >= 0 if allowed is None else np.isin(owners, allowed)
            live = int(np.count_nonzero(keep))
            if live == 0:
                continue
            sims[~keep] = -np.inf
            take = min(k * 4 if matrix is chunks else k, live)
            tops = np.argpartition(-sims, take - 1, axis=0)[:take]
            for q in range(len(queries)):
                best = out[q]
                for i in tops[:, q]:
                    owner, sim = int(owners[i]), float(sims[i, q])
                    if sim > best.get(owner, -2.0):
                        best[owner] = sim
        return [sorted(b.items(), key=lambda kv: -kv[1])[:k] for b in out]

    async def similarities(self, query: np.ndarray, frame_ids: list[int]) -> dict[int, float]:
        """Cosine similarity of the given frames (frame vector or best chunk) to ``query``;
        frames without a vector are left out. Lets fusion score a candidate the vector lane's
        top k did not reach."""
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dim:
            raise VectorError(f"query vector has dimension {q.shape[0]}, the index has {self.dim}")
        if not frame_ids:
            return {}
        wanted = np.asarray(frame_ids, dtype=np.int64)
        return await asyncio.to_thread(self._similarities_sync, q, wanted)

    def _similarities_sync(self, q: np.ndarray, wanted: np.ndarray) -> dict[int, float]:
        best: dict[int, float] = {}
        for matrix in self._snapshots():
            rows = np.flatnonzero(np.isin(matrix.owners, wanted))
            if rows.size == 0:
                continue
            for row, sim in zip(rows, matrix.vectors[rows] @ q, strict=True):
                owner = int(matrix.owners[row])
                if float(sim) > best.get(owner, -2.0):
                    best[owner] = float(sim)
        return best

    async def search_many(self, queries: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
        """:meth:`search` for many query vectors in one matrix product."""
        q = np.asarray(queries, dtype=np.float32)
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise VectorError(f"queries have shape {q.shape}, the index has {self.dim} dims")
        if len(q) == 0:
            return []
        return await asyncio.to_thread(self._search_many_sync, q, k)

    async def refresh(self) -> None:
        def run() -> None:
            with self._lock:
                self._refresh_sync()

        await asyncio.to_thread(run)
