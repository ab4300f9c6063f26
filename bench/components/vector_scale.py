"""The in-memory vector index at 100,000 and 1,000,000 rows: RAM, search time exact vs the
quantized pass, and the quantized pass's recall@10 against exact search.

A shortcut, labelled as such: the index's matrix is filled directly from generated unit
vectors (384 dims; no mind file — the load from SQLite is measured by bench/product/serve_recall.py);
each search is ``VectorIndex.search_many_blocking`` with one query and k = 10, the lane's code
after its refresh (blocks on the scan pool, one BLAS thread). Data and queries:

* ``random``: uniform on the sphere, queries unrelated to the data — the hardest case for any
  coarse pass, since nothing but noise separates the top 10 from the rest;
* ``clustered``: 2,000 centers plus noise (cosine to the center ~0.7), queries near a stored
  vector (a memory the query is about);
* ``--scifact DIR``: real embeddings — SciFact abstracts split into sentences, and its
  queries, embedded by the product's in-process model — to see the estimate on the
  distribution it serves.

The sweep sets the int8 pass's candidates re-scored exactly per wanted row
(``int8_scan.CANDIDATES_PER_ROW``; the index's default is marked). The quantized pass scores
full blocks of rows as 4-bit codes (``int4_blocks``) and the rest as int8 codes.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.components.vector_scale [--rows 100000 1000000]
        [--queries 40] [--scifact $HIVE_MIND_SHARED_DATA/scifact]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
from pathlib import Path

import numpy as np
from bench.common import write_section

from mind.retrieval import int8_scan, vector_index
from mind.retrieval.vector_index import VectorIndex

DIM = 384
PER_ROW = (1, 2, 4, 16)


def unit(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    v = rng.standard_normal((n, dim), dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


def dataset(kind: str, n: int, queries: int, rng: np.random.Generator
            ) -> tuple[np.ndarray, np.ndarray]:
    if kind == "random":
        return unit(rng, n), unit(rng, queries)
    centers = unit(rng, 2000)
    x = rng.standard_normal((n, DIM), dtype=np.float32)
    x *= 0.05
    x += centers[rng.integers(0, len(centers), n)]
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    q = x[rng.integers(0, n, queries)] + 0.04 * rng.standard_normal((queries, DIM),
                                                                    dtype=np.float32)
    return x, q / np.linalg.norm(q, axis=1, keepdims=True)


def fill(x: np.ndarray) -> tuple[VectorIndex, float]:
    """An index of no mind file holding the rows of ``x`` as frames 1..n, and the seconds
    that took."""
    index = VectorIndex(None, x.shape[1])
    start = time.perf_counter()
    index.add(np.arange(1, len(x) + 1), x)
    return index, time.perf_counter() - start


def timed_search(index: VectorIndex, queries: np.ndarray) -> tuple[list[float], list[set[int]]]:
    index.search_many_blocking(queries[:1], 10)
    ms, found = [], []
    for q in queries:
        start = time.perf_counter()
        hits = index.search_many_blocking(q[None, :], 10)[0]
        ms.append((time.perf_counter() - start) * 1000)
        found.append({f for f, _ in hits})
    return ms, found


def scifact(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """SciFact sentences (over 30 characters) and queries, embedded by the product model."""
    from hive_mind.settings import load_settings
    from mind.embeddings.registry import PROVIDERS

    docs = [json.loads(line) for line in (folder / "corpus.jsonl").open()]
    sentences = [s for d in docs for s in re.split(r"(?<=[.!?])\s+", d["text"]) if len(s) > 30]
    queries = [json.loads(line)["text"] for line in (folder / "queries.jsonl").open()][:300]

    async def embed() -> tuple[np.ndarray, np.ndarray]:
        config = load_settings(embedding_provider="inprocess").embedding_config()
        embedder = PROVIDERS["inprocess"](config)
        return await embedder.embed_batch(sentences), await embedder.embed_batch(queries)

    return asyncio.run(embed())


def pct(values: list[float], p: float) -> float:
    return float(np.percentile(values, p))


def measure(name: str, x: np.ndarray, queries: np.ndarray, run_lengths: list[int]
            ) -> list[str]:
    per_row_set, floor = int8_scan.CANDIDATES_PER_ROW, int8_scan.MIN_CANDIDATES
    run_set = int8_scan.RUN_BLOCKS
    index, fill_s = fill(x)
    n = len(x)
    rows = []
    index.quantize_min_rows = n + 1
    exact_ms, truth = timed_search(index, queries)
    print(f"{name} {n:,}: fill {fill_s:.1f} s; exact p50 "
          f"{pct(exact_ms, 50):.1f} ms p95 {pct(exact_ms, 95):.1f} ms", flush=True)
    rows.append(f"| {name} | {n:,} | exact | {pct(exact_ms, 50):.1f} | {pct(exact_ms, 95):.1f} "
                f"| 1.000 | {index.nbytes / 2**20:,.0f} MiB |")

    def quantized_row(label: str) -> None:
        ms, found = timed_search(index, queries)
        recall = np.mean([len(a & b) / 10 for a, b in zip(found, truth, strict=True)])
        line = (f"| {name} | {n:,} | {label} | {pct(ms, 50):.1f} | {pct(ms, 95):.1f} | "
                f"{recall:.3f} | {index.nbytes / 2**20:,.0f} MiB |")
        print(line, flush=True)
        rows.append(line)

    index.quantize_min_rows = 0
    int8_scan.MIN_CANDIDATES = 1  # the per-row count alone decides
    for per_row in PER_ROW:
        int8_scan.CANDIDATES_PER_ROW = per_row
        mark = " (default)" if per_row == per_row_set else ""
        quantized_row(f"quantized, {per_row} × k re-scored{mark}")
    int8_scan.CANDIDATES_PER_ROW, int8_scan.MIN_CANDIDATES = per_row_set, floor
    for run_blocks in run_lengths:
        int8_scan.RUN_BLOCKS = run_blocks
        mark = " (default)" if run_blocks == run_set else ""
        quantized_row(f"quantized (default), runs of {run_blocks} block(s){mark}")
    int8_scan.RUN_BLOCKS = run_set
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--scifact", type=Path, help="folder with corpus.jsonl, queries.jsonl")
    parser.add_argument("--run-blocks", type=int, nargs="*", default=[],
                        help="also time the default pass with scan tasks of these many blocks")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    for n in args.rows:
        for kind in ("random", "clustered"):
            x, q = dataset(kind, n, args.queries, rng)
            rows += measure(kind, x, q, args.run_blocks)
            del x
    if args.scifact:
        x, q = scifact(args.scifact)
        rows += measure("SciFact sentences, real queries", x.astype(np.float32),
                        q.astype(np.float32), args.run_blocks)
    sizes = " ".join(map(str, args.rows))
    per_row, floor = int8_scan.CANDIDATES_PER_ROW, int8_scan.MIN_CANDIDATES
    threshold = vector_index.QUANTIZE_MIN_ROWS
    real = f" --scifact {args.scifact}" if args.scifact else ""
    if args.run_blocks:
        real += " --run-blocks " + " ".join(map(str, args.run_blocks))
    write_section("Vector index at scale (shortcut: the index alone)", f"""
