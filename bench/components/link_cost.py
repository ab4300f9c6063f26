"""What the nearest-frame search of one cognify batch costs as a mind grows (shortcut: the index
alone).

Applying a cognify batch looks up each of its frames' nearest frames, the candidates of
supersession pairs (``mind.cognify_apply._nearest``); "links" below are those hits. This times that search for one batch of 64 frames against
in-memory indexes of growing size, side by side in one run:

* ``whole mind, exact``: one exact float32 product over every row (the links' reference);
* ``window, exact``: one exact product over the most recent ``LINK_WINDOW_ROWS`` rows (the
  link search before the int8 pass for batches);
* ``window, now``: the index's own search over the window (``VectorIndex.search_many``: the
  int8 codes scored for all 64 queries at once, each query's best candidates re-scored
  exactly, once the matrix has codes; exact below that);
* ``by cue``: what a batch costs in the product, where only a turn that carries an update cue
  (one in ``CUE_EVERY`` of a chat's turns) searches the window and the others search only the
  stored turns of the window that carry one (``allowed``).

A shortcut, labelled as such: the matrix is filled with generated unit vectors (no mind file,
no SQLite); chat-like vectors (conversations of 20 turns on one of 500 topics that recur over
the whole history) stand in for an import. ``same`` is the share of the exact window's links
(cosine ≥ the link threshold, top 5) the search now finds, ``kept`` the share of the whole
mind's; ``linked`` the share of the batch's frames that get at least one link, whole mind /
now; ``cosine`` the links' mean similarity, whole mind / now.

    .venv/bin/python -m bench.components.link_cost [--rows 20000 100000 200000 500000] [--no-report]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable

import numpy as np
from bench.common import write_section
from bench.components.vector_scale import fill

from mind.cognify_apply import NEAR_WINDOW_ROWS as LINK_WINDOW_ROWS
from mind.knowledge.supersession import CANDIDATE_FLOOR as LINK_MIN_SIMILARITY
from mind.knowledge.supersession import CANDIDATES_PER_FRAME as LINK_LIMIT
from mind.retrieval import vector_scan as scan
from mind.retrieval.scan_pool import run_blocks
from mind.retrieval.vector_index import BATCH_CODES_MIN_ROWS

Hits = list[list[tuple[int, float]]]

DIM = 384
BATCH = 64
REPEAT = 3
TOPICS, TURNS, NOISE = 500, 20, 0.9  # a turn: cosine ~0.74 to its topic, ~0.55 to a sibling
CUE_EVERY = 100  # turns carry an update cue about one in a hundred (LoCoMo: 1.2 %)


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


def exact(x: np.ndarray, q: np.ndarray, window: int | None) -> Hits:
    """One exact product over the (last ``window``) rows of ``x`` (frames 1..n in the index),
    block by block on the index's scan pool."""
    first = 0 if window is None else max(0, len(x) - window)
    rows_of = x[first:]
    hits = scan.exact(rows_of, np.ones(len(rows_of), dtype=bool), q, LINK_LIMIT + 1, run_blocks)
    return [sorted(zip((rows + first + 1).tolist(), sims.tolist(), strict=True),
                   key=lambda hit: -hit[1]) for rows, sims in hits]


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
    index, _ = fill(x)
    asyncio.run(index.refresh())  # codes built as a search would build them
    whole_ms, whole_cpu, whole = timed(lambda: exact(x, q, None))
    before_ms, before_cpu, before = timed(lambda: exact(x, q, LINK_WINDOW_ROWS))
    now_ms, now_cpu, now = timed(
        lambda: index.search_many_blocking(q, LINK_LIMIT + 1, window=LINK_WINDOW_ROWS))
    cued = np.arange(max(1, n - LINK_WINDOW_ROWS + 1), n + 1, CUE_EVERY, dtype=np.int64)
    cue_ms, cue_cpu, _ = timed(lambda: [
        *index.search_many_blocking(q[:1], LINK_LIMIT + 1, window=LINK_WINDOW_ROWS),
        *index.search_many_blocking(q[1:], LINK_LIMIT + 1, allowed=cued)])
    truth, reference, got = links(whole), links(before), links(now)
    same = len(reference.keys() & got.keys()) / len(reference) if reference else 1.0
    kept = len(truth.keys() & got.keys()) / len(truth) if truth else 1.0
    (lw, cw), (lg, cg) = summary(truth), summary(got)
    row = (f"| {n:,} | {whole_ms:,.0f} ({whole_cpu:,.0f}) | {before_ms:,.0f} ({before_cpu:,.0f})"
           f" | {now_ms:,.0f} ({now_cpu:,.0f}) | {cue_ms:,.0f} ({cue_cpu:,.0f})"
           f" | {before_cpu / BATCH:.2f} / {now_cpu / BATCH:.2f} / {cue_cpu / BATCH:.2f}"
           f" ms | {same:.3f} | {kept:.3f} | {lw:.2f} / {lg:.2f} | {cw:.3f} / {cg:.3f} |")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, nargs="*",
                        default=[10_000, 20_000, 50_000, 100_000, 200_000, 500_000])
    parser.add_argument("--no-report", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(14)
    lines = []
    for n in args.rows:
        row = measure(n, rng)
        print(row, flush=True)
        lines.append(row)
    body = f"""Command: `.venv/bin/python -m bench.components.link_cost --rows {' '.join(map(str, args.rows))}`

A shortcut, labelled as such (the index alone, generated chat-like vectors, no mind file): the
link search of one cognify batch of {BATCH} frames, ms wall (CPU ms in parentheses), means
of {REPEAT}. "whole mind, exact": one exact float32 product over every row (the reference);
"window, exact": one exact product over the {LINK_WINDOW_ROWS:,} most recent rows (the link
search before the int8 pass for batches); "window, now": the index's own search over that
window (the int8 codes of every row, kept from {BATCH_CODES_MIN_ROWS:,} rows on, scored for
all {BATCH} queries in one product a block, each query's best candidates re-scored exactly);
"by cue": the product's search, one query of the batch (a turn with an update cue) over the
window and the others over the stored turns with a cue in that window (one row in {CUE_EVERY}).
Chat-like vectors: conversations of {TURNS} turns on one of {TOPICS:,} topics that recur over
the whole history; the batch is new conversations. "same" = share of the exact window's links
(cosine ≥ {LINK_MIN_SIMILARITY}, top {LINK_LIMIT}) the search now finds; "kept" = share of the
whole mind's; "linked" = share of the batch's frames with at least one link and "cosine" = the
links' mean similarity, each as whole mind / now.

| rows in the mind | whole mind, exact | window, exact | window, now | by cue | CPU a frame, exact / now / by cue | same | kept | linked | cosine |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
{chr(10).join(lines)}
"""
    if not args.no_report:
        write_section("Linking cost per cognify batch (shortcut: the index alone)", body)


if __name__ == "__main__":
    main()
