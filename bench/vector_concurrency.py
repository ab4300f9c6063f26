"""Concurrent searches of the in-memory vector index: do two threads searching at once take
about as long as one (the products run outside the lock), or twice as long (serialized)?

A shortcut, labelled as such: the index's matrix is filled directly (100,000 × 384 unit
vectors, no mind file, no embedding); each search is ``VectorIndex._search_many_sync`` with
one query, k = 100, the lane's real code path after its refresh (its scan blocks on the
process's scan pool, one BLAS thread each). "serialized" holds one extra lock around every
search, which is what the index did before (issue #14).

    .venv/bin/python -m bench.vector_concurrency [--rows 100000] [--searches 60]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import threading
import time
from pathlib import Path

import numpy as np

from mind.retrieval.vector_index import VectorIndex

DIM = 384


def build(rows: int) -> VectorIndex:
    index = VectorIndex(Path("/nonexistent"), DIM)
    index._refresh_sync = lambda: None  # type: ignore[method-assign]  # filled below, no file
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((rows, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = np.arange(1, rows + 1)
    index._frames.put_many(ids, ids, vectors)
    return index


def run(index: VectorIndex, threads: int, searches: int, outer: threading.Lock | None) -> float:
    rng = np.random.default_rng(1)
    queries = rng.standard_normal((threads * searches, DIM)).astype(np.float32)

    def worker(part: np.ndarray) -> None:
        for q in part:
            if outer is None:
                index._search_many_sync(q[None, :], 100)
            else:
                with outer:
                    index._search_many_sync(q[None, :], 100)

    started = time.perf_counter()
    pool = [threading.Thread(target=worker, args=(queries[t::threads],)) for t in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return (time.perf_counter() - started) / (threads * searches) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--searches", type=int, default=60)
    args = parser.parse_args()
    index = build(args.rows)
    run(index, 1, 5, None)  # warm up
    rows = []
    for label, threads, lock in (("one thread", 1, None),
                                 ("two threads, serialized (before)", 2, threading.Lock()),
                                 ("two threads, concurrent (now)", 2, None)):
        per = [run(index, threads, args.searches, lock) for _ in range(3)]
        rows.append((label, statistics.median(per)))
    print(f"{args.rows:,} × {DIM} vectors, k = 100, {platform.processor() or platform.machine()}")
    for label, ms in rows:
        print(f"  {label:34s} {ms:6.2f} ms per search (wall / searches, median of 3)")
    print(f"  concurrent vs serialized: {rows[1][1] / rows[2][1]:.2f}× the throughput")


if __name__ == "__main__":
    main()
