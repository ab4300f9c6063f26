from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mind.scoring import (
    PROFILES,
    age_days,
    contextual_score,
    normalized_score,
    popularity_score,
    reference_relevance,
    relevance,
    rrf,
    temporal_score,
)


def test_rrf_zero_based_ranks_and_order() -> None:
    fused = rrf([[1, 2, 3], [3, 4]])
    assert fused[1] == pytest.approx(1 / 60)
    assert fused[3] == pytest.approx(1 / 62 + 1 / 60)
    assert list(fused) == [1, 2, 3, 4]  # keyword lane first, then vector-only ids
    assert rrf([[7], [7]])[7] == pytest.approx(2 / 60)


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
    ("profile", "imp", "dist", "expected"),
    [
        ("balanced", "normal", None, 0.8),
        ("balanced", "critical", 0, 0.4 + 0.2 + 0.2 + 0.4),
        ("recent", "normal", None, 0.6 + 0.1 + 0.1),
        ("important", "critical", None, 0.1 + 0.1 + 1.2),
        ("connected", "normal", 1, 0.1 + 0.1 + 0.42 + 0.2),
    ],
)
def test_relevance_profiles(profile: str, imp: str, dist: int | None, expected: float) -> None:
    got = relevance(PROFILES[profile], age_days=0, access_count=0, importance=imp, graph_distance=dist)
    assert got == pytest.approx(expected)


def test_normalized_score_scale() -> None:
    w = PROFILES["balanced"]
    ref = reference_relevance(w)
    assert normalized_score((2 / 60) * ref, w, lanes=2) == pytest.approx(1.0)
    assert normalized_score((1 / 60) * ref, w, lanes=2) == pytest.approx(0.5)
    assert normalized_score((1 / 60) * ref, w, lanes=1) == pytest.approx(1.0)
    assert normalized_score(10.0, w, lanes=2) == 1.0  # clipped
    assert normalized_score(0.0, w, lanes=2) == 0.0


def test_age_days_reads_house_and_legacy_formats() -> None:
    now = datetime(2024, 1, 31, tzinfo=UTC)
    assert age_days("2024-01-01T00:00:00.000Z", now) == pytest.approx(30)
    assert age_days("2024-01-01 00:00:00", now) == pytest.approx(30)  # legacy SQLite = UTC
    assert age_days("2025-01-01T00:00:00.000Z", now) == 0.0
