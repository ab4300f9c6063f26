"""Two-event questions → the two event descriptions, each asked on its own.

"How many weeks passed between Maria adopting Coco and Shadow?", "Which came first, the move or
the wedding?", "How many days after the launch did Sam quit?", "Which city was John in before
traveling to Chicago?": the answer needs a turn about *each* event, and the question as a whole
is closer to neither than to a turn that mentions both words in passing. Recall
(:mod:`mind.retrieval.search`) runs both lanes for each part found here and adds each part's
fused lanes to the question's own candidates, so each event gets candidates of its own; a part
that places the asked event *before* or *after* the other (``relation``) also lets recall favour
turns on that side of the other event's source time.

Understood (case-insensitive, the question's own words kept):

* ``how long | how much time | how many <unit> [passed|…] between A and B`` and ``what was the
  time | gap | difference between A and B``;
* ``which | what … first | earlier | later | last[,:] A or B`` and ``did A or B happen | come |
  occur first``;
* ``did A happen | come | occur before | after B``;
* ``how long | how soon | how many <unit> after | before A did | was | … B`` (B lies after /
  before A);
* a *wh*-question with a clause ``after | before | since <event>`` that names no date
  (``When did Melanie go hiking after the road trip?``): the question without the clause, and
  the event.

A coordinated part of one or two words that does not start with a determiner borrows the other
part's leading words ("between Maria adopting Coco and Shadow" → "Maria adopting Coco", "Maria
adopting Shadow"; "the move to Denver or the wedding" stays as it is). A part that is a date
("between August 11 and August 15") is not an event: :mod:`mind.retrieval.query_time` reads it.
Pure functions; anything else is no split (``None``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, timedelta
from typing import Final, Literal

from mind.frames.model import Frame
from mind.retrieval.query_time import TimeWindow, time_windows
from mind.timeutil import parse_stored

Relation = Literal["before", "after"]

_AUX: Final = r"(?:did|does|do|was|were|is|are|had|has|have|will|would|could)"
_BETWEEN: Final = re.compile(
    r"^\W*(?:how\s+(?:long|much\s+time|many\s+\w+)|what\s+(?:was|is)\s+the\s+"
    r"(?:time|gap|difference|interval))\b(?:\s+[\w']+){0,3}?\s+between\s+(?P<a>.+?)\s+and\s+"
    r"(?P<b>.+?)\W*$", re.I)
_WHICH_FIRST: Final = re.compile(
    r"^\W*(?:which|what)\b[^,:?]*?\b(?:first|earlier|sooner|later|last)\s*[,:]?\s+"
    r"(?P<a>.+?),?\s+or\s+(?P<b>.+?)\W*$", re.I)
_OR_FIRST: Final = re.compile(
    r"^\W*(?:did|was|were)\s+(?P<a>.+?),?\s+or\s+(?P<b>.+?)\s+(?:happen|come|occur|take\s+place"
    r"|start)\s+(?:first|earlier)\W*$", re.I)
_DID_BEFORE: Final = re.compile(
    r"^\W*(?:did|was|were)\s+(?P<a>.+?)\s+(?:happen|come|occur|take\s+place|start)\s+"
    r"(?:before|after)\s+(?P<b>.+?)\W*$", re.I)
_HOW_LONG_AFTER: Final = re.compile(
    rf"^\W*how\s+(?:long|soon|much\s+(?:later|earlier|time)|many\s+\w+)\s+(?:(?:later|earlier)"
    rf"\s+)?(?P<rel>after|before)\s+(?P<a>.+?)\s+{_AUX}\s+(?P<b>.+?)\W*$", re.I)
_ANCHOR: Final = re.compile(
    r"^(?P<main>\W*(?:when|where|what|which|who|whom|how)\b.+?)\s+(?P<rel>after|before|since)\s+"
    r"(?P<a>.+?)\W*$", re.I)
# an anchor that is no event: a pronoun or a time word
_NO_EVENT: Final = re.compile(
    r"^(?:that|this|it|then|now|today|yesterday|tomorrow|him|her|them|us|me|you|lunch|dinner"
    r"|breakfast|work|school|class|bed|noon|midnight|(?:the\s+)?(?:morning|evening|night|weekend"
    r"|holidays?))$", re.I)
# "the week before 3 May": the clause is a date, not an event
_UNIT_END: Final = re.compile(r"\b(?:day|week|weekend|fortnight|month|year)s?$", re.I)
_DETERMINERS: Final = frozenset(
    "the a an his her their my our your its this that these those some".split())
MIN_WORDS: Final = 3  # a part shorter than this borrows the other part's leading words


@dataclass(frozen=True, slots=True)
class EventParts:
    """The event descriptions of a two-event question. ``relation``: where the asked event
    (``parts[0]``) lies against the time of the other (``parts[1]``), when the question says."""

    parts: tuple[str, str]
    relation: Relation | None = None


def _words(text: str) -> list[str]:
    return text.split()


def _complete(part: str, other: str) -> str:
    """A short part ("Shadow") borrows the other part's leading words ("Maria adopting Coco"
    → "Maria adopting Shadow")."""
    mine, theirs = _words(part), _words(other)
    if (len(mine) >= MIN_WORDS or len(theirs) <= len(mine)
            or mine[0].lower() in _DETERMINERS):  # "the wedding" is a whole event
        return part
    return " ".join([*theirs[:len(theirs) - len(mine)], *mine])


def _is_event(text: str) -> bool:
    """Not a date ("August 11", "3 May 2023 with the kids") and not a pronoun or time word."""
    words = text.strip(" ,.;:!?\"'")
    if not words or _NO_EVENT.match(words) or _UNIT_END.search(words):
        return False
    windows = time_windows(words)
    if any(words.lower().startswith(w.label.lower()) for w in windows):
        return False
    return sum(len(w.label) for w in windows) < len(words) / 2


def _pair(a: str, b: str, relation: Relation | None = None, complete: bool = True
          ) -> EventParts | None:
    """``complete``: the parts are coordinated ("between A and B"), so a short one borrows the
    other's leading words."""
    a, b = a.strip(" ,;:"), b.strip(" ,;:")
    if not _is_event(a) or not _is_event(b):
        return None
    if complete:
        a, b = _complete(a, b), _complete(b, a)
    if a.lower() == b.lower():
        return None
    return EventParts((a, b), relation)


