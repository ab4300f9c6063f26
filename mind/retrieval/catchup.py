"""Catch-up queries ("catch me up", "where were we", …): the original orchestrator's briefing.

Instead of a similarity search, a catch-up returns the mind's critical and important frames,
its decisions, and its most recent frames, de-duplicated, newest first within each group.
"""

from __future__ import annotations

import re

from mind.frames.model import FRAME_COLUMNS, Frame
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


def is_catch_up(query: str) -> bool:
    return _CATCH_UP.search(query) is not None


def is_decision(content: str) -> bool:
    return _DECISION.search(content) is not None


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
