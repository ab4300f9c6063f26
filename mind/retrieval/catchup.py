"""Catch-up queries ("catch me up", "where were we", …): a briefing, or a search of a topic.

Only a catch-up **without a topic** ("where were we?", "catch me up", "what did we decide?",
"recap", "brief me") is a briefing: instead of a similarity search it returns the mind's
critical and important frames, its decisions, and its most recent frames, de-duplicated, newest
first within each group (:func:`catch_up_frames`). A catch-up phrase **with a topic** ("what did
we decide about the database", "catch me up on the Lisbon trip", "recap of the tidewatch
schema") is a question about that topic: the search lanes run on it as on any query (the
keyword lane and keyword coverage on the query without the catch-up phrase, :func:`topic_text`,
so "decide" or "we" match nothing), and a turn that states a decision *and* is about the topic
— its absolute relevance (:mod:`mind.retrieval.relevance`) at least :data:`ABOUT` × the best
candidate's — gets match × (1 + :data:`DECISION_BOOST`) (:func:`decision_factor`). A decision
about something else is not brought in or lifted for being one.

:func:`catch_up_topic` tells the two apart: the topic is what the query says besides the
catch-up phrase, less function words (the keyword lane's stop words and the words a briefing
request is padded with: "quick", "so far", "lately", "again"). :func:`is_decision` recognizes a
decision by its wording in any sentence that is not a question or negated: the decision cues of
:func:`mind.knowledge.updates.update_cue` ("decided", "decision made", "going with", "let's go
with", "chose", "picked", "settled on", "opted for", "X it is", "final choice") and "agreed",
"settled the … question", "it's settled", a labelled "Decision (on X): …". It cannot see a
decision worded as a plain statement ("Postgres for billing.") or one made only by implication.
"""

from __future__ import annotations

import re
from typing import Final

from mind.frames.model import FRAME_COLUMNS, Frame
from mind.knowledge.updates import update_cue
from mind.retrieval.text_query import STOP_WORDS
from mind.storage.db import Database

_CATCH_UP = re.compile(
    r"\b(catch\s+me\s+up|where\s+(were|are)\s+we|brief\s+me|bring\s+me\s+up\s+to\s+speed"
    r"|what\s+(did|have|had)\s+(we|i)\s+(decided?|agreed?|settled?|chosen|chose|choose"
    r"|picked(?!\s+up)|pick(?!\s+up)|land(ed)?\s+on)"
    r"|what\s+(was|were|has\s+been|have\s+been)\s+(decided|agreed)"
    r"|what'?s\s+next|what\s+is\s+next|recap|status\s+update"
    r"|what\s+(have|did)\s+(we|i)\s+(been\s+)?(work(ed|ing)\s+on|do(ne)?))\b",
    re.IGNORECASE,
)
# besides function words (STOP_WORDS), what a briefing request is padded with: "catch me up
# on everything so far", "quick recap of where we are", "what did we decide last time?"
_PADDING = re.compile(r"\b(?:so\s+far|until\s+now|up\s+to\s+now|(?:last|this)\s+(?:time|week))\b",
                      re.IGNORECASE)
_FILLER: Final = STOP_WORDS | frozenset(
    "again anything are catch earlier everything going happened happening hey hi i lately "
    "latest me new news now please quick quickly recently regarding since so stuff there "
    "things today up us we what's yesterday yet you"
    .split())