def event_parts(query: str) -> EventParts | None:
    """The two events a question asks about together, or ``None`` (module docstring)."""
    text = " ".join(query.split())
    if not text:
        return None
    for pattern in (_BETWEEN, _WHICH_FIRST, _OR_FIRST, _DID_BEFORE):
        m = pattern.match(text)
        if m:
            return _pair(m.group("a"), m.group("b"))
    m = _HOW_LONG_AFTER.match(text)
    if m:  # "how many days after A did B": B is the asked event, after A
        rel: Relation = "after" if m.group("rel").lower() == "after" else "before"
        return _pair(m.group("b"), m.group("a"), rel, complete=False)
    m = _ANCHOR.match(text)
    if m and len(_words(m.group("main"))) >= MIN_WORDS:
        rel = "before" if m.group("rel").lower() == "before" else "after"
        return _pair(m.group("main"), m.group("a"), rel, complete=False)
    return None


def anchor_window(split: EventParts, anchor_scores: dict[int, float],
                   frames: dict[int, Frame]) -> TimeWindow | None:
    """"… after / before <event>": from the source day of the event's best turn on, or up
    to and including it (a day's turns are not ordered within it)."""
    if split.relation is None:
        return None
    found = [fid for fid in anchor_scores if fid in frames]
    if not found:
        return None
    best = max(found, key=lambda fid: anchor_scores[fid])
    day = parse_stored(frames[best].created_at).astimezone(UTC).date()
    label = f"{split.relation} {split.parts[1]}"
    if split.relation == "after":
        return TimeWindow(label, day, None)
    return TimeWindow(label, None, day + timedelta(days=1))
