"""Forward batches by token count: which texts the ONNX encoder runs together.

A transformer's forward pass pads every text of a batch to the batch's longest, so a batch of
mixed lengths pays for tokens that do not exist. Sorting by *characters* (what
sentence-transformers does) only approximates token counts, and a cognify micro-batch of ~64
chat turns cut into two batches of 32 pads each to its longest: one int8 lane encoded the
ingest bench's chat turns in 64-text calls at 217 texts/s that way, at 297 with batches of
near-equal token counts (whole-corpus calls: 267 → 330; the lane thread's CPU a text, onnx-int8,
one thread, interleaved repetitions).

:func:`plan_batches` partitions texts, sorted by token count, into consecutive groups that
minimize the estimated cost of the passes — a fixed cost per call (``session.run`` of a tiny
batch ~0.7 ms ≈ 12 tokens of work) plus, per text, its padded length and the attention's
quadratic term — under two caps: ``max_batch`` texts, and :data:`TOKEN_BUDGET` padded tokens
(a larger pass leaves the core's L2 cache: 32 × 64 tokens cost 5.9 ms a text, 8 × 64 4.5 ms;
one int8 lane, measured per (texts, length) on this project's 2-core Xeon). Dynamic
programming over the sorted lengths: O(texts × max_batch).
"""

from __future__ import annotations

from collections.abc import Sequence

CALL_COST_TOKENS = 12.0  # one forward call's fixed cost, in tokens of linear work
ATTENTION_PER_TOKEN = 0.003  # the quadratic term's weight: cost ~ L + 0.003 L² a text
TOKEN_BUDGET = 1024  # padded tokens per forward batch (a single longer text runs alone)


def pass_cost(texts: int, longest: int) -> float:
    """Estimated cost of one forward pass of ``texts`` texts padded to ``longest`` tokens."""
    return CALL_COST_TOKENS + texts * (longest + ATTENTION_PER_TOKEN * longest * longest)


def plan_batches(lengths: Sequence[int], max_batch: int,
                 token_budget: int = TOKEN_BUDGET) -> list[list[int]]:
    """Indices into ``lengths`` (token counts), grouped into forward batches, shortest first;
    every index appears exactly once."""
    if max_batch <= 0:
        raise ValueError(f"max_batch must be positive, got {max_batch}")
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    sorted_lengths = [lengths[i] for i in order]
    n = len(order)
    best = [0.0] + [float("inf")] * n  # best[i]: cheapest plan of the i shortest texts
    start = [0] * (n + 1)  # start[i]: where the last batch of that plan begins
    for i in range(1, n + 1):
        longest = sorted_lengths[i - 1]
        per_text = longest + ATTENTION_PER_TOKEN * longest * longest
        fits = max(1, min(max_batch, token_budget // max(longest, 1), i))
        for size in range(1, fits + 1):
            cost = best[i - size] + CALL_COST_TOKENS + size * per_text
            if cost < best[i]:
                best[i], start[i] = cost, i - size
    batches: list[list[int]] = []
    i = n
    while i > 0:
        batches.append(order[start[i]: i])
        i = start[i]
    batches.reverse()
    return batches


def deal(batches: Sequence[Sequence[int]], lengths: Sequence[int], lanes: int) -> list[int]:
    """The lane of each batch: longest-processing-time first onto the least loaded lane, so
    the lanes finish together."""
    costs = [pass_cost(len(b), max(lengths[i] for i in b)) for b in batches]
    load = [0.0] * max(1, lanes)
    lane_of = [0] * len(batches)
    for k in sorted(range(len(batches)), key=costs.__getitem__, reverse=True):
        lane = min(range(len(load)), key=load.__getitem__)
        lane_of[k] = lane
        load[lane] += costs[k]
    return lane_of