# decision wording beyond update_cue's (a supersession cue): agreement, a settled question,
# a labelled decision ("Decision on Ember: SQS for the broker", "Decision: Postgres")
_DECISION_MORE = re.compile(
    r"\bagreed\b|\bsettled\s+(?:on|it|the\s+(?:[\w'-]+\s+){1,4}?"
    r"(?:question|matter|debate|issue|choice))\b|\b(?:it|that|all)(?:'s|\s+is)\s+settled\b"
    r"|\bdecision\s*(?:(?:on|about|for|re)\s+[^.?!:\n]{1,40})?:",
    re.IGNORECASE,
)
# a negated cue: "we haven't decided yet", "nothing was agreed", "not going with Kafka"
_UNDECIDED = re.compile(
    r"(?:\b(?:not|never|no|nothing|nobody|neither)|n't)\s+(?:\w+\s+){0,2}?"
    r"(?:decided|decision|go(?:ing)?\s+with|went|chose|chosen|picked|settled|opted|agreed)",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
DECISION_BOOST: Final = 0.5  # a topical catch-up: a decision about the topic's match × 1.5
# a decision is about the topic when its absolute relevance (mind.retrieval.relevance) is at
# least this share of the best candidate's: ~0.5, the "likely match" line, when the topic is
# matched outright; less in a mind that words it otherwise (the example export's database
# talk never says "database": its best turn scores 0.16)
ABOUT: Final = 0.5


def catch_up_topic(query: str) -> str | None:
    """``None`` for no catch-up phrase, ``""`` for a briefing without a topic, else the topic
    ("what did we decide about the database" → "database")."""
    found = _CATCH_UP.search(query)
    if found is None:
        return None
    rest = _PADDING.sub(" ", f"{query[:found.start()]} {query[found.end():]}")
    return " ".join(w for w in re.findall(r"[\w'-]+", rest) if w.lower() not in _FILLER)


def topic_text(query: str) -> str:
    """The query without its catch-up phrase ("what did we decide about the database" →
    "about the database"): what a topical catch-up's keyword lane searches."""
    found = _CATCH_UP.search(query)
    if found is None:
        return query
    return f"{query[:found.start()]} {query[found.end():]}".strip()


def is_catch_up(query: str) -> bool:
    """A briefing: a catch-up phrase and no topic."""
    return catch_up_topic(query) == ""


def is_decision(content: str) -> bool:
    """Whether a sentence of ``content`` states a decision (module docstring): a question
    ("Did we ever document why Falcon picked its queue?") or a negated cue ("we haven't
    decided yet") is none."""
    for sentence in _SENTENCE.split(content):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?") or _UNDECIDED.search(sentence):
            continue
        if update_cue(sentence) == "decision" or _DECISION_MORE.search(sentence):
            return True
    return False


def decision_factor(content: str, relevance: float, best: float) -> float:
    """A topical catch-up's multiplier of a candidate's match: 1 + :data:`DECISION_BOOST` for
    a decision whose absolute relevance to the topic is at least :data:`ABOUT` × ``best`` (the
    best candidate's), else 1."""
    lifted = relevance >= ABOUT * best and is_decision(content)
    return 1.0 + DECISION_BOOST if lifted else 1.0


async def catch_up_frames(
    db: Database, limit: int = 20, *, session: str | None = None, scan: int = 500
) -> list[tuple[Frame, str]]:
    """Frames for a briefing with the reason each was picked: important, decision or recent."""
    scope = " AND gop_id = ?" if session else ""
    params: list[object] = [session] if session else []
    important = await db.fetchall(
        f"SELECT {FRAME_COLUMNS} FROM memory_frames WHERE importance IN ('critical','important')"
        f"{scope} ORDER BY CASE importance WHEN 'critical' THEN 0 ELSE 1 END, id DESC LIMIT ?",
        (*params, limit),
    )
    recent = await db.fetchall(
        f"SELECT {FRAME_COLUMNS} FROM memory_frames WHERE importance <> 'deprecated'{scope} "
        "ORDER BY id DESC LIMIT ?",
        (*params, scan),
    )
    picked: dict[int, tuple[Frame, str]] = {}
    for row in important:
        frame = Frame.from_row(row)
        picked.setdefault(frame.id, (frame, "important"))
    recent_frames = [Frame.from_row(r) for r in recent]
    for frame in recent_frames:
        if len(picked) >= limit:
            break
        if is_decision(frame.content):
            picked.setdefault(frame.id, (frame, "decision"))
    for frame in recent_frames:
        if len(picked) >= limit:
            break
        picked.setdefault(frame.id, (frame, "recent"))
    return list(picked.values())[:limit]
