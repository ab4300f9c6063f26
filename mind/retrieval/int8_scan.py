"""The vector index's quantized pass: int8 rows scored by ONNX Runtime, re-scored exactly.

Each stored vector is kept also as one byte per dimension: ``x_d / scale_d`` rounded to
``[-127, 127]`` and offset by 128 (uint8), with one scale per dimension (the largest
``|x_d|`` of the rows when the codes were built, so the codes use their whole range). A query
folds the scales into itself (``q_d * scale_d``) and is rounded to 7 bits, so ``codes @ q8``
ranks rows as ``x · q`` does up to a constant: the offset adds ``128 * sum(q8)`` to every row.

The product is ONNX Runtime's ``MatMulInteger`` (u8 × s8, VNNI where the CPU has it): 100,000
× 384 codes in ~2 ms on one core against ~4 ms for the sign-bit estimate it replaced and ~8 ms
for the float32 product, and its estimate is close enough (recall@10 1.000 against exact on
uniformly random vectors from 50 re-scored rows) that only a few candidates per wanted row are
re-scored from the float32 rows: the best ``4 × k`` estimates of the whole matrix (each block
keeps its own best ``4 × k``, and the best of those are re-scored; re-scoring every block's
best was 4 × as many rows at 100,000 rows). 7-bit queries keep a pair of u8 × s8 products
inside int16, where AVX2 without VNNI adds them (``vpmaddubsw`` saturates).

Rows are masked by a boolean ``keep`` inside each block; nothing is copied but a block's own
candidates.

Full blocks: ``MatMulInteger`` with the big matrix as its first input repacks that matrix on
every call (~12 ms for 100,000 × 384 codes on one core of a 2-core AMD EPYC without VNNI). So
every full block of rows (:data:`BLOCK_ROWS`, rows that never change once written) is scored
instead by a session that holds it as a constant, packed once when the session is made: first
as these int8 codes (0.34 ms a block), now as 4-bit codes
(:class:`~mind.retrieval.int4_blocks.Block`: half the bytes, and at 1,000,000 rows the scan is
bound by memory). Only the rows after the last full block go through the repacking product;
its estimate times the query's step (:func:`query_codes`) is ``x · q`` up to rounding, the
units of the 4-bit blocks' estimates, so the best candidates of all blocks are picked on one
scale.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from mind.retrieval.int4_blocks import Block, session_options
from mind.retrieval.vector_scan import (
    BLOCK_ROWS,
    FLOOR,
    Hits,
    Runner,
    blocks,
    column_candidates,
    gathered,
    largest,
    rescored,
    serial,
)

LEVELS = 127  # a stored dimension's range, either side of the offset
OFFSET = 128
QUERY_LEVELS = 63  # 7 bits: u8 * s8 pairs stay within int16 (module docstring)
CANDIDATES_PER_ROW = 4  # rows re-scored exactly per row asked for (the best of the whole matrix)
MIN_CANDIDATES = 64
ENCODE_ROWS = 8_192  # rows quantized at once (temporaries stay small)
RUN_BLOCKS = 4  # consecutive blocks a scan task scores before selecting (quantized)
MIN_TASKS = 4  # ... but runs stay short enough to give the scan pool this many tasks

_session: Any = None
_session_lock = threading.Lock()


def scales(vectors: np.ndarray) -> np.ndarray:
    """One scale per dimension: the largest ``|x_d|`` over ``vectors``, over :data:`LEVELS`."""
    if len(vectors) == 0:
        return np.full(vectors.shape[1], 1.0 / LEVELS, dtype=np.float32)
    top = np.zeros(vectors.shape[1], dtype=np.float32)
    for start in range(0, len(vectors), ENCODE_ROWS):
        np.maximum(top, np.abs(vectors[start:start + ENCODE_ROWS]).max(axis=0), out=top)
    top[top <= 0] = 1.0
    return (top / LEVELS).astype(np.float32)


def encode(vectors: np.ndarray, scale: np.ndarray, out: np.ndarray) -> None:
    """Write the uint8 codes of ``vectors`` into ``out`` (same rows); values beyond a
    dimension's scale (rows added after the scales were set) are clipped."""
    inverse = (1.0 / scale).astype(np.float32)
    for start in range(0, len(vectors), ENCODE_ROWS):
        part = vectors[start:start + ENCODE_ROWS] * inverse
        np.rint(part, out=part)
        np.clip(part, -LEVELS, LEVELS, out=part)
        part += OFFSET
        out[start:start + len(part)] = part


