"""The localized time line of a Google Takeout HTML activity card → a house ISO time.

Takeout's HTML writes each activity's time in the account's language and date format, with the
zone as an abbreviation or an offset: ``Mar 15, 2025, 4:49:42 PM EET`` (a narrow no-break space
before the meridiem), ``5 Jan 2024, 18:12:03 GMT-06:00``, ``18.04.2026, 17:38:51 MESZ``,
``10 de mai. de 2026, 03:46:09 BRT``, ``2026年6月20日 00:28:51 JST``. :func:`parse_time` reads the
clock (12- or 24-hour), the date (numeric, CJK, or a month name in the common European
languages) and the zone; anything it cannot read for certain — an unknown or ambiguous zone
abbreviation (``CST``, ``IST``), a date whose day and month could swap — gives ``None``, never
a guessed time. :func:`looks_like_time` tells the time line from a prompt line.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Final

from mind.timeutil import format_ts

_CLOCK: Final = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?")
_YEAR: Final = re.compile(r"(?<!\d)(\d{4})(?!\d)")
_OFFSET: Final = re.compile(r"(?:utc|gmt)\s*([+\-−])\s*(\d{1,2})(?::?(\d{2}))?")
_PM: Final = re.compile(r"(?<![a-z])(pm|p\.\s?m\.)|午後|下午|오후")
_AM: Final = re.compile(r"(?<![a-z])(am|a\.\s?m\.)|午前|上午|오전")
_CJK_DATE: Final = re.compile(r"(\d{4})\s*[年년]\s*(\d{1,2})\s*[月월]\s*(\d{1,2})\s*[日일]")
_YMD: Final = re.compile(r"(?<!\d)(\d{4})\s*[-/.]\s*(\d{1,2})\s*[-/.]\s*(\d{1,2})(?!\d)")
_DMY_DOTS: Final = re.compile(r"(?<!\d)(\d{1,2})\.\s*(\d{1,2})\.\s*(\d{4})(?!\d)")
_SLASHES: Final = re.compile(r"(?<!\d)(\d{1,2})/(\d{1,2})/(\d{4})(?!\d)")
_WORD: Final = re.compile(r"[^\W\d_]+")
_DAY: Final = re.compile(r"(?<!\d)(\d{1,2})(?!\d)")

ZONES: Final = {
    "utc": 0.0, "gmt": 0.0, "wet": 0.0, "west": 1.0, "bst": 1.0, "cet": 1.0, "cest": 2.0,
    "mez": 1.0, "mesz": 2.0, "eet": 2.0, "eest": 3.0, "msk": 3.0, "hkt": 8.0, "sgt": 8.0,
    "awst": 8.0, "jst": 9.0, "kst": 9.0, "acst": 9.5, "aest": 10.0, "aedt": 11.0,
    "nzst": 12.0, "nzdt": 13.0, "brt": -3.0, "art": -3.0, "est": -5.0, "edt": -4.0,
    "cdt": -5.0, "mst": -7.0, "mdt": -6.0, "pst": -8.0, "pdt": -7.0, "akst": -9.0,
    "akdt": -8.0, "hst": -10.0,
}
"""Zone abbreviations with one meaning; ``CST`` (China or US Central) and ``IST`` (India,
Ireland or Israel) are left out on purpose."""
MONTHS: Final = (
    ("janv", 1), ("jan", 1), ("ene", 1), ("gen", 1), ("feb", 2), ("fev", 2), ("fév", 2),
    ("mär", 3), ("mrz", 3), ("mar", 3), ("apr", 4), ("abr", 4), ("avr", 4), ("may", 5),
    ("mai", 5), ("mag", 5), ("mei", 5), ("juin", 6), ("jun", 6), ("giu", 6), ("juil", 7),
    ("jul", 7), ("lug", 7), ("aug", 8), ("ago", 8), ("août", 8), ("aout", 8), ("sep", 9),
    ("set", 9), ("oct", 10), ("okt", 10), ("out", 10), ("ott", 10), ("nov", 11), ("dec", 12),
    ("dez", 12), ("dic", 12), ("déc", 12),
)
"""Month-name prefixes (English, German, French, Spanish, Portuguese, Italian, Dutch), the
longer of two that share a start first."""


def looks_like_time(line: str) -> bool:
    """A clock (``17:38:51``) and a four-digit year: a card's time line, not its prompt."""
    return bool(_CLOCK.search(line) and _YEAR.search(_CLOCK.sub(" ", line)))


def parse_time(line: str) -> str | None:
    """The UTC instant a card's time line names, or ``None`` when it cannot be read for sure."""
    text = re.sub(r"[\u00a0\u202f\u2009]", " ", line).strip().lower()
    clock = _CLOCK.search(text)
    if clock is None:
        return None
    hour, minute, second = int(clock[1]), int(clock[2]), int(clock[3] or 0)
    after = text[clock.end():]
    rest = _OFFSET.sub(" ", text[:clock.start()] + " " + after)
    if _PM.search(after) or _PM.search(text[:clock.start()]):
        hour = hour % 12 + 12
    elif _AM.search(after) or _AM.search(text[:clock.start()]):
        hour %= 12
    offset = _offset(after)
    day = _date(rest)
    if offset is None or day is None:
        return None
    try:
        moment = datetime(*day, hour, minute, second, tzinfo=UTC) - timedelta(hours=offset)
    except ValueError:
        return None
    return format_ts(moment)


def _offset(after: str) -> float | None:
    """Hours east of UTC from what follows the clock: ``GMT-03:00``, ``UTC+1``, ``MESZ``."""
    if (found := _OFFSET.search(after)) is not None:
        hours = int(found[2]) + int(found[3] or 0) / 60
        return -hours if found[1] in "-−" else hours
    zones = [ZONES[w] for w in _WORD.findall(after) if w in ZONES]
    return zones[0] if len(zones) == 1 else None


def _date(rest: str) -> tuple[int, int, int] | None:
    """``(year, month, day)`` from the text around the clock."""
    for pattern, order in ((_CJK_DATE, (1, 2, 3)), (_YMD, (1, 2, 3)), (_DMY_DOTS, (3, 2, 1))):
        if (found := pattern.search(rest)) is not None:
            return int(found[order[0]]), int(found[order[1]]), int(found[order[2]])
    if (found := _SLASHES.search(rest)) is not None:
        first, second, full = int(found[1]), int(found[2]), int(found[3])
        if first > 12 >= second:
            return full, second, first
        if second > 12 >= first:
            return full, first, second
        return None  # 03/04/2026: March 4th or 3 April
    year = _YEAR.search(rest)
    month = next((m for w in _WORD.findall(rest) if len(w) >= 3
                  for prefix, m in MONTHS if w.startswith(prefix)), None)
    if year is None or month is None:
        return None
    days = [int(d) for d in _DAY.findall(rest[:year.start()] + " " + rest[year.end():])]
    return (int(year[1]), month, days[0]) if len(days) == 1 else None
