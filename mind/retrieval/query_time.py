"""Time named in a query → windows of source time (``created_at``) that the query asks about.

"What did Maria donate in December 2023?", "What dish did Nate make on 9 November, 2022?",
"When did Melanie go camping in June?", "what did we decide last week": the words that say
*when* rarely occur in the memory itself — the time is in the frame's source timestamp. Recall
favours frames whose ``created_at`` falls in a window found here
(:mod:`mind.retrieval.conversation`).
Pure functions; relative phrases resolve against ``now`` (UTC).

Understood: full dates (``9 November 2022``, ``November 9th, 2022``, ``2022-11-09``), month and
year (``May 2023``), a month after a preposition (``in June``: that month of any year), a year
after a preposition (``in 2023``), ``today``, ``yesterday``, ``this/last week|month|year``,
``last <weekday>`` / ``on <weekday>`` (the most recent one before today), ``N days|weeks|months|
years ago`` (a window around that moment). A bare number is never a year ("2023 budget" is text).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Final

from mind.timeutil import parse_stored

_MONTH_NAMES: Final = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTH_NAMES.update({abbr.lower(): i for i, abbr in enumerate(calendar.month_abbr) if abbr})
_MONTH_NAMES["sept"] = 9
_WEEKDAYS: Final = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_MON: Final = (r"(january|february|march|april|may|june|july|august|september|october|november"
               r"|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?")
_DAY: Final = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR: Final = r"((?:19|20)\d{2})"
_UNITS: Final = {"day": 1, "week": 7, "month": 30, "year": 365}
_NUMBERS: Final = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
                   "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple of": 2,
                   "few": 3}

_PATTERNS: Final = [
    ("dmy", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MON},?\s+{_YEAR}\b", re.I)),
    ("mdy", re.compile(rf"\b{_MON}\s+{_DAY},?\s+{_YEAR}\b", re.I)),
    ("iso", re.compile(r"\b((?:19|20)\d{2})-(\d{2})-(\d{2})\b")),
    ("my", re.compile(rf"\b{_MON},?\s+{_YEAR}\b", re.I)),
    ("m", re.compile(rf"\b(?:in|during|since|until|before|after|of|early|late|mid)\s+{_MON}\b",
                     re.I)),
    ("y", re.compile(rf"\b(?:in|during|of|since|until|before|after)\s+{_YEAR}\b", re.I)),
    ("ago", re.compile(r"\b(\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten"
                       r"|couple of|few)\s+(day|week|month|year)s?\s+ago\b", re.I)),
    ("rel", re.compile(r"\b(today|yesterday|(?:this|last|past|previous)\s+"
                       r"(?:week|weekend|month|year))\b", re.I)),
    ("wd", re.compile(r"\b(?:last|on|this past)\s+(monday|tuesday|wednesday|thursday|friday"
                      r"|saturday|sunday)\b", re.I)),
]


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """``[start, end)`` in UTC, or (``month`` set) that month of any year."""

    label: str
    start: date | None = None
    end: date | None = None
    month: int | None = None

    def contains(self, moment: date) -> bool:
        if self.month is not None:
            return moment.month == self.month
        assert self.start is not None and self.end is not None
        return self.start <= moment < self.end


def _month(name: str) -> int:
    return _MONTH_NAMES[name.lower().rstrip(".")]


def _month_window(year: int, month: int, label: str) -> TimeWindow:
    end = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    return TimeWindow(label, date(year, month, 1), end)


def _relative(phrase: str, today: date) -> TimeWindow:
    words = phrase.lower().split()
    if words[0] == "today":
        return TimeWindow(phrase, today, today + timedelta(days=1))
    if words[0] == "yesterday":
        return TimeWindow(phrase, today - timedelta(days=1), today)
    this, unit = words[0] == "this", words[-1]
    if unit in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday())
        start = monday if this else monday - timedelta(days=7)
        if unit == "weekend":
            start += timedelta(days=5)
            return TimeWindow(phrase, start, start + timedelta(days=2))
        return TimeWindow(phrase, start, start + timedelta(days=7))
    if unit == "month":
        first = today.replace(day=1)
        if not this:
            first = (first - timedelta(days=1)).replace(day=1)
        return _month_window(first.year, first.month, phrase)
    year = today.year if this else today.year - 1
    return TimeWindow(phrase, date(year, 1, 1), date(year + 1, 1, 1))


def _ago(count: str, unit: str, today: date, label: str) -> TimeWindow:
    n = int(count) if count.isdigit() else _NUMBERS[count.lower()]
    days = n * _UNITS[unit.lower()]
    slack = max(1, days // 4)  # "three weeks ago" is not to the day
    centre = today - timedelta(days=days)
    return TimeWindow(label, centre - timedelta(days=slack), centre + timedelta(days=slack + 1))


def _window(kind: str, m: re.Match[str], today: date) -> TimeWindow:
    g, label = m.groups(), m.group(0)
    if kind == "dmy":
        start = date(int(g[2]), _month(g[1]), int(g[0]))
    elif kind == "mdy":
        start = date(int(g[2]), _month(g[0]), int(g[1]))
    elif kind == "iso":
        start = date(int(g[0]), int(g[1]), int(g[2]))
    elif kind == "my":
        return _month_window(int(g[1]), _month(g[0]), label)
    elif kind == "m":
        return TimeWindow(label, month=_month(g[0]))
    elif kind == "y":
        return TimeWindow(label, date(int(g[0]), 1, 1), date(int(g[0]) + 1, 1, 1))
    elif kind == "ago":
        return _ago(g[0], g[1], today, label)
    elif kind == "rel":
        return _relative(g[0], today)
    else:  # weekday: the most recent one before today
        back = (today.weekday() - _WEEKDAYS[g[0].lower()]) % 7 or 7
        start = today - timedelta(days=back)
    return TimeWindow(label, start, start + timedelta(days=1))


def time_windows(query: str, now: datetime | None = None) -> list[TimeWindow]:
    """Every time window the query names (overlapping phrases: the most specific wins)."""
    today = (now or datetime.now(UTC)).astimezone(UTC).date()
    found: list[TimeWindow] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(query):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            taken.append((m.start(), m.end()))
            try:
                found.append(_window(kind, m, today))
            except (ValueError, KeyError):  # "31 February 2023": not a date, just text
                continue
    return found


def in_windows(windows: list[TimeWindow], created_at: str) -> bool:
    if not windows:
        return False
    moment = parse_stored(created_at).astimezone(UTC).date()
    return any(w.contains(moment) for w in windows)
