from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from mind.errors import InvalidTimestampError
from mind.timeutil import format_ts, is_strict_iso, normalize_ts, now_iso, window_bound


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2024-05-01T12:00:00Z", "2024-05-01T12:00:00.000Z"),
        ("2024-05-01T12:00:00.5Z", "2024-05-01T12:00:00.500Z"),
        ("2024-05-01T12:00:00.123456789Z", "2024-05-01T12:00:00.123Z"),
        ("2024-05-01T12:00:00+02:00", "2024-05-01T10:00:00.000Z"),
        ("2024-05-01T01:00:00-0330", "2024-05-01T04:30:00.000Z"),
        ("2024-12-31T23:30:00-01:00", "2025-01-01T00:30:00.000Z"),
    ],
)
def test_normalize(raw: str, expected: str) -> None:
    assert is_strict_iso(raw)
    assert normalize_ts(raw) == expected


@pytest.mark.parametrize(
    "raw",
    ["2024-05-01", "2024-05-01 12:00:00", "2024-05-01T12:00:00", "12:00", "", "2024-02-30T00:00:00Z",
     "2024-05-01T25:00:00Z", "now", "2024-05-01T12:00:00ZZ"],
)
def test_rejects_non_strict(raw: str) -> None:
    with pytest.raises(InvalidTimestampError):
        normalize_ts(raw)


def test_house_format_sorts_like_time() -> None:
    a = format_ts(datetime(2024, 1, 1, 23, 59, 59, 999000, tzinfo=UTC))
    b = format_ts(datetime(2024, 1, 2, tzinfo=timezone(timedelta(hours=-1))))
    assert a < b
    assert len(now_iso()) == len("2026-11-30T03:20:49.123Z") and now_iso().endswith("Z")
    with pytest.raises(InvalidTimestampError):
        format_ts(datetime(2024, 1, 1))


@pytest.mark.parametrize(
    ("bound", "end", "expected"),
    [
        ("2024-05-01", False, "2024-05-01T00:00:00.000Z"),
        ("2024-05-01", True, "2024-05-01T23:59:59.999Z"),
        ("2024-02-29", True, "2024-02-29T23:59:59.999Z"),
        ("2024-05-01T10:00:00+01:00", True, "2024-05-01T09:00:00.000Z"),
    ],
)
def test_window_bounds(bound: str, end: bool, expected: str) -> None:
    assert window_bound(bound, end=end) == expected


def test_invalid_date_only_bound() -> None:
    with pytest.raises(InvalidTimestampError):
        window_bound("2023-02-29", end=True)


@pytest.mark.parametrize(("stored", "expected"), [
    ("2026-03-01T10:00:00.250Z", datetime(2026, 3, 1, 10, 0, 0, 250_000, tzinfo=UTC)),
    ("2026-03-01 10:00:00", datetime(2026, 3, 1, 10, tzinfo=UTC)),  # legacy SQLite datetime
    ("2026-03-01T12:00:00+02:00", datetime(2026, 3, 1, 10, tzinfo=UTC)),
    ("2026-03-01T10:00:00.1234567Z", datetime(2026, 3, 1, 10, 0, 0, 123_456, tzinfo=UTC)),
])
def test_stored_timestamps_parse_the_same_on_the_fast_path_and_the_strict_one(
        stored: str, expected: datetime) -> None:
    from mind.timeutil import parse_stored

    assert parse_stored(stored) == expected
    assert parse_stored(stored).tzinfo is not None


def test_a_stored_value_of_house_shape_that_is_no_date_is_still_refused() -> None:
    from mind.timeutil import parse_stored

    with pytest.raises((InvalidTimestampError, ValueError)):
        parse_stored("2026-13-45T99:00:00.000Z")
