from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mind.retrieval.scoring import (
    NO_RESCORE,
    PROFILES,
    RRF_K,
    age_days,
    contextual_score,
    factors,
    fuse,
    min_max,
    normalized_score,
    popularity_score,
    reference_relevance,
    relevance,
    rrf,
    sort_key,
    temporal_score,
)


def test_rrf_zero_based_ranks_and_order() -> None:
    fused = rrf([[1, 2, 3], [3, 4]])
    assert fused[1] == pytest.approx(1 / RRF_K)
    assert fused[3] == pytest.approx(1 / (RRF_K + 2) + 1 / RRF_K)
    assert list(fused) == [1, 2, 3, 4]  # keyword lane first, then vector-only ids
    assert rrf([[7], [7]])[7] == pytest.approx(2 / RRF_K)


def test_min_max() -> None:
    assert min_max([3.0, 2.0, 1.0]) == [1.0, 0.5, 0.0]
    assert min_max([5.0, 5.0]) == [1.0, 1.0]
    assert min_max([]) == []


def test_fuse_mixes_rank_and_score() -> None:
    k = RRF_K
    # first in both lanes: 1/k per lane, like RRF
    assert fuse([[(7, 9.0)], [(7, 0.8)]])[7] == pytest.approx(2 / k)
    lane = [(1, 10.0), (2, 9.9), (3, 1.0)]
    fused = fuse([lane])
    # a near-tie in score stays a near-tie; a far worse score falls further than its rank says
    assert fused[1] - fused[2] < fused[2] - fused[3]
    assert fused[2] == pytest.approx(((9.9 - 1) / 9 + k / (k + 1)) / (2 * k))
    assert list(fuse([[(1, 2.0), (2, 1.0)], [(3, 0.9), (1, 0.5)]])) == [1, 2, 3]


@pytest.mark.parametrize(
    ("days", "expected"), [(0, 1.0), (7, 1.0), (30, 0.5), (60, 0.25), (37, 0.5 ** (37 / 30))]
)
def test_temporal(days: float, expected: float) -> None:
    assert temporal_score(days) == pytest.approx(expected)


@pytest.mark.parametrize(("count", "expected"), [(0, 1.0), (9, 1.1), (99, 1.2)])
def test_popularity(count: int, expected: float) -> None:
    assert popularity_score(count) == pytest.approx(expected)


@pytest.mark.parametrize(("dist", "expected"), [(0, 1.0), (1, 0.7), (2, 0.4), (3, 0.2), (4, 0.0), (None, 0.0)])
def test_contextual(dist: int | None, expected: float) -> None:
    assert contextual_score(dist) == expected


@pytest.mark.parametrize(
    ("profile", "imp", "dist", "days", "expected"),
    [
        ("balanced", "normal", None, 0, 1.0),
        ("balanced", "critical", 0, 0, 1 + 0.02 + 0.03),
        ("balanced", "deprecated", None, 0, 1 - 0.02 * 0.7),
        ("balanced", "normal", None, 30, 1 - 0.05 * 0.5),
        ("recent", "normal", None, 60, 1 - 0.5 * 0.75),
        ("important", "critical", None, 0, 1.5),
        ("connected", "normal", 1, 0, 1 + 0.3 * 0.7),
    ],
)
def test_relevance_profiles(profile: str, imp: str, dist: int | None, days: float,
                            expected: float) -> None:
    got = relevance(PROFILES[profile], age_days=days, access_count=0, importance=imp,
                    graph_distance=dist)
    assert got == pytest.approx(expected)


def test_default_rescore_stays_within_rank_gaps() -> None:
    """The balanced re-score may move a fused score by a few percent at most: less than the gap
    between first and third place of one lane, so it reorders near-ties only."""
    w = PROFILES["balanced"]
    best = relevance(w, age_days=0, access_count=10**6, importance="critical", graph_distance=0)
    worst = relevance(w, age_days=10_000, access_count=0, importance="deprecated")
    third_gap = (1 / RRF_K) / (1 / (RRF_K + 2))
    assert best / worst < third_gap
    assert relevance(NO_RESCORE, age_days=9e3, access_count=0, importance="deprecated",
                     graph_distance=0) == 1.0


def test_profiles_lean_their_way() -> None:
    old = {"age_days": 120, "access_count": 0, "importance": "normal"}
    assert relevance(PROFILES["recent"], **old) < relevance(PROFILES["balanced"], **old)
    crit = {"age_days": 0, "access_count": 0, "importance": "critical"}
    assert relevance(PROFILES["important"], **crit) > relevance(PROFILES["balanced"], **crit)
    near = {"age_days": 0, "access_count": 0, "importance": "normal", "graph_distance": 0}
    assert relevance(PROFILES["connected"], **near) > relevance(PROFILES["balanced"], **near)


def test_popularity_only_breaks_ties() -> None:
    popular = factors(age_days=0, access_count=10**6, importance="normal")
    fresh = factors(age_days=0, access_count=0, importance="normal")
    assert popular.relevance(PROFILES["balanced"]) == fresh.relevance(PROFILES["balanced"])
    ranked = sorted([(0.100, popular.popularity), (0.1001, fresh.popularity),
                     (0.100, fresh.popularity)], key=lambda r: sort_key(*r))
    assert ranked == [(0.1001, fresh.popularity), (0.100, popular.popularity),
                      (0.100, fresh.popularity)]


def test_normalized_score_scale() -> None:
    w = PROFILES["balanced"]
    ref = reference_relevance(w)
    assert ref == 1.0
    assert normalized_score((2 / RRF_K) * ref, w, lanes=2) == pytest.approx(1.0)
    assert normalized_score((1 / RRF_K) * ref, w, lanes=2) == pytest.approx(0.5)
    assert normalized_score((1 / RRF_K) * ref, w, lanes=1) == pytest.approx(1.0)
    assert normalized_score(10.0, w, lanes=2) == 1.0  # clipped
    assert normalized_score(0.0, w, lanes=2) == 0.0


def test_age_days_reads_house_and_legacy_formats() -> None:
    now = datetime(2024, 1, 31, tzinfo=UTC)
    assert age_days("2024-01-01T00:00:00.000Z", now) == pytest.approx(30)
    assert age_days("2024-01-01 00:00:00", now) == pytest.approx(30)  # legacy SQLite = UTC
    assert age_days("2025-01-01T00:00:00.000Z", now) == 0.0