Command: `HF_HUB_OFFLINE=1 .venv/bin/python -m bench.components.vector_scale --rows {sizes} --queries {args.queries}{real}`

A shortcut, labelled as such: the matrix is filled directly with generated unit vectors (384
dims, no mind file), each search is the vector lane's code after its refresh, k = 10, one
search at a time, the scan blocks on the process's scan pool (2 threads, one BLAS thread
each). "random": uniform vectors and unrelated queries (the hardest case for a coarse pass);
"clustered": 2,000 centers + noise, queries near a stored vector; "SciFact sentences": abstracts
split into sentences and 300 SciFact queries, embedded by the product model (real data, but
few rows). Recall@10 is against exact search on the same index. "quantized, N × k re-scored":
the quantized pass (`mind/retrieval/int8_scan.py`: each full 32,768-row block as 4-bit codes
scored by ONNX Runtime's `MatMulNBits`, `int4_blocks.py`, the rows after the last full block
as int8 codes) keeps the best N × k rows of each run of blocks by its estimate (a scan task
scores `RUN_BLOCKS` = {int8_scan.RUN_BLOCKS} consecutive blocks, then selects; "runs of R
block(s)" times other lengths), and re-scores the best N × k of those exactly; the index's
default is `CANDIDATES_PER_ROW` = {per_row} per wanted row, at least `MIN_CANDIDATES` =
{floor}. The index switches to the quantized pass from `QUANTIZE_MIN_ROWS` = {threshold:,}
rows; RAM is the index's arrays (float32 rows, and once quantized the int8 rows and the
4-bit blocks, counted twice: ours and ONNX Runtime's packed copy).

| data | rows | pass | p50 ms | p95 ms | recall@10 | index RAM |
|---|---:|---|---:|---:|---:|---:|
{chr(10).join(rows)}
""")


if __name__ == "__main__":
    main()
