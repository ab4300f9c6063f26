"""What linking one cognify batch costs as a mind grows (shortcut: the index alone).

Applying a cognify batch links each of its frames to its nearest frames
(``mind.cognify_apply._link``). This times that search for one batch of 64 frames against
in-memory indexes of growing size, side by side in one run:

* ``whole mind, per query``: the search as it was, over every row, through the quantized pass
  one query at a time from 100,000 rows;
* ``whole mind, one product``: every row, the 64 queries as one exact matrix product;
* ``window`` (the product): one exact product over the most recent ``LINK_WINDOW_ROWS`` rows.

A shortcut, labelled as such: the matrix is filled with generated unit vectors (no mind file,
no SQLite); chat-like vectors (conversations of 20 turns on one of 500 topics that recur over
the whole history) stand in for an import. ``kept`` is the share of the whole mind's links
(cosine ≥ the link threshold, top 5) the window also finds; ``linked`` the share of the batch's
frames that get at least one link, whole mind / window; ``cosine`` the links' mean similarity,
whole mind / window.

    .venv/bin/python bench/link_cost.py [--rows 20000 100000 200000 500000] [--no-report]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from common import write_section
from vector_scale import fill

from mind.cognify_apply import LINK_LIMIT, LINK_MIN_SIMILARITY, LINK_WINDOW_ROWS
from mind.retrieval.vector_index import QUANTIZE_MIN_ROWS, VectorIndex

Hits = list[list[tuple[int, float]]]

DIM = 384
BATCH = 64
REPEAT = 3
TOPICS, TURNS, NOISE = 500, 20, 0.9  # a turn: cosine ~0.74 to its topic, ~0.55 to a sibling


def chats(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows written conversation after conversation (20 turns on one of 500 topics,
    topics recurring at random over the whole history), and a batch of queries: the turns of
    new conversations on random topics."""
    centers = rng.standard_normal((TOPICS, DIM)).astype(np.float32)

    def turns(count: int) -> np.ndarray:
        topic = np.repeat(rng.integers(0, TOPICS, count // TURNS + 1), TURNS)[:count]
        v = centers[topic] + rng.standard_normal((count, DIM)).astype(np.float32) * NOISE
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    return turns(n), turns(BATCH)


def per_query(index: VectorIndex, q: np.ndarray) -> Hits:
    return [index._search_many_sync(row[None, :], LINK_LIMIT + 1)[0] for row in q]


def timed(call: Callable[[], Hits]) -> tuple[float, float, Hits]:
    out = call()
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(REPEAT):
        out = call()
    return ((time.perf_counter() - wall) / REPEAT * 1000, (time.process_time() - cpu) / REPEAT
            * 1000, out)


def links(hits: Hits) -> dict[tuple[int, int], float]:
    return {(i, fid): sim for i, row in enumerate(hits) for fid, sim in row
            if sim >= LINK_MIN_SIMILARITY}


def summary(found: dict[tuple[int, int], float]) -> tuple[float, float]:
    """(share of the batch's frames with a link, mean cosine of the links)"""
    linked = len({i for i, _ in found}) / BATCH
    return linked, float(np.mean(list(found.values()))) if found else 0.0


def measure(n: int, rng: np.random.Generator) -> str:
    x, q = chats(n, rng)
    index, _ = fill(x)  # the index's own QUANTIZE_MIN_ROWS
    if n >= QUANTIZE_MIN_ROWS:  # the search as it was: the quantized pass, query by query
        old_ms, old_cpu, _ = timed(lambda: per_query(index, q))
    else:  # below it, one exact product over every row, as now without the window
        old_ms, old_cpu, _ = timed(
            lambda: index._search_many_sync(q, LINK_LIMIT + 1))
    whole_ms, whole_cpu, whole = timed(
        lambda: index._search_many_sync(q, LINK_LIMIT + 1))
    win_ms, win_cpu, win = timed(
        lambda: index._search_many_sync(q, LINK_LIMIT + 1, None,
                                        LINK_WINDOW_ROWS))
    truth, got = links(whole), links(win)
    kept = len(truth.keys() & got.keys()) / len(truth) if truth else 1.0
    (lw, cw), (lg, cg) = summary(truth), summary(got)
    row = (f"| {n:,} | {old_ms:,.0f} ({old_cpu:,.0f}) | {whole_ms:,.0f} ({whole_cpu:,.0f}) | "
           f"{win_ms:,.0f} ({win_cpu:,.0f}) | {win_cpu / BATCH:.2f} ms | {kept:.3f} | "
           f"{lw:.2f} / {lg:.2f} | {cw:.3f} / {cg:.3f} |")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, nargs="*", default=[20_000, 100_000, 200_000, 500_000])
    parser.add_argument("--no-report", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(14)
    lines = []
    for n in args.rows:
        row = measure(n, rng)
        print(row, flush=True)
        lines.append(row)
    body = f"""Command: `.venv/bin/python bench/link_cost.py --rows {' '.join(map(str, args.rows))}`

A shortcut, labelled as such (the index alone, generated chat-like vectors, no mind file): the
link search of one cognify batch of {BATCH} frames, ms wall (CPU ms in parentheses), means
of {REPEAT}. "before": the whole mind through the quantized pass one query at a time from
{QUANTIZE_MIN_ROWS:,} rows (the search as it was); "whole mind, one product": every row, the
batch as one exact matrix product; "window": one product over the {LINK_WINDOW_ROWS:,} most
recent rows (the link search now). Chat-like vectors: conversations of {TURNS} turns on one of
{TOPICS:,} topics that recur over the whole history; the batch is new conversations. "kept" =
share of the whole mind's links (cosine ≥ {LINK_MIN_SIMILARITY}, top {LINK_LIMIT}) that the
window also finds; "linked" = share of the batch's frames with at least one link and "cosine" =
the links' mean similarity, each as whole mind / window.

| rows in the mind | before | whole mind, one product | window (now) | CPU per frame, now | kept | linked | cosine |
|---:|---:|---:|---:|---:|---:|---:|---:|
{chr(10).join(lines)}
"""
    if not args.no_report:
        write_section("Linking cost per cognify batch (shortcut: the index alone)", body)


if __name__ == "__main__":
    main()