def query_codes(query: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, float]:
    """``(dim, 1)`` int8: the query with the row scales folded in, at 7 bits; and the step, the
    value of one unit of the product: ``x · q ≈ step * (codes - OFFSET) · q8``."""
    folded = np.asarray(query, dtype=np.float32).reshape(-1) * scale
    top = float(np.abs(folded).max())
    if top > 0:
        folded *= QUERY_LEVELS / top
    out: np.ndarray = np.rint(folded).astype(np.int8)[:, None]
    return out, (top / QUERY_LEVELS if top > 0 else 1.0)


# ``Y = MatMulInteger(A, B)``: A uint8 (rows, dim), B int8 (dim, queries), Y int32, opset 17,
# IR 8 — the bytes onnx.helper builds (tests/test_int8_scan.py checks they are equal), so that a
# search does not import ``onnx`` (0.6 s) to build it
MODEL = bytes.fromhex(
    "08081209686976652d6d696e643a580a180a01410a0142120159220d4d61744d756c496e74656765721209"
    "696e74385f7363616e5a0f0a0141120a0a08080212040a000a005a0f0a0142120a0a08080312040a000a00"
    "620f0a0159120a0a08080612040a000a0042040a001011")


def _matmul() -> Any:
    """One ONNX Runtime session per process (``run`` is thread-safe), one thread per call:
    the scan pool spreads the blocks over the cores."""
    global _session
    with _session_lock:
        if _session is None:
            import onnxruntime as ort

            _session = ort.InferenceSession(MODEL, session_options(),
                                            providers=["CPUExecutionProvider"])
        return _session


def scores(codes: np.ndarray, q8: np.ndarray) -> np.ndarray:
    """int32 ``codes @ q8`` for one block of rows, one column per query."""
    out: np.ndarray = _matmul().run(None, {"A": codes, "B": q8})[0]
    return out


