"""The vector index's scans, as plain functions over NumPy arrays (no SQLite, no locks).

* **exact**: the float32 matrix-vector product, in row blocks (each block's top rows kept);
  **gathered**: the same over a few given rows. The int8 pass that picks candidates for them
  at scale is :mod:`mind.retrieval.int8_scan`.
* **sign bits** (one bit per dimension, column-major ``(words, rows)`` uint64) scored against a
  query's 4-bit levels split into bit planes: ``q · sign(x)`` as a sum of
  ``popcount(plane & bits) << p``, an *asymmetric* estimate (the query is not binarized). The
  cross-mind routing summaries are made of these (:mod:`mind.retrieval.routing`).

Rows are masked by a boolean ``keep`` (removed rows, filters) inside the scan: the matrix is
never copied; only a filter's own rows, or the candidates, are gathered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

import numpy as np

BLOCK_ROWS = 32_768  # one block's temporaries stay in a 2 MB L2 cache
QUERY_BITS = 4  # recall@10, 1M random rows, 1 % re-scored: 3 bits 0.957, 4: 0.977, float 0.967
SCALE = 16  # integer scores carry the popcount offset term to 1/16 of a level
FLOOR = np.iinfo(np.int32).min  # an integer estimate no kept row gets: masked rows


def words(dim: int) -> int:
    """uint64 words holding one sign bit per dimension."""
    return (dim + 63) // 64


def sign_codes(vectors: np.ndarray) -> np.ndarray:
    """``(words, rows)`` uint64: bit j of a row is 1 where dimension j is positive."""
    m, dim = vectors.shape
    packed = np.zeros((m, words(dim) * 8), dtype=np.uint8)
    packed[:, : (dim + 7) // 8] = np.packbits(vectors > 0, axis=1)
    return np.ascontiguousarray(packed.view(np.uint64).T)


def ones(codes: np.ndarray) -> np.ndarray:
    """Set bits per row of ``codes`` (the popcount term of :func:`quantized_scores`)."""
    out = np.zeros(codes.shape[1], dtype=np.int32)
    for word in codes:
        out += np.bitwise_count(word)
    return out


def blocks(n: int) -> Iterator[tuple[int, int]]:
    for start in range(0, n, BLOCK_ROWS):
        yield start, min(n, start + BLOCK_ROWS)


class QueryPlanes:
    """A query as 4-bit levels ``lo + delta * level`` split into bit planes, so that
    ``q · bits(x) ≈ delta * Σ_p 2^p popcount(plane_p & bits(x)) + lo * popcount(bits(x))``."""

    def __init__(self, query: np.ndarray) -> None:
        q = np.asarray(query, dtype=np.float64).reshape(-1)
        top = (1 << QUERY_BITS) - 1
        lo, hi = float(q.min()), float(q.max())
        delta = (hi - lo) / top if hi > lo else 1.0
        levels = np.rint((q - lo) / delta).astype(np.uint8)
        planes = [((levels >> p) & 1).astype(bool)[None, :] for p in range(QUERY_BITS)]
        self.planes = np.concatenate([sign_codes(p) for p in planes], axis=1).T  # (bits, words)
        self.offset = round(SCALE * lo / delta)  # per set bit of a row, in SCALE units

    def floor(self, dim: int) -> int:
        """Below every score a row can get: the score of masked rows."""
        return -abs(self.offset) * dim - 1


def quantized_scores(codes: np.ndarray, row_ones: np.ndarray, planes: QueryPlanes, start: int,
                     stop: int) -> np.ndarray:
    """Integer estimates of ``q · x`` (up to a positive scale and a constant) for rows
    ``start:stop``: higher is more similar. Popcounts of three words add up in uint8 (at most
    192), a plane's in uint16 (at most the dimension): 16 % faster than int32 throughout."""
    m = stop - start
    acc = np.zeros(m, dtype=np.int32)
    both = np.empty(m, dtype=np.uint64)
    count = np.empty(m, dtype=np.uint8)
    part = np.empty(m, dtype=np.uint8)
    plane_sum = np.empty(m, dtype=np.uint16)
    n_words = codes.shape[0]
    for p in range(QUERY_BITS):
        plane_sum[:] = 0
        for first in range(0, n_words, 3):
            for w in range(first, min(n_words, first + 3)):
                np.bitwise_and(codes[w, start:stop], planes.planes[p, w], out=both)
                np.bitwise_count(both, out=count if w == first else part)
                if w != first:
                    count += part
            plane_sum += count
        acc += plane_sum.astype(np.int32) << p
    acc *= SCALE
    acc += planes.offset * row_ones[start:stop]
    return acc


