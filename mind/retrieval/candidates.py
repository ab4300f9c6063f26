"""What a recall hands back (:class:`SearchResult`, :class:`SearchResponse`) and what it keeps
per candidate while ranking (:class:`Conv`, :data:`Ranked`, :class:`LaneRun`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mind.frames.model import Frame
from mind.retrieval.scoring import Factors

if TYPE_CHECKING:
    import numpy as np


@dataclass(slots=True)
class SearchResult:
    frame: Frame
    rrf: float
    relevance: float
    final: float
    score: float
    keyword_rank: int | None = None
    vector_rank: int | None = None
    similarity: float | None = None
    keyword_score: float | None = None  # the keyword lane's score (−BM25), when it found it
    reranked: bool = False
    reason: str | None = None
    factors: dict[str, float] = field(default_factory=dict)
    superseded_by: list[int] = field(default_factory=list)  # later statements replacing it
    supersedes: list[int] = field(default_factory=list)  # earlier statements it replaces
    path: str = "lanes"  # lanes | briefing | catch-up about <topic> (mind.retrieval.catchup)
    # how likely it answers the query at all, comparable across queries and minds
    # (mind.retrieval.relevance); None for a briefing, which has no query
    absolute_relevance: float | None = None


@dataclass(slots=True)
class SearchResponse:
    query: str
    results: list[SearchResult]
    mode: str  # hybrid | keyword | vector | catch_up | empty
    degraded: bool = False
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Conv:
    """A candidate's conversation signals (:mod:`mind.retrieval.conversation`)."""

    rrf: float
    session: float
    neighbour: float = 0.0
    part: float = 0.0  # a two-event question's parts, each asked alone (mind.retrieval.query_parts)
    speaker: bool = False
    time: bool = False
    match: float = 1.0
    update: float = 0.0  # what lifts a later statement above the one it supersedes
    spread: float = 1.0  # a gathering question's share for the turn (in ``match``)
    decision: float = 1.0  # a topical catch-up's lift of a decision about it (in ``match``)

    @property
    def fused(self) -> float:
        return self.rrf + self.session + self.neighbour + self.part + self.update

    def explain(self) -> dict[str, float]:
        return {"session": self.session, "neighbour": self.neighbour, "part": self.part,
                "update": self.update,
                "speaker": float(self.speaker), "time": float(self.time), "fused": self.fused,
                "match": self.match, "spread": self.spread, "decision": self.decision}


# a candidate: (sort key, normalized score, frame id, signals, factors, relevance, final)
Ranked = tuple[tuple[float, float], float, int, Conv, Factors, float, float]


@dataclass(slots=True)
class LaneRun:
    """What the lanes of one recall found, and what they noted."""

    keyword_hits: list[tuple[int, float]] = field(default_factory=list)  # best first
    keyword_reserve: dict[int, float] = field(default_factory=dict)  # ranks k..3k, by id
    similarity: dict[int, float] = field(default_factory=dict)  # the vector lane, best first
    query_vector: np.ndarray | None = None
    bm25: str = ""  # the keyword lane's score expression (mind.retrieval.search)
    context_weight: float = 0.0  # its weight of the context column
    active: int = 0
    notes: list[str] = field(default_factory=list)
    degraded: bool = False


