"""Conversation-aware ranking: what a turn's conversation, neighbours, speaker and time say.

A memory engine fed with chats holds turns like "Yes, last Tuesday!" or "It had salads and
homemade desserts" that answer a question only together with their conversation. Applied by
:class:`mind.retrieval.search.HybridSearch` after the lanes are fused
(:func:`mind.retrieval.scoring.fuse`):

* **session lane** — each conversation is scored by the sum of its best
   ``session_top`` turns' fused scores, conversations are ranked by that, and every candidate
  turn gains ``session_weight / (k + its conversation's rank)``: a turn in the conversation the
  query is about rises above a look-alike elsewhere.
* **neighbour expansion** — the turns right before and after each of the
  ``neighbour_hits`` strongest hits that ask a question gain ``neighbour_share`` of that hit's
  score (the answer follows its question; the turn before it is what it asks about); a
  neighbour the lanes missed becomes a candidate this way.
* **speaker** — a query that names a conversation's speaker ("What recipes has Nate made?")
  multiplies that speaker's turns by ``1 + speaker_boost``; names stay ordinary words for the
  keyword lane, so they cannot swamp it.
* **event parts** — a two-event question (:mod:`mind.retrieval.query_parts`) runs both lanes
  for each event too; a candidate gains ``parts`` × each part's fused lane score, and a part's
  best turns become candidates this way. "… after / before <event>" (``anchor_time``) opens a
  time window from that event's best turn's source time on (or up to it).
* **time** — a frame whose source time (``created_at``) lies in a window the query names
  (:mod:`mind.retrieval.query_time`: "on 9 November 2022", "in May 2023", "last week") is
  multiplied by
  ``1 + time_boost``; so is a frame whose own words tell of a day in such a window ("last
  Friday", said on 16 November, for "the second week of November"; ``told_time``).

The strengths live in :class:`Signals`; :data:`DEFAULT_SIGNALS` is what recall uses.

The daily bucket of loose saves (``save:<date>``) is not a conversation: it takes part in none
of the session or neighbour signals. Each figure was chosen on the development half of LoCoMo and
checked not to lower SciFact or the synthetic chats (bench/evals/recall_eval.py --steps;
docs/performance.md, "Retrieval quality").
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from mind.constants import DAILY_SAVE_SESSION_PREFIX
from mind.frames.model import FRAME_COLUMNS, Frame
from mind.retrieval.text_query import tokenize
from mind.storage.db import Database
from mind.storage.search_context import CONTEXT_WEIGHT
from mind.storage.sqlutil import chunked


@dataclass(frozen=True, slots=True)
class Signals:
    """The strengths of the conversation signals and whether the re-score runs at all."""

    session_weight: float = 0.6
    session_top: int = 3
    neighbour_share: float = 0.3
    neighbour_hits: int = 30
    speaker_boost: float = 0.4
    time_boost: float = 1.0
    rescore: bool = True  # recency / importance / graph proximity (:mod:`mind.retrieval.scoring`)
    # lane-level choices, here so the eval can measure each (bench/evals/recall_eval.py --steps)
    context_weight: float = CONTEXT_WEIGHT  # BM25 weight of the keyword context column
    complete: bool = True  # give every candidate both lanes' scores before fusing
    # rank a later statement above the one it supersedes (mind.knowledge.supersession)
    supersede: bool = True
    # a question that gathers ("what books has John read?", "how many times…") spreads its
    # results over conversations: a turn's match × (1 − spread) per better turn of its own
    # conversation among the candidates (:func:`spread_factors`)
    spread: float = 0.2
    # a two-event question ("how long between A and B", "which came first, A or B"): each
    # event's own lanes, fused, add this share of their score to the question's candidates
    # (:mod:`mind.retrieval.query_parts`)
    parts: float = 0.5
    # "… after / before <event>": turns on that side of the event's source time (its best
    # turn's ``created_at``) count as in the question's time
    anchor_time: bool = True
    # a turn whose own words tell of a day in the question's time ("last Friday", said on 16
    # November, for "the second week of November") matches it as its source time would
    # (:func:`mind.retrieval.query_time.told_days`)
    told_time: bool = True


DEFAULT_SIGNALS = Signals()
# the lanes fused and nothing else (evaluation baselines)
LANES_ONLY = Signals(session_weight=0.0, neighbour_share=0.0, speaker_boost=0.0,
                     time_boost=0.0, rescore=False, supersede=False, spread=0.0, parts=0.0,
                     anchor_time=False, told_time=False)


def is_conversation(session_id: str) -> bool:
    return not session_id.startswith(DAILY_SAVE_SESSION_PREFIX)


def session_bonus(fused: Mapping[int, float], session_of: Mapping[int, str], k: int,
                  signals: Signals = DEFAULT_SIGNALS) -> dict[int, float]:
    """``{frame id: bonus}`` from the rank of its conversation among the candidates'."""
    if not signals.session_weight:
        return {}
    best: dict[str, list[float]] = defaultdict(list)
    for fid, score in fused.items():
        gop = session_of.get(fid)
        if gop is not None and is_conversation(gop):
            best[gop].append(score)
    totals = {gop: sum(sorted(scores, reverse=True)[:signals.session_top])
              for gop, scores in best.items()}
    ranked = sorted(totals, key=lambda g: (-totals[g], g))
    rank = {gop: i for i, gop in enumerate(ranked)}
    return {fid: signals.session_weight / (k + rank[session_of[fid]])
            for fid in fused if session_of.get(fid) in rank}