def _sample(n: int, count: int) -> tuple[int, int] | None:
    """``(stride, j)``: the strided sample of ``n`` values whose ``j``-th largest is a threshold
    that keeps about ``2 × count`` of them (:func:`largest`); None when ``n`` is too small."""
    stride = n // (8 * count)
    return (stride, 2 * count // stride + 1) if stride >= 4 else None


def largest(values: np.ndarray, count: int) -> np.ndarray:
    """Indices of the ``count`` largest ``values`` (unordered; ``0 < count < len(values)``).

    ``np.argpartition`` over a block's 32,768 estimates takes ~0.32 ms whatever ``count``, 30
    times a query at 1,000,000 rows: a third of the quantized pass. So a strided sample of
    about ``8 × count`` values is partitioned first; its value at twice the wanted share is a
    threshold that keeps ~2 × ``count`` rows, of which the best are picked: 0.04 ms for the
    280 of a recall's vector lane. A threshold that keeps too few (it cannot keep the wrong
    ones) falls back to the full partition."""
    n = len(values)
    if sampled := _sample(n, count):
        stride, j = sampled
        sample = values[::stride]
        threshold = np.partition(sample, len(sample) - j)[len(sample) - j]
        rows = np.flatnonzero(values >= threshold)
        if len(rows) >= count:
            return rows[np.argpartition(values[rows], len(rows) - count)[len(rows) - count:]]
    return np.argpartition(values, n - count)[n - count:]


def column_candidates(est: np.ndarray, count: int) -> np.ndarray:
    """Flat indices into ``est`` (rows, queries; masked rows at :data:`FLOOR`) of at least the
    ``count`` largest of every column: those at or above the column's threshold from a strided
    sample, as :func:`largest` picks them (~2 × ``count`` rows), or, for the columns whose
    sample kept too few, at or above their exact ``count``-th largest."""
    n, m = est.shape
    threshold = np.full(m, FLOOR + 1, dtype=est.dtype)
    short = np.ones(m, dtype=bool)
    if sampled := _sample(n, count):
        stride, j = sampled
        sample = est[::stride]
        np.maximum(np.partition(sample, len(sample) - j, axis=0)[len(sample) - j], FLOOR + 1,
                   out=threshold)
        picked = np.flatnonzero(est >= threshold)
        short = np.bincount(picked % m, minlength=m) < count
        if not short.any():
            return picked
    exact = np.partition(est[:, short], n - count, axis=0)[n - count]
    threshold[short] = np.maximum(exact, FLOOR + 1)
    return np.flatnonzero(est >= threshold)


def rescored(vectors: np.ndarray, queries: np.ndarray, rows: np.ndarray, owners: np.ndarray,
             estimates: np.ndarray, want: int, take: int) -> Hits:
    """Exact top ``take`` rows of each query (best first) among its ``want`` best candidates
    by (integer) estimate; candidate ``i`` is row ``rows[i]`` for query ``owners[i]``. The
    candidates are laid out as a (queries, want) grid, so one batched product scores them all
    (no copy of a query per candidate)."""
    n, (m, _) = len(rows), queries.shape
    # by query, then best estimate first: one int64 key (integer estimates span < 2^32)
    order = np.argsort(owners * (1 << 33) - estimates.astype(np.int64))
    rows, owners = rows[order], owners[order]
    rank = np.arange(n) - np.searchsorted(owners, owners)
    kept = rank < want
    grid = np.zeros((m, want), dtype=np.int64)
    filled = np.zeros((m, want), dtype=bool)
    grid[owners[kept], rank[kept]] = rows[kept]
    filled[owners[kept], rank[kept]] = True
    sims = np.matmul(vectors[grid], queries[:, :, None])[:, :, 0]
    sims[~filled] = -np.inf
    best = (np.argpartition(-sims, take - 1, axis=1)[:, :take] if take < want
            else np.broadcast_to(np.arange(want), (m, want)))
    out: Hits = []
    for i in range(m):
        pick = best[i][filled[i, best[i]]]
        pick = pick[np.argsort(-sims[i, pick], kind="stable")]
        out.append((grid[i, pick], sims[i, pick]))
    return out


def top_of(sims: np.ndarray, rows: np.ndarray, take: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``take`` best ``(rows, sims)`` of one query's similarities (unordered)."""
    if take <= 0:
        return rows[:0], sims[:0]
    if take < len(sims):
        best = np.argpartition(-sims, take - 1)[:take]
        return rows[best], sims[best]
    return rows, sims


Hits = list[tuple[np.ndarray, np.ndarray]]  # per query: (row indices, similarities)
Runner = Callable[[list[Callable[[], object]]], list[object]]


def serial(tasks: list[Callable[[], object]]) -> list[object]:
    return [task() for task in tasks]


def exact(vectors: np.ndarray, keep: np.ndarray, queries: np.ndarray, take: int,
          run: Runner = serial, floor: float | None = None) -> Hits:
    """Exact top ``take`` rows per query among rows where ``keep``: one product per block
    (``run`` may spread the blocks over threads). With a ``floor``, only rows whose
    similarity reaches it (a link search's threshold: one comparison over the block instead of
    a partial sort of every query's row, ~4x cheaper)."""

    def block(start: int, stop: int) -> Hits:
        # (queries, rows): each query's similarities contiguous, so the selection below runs
        # along memory (selecting down the columns of (rows, queries) took 4.5x as long)
        sims = queries @ vectors[start:stop].T
        mask = ~keep[start:stop]
        if mask.any():
            sims[:, mask] = -np.inf
        if floor is not None:
            return above(sims, floor, take, start)
        t = min(take, int(stop - start - np.count_nonzero(mask)))
        if t <= 0:
            return [(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32))] * len(queries)
        if t >= stop - start:
            rows = np.arange(stop - start)
            return [(rows + start, sims[i]) for i in range(len(queries))]
        best = np.argpartition(sims, -t, axis=1)[:, -t:]
        return [(best[i] + start, sims[i, best[i]]) for i in range(len(queries))]

    parts = run([partial(block, a, b) for a, b in blocks(len(vectors))])
    return [_merge([p[i] for p in parts], take) for i in range(len(queries))]  # type: ignore[index]


def above(sims: np.ndarray, floor: float, take: int, start: int = 0) -> Hits:
    """Per row of ``sims`` (one query's similarities to consecutive rows from ``start``): its
    best ``take`` at or above ``floor``."""
    hit_q, hit_r = np.nonzero(sims >= floor)
    bounds = np.searchsorted(hit_q, np.arange(len(sims) + 1))
    out: Hits = []
    for i in range(len(sims)):
        rows = hit_r[bounds[i]:bounds[i + 1]]
        found = top_of(sims[i, rows], rows, min(take, len(rows)))
        out.append((found[0] + start, found[1]))
    return out


def gathered(vectors: np.ndarray, rows: np.ndarray, queries: np.ndarray, take: int) -> Hits:
    """Exact top ``take`` among the given rows only (a filter's rows, or candidates)."""
    sims = vectors[rows] @ queries.T
    return [top_of(sims[:, i], rows, min(take, len(rows))) for i in range(len(queries))]


def _merge(parts: Hits, take: int) -> tuple[np.ndarray, np.ndarray]:
    rows = np.concatenate([p[0] for p in parts])
    sims = np.concatenate([p[1] for p in parts])
    return top_of(sims, rows, min(take, len(sims)))
