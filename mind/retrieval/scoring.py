"""Fusion and re-scoring. Pure functions.

* ``fuse``: the lanes fused by rank and score (:func:`fuse`); ``rrf`` is plain reciprocal rank
  fusion. K = 10, 0-based ranks: a frame first in both lanes gets 2/10.
* ``relevance``: a *bounded multiplier* around 1.0 built from the re-score signals::

      relevance = 1 + temporal·(recency − 1) + importance·(importance multiplier − 1)
                    + contextual·proximity

  with ``recency`` ∈ (0, 1] (1 within a week of when the mind learned the memory, then halving
  every 30 days), the importance multiplier (critical 2.0 … deprecated 0.3) and
  ``proximity`` ∈ [0, 1] (graph distance 0/1/2/3 → 1/0.7/0.4/0.2). ``final = fused × relevance``
  orders results.
* Why a multiplier around 1: the lanes decide *what* matches; the re-score may only reorder
  frames the lanes rank close together. The RRF gap between rank 1 and rank 2 of one lane is
  1.6 %, between rank 1 and rank 10 about 13 %. The default profile's weights keep the whole
  re-score within a few percent (graph proximity at most +3 %, importance ±2 %, age −5 %), so a
  frame the lanes found clearly better is never overtaken; the ``recent``, ``important`` and
  ``connected`` profiles lean harder their way (up to ±50 %), as their names promise.
  (Adding the signals as a weighted sum and multiplying RRF by it would make graph proximity
  alone worth +25 % against those rank gaps: it would outrank the lanes.)
* Recency is measured from ``recorded_at`` — when the mind learned the memory — not from
  ``last_accessed``: being shown must not make a memory look fresh (no feedback loop), and
  imported history is not punished for its source date.
* Popularity (access count from earlier recalls) is only a tie-breaker: :func:`sort_key` orders
  by ``final`` first, so a frame shown often can never pass one the lanes ranked better.
* ``score`` is the normalized scale every threshold uses: ``final`` divided by the best final a
  fresh, normal memory can reach (first in every active lane), clipped to [0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from mind.constants import IMPORTANCE_MULTIPLIER
from mind.timeutil import parse_stored

RRF_K = 10
RECENCY_BOOST_DAYS = 7
HALF_LIFE_DAYS = 30
GRAPH_PROXIMITY = {0: 1.0, 1: 0.7, 2: 0.4, 3: 0.2}
MIN_RELEVANCE = 0.05


@dataclass(frozen=True, slots=True)
class Weights:
    """How far each signal may move a fused score (fractions of it)."""

    temporal: float  # an old memory loses up to this share
    contextual: float  # a frame at graph distance 0 gains this share
    importance: float  # times (importance multiplier − 1): critical +1×, deprecated −0.7×
    # how far graph proximity looks: 3 hops of a co-occurrence graph reach nearly every entity
    # (SciFact: ~5,900 of them, ~115 ms a query) for a signal worth < 1 % at that distance, so
    # only the `connected` profile, which weighs it 10×, walks that far
    graph_depth: int = 1


PROFILES: dict[str, Weights] = {
    "balanced": Weights(temporal=0.05, contextual=0.03, importance=0.02),
    "recent": Weights(temporal=0.5, contextual=0.03, importance=0.02),
    "important": Weights(temporal=0.05, contextual=0.03, importance=0.5),
    "connected": Weights(temporal=0.05, contextual=0.3, importance=0.02, graph_depth=3),
}

NO_RESCORE = Weights(temporal=0.0, contextual=0.0, importance=0.0)  # relevance 1 for all


def rrf(lanes: Sequence[Sequence[int]], k: int = RRF_K) -> dict[int, float]:
    """Plain reciprocal rank fusion of ranked id lists (insertion order: first lane's order,
    then new ids of later lanes)."""
    scores: dict[int, float] = {}
    for lane in lanes:
        for rank, item in enumerate(lane):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return scores


def min_max(values: Sequence[float], min_spread: float = 0.0) -> list[float]:
    """Scale to [0, 1] (1 = best); all-equal values are all 1. With ``min_spread``, values
    closer together than that are not stretched over the whole range (the best still gets 1)."""
    if not values:
        return []
    hi = max(values)
    lo = min(min(values), hi - min_spread)
    return [1.0 if hi <= lo else (v - lo) / (hi - lo) for v in values]


def fuse(lanes: Sequence[Sequence[tuple[int, float]]], k: int = RRF_K,
         min_spreads: Sequence[float] = ()) -> dict[int, float]:
    """Fuse lanes of ``(id, score)`` (best first, higher score = better) by rank *and* score.

    Each lane gives a frame ``(norm + k / (k + rank)) / 2k``: the mean of its min-max
    normalized score and its reciprocal rank (K = 10, 0-based ranks), so first place in every
    lane is worth 1/k per lane, like RRF. Ranks alone throw away how much better the first
    hit is than the tenth; scores alone let one lane's flat tail swamp the other. Measured on
    SciFact, LoCoMo and the synthetic chats, the mix beats either
    (bench/evals/recall_eval.py --steps).
    ``min_spreads[i]`` keeps lane i's near-equal scores from being stretched into the full
    range (a vector lane whose candidates all lie within a few hundredths of cosine has no
    score evidence to give). Insertion order: first lane's order, then new ids of later lanes.
    """
    fused: dict[int, float] = {}
    for i, lane in enumerate(lanes):
        spread = min_spreads[i] if i < len(min_spreads) else 0.0
        norms = min_max([score for _, score in lane], spread)
        for rank, ((item, _), norm) in enumerate(zip(lane, norms, strict=True)):
            fused[item] = fused.get(item, 0.0) + (norm + k / (k + rank)) / (2 * k)
    return fused


def temporal_score(age_days: float) -> float:
    if age_days <= RECENCY_BOOST_DAYS:
        return 1.0
    return float(0.5 ** (age_days / HALF_LIFE_DAYS))


def popularity_score(access_count: int) -> float:
    """1 for a never-recalled memory, growing with the log of its access count."""
    return 1.0 + math.log10(1 + max(0, access_count)) * 0.1


def contextual_score(distance: int | None) -> float:
    return GRAPH_PROXIMITY.get(distance, 0.0) if distance is not None else 0.0


def importance_score(importance: str) -> float:
    return IMPORTANCE_MULTIPLIER.get(importance, 1.0)


@dataclass(frozen=True, slots=True)
class Factors:
    """The re-score signals of one frame, each on its own scale (for ``explain``)."""

    recency: float
    importance: float
    proximity: float
    popularity: float

    def as_dict(self) -> dict[str, float]:
        return {"recency": self.recency, "importance": self.importance,
                "proximity": self.proximity, "popularity": self.popularity}

    def relevance(self, weights: Weights) -> float:
        value = (1.0 + weights.temporal * (self.recency - 1.0)
                 + weights.importance * (self.importance - 1.0)
                 + weights.contextual * self.proximity)
        return max(MIN_RELEVANCE, value)


def factors(*, age_days: float, access_count: int, importance: str,
            graph_distance: int | None = None) -> Factors:
    return Factors(temporal_score(age_days), importance_score(importance),
                   contextual_score(graph_distance), popularity_score(access_count))


def relevance(
    weights: Weights,
    *,
    age_days: float,
    access_count: int,
    importance: str,
    graph_distance: int | None = None,
) -> float:
    return factors(age_days=age_days, access_count=access_count, importance=importance,
                   graph_distance=graph_distance).relevance(weights)


@cache  # a pure function of a frozen Weights: computed once per profile, not per candidate
def reference_relevance(weights: Weights) -> float:
    """Relevance of a fresh, never-accessed, normal memory with no graph signal (1.0)."""
    return relevance(weights, age_days=0, access_count=0, importance="normal")


def sort_key(final: float, popularity: float) -> tuple[float, float]:
    """Results order: ``final`` first; popularity only breaks ties."""
    return (-round(final, 12), -popularity)


def normalized_score(final: float, weights: Weights, lanes: int, k: int = RRF_K) -> float:
    best = (lanes / k) * reference_relevance(weights)
    return 0.0 if best <= 0 else max(0.0, min(1.0, final / best))


def age_days(timestamp: str, now: datetime) -> float:
    return max(0.0, (now - parse_stored(timestamp)).total_seconds() / 86400)


def rank_part(rank: int | None) -> float:
    """A lane's reciprocal rank, 1/(K + rank): the scale of the normalized ``score``."""
    return 0.0 if rank is None else 1.0 / (RRF_K + rank)


def monotone(scores: list[float]) -> list[float]:
    """Scores in rank order, each raised to the best score ranked below it: a result ranked
    above another never shows a lower ``score`` (the ranking says "at least as good").
    Computed over all candidates, so it does not depend on the limit."""
    floor = 0.0
    out = [0.0] * len(scores)
    for i in range(len(scores) - 1, -1, -1):
        floor = max(floor, scores[i])
        out[i] = floor
    return out
