"""Search latency at 10,000 and 100,000 frames in one mind, ours vs a flat sqlite-vec design.

Ours: keyword lane (FTS5) + exact in-memory vector index (native 384 dims, frames + chunks).
The flat design, same run, same frames: 1024-dim zero-padded vectors and sqlite-vec's flat
float KNN (`embedding MATCH ? AND k = ?`) as the vector lane; everything else identical (the
same `HybridSearch` with its vector index swapped). Also reported: sqlite-vec flat KNN at the
native 384 dims, to show why the in-memory index exists.

Frame texts are synthetic (words from a 5,000-word vocabulary) and frame vectors are random unit
vectors — latency does not depend on meaning. Queries are embedded with the real model; that
time is reported separately and excluded from the lane timings.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.components.search_latency [--sizes 10000 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from bench.common import write_section

from mind.storage.db import Database
from mind.embeddings.base import TargetDimEmbedder
from mind.embeddings.inprocess import InProcessEmbedder
from mind.frames.model import NewFrame
from mind.mind import Mind
from mind.retrieval.search import HybridSearch
from mind.retrieval.vector_index import VectorIndex

QUERIES = 100


class Vec0FlatIndex:
    """A flat vector lane: sqlite-vec brute-force KNN on a reader connection."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def search(self, query: np.ndarray, k: int, allowed: list[int] | None = None):  # type: ignore[no-untyped-def]
        rows = await self.db.fetchall(
            "SELECT rowid, distance FROM memory_frames_vec WHERE embedding MATCH ? AND k = ? "
            "ORDER BY distance", (np.asarray(query, dtype="<f4").tobytes(), k))
        return [(r[0], 1 - r[1] ** 2 / 2) for r in rows]

    async def similarities(self, query: np.ndarray, frame_ids: list[int]) -> dict[int, float]:
        if not frame_ids:
            return {}
        marks = ",".join("?" * len(frame_ids))
        rows = await self.db.fetchall(
            f"SELECT rowid, vec_distance_l2(embedding, ?) FROM memory_frames_vec "
            f"WHERE rowid IN ({marks})", (np.asarray(query, dtype="<f4").tobytes(), *frame_ids))
        return {r[0]: 1 - r[1] ** 2 / 2 for r in rows}

    def close(self) -> None:
        pass


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


