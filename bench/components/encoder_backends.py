"""The in-process encoder backends side by side (issue #14): raw encode texts/s, vectors against
PyTorch's, single-query latency, load and first-use export time.

Every backend runs through ``InProcessEmbedder.embed_batch`` — the product's layout (lanes, one
thread each by default, batch 32) — on the same texts: 512 SciFact abstracts and 1,024 LoCoMo
chat turns (read in place from the evaluation data, ``HIVE_MIND_SHARED_DATA``). Repetitions are interleaved (torch, onnx,
onnx-int8, torch, …) so a neighbour's load on a shared machine hits every backend alike; the
medians are reported. Query latency: one text per call, as every recall embeds its query.
Export time: a fresh cache directory, first ``load()``.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.components.encoder_backends [--reps 3] [--queries 200]
        [--backends torch onnx onnx-int8] [--threads N] [--lanes N] [--no-report]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from bench.common import write_section
from bench.evals.recall_eval import LOCOMO, SCIFACT

from mind.embeddings.inprocess import InProcessEmbedder


def corpora(abstracts: int, turns: int) -> dict[str, list[str]]:
    docs = []
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            docs.append(f"{row.get('title', '')} {row['text']}".strip())
            if len(docs) == abstracts:
                break
    chat: list[str] = []
    for path in sorted(LOCOMO.glob("*.jsonl")):
        with open(path, encoding="utf-8") as handle:
            chat.extend(t for t in (json.loads(line).get("text") for line in handle) if t)
    return {"abstracts": docs, "chat turns": chat[:turns]}


def questions(n: int) -> list[str]:
    rows = json.loads((LOCOMO / "questions.json").read_text(encoding="utf-8"))
    rows = rows if isinstance(rows, list) else rows["questions"]
    return [str(r["question"]) for r in rows[:n]]


def make(backend: str, cache: Path, args: argparse.Namespace) -> InProcessEmbedder:
    return InProcessEmbedder(backend=backend, onnx_cache_dir=cache, num_threads=args.threads,
                             lanes=args.lanes)


async def first_use(backend: str, args: argparse.Namespace) -> tuple[float, float]:
    """(export + load seconds into an empty cache, load seconds from the ready cache)."""
    with tempfile.TemporaryDirectory() as tmp:
        timings = []
        for _ in range(2):
            embedder = make(backend, Path(tmp), args)
            started = time.perf_counter()
            await embedder.load()
            timings.append(time.perf_counter() - started)
            await embedder.close()
    return timings[0], timings[1]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backends", nargs="+", default=["torch", "onnx", "onnx-int8"])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--abstracts", type=int, default=512)
    parser.add_argument("--turns", type=int, default=1024)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--lanes", type=int, default=None)
    parser.add_argument("--no-report", action="store_true")
    args = parser.parse_args()
    sets = corpora(args.abstracts, args.turns)
    asked = questions(args.queries)
    loads = {b: await first_use(b, args) for b in args.backends if b != "torch"}
    with tempfile.TemporaryDirectory() as tmp:
        embedders = {b: make(b, Path(tmp), args) for b in args.backends}
        for embedder in embedders.values():
            await embedder.load()
            await embedder.embed_batch(["warm up", "a second warm-up text"])
        rate: dict[tuple[str, str], list[float]] = {}
        vectors: dict[tuple[str, str], np.ndarray] = {}
        for _ in range(args.reps):
            for name, texts in sets.items():
                for backend, embedder in embedders.items():
                    started = time.perf_counter()
                    vectors[backend, name] = await embedder.embed_batch(texts)
                    rate.setdefault((backend, name), []).append(
                        len(texts) / (time.perf_counter() - started))
        latency: dict[str, list[float]] = {b: [] for b in embedders}
        for text in asked:
            for backend, embedder in embedders.items():
                started = time.perf_counter()
                await embedder.embed_batch([text])
                latency[backend].append((time.perf_counter() - started) * 1000)
        lanes = next(iter(embedders.values()))
        layout = f"{lanes.lanes} lane(s) x {lanes.lane_threads} thread(s)"
        for embedder in embedders.values():
            await embedder.close()
    lines = report(args, sets, rate, vectors, latency, loads, layout)
    print("\n".join(lines))
    if not args.no_report:
        write_section("Encoder backends (#14)", "\n".join(lines))


def report(args: argparse.Namespace, sets: dict[str, list[str]],
           rate: dict[tuple[str, str], list[float]], vectors: dict[tuple[str, str], np.ndarray],
           latency: dict[str, list[float]], loads: dict[str, tuple[float, float]],
           layout: str) -> list[str]:
    cpu = platform.processor() or platform.machine()
    lines = [
        f"`HF_HUB_OFFLINE=1 .venv/bin/python -m bench.components.encoder_backends --reps {args.reps}` "
        f"({time.strftime('%Y-%m-%d')}, {cpu}, {layout}, batch 32; medians of {args.reps} "
        "interleaved repetitions through `InProcessEmbedder.embed_batch`; cosine = per text "
        "against the torch vector).",
        "",
        "| texts | " + " | ".join(args.backends) + " |",
        "|---|" + "---:|" * len(args.backends),
    ]
    for name, texts in sets.items():
        base = statistics.median(rate["torch", name]) if "torch" in args.backends else None
        cells = []
        for backend in args.backends:
            speed = statistics.median(rate[backend, name])
            cell = f"{speed:.0f}/s"
            if base and backend != "torch":
                cosine = (vectors[backend, name] * vectors["torch", name]).sum(axis=1)
                cell += (f" ({speed / base:.2f}x), cosine mean {cosine.mean():.4f} "
                         f"min {cosine.min():.4f}")
            cells.append(cell)
        lines.append(f"| {len(texts):,} {name} | " + " | ".join(cells) + " |")
    cells = []
    for backend in args.backends:
        values = sorted(latency[backend])
        cells.append(f"p50 {statistics.median(values):.1f} ms, p95 "
                     f"{values[int(0.95 * (len(values) - 1))]:.1f} ms")
    lines.append(f"| one query ({len(latency[args.backends[0]])} questions) | "
                 + " | ".join(cells) + " |")
    cells = [("—" if b not in loads else
              f"export {loads[b][0]:.1f} s once, then load {loads[b][1]:.2f} s")
             for b in args.backends]
    lines.append("| first use | " + " | ".join(cells) + " |")
    return lines


if __name__ == "__main__":
    asyncio.run(main())
