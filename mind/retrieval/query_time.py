"""Time named in a query → windows of source time (``created_at``) that the query asks about.

"What did Maria donate in December 2023?", "What dish did Nate make on 9 November, 2022?",
"When did Melanie go camping in June?", "what did we decide last week": the words that say
*when* rarely occur in the memory itself — the time is in the frame's source timestamp. Recall
favours frames whose ``created_at`` falls in a window found here
(:mod:`mind.retrieval.conversation`).
Pure functions; relative phrases resolve against ``now`` (UTC).

Understood: full dates (``9 November 2022``, ``November 9th, 2022``, ``2022-11-09``), month and
year (``May 2023``), a month after a preposition (``in June``: that month of any year), a year
after a preposition (``in 2023``), ``today`` / ``tonight`` / ``this morning``, ``yesterday`` /
``last night``, ``tomorrow``, ``this/last/next week|weekend|month|year``,
``last <weekday>`` / ``on <weekday>`` (the most recent one before today), ``N days|weeks|months|
years ago`` (a window around that moment). A bare number is never a year ("2023 budget" is text).

A dated phrase's relation words shape its window: ``between 11 and 15 August 2023`` /
``between August 11 and August 15, 2023`` / ``from 2022-11-09 to 2022-11-12`` span both ends;
``the week (day, weekend, month, year) before|after <date>`` reaches that far from it (the date
itself included: people tell of an event the day after); ``before`` / ``prior to`` a date is
everything earlier, ``until`` / ``till`` / ``by`` / ``as of`` / ``up to`` everything up to its end
(the state then), ``after`` everything from its end on, ``since`` everything from its start on.
A month without a year ("since March") keeps its month-of-any-year window. ``the first | second |
third | fourth | last week of <month> [year]`` and ``the first | second half of <month> [year]``
are those days.

A turn often tells of a time other than its own: "I went to a castle last Friday", said on 16
November. :func:`told_days` resolves a frame's own time phrases against its source time, so a
question about "the second week of November" finds it too.
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
_UNITS: Final = {"day": 1, "week": 7, "weekend": 7, "fortnight": 14, "month": 31, "year": 366}
_NUMBERS: Final = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
                   "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple of": 2,
                   "few": 3}

_RANGE_MD: Final = rf"{_MON}\s+{_DAY}"
_RANGE_DM: Final = rf"{_DAY}\s+(?:of\s+)?{_MON}"
_PATTERNS: Final = [
    # a range whose first end borrows the second's year: "between August 11 and August 15 2023"
    ("rmd", re.compile(rf"\b(?:between|from)\s+{_RANGE_MD}\s+(?:and|to|until|till)\s+"
                       rf"{_RANGE_MD},?\s+{_YEAR}\b", re.I)),
    ("rdm", re.compile(rf"\b(?:between|from)\s+{_RANGE_DM}\s+(?:and|to|until|till)\s+"
                       rf"{_RANGE_DM},?\s+{_YEAR}\b", re.I)),
    ("rd", re.compile(rf"\b(?:between|from)\s+{_DAY}\s+(?:and|to|until|till|-)\s+{_DAY}\s+"
                      rf"(?:of\s+)?{_MON},?\s+{_YEAR}\b", re.I)),
    # "the second week of November (2023)", "the first half of September 2022"
    ("part", re.compile(rf"\b(first|second|third|fourth|last)\s+(week|half)\s+of\s+{_MON}"
                        rf"(?:,?\s+{_YEAR})?\b", re.I)),
    ("dmy", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MON},?\s+{_YEAR}\b", re.I)),
    ("mdy", re.compile(rf"\b{_MON}\s+{_DAY},?\s+{_YEAR}\b", re.I)),
    ("iso", re.compile(r"\b((?:19|20)\d{2})-(\d{2})-(\d{2})\b")),
    ("my", re.compile(rf"\b{_MON},?\s+{_YEAR}\b", re.I)),
    ("m", re.compile(rf"\b(?:in|during|since|until|before|after|of|early|late|mid)\s+{_MON}\b",
                     re.I)),
    ("y", re.compile(rf"\b(?:in|during|of|since|until|before|after)\s+{_YEAR}\b", re.I)),
    ("ago", re.compile(r"\b(\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten"
                       r"|couple of|few)\s+(day|week|month|year)s?\s+ago\b", re.I)),
    ("rel", re.compile(r"\b(today|tonight|this\s+(?:morning|afternoon|evening)|yesterday"
                       r"|last\s+night|tomorrow|(?:this|last|past|previous|next)\s+"
                       r"(?:week|weekend|month|year))\b", re.I)),
    ("wd", re.compile(r"\b(?:last|on|this past)\s+(monday|tuesday|wednesday|thursday|friday"
                      r"|saturday|sunday)\b", re.I)),
]


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """``[start, end)`` in UTC (``None``: open on that side — "before", "since"), or
    (``month`` set) that month of any year."""

    label: str
    start: date | None = None
    end: date | None = None
    month: int | None = None
    days: tuple[int, int] = (1, 31)  # of a month of any year: these days only

    def contains(self, moment: date) -> bool:
        if self.month is not None:
            return moment.month == self.month and self.days[0] <= moment.day <= self.days[1]
        return ((self.start is None or self.start <= moment)
                and (self.end is None or moment < self.end))


def _month(name: str) -> int:
    return _MONTH_NAMES[name.lower().rstrip(".")]


def _month_window(year: int, month: int, label: str) -> TimeWindow:
    end = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    return TimeWindow(label, date(year, month, 1), end)


_PARTS: Final = {("first", "week"): (1, 7), ("second", "week"): (8, 14),
                  ("third", "week"): (15, 21), ("fourth", "week"): (22, 28),
                  ("last", "week"): (25, 31), ("first", "half"): (1, 15),
                  ("second", "half"): (16, 31), ("last", "half"): (16, 31)}


def _month_part(which: str, part: str, month: int, year: int | None, label: str) -> TimeWindow:
    """"the second week of November": days 8–14 (of that month of any year without one)."""
    first, last = _PARTS[(which, part)]
    if year is None:
        return TimeWindow(label, month=month, days=(first, last))
    length = calendar.monthrange(year, month)[1]
    if which == "last":
        first = length - (6 if part == "week" else length // 2 - 1)
    return TimeWindow(label, date(year, month, first),
                      date(year, month, min(last, length)) + timedelta(days=1))


def _relative(phrase: str, today: date) -> TimeWindow:
    words = phrase.lower().split()
    if words[0] in ("today", "tonight") or words[-1] in ("morning", "afternoon", "evening"):
        return TimeWindow(phrase, today, today + timedelta(days=1))
    if words[0] == "yesterday" or words == ["last", "night"]:
        return TimeWindow(phrase, today - timedelta(days=1), today)
    if words[0] == "tomorrow":
        return TimeWindow(phrase, today + timedelta(days=1), today + timedelta(days=2))
    this, unit = words[0] == "this", words[-1]
    step = 1 if words[0] == "next" else 0 if this else -1  # next / this / last
    if unit in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday())
        start = monday + timedelta(days=7 * step)
        if unit == "weekend":
            start += timedelta(days=5)
            return TimeWindow(phrase, start, start + timedelta(days=2))
        return TimeWindow(phrase, start, start + timedelta(days=7))
    if unit == "month":
        index = today.year * 12 + today.month - 1 + step
        return _month_window(index // 12, index % 12 + 1, phrase)
    year = today.year + step
    return TimeWindow(phrase, date(year, 1, 1), date(year + 1, 1, 1))


def _ago(count: str, unit: str, today: date, label: str) -> TimeWindow:
    n = int(count) if count.isdigit() else _NUMBERS[count.lower()]
    days = n * _UNITS[unit.lower()]
    slack = max(1, days // 4)  # "three weeks ago" is not to the day
    centre = today - timedelta(days=days)
    return TimeWindow(label, centre - timedelta(days=slack), centre + timedelta(days=slack + 1))


def _window(kind: str, m: re.Match[str], today: date) -> TimeWindow:
    g, label = m.groups(), m.group(0)
    if kind == "part":
        return _month_part(g[0].lower(), g[1].lower(), _month(g[2]),
                           int(g[3]) if g[3] else None, label)
    if kind in ("rmd", "rdm", "rd"):  # a range: both ends in the closing year
        year = int(g[4] if kind != "rd" else g[3])
        if kind == "rd":
            first, last = date(year, _month(g[2]), int(g[0])), date(year, _month(g[2]), int(g[1]))
        elif kind == "rmd":
            first, last = date(year, _month(g[0]), int(g[1])), date(year, _month(g[2]), int(g[3]))
        else:
            first, last = date(year, _month(g[1]), int(g[0])), date(year, _month(g[3]), int(g[2]))
        if first > last:  # "from 28 December to 2 January 2024": the first end a year earlier
            first = first.replace(year=year - 1)
        return TimeWindow(label, first, last + timedelta(days=1))
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


# what comes right before a dated phrase and changes its window ("the week before 9 June 2023")
_RELATION: Final = re.compile(
    r"\b(?:(the|a|an|one|that|\d{1,3}|two|three|four|five|six|seven|eight|nine|ten|couple\s+of"
    r"|few)\s+)?(?:(day|week|weekend|fortnight|month|year)s?\s+)?"
    r"(before|after|until|till|by|as\s+of|prior\s+to|since|up\s+to)\s+(?:the\s+)?$", re.I)
# "between <date> and <date>", "from <date> to <date>": what joins two dated phrases into one
_BETWEEN: Final = re.compile(r"\b(?:between|from)\s+(?:the\s+)?$", re.I)
_JOIN: Final = re.compile(r"^\s*(?:and|to|until|till|-)\s*(?:the\s+)?$", re.I)


def _related(window: TimeWindow, before_text: str, phrase: str) -> TimeWindow:
    """``window`` (named by ``phrase``) as the words just before it shape it
    (:data:`_RELATION`)."""
    m = _RELATION.search(before_text)
    if m is None or window.start is None or window.end is None:
        return window
    count, unit, word = m.group(1), m.group(2), " ".join(m.group(3).lower().split())
    label = f"{m.group(0)}{phrase}"
    if unit:
        times = (1 if count is None or count.lower() in ("the", "that")
                 else int(count) if count.isdigit() else _NUMBERS[" ".join(count.lower().split())])
        reach = timedelta(days=_UNITS[unit.lower()] * times)
        if word in ("after", "since"):
            return TimeWindow(label, window.start, window.end + reach)
        return TimeWindow(label, window.start - reach, window.end)
    if word in ("before", "prior to"):
        return TimeWindow(label, None, window.start)
    if word == "after":
        return TimeWindow(label, window.end, None)
    if word == "since":
        return TimeWindow(label, window.start, None)
    return TimeWindow(label, None, window.end)  # until, till, by, as of, up to


def time_windows(query: str, now: datetime | None = None) -> list[TimeWindow]:
    """Every time window the query names (overlapping phrases: the most specific wins), each
    shaped by the relation words before it; two dated phrases joined by "between … and …" are
    one window."""
    today = (now or datetime.now(UTC)).astimezone(UTC).date()
    found: list[tuple[int, int, TimeWindow]] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(query):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            taken.append((m.start(), m.end()))
            try:
                # a year's own preposition ("since 2022") is a relation word too
                at = m.start(1) if kind == "y" else m.start()
                found.append((at, m.end(), _window(kind, m, today)))
            except (ValueError, KeyError):  # "31 February 2023": not a date, just text
                continue
    found.sort(key=lambda f: f[0])
    out: list[TimeWindow] = []
    i = 0
    while i < len(found):
        start, end, window = found[i]
        if i + 1 < len(found):
            nxt_start, nxt_end, nxt = found[i + 1]
            between = _BETWEEN.search(query[:start])
            if (between and _JOIN.match(query[end:nxt_start])
                    and window.start is not None and nxt.end is not None
                    and window.start < nxt.end):
                out.append(TimeWindow(query[between.start():nxt_end], window.start, nxt.end))
                i += 2
                continue
        out.append(_related(window, query[:start], query[start:end]))
        i += 1
    return out


TOLD_SPAN: Final = 31  # a frame's own time phrase counts when it names at most this many days


def told_days(content: str, created_at: str) -> list[date]:
    """The days a frame's own words place what it tells, resolved against its source time:
    "I went to a castle last Friday" said on Thursday 16 November 2023 tells of 10 November;
    "yesterday", "last week", "two days ago", "on 3 May 2023" alike. Only phrases of at most
    :data:`TOLD_SPAN` days count ("last year" places nothing), and no open or any-year one."""
    now = parse_stored(created_at).astimezone(UTC)
    out: list[date] = []
    for w in time_windows(content, now):
        if w.month is not None or w.start is None or w.end is None:
            continue
        span = (w.end - w.start).days
        if 0 < span <= TOLD_SPAN:
            out.extend(w.start + timedelta(days=i) for i in range(span))
    return out


def told_in_windows(windows: list[TimeWindow], content: str, created_at: str) -> bool:
    """Whether a day the frame's words tell of (:func:`told_days`) lies in a window."""
    if not windows:
        return False
    return any(w.contains(day) for day in told_days(content, created_at) for w in windows)


def in_windows(windows: list[TimeWindow], created_at: str) -> bool:
    if not windows:
        return False
    moment = parse_stored(created_at).astimezone(UTC).date()
    return any(w.contains(moment) for w in windows)
