"""One timestamp format everywhere (docs/architecture.md, "Invariants"): UTC ISO-8601 with ms
precision and a ``Z``, e.g. ``2026-11-30T03:20:49.123Z``.

It sorts lexicographically in time order, so SQL compares the strings directly. Timestamps a
caller supplies must be strict ISO-8601 with a timezone (``Z`` or ``±HH:MM``/``±HHMM``, up to
nine fractional digits, ASCII digits only); they are converted to UTC and re-rendered in this
format. Bad values raise ``ValueError``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Final

from vocabulary.limits import shown

SQL_NOW: Final = "(strftime('%Y-%m-%dT%H:%M:%fZ','now'))"
"""An SQLite expression producing the same format as :func:`now_iso` (column defaults)."""

STRICT_ISO_RE: Final = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:?[0-9]{2})"
)
HOUSE_RE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")
DATE_RE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_EXAMPLE: Final = "2026-11-30T03:20:49.123Z"


def format_ts(moment: datetime) -> str:
    """Render an aware datetime in the house format."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime: a timezone is required")
    # isoformat truncates to milliseconds as the format does, and pads the year to 4 digits
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def now_iso() -> str:
    return format_ts(datetime.now(UTC))


def is_strict_iso(value: object) -> bool:
    """Whether ``value`` has the shape of a strict ISO-8601 timestamp with a timezone."""
    return isinstance(value, str) and STRICT_ISO_RE.fullmatch(value) is not None


def _refused(value: object, why: str = "") -> ValueError:
    why = why or f"expected ISO-8601 with a timezone like {_EXAMPLE}"
    return ValueError(f"invalid timestamp {shown(value)}: {why}")


def parse_iso(value: object) -> datetime:
    """A strict ISO-8601 timestamp with a timezone → an aware UTC datetime."""
    if not isinstance(value, str) or not is_strict_iso(value):
        raise _refused(value)
    text = value
    frac = re.search(r"\.([0-9]+)", text)
    if frac and len(frac.group(1)) > 6:  # datetime takes at most microseconds
        text = text.replace(frac.group(0), "." + frac.group(1)[:6])
    text = text.replace("Z", "+00:00")
    if re.search(r"[+-][0-9]{4}$", text):
        text = text[:-2] + ":" + text[-2:]
    try:
        return datetime.fromisoformat(text).astimezone(UTC)
    except ValueError as exc:
        raise _refused(value, str(exc)) from None


def normalize_ts(value: object) -> str:
    """An aware datetime or a strict ISO-8601 string with a zone → the house format."""
    if isinstance(value, datetime):
        return format_ts(value)
    if isinstance(value, str) and HOUSE_RE.fullmatch(value):  # already canonical: check ranges
        try:
            datetime.fromisoformat(value[:-1])
        except ValueError as exc:
            raise _refused(value, str(exc)) from None
        return value
    return format_ts(parse_iso(value))