def pack(vectors: np.ndarray, size: int, packed: tuple[Block, ...], run: Runner = serial
         ) -> tuple[Block, ...]:
    """``packed`` with a 4-bit :class:`~mind.retrieval.int4_blocks.Block` for every block of
    ``vectors[:size]`` that filled since (built by ``run``: an index loading 1,000,000 rows
    builds 30 at once)."""
    tasks: list[Callable[[], object]] = [
        partial(Block, vectors[i * BLOCK_ROWS:(i + 1) * BLOCK_ROWS])
        for i in range(len(packed), size // BLOCK_ROWS)]
    return packed + tuple(run(tasks)) if tasks else packed  # type: ignore[arg-type]


def quantized(vectors: np.ndarray, codes: np.ndarray, scale: np.ndarray, keep: np.ndarray,
              query: np.ndarray, take: int, run: Runner = serial,
              packed: tuple[Block, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
    """Top ``take`` rows for one query: the best ``CANDIDATES_PER_ROW * take`` rows by the
    estimate (kept rows only; each run of :data:`RUN_BLOCKS` blocks keeps its own best, then
    the best of those across runs: the estimates share one scale, that of ``x · q``) are
    re-scored exactly. The first ``len(packed)`` blocks are scored by their 4-bit
    :class:`~mind.retrieval.int4_blocks.Block` sessions, the rest by the int8 codes.

    A scan task scores a run of consecutive blocks before it selects: the first NumPy work
    after a block's product ran ~3× slower than the same work warm (0.2 against 0.06 ms, the
    product having streamed the block's codes through the caches), so one selection a run
    instead of one a block, and fewer tasks for the pool, took a 1,000,000-row search from
    p50 37.3 to 31.1 ms (first-generation Zen, pool of two threads; on a Zen 3 both are
    ~18 ms; bench/components/vector_scale.py --run-blocks). A smaller
    matrix keeps shorter runs, down to one block, so that the pool still gets
    :data:`MIN_TASKS` tasks to share (100,000 rows: four blocks, four tasks, as before)."""
    q = np.asarray(query, dtype=np.float32).reshape(1, -1)
    q8, step = query_codes(q[0], scale)
    want = max(MIN_CANDIDATES, CANDIDATES_PER_ROW * take)
    offset = OFFSET * int(q8.sum(dtype=np.int64))  # the repacking product's constant term

    def estimate(start: int, stop: int) -> np.ndarray:
        index = start // BLOCK_ROWS
        if index < len(packed) and stop - start == BLOCK_ROWS:
            return packed[index].scores(q)
        est = (scores(codes[start:stop], q8)[:, 0] - offset).astype(np.float32)
        est *= step
        return est

    def run_of_blocks(spans: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        start, stop = spans[0][0], spans[-1][1]
        parts = [estimate(a, b) for a, b in spans]
        est = parts[0] if len(parts) == 1 else np.concatenate(parts)
        live = keep[start:stop]
        if not live.all():
            est[~live] = -np.inf
        count = min(want, int(np.count_nonzero(live)))
        if count <= 0:
            return np.empty(0, dtype=np.int64), est[:0]
        best = largest(est, count) if count < len(est) else np.flatnonzero(live)
        return best + start, est[best]

    spans = list(blocks(len(vectors)))
    size = max(1, min(RUN_BLOCKS, len(spans) // MIN_TASKS))
    tasks: list[Callable[[], object]] = [partial(run_of_blocks, spans[i:i + size])
                                         for i in range(0, len(spans), size)]
    parts: list[Any] = run(tasks)
    rows = np.concatenate([p[0] for p in parts])
    if rows.size == 0:
        return rows, np.empty(0, dtype=np.float32)
    if rows.size > want:
        est = np.concatenate([p[1] for p in parts])
        rows = rows[np.argpartition(est, rows.size - want)[rows.size - want:]]
    return gathered(vectors, rows, q, take)[0]


def quantized_many(vectors: np.ndarray, codes: np.ndarray, scale: np.ndarray, keep: np.ndarray,
                   queries: np.ndarray, take: int, run: Runner = serial) -> Hits:
    """Top ``take`` rows for each of many queries (a cognify batch's links): each block's
    codes times all the queries' codes in one integer product, which reads the block once for
    all of them (64 queries × 32,768 rows: 6.3 ms, against 30-38 ms for the float32 product
    that did so before; 2-core Xeon), then per query the best ``CANDIDATES_PER_ROW * take``
    estimates of all blocks re-scored exactly, as :func:`quantized` does for one query."""
    q = np.asarray(queries, dtype=np.float32)
    q8 = np.concatenate([query_codes(row, scale)[0] for row in q], axis=1)  # (dim, queries)
    want = max(MIN_CANDIDATES, CANDIDATES_PER_ROW * take)

    def block(start: int, stop: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # (rows, queries); a query's constant term (OFFSET times the sum of its codes) is the
        # same in every block, so its raw products rank its rows across blocks
        est = scores(codes[start:stop], q8)
        live = keep[start:stop]
        if not live.all():
            est[~live] = FLOOR
        count = min(want, int(np.count_nonzero(live)))
        if count <= 0:
            empty = np.empty(0, dtype=np.int64)
            return empty, empty, np.empty(0, dtype=est.dtype)
        picked = column_candidates(est, count)
        rows, cols = np.divmod(picked, len(q))
        return rows + start, cols, est.reshape(-1)[picked]

    parts: list[Any] = run([partial(block, a, b) for a, b in blocks(len(vectors))])
    rows, cols, est = (np.concatenate([p[i] for p in parts]) for i in range(3))
    return rescored(vectors, q, rows, cols, est, want, take)
