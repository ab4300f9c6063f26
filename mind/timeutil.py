"""One timestamp format everywhere: UTC ISO-8601 with millisecond precision and a ``Z``.

``2026-11-30T03:20:49.123Z`` sorts lexicographically in time order, so SQL can compare the
strings directly. Caller-supplied timestamps must be strict ISO-8601 with a timezone; they are
converted to UTC and re-rendered in this format.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from mind.errors import InvalidTimestampError

# SQL expression producing the same format as now_iso(), for column defaults.
SQL_NOW = "(strftime('%Y-%m-%dT%H:%M:%fZ','now'))"

_STRICT_ISO = re.compile(
    r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:?\d{2})$"
)
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def format_ts(moment: datetime) -> str:
    """Render an aware datetime in the house format."""
    if moment.tzinfo is None:
        raise InvalidTimestampError("naive datetime: a timezone is required")
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def now_iso() -> str:
    return format_ts(datetime.now(UTC))


def is_strict_iso(value: object) -> bool:
    return isinstance(value, str) and _STRICT_ISO.match(value) is not None


def parse_iso(value: str) -> datetime:
    """Parse a strict ISO-8601 timestamp with a timezone into an aware UTC datetime."""
    if not is_strict_iso(value):
        raise InvalidTimestampError(
            f"invalid timestamp {value!r}: expected ISO-8601 like 2024-05-01T12:00:00Z"
        )
    text = value
    frac = re.search(r"\.(\d+)", text)
    if frac and len(frac.group(1)) > 6:  # datetime takes at most microseconds
        text = text.replace(frac.group(0), "." + frac.group(1)[:6])
    text = text.replace("Z", "+00:00")
    if re.search(r"[+-]\d{4}$", text):
        text = text[:-2] + ":" + text[-2:]
    try:
        return datetime.fromisoformat(text).astimezone(UTC)
    except ValueError as exc:
        raise InvalidTimestampError(f"invalid timestamp {value!r}: {exc}") from None


_HOUSE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


def normalize_ts(value: str) -> str:
    """Validate a caller timestamp and return it in the house format."""
    if isinstance(value, str) and _HOUSE.fullmatch(value):  # already canonical: check ranges
        try:
            datetime.fromisoformat(value[:-1])
            return value
        except ValueError as exc:
            raise InvalidTimestampError(f"invalid timestamp {value!r}: {exc}") from None
    return format_ts(parse_iso(value))


def parse_stored(value: str) -> datetime:
    """Parse a timestamp read back from a mind (house format, or legacy SQLite datetime)."""
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
    if _DATE_ONLY.match(value):
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
