"""An in-memory vector index over one mind's frame and chunk vectors.

sqlite-vec (0.1.9, no SIMD in the PyPI wheel) scans 100,000 × 384 float vectors in ~55 ms
here, and random access to single vectors reads whole 1,024-vector chunks, so neither a flat
KNN nor a quantized pass with float re-scoring inside it meets the latency target: over
100,000 random vectors its flat KNN took 66 ms, a ``bit`` KNN of 200 candidates re-scored from
vec0's floats 96 ms at recall@20 0.35, the exact NumPy product 8 ms. The vec0 tables stay
the durable store; this index mirrors them in a NumPy matrix (float32) plus, from
:data:`QUANTIZE_MIN_ROWS` rows on, one byte per dimension (:mod:`mind.retrieval.int8_scan`).

Search: below :data:`QUANTIZE_MIN_ROWS` rows, exact (one matrix-vector product in blocks).
From there on, quantized rows are scored first (ONNX Runtime's integer products) and a few
candidates per wanted row are re-scored exactly: recall@10 1.000 of exact on uniformly random
vectors, the hardest case (docs/performance.md, "The vector index alone"). The int8 codes are
built when a matrix first reaches :data:`BATCH_CODES_MIN_ROWS` rows (their scales from its
rows then; many queries at once use them from there on, one query from the threshold above)
and kept up to date by every append after; each full block of rows is also packed once for
ONNX Runtime as 4-bit codes (:class:`~mind.retrieval.int4_blocks.Block`: half the bytes of
the int8 rows, which at 1,000,000 rows halves a scan bound by memory; a block that fills
while the index serves is packed on a thread, ~40 ms, its int8 codes answering meanwhile).
Many queries at once
(:meth:`VectorIndex.search_many`, a cognify batch's links) read each block once for all of
them: one product of the block with every query, over the int8 codes where the matrix has
them (:func:`~mind.retrieval.int8_scan.quantized_many`, the best candidates of each query
re-scored exactly; 64 queries over one block of 32,768 rows: ~15 ms against ~38 ms for the
float32 product, 2-core Xeon), else exact. One query at a time through the quantized pass was
slower than either: 64 queries over 100,000 rows took 146 ms exact against 764 ms that way
(2-core AMD EPYC, bench/components/link_cost.py). ``window`` limits a search to the most recently
written rows (the link search's bound). A filter (``allowed`` frames) masks rows inside the
scan; a filter keeping few rows gathers just those rows.

Threads: the scans run in row blocks on the process's scan pool (:mod:`mind.retrieval.scan_pool`).

Freshness: every vector change is appended to ``vector_log`` in the same transaction
(:mod:`mind.retrieval.vectors`). Before a search the index reads the log past its last
sequence number and reloads just those rows; a ``reset`` entry, or a gap (the log was
pruned), reloads all. Reading one row back from vec0 costs ~30 us (it reads into a chunk of
1,024 vectors), ~1 ms for each 32-frame part a cognify import applies, a third of its link
search; so the writer hands the frame vectors it wrote over once they are committed
(:meth:`VectorIndex.handoff`, by their log seqs), and a refresh takes a logged change from
there when the change is the item's latest and its seq matches. All SQLite and NumPy work
runs in worker threads on the index's own read-only connection.

Concurrency: the refresh runs under a lock; the scans do not. Rows are append-only (a changed
vector gets a new row, the old one is masked; growth reallocates), so a search reads views of
the rows that existed when it started, with a copy of their live flags, while the next refresh
appends; masked rows are compacted by a full reload once they outnumber the live ones.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mind.constants import T_CHUNKS_VEC, T_FRAMES_VEC
from mind.errors import VectorError
from mind.retrieval import int8_scan
from mind.retrieval import vector_scan as scan
from mind.retrieval.int4_blocks import Block
from mind.retrieval.scan_pool import prepare_pool, run_blocks
from mind.retrieval.vector_scan import BLOCK_ROWS
from mind.storage.connection import connect_peek

log = logging.getLogger(__name__)

FULL_RELOAD_AFTER = 20_000  # changed rows beyond which a full reload is cheaper
HANDOFF_MAX_ROWS = 8_192  # vectors handed over and not yet taken by a refresh, at most
MIN_DEAD_ROWS_TO_COMPACT = 1024  # masked rows are dropped by a reload once they outnumber live
QUANTIZE_MIN_ROWS = 20_000  # from here on a scan goes through the int8 rows first (> 1 ms saved)
BATCH_CODES_MIN_ROWS = 8_192  # ... and from here on the int8 rows exist for many queries at once
MANY_QUERIES = 4  # this many at once: one product of each block with all of them (docstring)
GATHER_FRACTION = 0.125  # a filter keeping fewer rows than both of these is scored on its
GATHER_MAX_ROWS = 50_000  # own rows only (gathered) instead of masking a scan of all rows
LOAD_BATCH = 8_192
INLINE_SIMILARITIES = 2_000  # frames (and chunk rows) few enough to score on the event loop
BACKGROUND_SAMPLE = 256  # frame rows a query's background cosine is taken over
@dataclass(frozen=True)
class _Snapshot:
    vectors: np.ndarray  # views: rows below this size are never written again
    codes: np.ndarray | None  # int8 rows, when the matrix keeps them
    scale: np.ndarray | None
    owners: np.ndarray  # views too: a row's owner never changes
    keep: np.ndarray  # a copy of the rows' live flags (removals after this do not show)
    live: int
    packed: tuple[Block, ...] = ()  # the first full blocks' packed codes


@dataclass
class _Matrix:
    """Rows of vectors (and, once :meth:`quantize` ran, their int8 codes) addressed by item
    id, with owner frame ids (itself for frames) and live flags (a removed row keeps its
    owner: a search reading it sees the row as it was)."""

    dim: int
    owners: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    alive: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))
    vectors: np.ndarray = field(default_factory=lambda: np.empty((0, 0), dtype=np.float32))
    codes: np.ndarray | None = None
    scale: np.ndarray | None = None
    size: int = 0
    rows: dict[int, int] = field(default_factory=dict)
    packed: tuple[Block, ...] = ()

    def __post_init__(self) -> None:
        self.vectors = np.zeros((0, self.dim), dtype=np.float32)

    def reserve(self, need: int) -> None:
        """Room for ``need`` more rows (doubling; exact when told the total up front)."""
        cap = len(self.owners)
        if self.size + need <= cap:
            return
        new_cap = max(1024, self.size + need if self.size == 0 else cap * 2, self.size + need)
        owners = np.full(new_cap, -1, dtype=np.int64)
        alive = np.zeros(new_cap, dtype=bool)
        vecs = np.zeros((new_cap, self.dim), dtype=np.float32)
        n = self.size
        owners[:n], alive[:n], vecs[:n] = self.owners[:n], self.alive[:n], self.vectors[:n]
        if self.codes is not None:
            codes = np.zeros((new_cap, self.dim), dtype=np.uint8)
            codes[:n] = self.codes[:n]
            self.codes = codes
        self.owners, self.alive, self.vectors = owners, alive, vecs

    def put(self, item_id: int, owner: int, vector: np.ndarray) -> None:
        self.put_many(np.array([item_id]), np.array([owner]), np.asarray(vector)[None, :])

    def put_many(self, item_ids: np.ndarray, owners: np.ndarray, vectors: np.ndarray) -> None:
        """Append-only: a changed vector goes to a new row and its old row is masked, so rows a
        search is reading (below the size it saw) are never written (:class:`_Snapshot`)."""
        for item_id in item_ids.tolist():
            self.remove(item_id)
        m = len(item_ids)
        self.reserve(m)
        start, stop = self.size, self.size + m
        self.owners[start:stop] = owners
        self.alive[start:stop] = True
        self.vectors[start:stop] = vectors
        if self.codes is not None and self.scale is not None:
            int8_scan.encode(self.vectors[start:stop], self.scale, self.codes[start:stop])
        self.rows.update(zip(item_ids.tolist(), range(start, stop), strict=True))
        self.size = stop

    def quantize(self, pack: bool = True) -> None:
        """Build the int8 codes of every row, with scales from these rows (once: appends keep
        them up to date), and (``pack``) pack every block of them that is full."""
        if self.codes is None:
            self.scale = int8_scan.scales(self.vectors[:self.size])
            codes = np.zeros((len(self.owners), self.dim), dtype=np.uint8)
            int8_scan.encode(self.vectors[:self.size], self.scale, codes[:self.size])
            self.codes = codes
        if pack:
            self.packed = int8_scan.pack(self.vectors, self.size, self.packed, run_blocks)

    def blocks_due(self) -> bool:
        """A block filled since the last packing."""
        return self.size // BLOCK_ROWS > len(self.packed)

    def remove(self, item_id: int) -> None:
        row = self.rows.pop(item_id, None)
        if row is not None:  # the vector and its owner stay: a search may be reading them
            self.alive[row] = False

    def dead(self) -> int:
        return self.size - len(self.rows)

    def rows_of(self, item_ids: np.ndarray) -> np.ndarray:
        """Rows of the given items that have a vector (no scan of the owners)."""
        found = (self.rows.get(i) for i in item_ids.tolist())
        return np.fromiter((r for r in found if r is not None), dtype=np.int64)

    def few(self, item_ids: np.ndarray | None) -> bool:
        """Whether these items are few enough to be scored on their own rows."""
        return item_ids is not None and len(item_ids) <= min(GATHER_FRACTION * self.size,
                                                             GATHER_MAX_ROWS)

    def snapshot(self, window: int | None = None) -> _Snapshot:
        """What a search reads outside the lock: views of the rows written so far and of their
        owners (never written again) and a copy of their live flags (removals after this do
        not show: 1 byte a row, where copying the owners was 8, ~1 ms a search at 1,000,000
        rows); with ``window``, only the last ``window`` rows."""
        n = self.size
        first = 0 if window is None else max(0, n - window)
        keep = self.alive[first:n].copy()
        live = len(self.rows) if first == 0 else int(np.count_nonzero(keep))
        codes = None if self.codes is None else self.codes[first:n]
        return _Snapshot(self.vectors[first:n], codes, self.scale, self.owners[first:n], keep,
                         live, self.packed if first == 0 else ())

    def live(self) -> int:
        return len(self.rows)

    def nbytes(self) -> int:
        codes = 0 if self.codes is None else self.codes.nbytes
        codes += sum(p.nbytes for p in self.packed)
        return codes + sum(a.nbytes for a in (self.owners, self.alive, self.vectors))


def _scan(snap: _Snapshot, queries: np.ndarray, take: int, allowed: np.ndarray | None,
          quantize_min_rows: int, floor: float | None = None) -> scan.Hits:
    """Top ``take`` rows per query of one matrix (exact, quantized or gathered); ``floor``:
    the exact scan may leave out rows below this similarity (the others filter afterwards)."""
    keep = snap.keep if allowed is None else snap.keep & np.isin(snap.owners, allowed)
    live = snap.live if allowed is None else int(np.count_nonzero(keep))
    if live == 0:
        return [(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32))] * len(queries)
    if allowed is not None and live <= min(GATHER_FRACTION * len(keep), GATHER_MAX_ROWS):
        return scan.gathered(snap.vectors, np.flatnonzero(keep), queries, take)
    if snap.codes is not None and snap.scale is not None:
        if len(queries) >= MANY_QUERIES:
            return int8_scan.quantized_many(snap.vectors, snap.codes, snap.scale, keep, queries,
                                            take, run_blocks)
        if live >= quantize_min_rows:
            return [int8_scan.quantized(snap.vectors, snap.codes, snap.scale, keep, q, take,
                                        run_blocks, snap.packed) for q in queries]
    return scan.exact(snap.vectors, keep, queries, take, run_blocks, floor)


class VectorIndex:
    """Cosine search over normalized vectors; results are (frame_id, similarity)."""

    def __init__(self, path: str | Path | None, dim: int, *,
                 quantize_min_rows: int | None = None) -> None:
        """The index of the mind file at ``path``; with ``None`` an index of no file, holding
        only the frame vectors given to :meth:`add` (the index measured by itself)."""
        self.path = "" if path is None else str(path)
        self.detached = path is None
        self.dim = dim
        self.quantize_min_rows = (QUANTIZE_MIN_ROWS if quantize_min_rows is None
                                  else quantize_min_rows)
        self._frames = _Matrix(dim)
        self._background: tuple[int, np.ndarray] | None = None  # (rows when sampled, sample)
        self._chunks = _Matrix(dim)
        self._seq = -1
        self._handed: dict[int, tuple[int, bytes]] = {}  # log seq -> (frame id, blob)
        self._conn: Any = None
        self._lock = threading.Lock()
        self._packing: threading.Thread | None = None  # full blocks being packed
        prepare_pool()

    @property
    def size(self) -> int:
        return self._frames.live()

    @property
    def nbytes(self) -> int:
        """Memory held by the index's arrays (capacity included)."""
        return self._frames.nbytes() + self._chunks.nbytes()

    def status(self) -> dict[str, Any]:
        """``hive-mind status``: live frame and chunk rows, the arrays' bytes, and how a search
        scans (``exact``, or ``quantized`` with ``blocks_4bit`` full blocks as 4-bit codes)."""
        frames = self._frames
        return {"frames": frames.live(), "chunks": self._chunks.live(), "bytes": self.nbytes,
                "scan": "exact" if frames.codes is None else "quantized",
                "blocks_4bit": len(frames.packed)}

    def _connection(self) -> Any:
        if self._conn is None:
            self._conn = connect_peek(self.path)  # reads only: the lightest connection
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- freshness --------------------------------------------------------------------------

    def _refresh_sync(self) -> None:
        if self.detached:
            return
        conn = self._connection()
        top = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM vector_log").fetchone()[0]
        if top == self._seq:
            return
        if self._seq < 0:
            self._reload_all(conn, top)
            return
        first = conn.execute("SELECT MIN(seq) FROM vector_log").fetchone()[0]
        changes = conn.execute(
            "SELECT seq, kind, item_id FROM vector_log WHERE seq > ? AND seq <= ? ORDER BY seq",
            (self._seq, top)).fetchall()
        if (first is not None and first > self._seq + 1) or len(changes) > FULL_RELOAD_AFTER or any(
            c[1] == "reset" for c in changes
        ):
            self._reload_all(conn, top)
            return
        latest = {(kind, item_id): seq for seq, kind, item_id in changes}
        for (kind, item_id), seq in latest.items():
            handed = self._handed.get(seq) if kind == "frame" else None
            if handed is not None and handed[0] == item_id:
                self._frames.put(item_id, item_id, np.frombuffer(handed[1], dtype="<f4"))
            else:
                self._reload_one(conn, kind, item_id)
        self._seq = top
        self._drop_handed()
        if any(m.dead() > max(MIN_DEAD_ROWS_TO_COMPACT, m.live()) for m in (self._frames,
                                                                         self._chunks)):
            self._reload_all(conn, top)  # updates are appends: compact the masked rows

    def _reload_all(self, conn: Any, top: int) -> None:
        """Load every vector in batches into matrices sized up front (no regrowth)."""
        frames, chunks = _Matrix(self.dim), _Matrix(self.dim)
        if self._tables_exist(conn):
            owners = dict(conn.execute("SELECT id, frame_id FROM memory_frame_chunks").fetchall())
            for matrix, table, owner_of in ((frames, T_FRAMES_VEC, None),
                                            (chunks, T_CHUNKS_VEC, owners)):
                total = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                matrix.reserve(int(total))
                cursor = conn.execute(f"SELECT rowid, embedding FROM {table}")
                while batch := cursor.fetchmany(LOAD_BATCH):
                    self._put_batch(matrix, batch, owner_of)
        self._frames, self._chunks = frames, chunks
        self._seq = top
        self._drop_handed()
        conn.execute("PRAGMA shrink_memory")  # the vectors are here now: drop their pages

    def _put_batch(self, matrix: _Matrix, batch: list[Any], owner_of: dict[int, int] | None
                   ) -> None:
        if owner_of is not None:  # a chunk whose row is gone has no owner: skip it
            batch = [row for row in batch if row[0] in owner_of]
        if not batch:
            return
        ids = np.fromiter((row[0] for row in batch), dtype=np.int64, count=len(batch))
        owners = ids if owner_of is None else np.fromiter(
            (owner_of[i] for i in ids.tolist()), dtype=np.int64, count=len(ids))
        blob = b"".join(row[1] for row in batch)
        vectors = np.frombuffer(blob, dtype="<f4").reshape(len(batch), self.dim)
        matrix.put_many(ids, owners, vectors)

    def add(self, frame_ids: np.ndarray, vectors: np.ndarray) -> None:
        """Put frames' vectors (normalized float32 rows, one per id) into an index of no file;
        a mind's index reads its vectors from the mind file instead (:class:`VectorError`)."""
        if not self.detached:
            raise VectorError(f"the index of {self.path} reads its vectors from the mind file")
        ids = np.asarray(frame_ids, dtype=np.int64)
        rows = np.asarray(vectors, dtype=np.float32)
        if rows.shape != (len(ids), self.dim):
            raise VectorError(f"{len(ids)} ids and vectors of shape {rows.shape}: expected "
                              f"({len(ids)}, {self.dim})")
        with self._lock:
            self._frames.put_many(ids, ids, rows)

    def handoff(self, first_seq: int, rows: list[tuple[int, bytes]]) -> None:
        """Frame vectors a **committed** write logged at seqs ``first_seq``, ``first_seq + 1``,
        ... (in ``rows``' order, ``(frame id, float32 blob)``): the next refresh takes them from
        here instead of reading vec0 (module docstring). Ignored before the first load (which
        reads everything), for seqs a refresh has passed, and beyond
        :data:`HANDOFF_MAX_ROWS` waiting."""
        with self._lock:
            if self._seq < 0 or first_seq <= 0 or len(self._handed) + len(rows) > HANDOFF_MAX_ROWS:
                return
            for offset, row in enumerate(rows):
                if first_seq + offset > self._seq:
                    self._handed[first_seq + offset] = row

    def _drop_handed(self) -> None:
        if self._handed:
            self._handed = {s: row for s, row in self._handed.items() if s > self._seq}

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
        return (await asyncio.to_thread(self.search_many_blocking, q[None, :], k, allowed))[0]

    def _snapshots(self, frame_ids: np.ndarray | None = None, window: int | None = None
                   ) -> tuple[_Snapshot, _Snapshot, np.ndarray | None]:
        """Refresh and take both matrices' snapshots under the lock, with the rows of
        ``frame_ids`` when they are few; the scans run outside it, so concurrent searches are
        not serialized (NumPy releases the GIL)."""
        with self._lock:
            self._update_sync()
            frames = self._frames
            rows = frames.rows_of(frame_ids) if frame_ids is not None and frames.few(
                frame_ids) else None
            return frames.snapshot(window), self._chunks.snapshot(window), rows

    def search_many_blocking(
        self, queries: np.ndarray, k: int, allowed: np.ndarray | None = None,
        window: int | None = None, floor: float | None = None,
    ) -> list[list[tuple[int, float]]]:
        """:meth:`search_many` in the calling thread, which it blocks for the whole scan
        (``queries``: float32 rows of the index's dimension; ``allowed``: frame ids a search
        is restricted to). :meth:`search` and :meth:`search_many` run it on a worker thread;
        a caller that is a worker thread already, or times the scan alone, calls it."""
        if allowed is not None and window is not None:
            raise ValueError("a search takes either allowed frames or a window, not both")
        frames, chunks, frame_rows = self._snapshots(allowed, window)
        out: list[dict[int, float]] = [{} for _ in range(len(queries))]
        for matrix, take in ((frames, k), (chunks, k * 4)):
            if matrix.live == 0:
                continue
            if matrix is frames and frame_rows is not None:  # a filter keeping few frames
                hits = scan.gathered(matrix.vectors, frame_rows, queries, take)
            else:
                hits = _scan(matrix, queries, take, allowed, self.quantize_min_rows, floor)
            low = -2.0 if floor is None else floor
            for best, (rows, sims) in zip(out, hits, strict=True):
                for owner, sim in zip(matrix.owners[rows].tolist(), sims.tolist(), strict=True):
                    if sim >= low and sim > best.get(owner, -2.0):
                        best[owner] = sim
        return [sorted(b.items(), key=lambda kv: -kv[1])[:k] for b in out]

    async def similarities(self, query: np.ndarray, frame_ids: list[int]) -> dict[int, float]:
        """Cosine similarity of the given frames (frame vector or best chunk) to ``query``;
        frames without a vector are left out. Lets fusion score a candidate the vector lane's
        top k did not reach. The rows are those of the last search or refresh (no refresh: it
        follows the lane's search), read without the lock (rows are append-only and a reload
        swaps whole matrices); a few frames of a mind with few chunks are scored right here,
        more in a worker thread."""
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dim:
            raise VectorError(f"query vector has dimension {q.shape[0]}, the index has {self.dim}")
        if not frame_ids:
            return {}
        wanted = np.asarray(frame_ids, dtype=np.int64)
        if len(wanted) <= INLINE_SIMILARITIES and self._chunks.size <= INLINE_SIMILARITIES:
            return self._similarities_sync(q, wanted)
        return await asyncio.to_thread(self._similarities_sync, q, wanted)

    def _similarities_sync(self, q: np.ndarray, wanted: np.ndarray) -> dict[int, float]:
        best: dict[int, float] = {}
        frames, chunks = self._frames, self._chunks
        for matrix in (frames, chunks):
            if matrix is frames:
                rows = frames.rows_of(wanted)
            else:
                n = matrix.size
                rows = np.flatnonzero(np.isin(matrix.owners[:n], wanted) & matrix.alive[:n])
            if rows.size == 0:
                continue
            for owner, sim in zip(matrix.owners[rows].tolist(),
                                  (matrix.vectors[rows] @ q).tolist(), strict=True):
                if sim > best.get(owner, -2.0):
                    best[owner] = sim
        return best

    def background(self, query: np.ndarray, sample: int = BACKGROUND_SAMPLE) -> float | None:
        """Mean cosine of ``query`` to this mind's frames, from an evenly spaced sample of at
        most ``sample`` live frame rows (~20 us at 256 × 384): what an unrelated frame of this
        mind scores for this query (:mod:`mind.retrieval.relevance`). ``None`` when empty."""
        frames = self._frames
        n = frames.size
        if n == 0:
            return None
        cached = self._background
        if cached is None or cached[0] != n:  # rows only append: the size names the sample
            rows = np.arange(0, n, max(1, n // sample))
            rows = rows[frames.alive[rows]]
            cached = self._background = (n, np.ascontiguousarray(frames.vectors[rows]))
        if cached[1].size == 0:
            return None
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        return float((cached[1] @ q).mean())

    async def search_many(self, queries: np.ndarray, k: int, *, window: int | None = None,
                          allowed: np.ndarray | None = None, floor: float | None = None
                          ) -> list[list[tuple[int, float]]]:
        """:meth:`search` for many query vectors in one matrix product; ``window`` searches
        only the most recently written ``window`` frame rows (and as many chunk rows),
        ``allowed`` only these frames; ``floor``: only frames at least this similar (fewer than
        ``k`` when few are)."""
        q = np.asarray(queries, dtype=np.float32)
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise VectorError(f"queries have shape {q.shape}, the index has {self.dim} dims")
        if len(q) == 0:
            return []
        return await asyncio.to_thread(self.search_many_blocking, q, k, allowed, window, floor)

    def _update_sync(self) -> None:
        """Refresh, then build the int8 codes and pack the full blocks a search will use: all
        of them with the codes (a load), a block that filled later on a thread of its own."""
        self._refresh_sync()
        for matrix in (self._frames, self._chunks):
            if matrix.live() >= min(self.quantize_min_rows, BATCH_CODES_MIN_ROWS):
                later = matrix.codes is not None and matrix.blocks_due()
                matrix.quantize(pack=not later)
                if later:
                    self._pack_later(matrix)

    def _pack_later(self, matrix: _Matrix) -> None:
        """Pack the blocks that filled since, on a thread, outside the lock (under the lock: a
        block takes ~40 ms, which every search of the mind waited for, once per 32,768 rows an
        import added). Searches meanwhile score those rows by their int8 codes, as before the
        block filled. ONNX Runtime packs without holding the GIL."""
        if self._packing is not None:
            return
        vectors, size, packed = matrix.vectors, matrix.size, matrix.packed

        def run() -> None:
            try:
                blocks = int8_scan.pack(vectors, size, packed)
                with self._lock:
                    if matrix.packed is packed:  # a reload may have replaced it meanwhile
                        matrix.packed = blocks
            except Exception:  # the int8 codes keep answering; the next refresh tries again
                log.warning("packing a block of %s failed", self.path, exc_info=True)
            finally:
                self._packing = None

        self._packing = threading.Thread(target=run, name="vector-blocks", daemon=True)
        self._packing.start()

    async def refresh(self) -> None:
        """Read the changes since the last look, and prepare the codes a search needs."""
        def run() -> None:
            with self._lock:
                self._update_sync()

        await asyncio.to_thread(run)

    async def warm(self) -> None:
        """:meth:`refresh`, then one search, so that what a process's first search sets up
        (ONNX Runtime sessions and their first runs, the scan pool's threads) is done before
        a request needs it (a server's warm-up: :mod:`hive_mind.warmup`)."""
        await self.refresh()
        if self.size:
            await self.search(np.full(self.dim, self.dim ** -0.5, dtype=np.float32), 10)
