"""Timestamps in the engine: the one format of :mod:`vocabulary.timestamps` (UTC ISO-8601 with
millisecond precision and a ``Z``: ``2026-11-30T03:20:49.123Z``), raising the engine's
:class:`~mind.errors.InvalidTimestampError`, plus what only the engine needs (stored legacy
values, ``since``/``until`` window bounds, ages).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import TypeVar

from mind.errors import InvalidTimestampError
from vocabulary import timestamps
from vocabulary.timestamps import DATE_RE, SQL_NOW, is_strict_iso, now_iso

__all__ = ["SQL_NOW", "days_ago_iso", "format_ts", "is_strict_iso", "normalize_ts", "now_iso",
           "parse_iso", "parse_stored", "window_bound"]


A = TypeVar("A")
T = TypeVar("T")


def _checked(rule: Callable[[A], T], value: A) -> T:
    try:
        return rule(value)
    except ValueError as exc:
        raise InvalidTimestampError(str(exc)) from None


def format_ts(moment: datetime) -> str:
    """Render an aware datetime in the house format (a naive one is refused)."""
    return _checked(timestamps.format_ts, moment)


def parse_iso(value: str) -> datetime:
    """Parse a strict ISO-8601 timestamp with a timezone into an aware UTC datetime."""
    return _checked(timestamps.parse_iso, value)


def normalize_ts(value: str) -> str:
    """Validate a caller timestamp and return it in the house format."""
    return _checked(timestamps.normalize_ts, value)


def parse_stored(value: str) -> datetime:
    """Parse a timestamp read back from a mind (house format, or legacy SQLite datetime).

    The house format (``2026-03-01T10:00:00.000Z``, written validated) takes the C parser
    directly: a recall re-scores ~200 candidates by age, and the strict checks below were
    ~10 % of a served recall's time at 100,000 frames (issue #14)."""
    if len(value) == 24 and value[10] == "T" and value[-1] == "Z":
        try:
            return datetime.fromisoformat(value).astimezone(UTC)
        except ValueError:
            pass  # not a date after all: the strict path names what is wrong
    if "T" not in value:
        value = value.replace(" ", "T")
    if not value.endswith("Z") and not re.search(r"[+-]\d{2}:?\d{2}$", value):
        value += "Z"
    return parse_iso(value) if is_strict_iso(value) else datetime.fromisoformat(
        value.replace("Z", "+00:00")
    ).astimezone(UTC)


def window_bound(value: str, *, end: bool) -> str:
    """Turn a ``since``/``until`` bound into a comparable house-format string.

    A date-only bound covers the whole day: ``since`` starts at 00:00:00.000 and ``until``
    ends at 23:59:59.999 of that day.
    """
    if DATE_RE.fullmatch(value):
        try:
            day = date.fromisoformat(value)
        except ValueError as exc:
            raise InvalidTimestampError(f"invalid date {value!r}: {exc}") from None
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        if end:
            return format_ts(start + timedelta(days=1) - timedelta(milliseconds=1))
        return format_ts(start)
    return normalize_ts(value)


def days_ago_iso(days: float) -> str:
    return format_ts(datetime.now(UTC) - timedelta(days=days))
