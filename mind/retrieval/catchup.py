"""Catch-up queries ("catch me up", "where were we", …): the original orchestrator's briefing.

Only a catch-up **without a topic** ("where were we?", "catch me up", "what did we decide?",
"recap") is a briefing: instead of a similarity search it returns the mind's critical and
important frames, its decisions, and its most recent frames, de-duplicated, newest first within
each group. A catch-up phrase **with a topic** ("what did we decide about the database", "catch
me up on the Lisbon trip", "recap of the tidewatch schema") is a question about that topic: the
search lanes run on it as on any query, and turns that state a decision rank first among what
they find (:data:`DECISION_BOOST`; a decision about something else is not brought in for being
one). :func:`catch_up_topic` tells the two apart: the topic is what the query says besides the
catch-up phrase, less function words.
"""

from __future__ import annotations

import re
from typing import Final

from mind.frames.model import FRAME_COLUMNS, Frame
from mind.knowledge.updates import update_cue
from mind.storage.db import Database

_CATCH_UP = re.compile(
    r"\b(catch\s+me\s+up|where\s+(were|are)\s+we|what\s+did\s+we\s+(decide|agree|settle)"
    r"|brief\s+me|bring\s+me\s+up\s+to\s+speed|what'?s\s+next|what\s+is\s+next"
    r"|recap|status\s+update|what\s+(have|did)\s+(we|i)\s+(been\s+)?(work(ed|ing)\s+on|do(ne)?))\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(decid(e|ed|ing)|decision|agreed|we('ll| will) go with|chose|chosen|settled on)\b",
    re.IGNORECASE,
)
# what a catch-up phrase may have around it without naming a topic
_FILLER: Final = frozenset(
    "a about again all an and any anything are as at be been catch did do for from hey hi i is "
    "it last lately latest me my new next of on our please quick quickly recently regarding "
    "since so some the there this time to today up us we were what where with yet you".split())
DECISION_BOOST: Final = 0.5  # a topical catch-up: a decision's match × 1.5


def catch_up_topic(query: str) -> str | None:
    """``None`` for no catch-up phrase, ``""`` for a briefing without a topic, else the topic
    ("what did we decide about the database" → "database")."""
    found = _CATCH_UP.search(query)
    if found is None:
        return None
    rest = f"{query[:found.start()]} {query[found.end():]}"
    return " ".join(w for w in re.findall(r"[\w'-]+", rest) if w.lower() not in _FILLER)


def is_catch_up(query: str) -> bool:
    """A briefing: a catch-up phrase and no topic."""
    return catch_up_topic(query) == ""


def is_decision(content: str) -> bool:
    return _DECISION.search(content) is not None or update_cue(content) == "decision"


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
