"""Fusion and relevance scoring (engine-spec a.13, with f.3 and f.6 fixed). Pure functions.

* ``rrf``: reciprocal rank fusion, K = 60, 0-based ranks (a frame first in two lanes: 2/60).
* ``relevance``: weighted sum of temporal, popularity, contextual and importance sub-scores,
  with the original profiles and constants. Temporal recency is measured from
  ``last_accessed`` (when the mind learned or last used the memory), so imported history is not
  punished for its source date.
* ``final = rrf × relevance`` orders results, as in the original.
* ``score`` is the normalized scale every threshold uses: ``final`` divided by the best final a
  fresh, normal memory can reach (first in every active lane), clipped to [0, 1]. 1.0 means
  "top of every lane and at least as relevant as a fresh normal memory"; 0.5 means, e.g.,
  "top of one of two lanes only".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from mind.constants import IMPORTANCE_MULTIPLIER
from mind.timeutil import parse_stored

RRF_K = 60
RECENCY_BOOST_DAYS = 7
HALF_LIFE_DAYS = 30
GRAPH_PROXIMITY = {0: 1.0, 1: 0.7, 2: 0.4, 3: 0.2}


@dataclass(frozen=True, slots=True)
class Weights:
    temporal: float
    popularity: float
    contextual: float
    importance: float


PROFILES: dict[str, Weights] = {
    "balanced": Weights(0.4, 0.2, 0.2, 0.2),
    "recent": Weights(0.6, 0.1, 0.2, 0.1),
    "important": Weights(0.1, 0.1, 0.2, 0.6),
    "connected": Weights(0.1, 0.1, 0.6, 0.2),
}


def rrf(lanes: Sequence[Sequence[int]], k: int = RRF_K) -> dict[int, float]:
    """Fuse ranked id lists; insertion order = first lane's order, then new ids of later lanes."""
    scores: dict[int, float] = {}
    for lane in lanes:
        for rank, item in enumerate(lane):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return scores


def temporal_score(age_days: float) -> float:
    if age_days <= RECENCY_BOOST_DAYS:
        return 1.0
    return float(0.5 ** (age_days / HALF_LIFE_DAYS))


def popularity_score(access_count: int) -> float:
    return 1.0 + math.log10(1 + max(0, access_count)) * 0.1


def contextual_score(distance: int | None) -> float:
    return GRAPH_PROXIMITY.get(distance, 0.0) if distance is not None else 0.0


def importance_score(importance: str) -> float:
    return IMPORTANCE_MULTIPLIER.get(importance, 1.0)


def relevance(
    weights: Weights,
    *,
    age_days: float,
    access_count: int,
    importance: str,
    graph_distance: int | None = None,
) -> float:
    return (
        weights.temporal * temporal_score(age_days)
        + weights.popularity * popularity_score(access_count)
        + weights.contextual * contextual_score(graph_distance)
        + weights.importance * importance_score(importance)
    )


def reference_relevance(weights: Weights) -> float:
    """Relevance of a fresh, never-accessed, normal memory with no graph signal."""
    return relevance(weights, age_days=0, access_count=0, importance="normal")


def normalized_score(final: float, weights: Weights, lanes: int, k: int = RRF_K) -> float:
    best = (lanes / k) * reference_relevance(weights)
    return 0.0 if best <= 0 else max(0.0, min(1.0, final / best))


def age_days(timestamp: str, now: datetime) -> float:
    return max(0.0, (now - parse_stored(timestamp)).total_seconds() / 86400)


def graph_distance_for(frame_id: int, distances: Mapping[int, int] | None) -> int | None:
    return None if distances is None else distances.get(frame_id)