async def build(path: Path, n: int, vocab: list[str], rng: random.Random, dim: int) -> None:
    nrng = np.random.default_rng(n)
    async with await Mind.open(path) as mind:
        for off in range(0, n, 5000):
            items = [NewFrame(f"s{(off + i) // 50}", " ".join(rng.choices(vocab, k=rng.randint(10, 40)))
                              + ("?" if (off + i) % 5 == 0 else "."), dedup=False)
                     for i in range(min(5000, n - off))]
            await mind.frames.insert_many(items)
        await mind.vectors.ensure_fingerprint("inprocess", "all-MiniLM-L6-v2", dim)
        for off in range(0, n, 10000):
            vecs = nrng.standard_normal((min(10000, n - off), dim)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            await mind.vectors.upsert_frame_vectors([(off + i + 1, v) for i, v in enumerate(vecs)])
        await mind.outbox.clear([i + 1 for i in range(n)])


async def pad_to_1024(path: Path) -> None:
    async with await Mind.open(path) as mind:
        rows = await mind.db.fetchall("SELECT rowid, embedding FROM memory_frames_vec")
        await mind.vectors.reset("inprocess", "all-MiniLM-L6-v2@1024", 1024)
        padded = [(r[0], np.pad(np.frombuffer(r[1], dtype="<f4"), (0, 1024 - 384))) for r in rows]
        for off in range(0, len(padded), 10000):
            await mind.vectors.upsert_frame_vectors(padded[off : off + 10000])
        await mind.outbox.clear([r[0] for r in rows])


async def time_lane(search: HybridSearch, queries: list[str], lanes: str) -> list[float]:
    await search.search(queries[0], lanes=lanes, touch=False, catch_up=False)  # type: ignore[arg-type]
    out = []
    for q in queries:
        start = time.perf_counter()
        await search.search(q, lanes=lanes, touch=False, catch_up=False)  # type: ignore[arg-type]
        out.append((time.perf_counter() - start) * 1000)
    return out


class CachedQueries:
    """Wraps the embedder so lane timings exclude query embedding (embedded up front)."""

    def __init__(self, inner, cache: dict[str, np.ndarray]) -> None:  # type: ignore[no-untyped-def]
        self.inner, self.cache = inner, cache
        self.provider, self.model_id = inner.provider, inner.model_id
        self.dimensions, self.degraded = inner.dimensions, False

    async def embed_batch(self, texts):  # type: ignore[no-untyped-def]
        return np.stack([self.cache[t] for t in texts])


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    rng = random.Random(3)
    vocab = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(3, 9))) for _ in range(5000)]
    queries = [" ".join(rng.choices(vocab, k=rng.randint(2, 5))) for _ in range(QUERIES)]
    model = InProcessEmbedder()
    await model.load()
    embed_ms = []
    for q in queries:
        t0 = time.perf_counter()
        await model.embed_batch([q])
        embed_ms.append((time.perf_counter() - t0) * 1000)
    qvecs = await model.embed_batch(queries)
    padded = TargetDimEmbedder(model, 1024)
    cache384 = {q: v for q, v in zip(queries, qvecs, strict=True)}
    cache1024 = {q: np.pad(v, (0, 1024 - 384)) for q, v in zip(queries, qvecs, strict=True)}
    print(f"query embedding: p50 {pct(embed_ms, 50):.1f} ms, p95 {pct(embed_ms, 95):.1f} ms")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            ours_path = Path(tmp) / f"ours-{n}.mind"
            await build(ours_path, n, vocab, rng, 384)
            orig_path = Path(tmp) / f"orig-{n}.mind"
            shutil.copy(ours_path, orig_path)
            await pad_to_1024(orig_path)
            results: dict[str, list[float]] = {}
            db = await Database.open(ours_path, readonly=True)
            index = VectorIndex(ours_path, 384)
            t0 = time.perf_counter()
            await index.refresh()
            load_s = time.perf_counter() - t0
            ours = HybridSearch(db, CachedQueries(model, cache384), vector_index=index)
            for lanes in ("keyword", "vector", "hybrid"):
                results[f"ours {lanes}"] = await time_lane(ours, queries, lanes)
            flat = HybridSearch(db, CachedQueries(model, cache384), vector_index=Vec0FlatIndex(db))  # type: ignore[arg-type]
            results["sqlite-vec flat 384 hybrid"] = await time_lane(flat, queries, "hybrid")
            odb = await Database.open(orig_path, readonly=True)
            orig = HybridSearch(odb, CachedQueries(padded, cache1024), vector_index=Vec0FlatIndex(odb))  # type: ignore[arg-type]
            results["flat vector (1024 dims)"] = await time_lane(orig, queries, "vector")
            results["flat hybrid (1024 dims)"] = await time_lane(orig, queries, "hybrid")
            index.close()
            await db.close()
            await odb.close()
            for name, vals in results.items():
                rows.append((n, name, pct(vals, 50), pct(vals, 95)))
                print(f"{n:>7} {name:<30} p50 {pct(vals, 50):7.1f} ms  p95 {pct(vals, 95):7.1f} ms")
            speedup = pct(results["flat hybrid (1024 dims)"], 95) / pct(results["ours hybrid"], 95)
            rows.append((n, "**hybrid p95 speed-up vs flat 1024 dims**", speedup, None))
            print(f"{n:>7} index load {load_s:.2f}s; hybrid p95 speed-up {speedup:.1f}x")
            rows.append((n, "in-memory index load (once per process)", load_s * 1000, None))
    await model.close()
    table = "\n".join(
        f"| {n:,} | {name} | {a:.1f}{'×' if 'speed-up' in name else ' ms'} | {'' if b is None else f'{b:.1f} ms'} |"
        for n, name, a, b in rows
    )
    write_section(
        "Search latency",
        f"""
Command: `HF_HUB_OFFLINE=1 .venv/bin/python -m bench.components.search_latency --sizes {' '.join(map(str, args.sizes))}`

One mind with N frames (synthetic texts in conversations of 50 turns, every fifth a question;
random unit vectors at 384 dims), {QUERIES} queries, limit 20, warm caches, one query at a time
on a read-only connection; the full recall pipeline (lanes, completion of missing lane scores,
fusion, session lane, neighbour expansion, speaker/time signals, re-score). Query embedding with the
real model (all-MiniLM-L6-v2) is timed separately: p50 {pct(embed_ms, 50):.1f} ms, p95
{pct(embed_ms, 95):.1f} ms, and excluded below. "Flat (1024 dims)" is a design with, in the
same run, vectors zero-padded to 1024 dims and sqlite-vec's flat float KNN as the vector lane.

| frames | search | p50 | p95 |
|---:|---|---:|---:|
{table}
""",
    )


if __name__ == "__main__":
    asyncio.run(main())