def neighbour_gains(hits: Sequence[tuple[Frame, float]], signals: Signals = DEFAULT_SIGNALS
                    ) -> dict[tuple[str, int], float]:
    """``{(session, t): gain}``: each turn next to one of the strongest hits (strongest first)
    that asks something gains ``neighbour_share`` × that hit's score (summed over the hits it
    neighbours). Only questions pass score on: their next turn is the answer, their previous
    one what they ask about; a statement's neighbour is as often a look-alike (measured: gating
    on questions keeps LoCoMo's gain and stops the loss on the synthetic group chats)."""
    gains: dict[tuple[str, int], float] = defaultdict(float)
    if not signals.neighbour_share:
        return {}
    for frame, score in hits[:signals.neighbour_hits]:
        if not is_conversation(frame.gop_id) or "?" not in frame.content:
            continue
        for dt in (-1, 1):
            gains[(frame.gop_id, frame.t + dt)] += signals.neighbour_share * score
    return dict(gains)


async def frames_at(db: Database, slots: Iterable[tuple[str, int]], where: str = "",
                    params: Sequence[object] = ()) -> dict[tuple[str, int], Frame]:
    """The frames at ``(session, t)`` positions that also satisfy ``where`` (a filter over
    ``memory_frames f`` built by the search, with its ``params``): one indexed lookup per chunk
    of positions."""
    wanted = list(dict.fromkeys(slots))
    found: dict[tuple[str, int], Frame] = {}
    extra = f" AND {where}" if where else ""
    for part in chunked(wanted, 250):
        pairs = ", ".join("(?, ?)" for _ in part)
        values = [value for slot in part for value in slot]
        rows = await db.fetchall(
            f"SELECT {FRAME_COLUMNS} FROM memory_frames f WHERE (f.gop_id, f.t) IN "
            f"(VALUES {pairs}){extra}", [*values, *params])
        for row in rows:
            frame = Frame.from_row(row)
            found[(frame.gop_id, frame.t)] = frame
    return found


def named_speakers(query: str, speakers: Iterable[str]) -> set[str]:
    """The speakers whose whole name occurs in the query as words ("Nate's" names Nate)."""
    words = tokenize(query)
    text = f" {' '.join(words)} "
    named = set()
    for speaker in set(speakers):
        name = " ".join(tokenize(speaker))
        if name and f" {name} " in text:
            named.add(speaker)
    return named


def speaker_of(frame: Frame) -> str | None:
    speaker = frame.metadata.get("speaker") if isinstance(frame.metadata, dict) else None
    return speaker if isinstance(speaker, str) and speaker else None


_GATHERING = re.compile(
    r"^\W*(?:how\s+many|how\s+often|in\s+what\s+ways|list\b|name\s+(?:all|some|the)"
    r"|what\s+are\s+(?:some|all)|(?:what|which)\s+(?:\w+\s+){0,2}\w+s\s+(?:has|have|did|does|do"
    r"|had|is|are|were)\b)",
    re.IGNORECASE,
)


def is_gathering(query: str) -> bool:
    """A question whose answer is spread over many turns: "how many", "how often", "what
    books has…", "which cities did…", "what are some…", "list…"."""
    return _GATHERING.search(query) is not None


def spread_factors(order: Sequence[tuple[int, str]], spread: float) -> dict[int, float]:
    """``{frame id: (1 − spread) ** n}`` for candidates best first, ``n`` = how many better
    candidates share its conversation (the daily save bucket is no conversation)."""
    seen: dict[str, int] = defaultdict(int)
    out: dict[int, float] = {}
    for fid, session in order:
        if not is_conversation(session):
            out[fid] = 1.0
            continue
        out[fid] = (1.0 - spread) ** seen[session]
        seen[session] += 1
    return out
