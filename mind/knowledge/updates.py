"""Update statements: which turns state a new value for something said before. Pure functions.

A memory fed with chats keeps the first statement of a fact beside its later updates: "we're
choosing between PostgreSQL and MongoDB" and, three turns on, "decision made: PostgreSQL 16";
"she weighs 11 kg" and, months later, "she's 13.5 kg now, up from 11". Recall should rank the
current statement first and keep the outdated one findable (:mod:`mind.knowledge.supersession`
stores the pairs; :mod:`mind.retrieval.search` ranks by them). No model is asked: a pair is
recognized from the newer turn's wording, the values both turns state, what they mention and how
alike their vectors are.

**Cues** (:func:`update_cue`) — the newer turn must say it decides or changes something:

* ``decision``: "decided", "decision made", "going with", "let's go with", "we'll go with",
  "went with", "chose", "picked", "settled on", "opted for", "X it is", "X is out";
* ``change``: "change of plans", "changed to", "moved to", "rescheduled", "postponed",
  "instead", "no longer", "not anymore", "switched", "rebooked", "renamed", "replaced",
  "up from", "down from", "is now", "now going", "new date(s)/time/name/address", "correction",
  "update:", "actually it's", "turns out (that)", and a trailing "now" beside a value ("13.5 kg
  now", not "for 3 years now"); "keep you updated", "how it turns out" and "not much has
  changed" are no cue.

**Values** (:func:`values`) — what a turn states, by kind: quantities by unit ("11 kg",
"25 km"), money ("€410", "$120"), dates (month names, ISO dates, weekdays), clock times
("9 am", "1:55") and the values a change names as the old one ("up from 11", "from 3 to 5",
"instead of X", "rather than X").

**A pair** (:func:`supersedes`): the newer turn has a cue (outside its questions: "did we
ever document why Atlas picked its database?" decides nothing) and is not an assistant's turn (an
assistant restating the user's choice does not replace it), neither is an imported document
(notes, papers, web pages state no timeline of one person's facts), it is later (source time,
or a later turn of the same conversation), and it is about the same thing:

* a decision supersedes earlier turns of its own conversation that open the choice it closes (a
  question, options offered: "between", "or", a list), and turns that mention one of its
  entities (or, in its conversation, state a value of a kind it states) *and are about the same
  thing of it* (below) — at most :data:`SAME_SESSION_WINDOW` turns back in its conversation
  (cosine ≥ :data:`SAME_SESSION_COSINE`), in other conversations at cosine ≥
  :data:`CROSS_SESSION_COSINE`;
* a change that states values supersedes an earlier turn that states a *different* value of the
  same kind and mentions one of its entities (cosine ≥ :data:`SAME_SESSION_COSINE` in the same
  conversation, :data:`CROSS_SESSION_COSINE` elsewhere), or one that holds the value the change
  names as the old one ("up from 11" and "11 kg"; cosine ≥ :data:`BACK_REFERENCE_COSINE`);
* a change without values (a rename, a replaced booking, "instead") supersedes an earlier turn
  that mentions one of its entities and is about the same thing of it, by the same cosine floors.

*The same thing of an entity*: beyond the entities, the chosen value and the speakers' names, the
turns share a content word ("the CI" of Atlas, not its database), or they are alike enough to
say it in other words (cosine ≥ :data:`TOPIC_COSINE`: "the DB", "the datastore"); a decision
naming nothing but its choice ("Decision made: ClickHouse. DuckDB is out.") is about what its own
conversation was about. A turn of another conversation that already states the new value
(:func:`choices`: "going with MongoDB", "switching the CI to Jenkins", "renamed it Juniper") is
not replaced by it: it is the same choice, or the same value given to another thing ("For
Granite we're going with MongoDB" does not update Atlas's "MongoDB as the DB").

Two turns share an entity when a word of one's entity names is a word of the other's ("Alfama
Airbnb" and "Alfama"); the speakers' own names do not count (every turn of a chat names them).
A later turn supersedes at most :data:`MAX_SUPERSEDED` earlier ones, the most alike: many
statements about one project ("for Falcon we're going with DigitalOcean as the hosting", "...
Auth0 for login") are about different things, and the nearest is the likeliest the same one.

What it cannot see: an update worded without any cue ("Biscuit: 13.5 kg."), a value kind it does
not parse (sizes, colours, free-text answers), two facts of one kind about one entity in one turn
(the whole turn is superseded), a fact stated only by an assistant, and two things of one entity
named in other words and alike enough to pass :data:`TOPIC_COSINE`
(``bench/evals/supersession_pairs.py``: on synthetic chats of project decisions, 3 in 4 pairs
between statements about projects are right).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final

SAME_SESSION_WINDOW: Final = 8
MAX_SUPERSEDED: Final = 3
SAME_SESSION_COSINE: Final = 0.3
CROSS_SESSION_COSINE: Final = 0.45
BACK_REFERENCE_COSINE: Final = 0.35
TOPIC_COSINE: Final = 0.6

_DECISION = re.compile(
    r"(?i:\b(?:decided|decision\s+(?:is\s+|was\s+)?made|made\s+(?:a|the|our|my)\s+decision"
    r"|(?:let'?s|we'?ll|i'?ll|we\s+will|i\s+will|i'?m|we'?re)\s+go(?:ing)?\s+with|going\s+with"
    r"|went\s+with|chose|chosen|picked(?!\s+up)|settled\s+on|opted\s+for"
    r"|final\s+(?:choice|decision|answer))\b)"
    r"|\b[A-Z][\w.-]*\s+it\s+is\s*[.!\u2014\u2013-]|\b[A-Z][\w.-]*\s+is\s+out\b",
)
_CHANGE = re.compile(
    r"\b(?:change\s+of\s+plans?|plans?\s+changed|changed\s+(?:to|it|the|our|my|from)"
    r"|moved\s+(?:to|it|the|our|my|from)"
    r"|(?:trip|meeting|appointment|date|flight|event|it)\s+(?:has\s+|was\s+|got\s+)?moved"
    r"|rescheduled|postponed|pushed\s+back|instead|no\s+longer|not\s+any\s?more|switched"
    r"|rebooked|renamed|replaced|up\s+from|down\s+from|(?:is|are|'s|'re|was)\s+now"
    r"|(?:bumped|raised|increased|lowered|reduced|cut|dropped)\s+(?:up\s+|down\s+|back\s+)?to"
    r"|now\s+(?:going|called|named|lives?|works?|weighs?|costs?|at|on|in)"
    r"|new\s+(?:dates?|time|name|address|plan|job|number|price)|correction|update\s*:"
    r"|actually,?\s+(?:it'?s|we|i)|turns\s+out\s+(?:that|to\s+be))\b"
    r"|(?:^|[.!?:]\s+)turns\s+out\b",
    re.IGNORECASE,
)
_UNITS: Final = {
    "kg": "kg", "kgs": "kg", "kilo": "kg", "kilos": "kg", "kilograms": "kg", "kilogram": "kg",
    "lb": "lb", "lbs": "lb", "pound": "lb", "pounds": "lb", "g": "g", "grams": "g",
    "km": "km", "kilometers": "km", "kilometres": "km", "mi": "mi", "mile": "mi", "miles": "mi",
    "m": "m", "meters": "m", "metres": "m", "cm": "cm", "mm": "mm", "ft": "ft", "feet": "ft",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h", "min": "min", "mins": "min",
    "minute": "min", "minutes": "min", "ms": "ms", "s": "s", "sec": "s", "seconds": "s",
    "day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month",
    "months": "month", "year": "year", "years": "year", "%": "%", "percent": "%",
    "gb": "gb", "mb": "mb", "tb": "tb", "people": "people", "guests": "people",
}
_NUMBER = r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+(?:[.,]\d+)?)"
_UNIT_WORDS = "|".join(sorted(map(re.escape, _UNITS), key=len, reverse=True))
_QUANTITY = re.compile(rf"({_NUMBER})\s?({_UNIT_WORDS})\b", re.IGNORECASE)
_MONEY = re.compile(rf"[$€£¥]\s?({_NUMBER})|({_NUMBER})\s?(?:dollars|euros?|usd|eur|gbp)\b",
                    re.IGNORECASE)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DATE = re.compile(
    r"\b(?:(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?!\d)"
    r"|(\d{1,2})(?:st|nd|rd|th)?\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"
    r"|(\d{4}-\d{2}-\d{2})"
    r"|(monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?)\b",
    re.IGNORECASE,
)
_TIME = re.compile(r"\b(\d{1,2}(?::\d{2})?)\s?(am|pm)\b|\b(\d{1,2}:\d{2})\b", re.IGNORECASE)
_OLD_VALUE = re.compile(
    rf"\b(?:up|down)\s+from\s+[$€£]?({_NUMBER})|\bfrom\s+[$€£]?({_NUMBER})\s*\S*\s+to\s+[$€£]?{_NUMBER}"
    r"|\binstead\s+of\s+(?:the\s+|a\s+|an\s+)?([\w'-]+)|\brather\s+than\s+(?:the\s+)?([\w'-]+)",
    re.IGNORECASE,
)
# turns that state nobody's fact: an assistant restating, and imported documents (a paper's
# "increased to 40 %" updates nothing the user said; SciFact nDCG@10 lost 0.018 to such pairs)
_NOT_STATEMENTS: Final = frozenset({"assistant", "model", "system", "tool", "document"})
# a turn that opens a choice: a question, options offered ("between X and Y", "X or Y", a list)
_OPEN = re.compile(r"\?|\bbetween\b|\bor\b|\boptions?\b|\bideas?\b|^\s*(?:[-*•]|\d+\.)\s",
                   re.IGNORECASE | re.MULTILINE)


_QUESTION = re.compile(r"[^.!?\n]*\?")
# what a decision or change names as the new value: "going with X", "switching the CI to X",
# "renamed it X", "settled on X", "X it is"; a value is a run of capitalized words, numbers or
# money, or the next few lowercase words
_NAMED = r"[A-Z0-9$€£](?:[\w$€£&+'-]|[.,](?=\w))*(?:\s+[A-Z0-9](?:[\w&+'-]|[.,](?=\w))*)*"
_VALUE = (rf"((?:the\s+|a\s+|an\s+)?(?:{_NAMED}"
          r"|[a-z][\w'-]*(?:\s+(?!(?:for|as|on|in|at|instead|because|since|and|but|so|now"
          r"|today|after|to|with|from|by|this|next)\b)[a-z][\w'-]*){0,2}))")
_CHOICE = re.compile(
    rf"\b(?i:go(?:ing)?|went|stick(?:ing)?)\s+with\s+{_VALUE}"
    rf"|\b(?i:chose|chosen|picked|settled\s+on|opted\s+for|decided\s+on)\s+{_VALUE}"
    rf"|\b(?i:renamed\s+(?:it|them|him|her)|called|named)\s+{_VALUE}"
    rf"|\b(?i:switch|mov|chang|renam|rebook|reschedul|postpon|bump)\w*\b[^.!?:;]*?\bto\s+"
    rf"{_VALUE}"
    rf"|\b(?i:decided|decision|settled)\b[^.!?:;]*:\s+(?:it'?s\s+)?(?:the\s+)?({_NAMED})"
    r"|\b([A-Z][\w.-]*)\s+it\s+is\b",
)
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)


# the rules look at one turn's text once per pair it is in (a batch pairs a cue turn with each
# of its candidates): its cue, choices and topic words are kept for the last few hundred texts
_TEXTS: Final = 512


@lru_cache(maxsize=_TEXTS)
def choices(text: str) -> frozenset[str]:
    """The values a decision or change names as the new one, casefolded ("going with Hetzner"
    → ``hetzner``; "moved the DB to Amazon SQS" → ``amazon sqs``)."""
    found = set()
    for groups in _CHOICE.findall(_QUESTION.sub(" ", text) if "?" in text else text):
        for value in groups:
            if value := _ARTICLE.sub("", value.strip(" .,'-").rstrip(".,")):
                found.add(value.casefold())
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class Statement:
    """One turn as the supersession rules see it."""

    frame_id: int
    session: str
    t: int
    created_at: str
    text: str
    role: str = ""
    entities: frozenset[str] = field(default_factory=frozenset)  # normalized names
    speakers: frozenset[str] = field(default_factory=frozenset)  # words of the chat's names


# every cue holds one of these: a text without any is read no further (a cognify batch asks
# for every turn; the patterns alone took ~60 us a chat turn, the host's largest cost there)
_ANCHORS: Final = (
    "decided", "decision made", "decision is", "decision was", "made a decision",
    "made the decision", "made our decision", "made my decision", " with", "chose", "picked",
    "settled", "opted", "final", " it is", " is out", "change", "moved", "reschedul",
    "postpone", "pushed back", "instead", "longer", "more", "switched", "rebook", "renamed",
    "replaced", " from", "now", "new ", "correction", "update", "actually", "turns out",
    "bumped", "raised", "increased", "lowered", "reduced", "cut ", "dropped",
)


@lru_cache(maxsize=_TEXTS)
def update_cue(text: str) -> str | None:
    """``"decision"``, ``"change"`` or ``None`` (module docstring); a question states nothing
    ("Did we ever document why Atlas picked its database?")."""
    if "?" in text:
        text = _QUESTION.sub(" ", text)
    lowered = text.lower()
    if not any(anchor in lowered for anchor in _ANCHORS):
        return None
    if _DECISION.search(text):
        return "decision"
    if _CHANGE.search(text) or ("now" in lowered and _trailing_now(text)):
        return "change"
    return None


def _trailing_now(text: str) -> bool:
    """A value right before "now": "she's 13.5 kg now", "it's $40 now"."""
    return re.search(rf"(?<!for\s)(?:{_NUMBER}\s?\w*|[$€£]\s?{_NUMBER})\s+now\b", text,
                     re.IGNORECASE) is not None


def _number(text: str) -> str:
    """One spelling per number: "1,200" (thousands) is 1200, "13,5" and "13.50" are 13.5."""
    value = text.replace(",", "") if re.fullmatch(r"\d{1,3}(?:,\d{3})+", text) \
        else text.replace(",", ".")
    return value.rstrip("0").rstrip(".") if "." in value else value


def values(text: str) -> dict[str, frozenset[str]]:
    """``{kind: values}`` a turn states: ``qty:<unit>``, ``money``, ``date``, ``time``."""
    out: dict[str, set[str]] = {}
    for number, unit in _QUANTITY.findall(text):
        out.setdefault(f"qty:{_UNITS[unit.lower()]}", set()).add(_number(number))
    for a, b in _MONEY.findall(text):
        out.setdefault("money", set()).add(_number(a or b))
    for month, day, day2, month2, iso, weekday in _DATE.findall(text):
        if iso:
            value = iso
        elif weekday:
            value = weekday.lower()
        else:
            value = f"{_MONTHS.index((month or month2).lower()[:3]) + 1}-{int(day or day2)}"
        out.setdefault("date", set()).add(value)
    for clock, half, plain in _TIME.findall(text):
        out.setdefault("time", set()).add(f"{clock}{half.lower()}" if clock else plain)
    return {kind: frozenset(found) for kind, found in out.items()}


def old_values(text: str) -> frozenset[str]:
    """The values a change names as the one it replaces ("up from 11", "instead of Alfama")."""
    found: set[str] = set()
    for groups in _OLD_VALUE.findall(text):
        for value in groups:
            if value:
                found.add(_number(value) if value[0].isdigit() else value.casefold())
    return frozenset(found)


def _same_kind(a: str, b: str) -> bool:
    """Both state a value of one kind (two prices, two dates)."""
    return bool(values(a).keys() & values(b).keys())


def _words(entities: frozenset[str]) -> set[str]:
    """The words of entity names: "alfama airbnb" and "alfama" share one."""
    return {w for name in entities for w in name.split() if len(w) > 2}


def _mentions(text: str, value: str) -> bool:
    if value[0].isdigit():
        return any(value in vs for vs in values(text).values())
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE) is not None


def supersedes(new: Statement, old: Statement, cosine: float) -> str | None:
    """Why ``new`` replaces ``old`` (its cue: ``"decision"`` or ``"change"``), or ``None``."""
    if new.role in _NOT_STATEMENTS or old.role == "document" or new.frame_id == old.frame_id:
        return None
    cue = update_cue(new.text)
    if cue is None:
        return None
    same_session = new.session == old.session
    if same_session:
        if not 0 < new.t - old.t <= SAME_SESSION_WINDOW:
            return None
    elif not old.created_at < new.created_at:
        return None
    opens = _OPEN.search(old.text) is not None
    chosen = choices(new.text)
    if not same_session and not opens and any(_mentions(old.text, c) for c in chosen):
        return None  # it already says the new value: the same choice, or another thing's
    shared = _words(new.entities) & _words(old.entities)
    floor = SAME_SESSION_COSINE if same_session else CROSS_SESSION_COSINE
    if cue == "decision":
        if cosine < floor:
            return None
        if same_session and opens:
            return cue
        about = shared or (same_session and _same_kind(new.text, old.text))
        return cue if about and _same_topic(new, old, chosen, cosine) else None
    back = old_values(new.text)
    if back and cosine >= BACK_REFERENCE_COSINE and any(_mentions(old.text, v) for v in back):
        return cue
    if not shared or cosine < floor:
        return None
    stated = values(new.text)
    if not stated:
        return cue if _same_topic(new, old, chosen, cosine) else None
    before = values(old.text)
    return cue if any(kind in before and vs - before[kind] for kind, vs in stated.items()) \
        else None


def _same_topic(new: Statement, old: Statement, chosen: frozenset[str], cosine: float) -> bool:
    """Beyond the entity both name, the turns are about one thing of it: they share a topic
    word ("the CI" of Beacon, not its UI framework), or are alike enough that they say it in
    other words (cosine ≥ :data:`TOPIC_COSINE`: "the DB" and "the datastore"). A decision that
    names nothing but its choice ("Decision made: ClickHouse. DuckDB is out.") closes what its
    own conversation was about."""
    if cosine >= TOPIC_COSINE:
        return True
    skip = {_singular(w) for w in (_words(new.entities) | _words(old.entities) | new.speakers
                                   | old.speakers | {w for c in chosen for w in c.split()})}
    mine = _topic_words(new.text) - skip
    if not mine:
        return new.session == old.session
    return bool(mine & _topic_words(old.text))


_WORD = re.compile(r"[^\W\d_][\w'-]+")  # two letters or more
_STOP: Final = frozenset(
    "the and for with that this what which who whom whose when where why how are was were "
    "been being have has had having does did doing will would shall should can could may might "
    "must our ours you your yours they them their theirs his her hers its it's i'm we're we'll "
    "i'll let's about after again all also any because before both but each few from further "
    "here into just more most not now off once only other out over own same some such than "
    "then there these those through too under until very while today yesterday tomorrow week "
    "month year one two new old got get going went go gone instead now so on in at to of by "
    "decided decision made chose chosen picked settled opted final change changed plan plans "
    "moved switched switching rescheduled postponed rebooked renamed replaced update "
    "to of in on at by is it be as an or if so we he me my us up do no am ok oh "
    "correction actually turns called named pick picks choice choices option options dropped "
    "revisited decide choose switch swap replace settle".split())


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and len(word) > 4 else word


@lru_cache(maxsize=_TEXTS)
def _topic_words(text: str) -> frozenset[str]:
    """A turn's content words, singular, without function words and the cue vocabulary ("the
    CI", "the DB" count)."""
    return frozenset(_singular(w) for w in (m.casefold() for m in _WORD.findall(text))
                     if w not in _STOP)


_HISTORY = re.compile(
    r"\b(?:first|originally|original|initially|at\s+first|before|previous(?:ly)?|earlier|old"
    r"|used\s+to|former(?:ly)?|prior|back\s+then|until)\b",
    re.IGNORECASE,
)


def is_history_query(query: str) -> bool:
    """A question about an earlier value ("what was the first name we picked?"): recall keeps
    outdated statements where the lanes put them instead of ranking updates above them."""
    return _HISTORY.search(query) is not None
