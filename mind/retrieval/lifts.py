"""What lifts or values a candidate after the lanes are fused: a later statement above the
one it supersedes (:mod:`mind.knowledge.supersession`), a topical catch-up's decisions
(:mod:`mind.retrieval.catchup`), and each result's absolute relevance
(:mod:`mind.retrieval.relevance`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mind.frames.model import Frame
from mind.frames.queries import FrameQueries
from mind.knowledge.supersession import Pairs
from mind.retrieval.candidates import Conv, LaneRun, Ranked, SearchResult
from mind.retrieval.catchup import decision_factor
from mind.retrieval.query_time import in_windows, time_windows
from mind.retrieval.relevance import absolute_relevance, coverage_patterns, keyword_coverage
from mind.retrieval.text_query import query_terms
from mind.retrieval.vector_index import VectorIndex
from mind.storage.db import Database
from mind.storage.sqlutil import placeholders

# a later statement ranks this much above the outdated one it supersedes, through this many
# updates of one thing (mind.knowledge.updates)
SUPERSESSION_MARGIN = 0.01
SUPERSESSION_DEPTH = 3


async def supersede(
    db: Database, ranked: list[Ranked], pairs: Pairs, frames: dict[int, Frame], where: str,
    params: list[Any], entry: Callable[[int, Conv], Ranked], query: str,
) -> list[Ranked]:
    """Rank each later statement just above the best-ranked statement it supersedes
    (:mod:`mind.knowledge.supersession`), bringing it in when the lanes missed it (inside
    the same filters); the outdated one keeps its place below. A question that names a
    time ("in August, which CI did we pick?") asks for the state then: only an update made
    inside that time is lifted. ``update`` is the gain that lifts it, so ``fused`` stays the
    sum of what it adds up from. (Lifting only updates about as close to the query as the
    outdated turn was measured: no change on the synthetic chats, and "Going with a
    wheel-throwing class" no longer answered "what is Priya getting for her birthday?".)"""
    missing = list(dict.fromkeys(new for old in pairs.superseded_by
                                 for new in pairs.superseded_by[old] if new not in frames))
    if missing and where:  # only what the recall's filters admit
        rows = await db.fetchall(
            f"SELECT f.id FROM memory_frames f WHERE f.id IN ({placeholders(len(missing))})"
            f" AND {where}", [*missing, *params])
        missing = [r[0] for r in rows]
    if missing:
        frames.update(await FrameQueries(db).get_many(missing))
    windows = time_windows(query)

    def close(new: int) -> bool:  # "in August, which CI did we pick": as of then, not now
        return not windows or in_windows(windows, frames[new].created_at)

    by_id = {r[2]: r for r in ranked}
    for _ in range(SUPERSESSION_DEPTH):  # a chain of updates: each above the one before
        changed = False
        for r in sorted(by_id.values(), key=lambda r: r[0]):
            for new in pairs.superseded_by.get(r[2], ()):
                if new not in frames or not close(new):
                    continue
                mine = by_id.get(new) or entry(new, Conv(0.0, 0.0))
                target = r[6] * (1 + SUPERSESSION_MARGIN)
                if mine[6] >= target:
                    continue
                conv, rel = mine[3], mine[5]
                scale = conv.match * rel
                conv.update += target / scale - conv.fused if scale > 0 else 0.0
                by_id[new] = entry(new, conv)
                changed = True
        if not changed:
            break
    return sorted(by_id.values(), key=lambda r: r[0])


async def own_relevance(index: VectorIndex | None, words: str, frames: Sequence[Frame],
                        ran: LaneRun) -> dict[int, tuple[float, float, float | None]]:
    """Each frame's own absolute relevance (:mod:`mind.retrieval.relevance`) with its
    evidence: ``(value, keyword coverage, cosine above the query's background or None)``;
    a cosine the vector lane did not compute is looked up by frame (no scan)."""
    patterns = coverage_patterns(query_terms(words))
    q, background, sims = ran.query_vector, None, dict(ran.similarity)
    if index is not None and q is not None:
        background = index.background(q)
        missing = [f.id for f in frames if f.id not in sims]
        sims.update(await index.similarities(q, missing) if missing else {})
    own = {}
    for f in frames:
        cosine, coverage = sims.get(f.id), keyword_coverage(patterns, f.content)
        above = None if cosine is None or background is None else cosine - background
        own[f.id] = (absolute_relevance(cosine, background, coverage), coverage, above)
    return own


async def decisions_first(index: VectorIndex | None, words: str, scored: dict[int, Conv],
                          frames: dict[int, Frame], ran: LaneRun) -> None:
    """A catch-up about a topic: a candidate that states a decision and is about the topic
    (its absolute relevance, from ``words`` and the question's vector, against the best
    candidate's) gets its match × :func:`mind.retrieval.catchup.decision_factor`."""
    own = await own_relevance(index, words, [frames[fid] for fid in scored], ran)
    best = max((v[0] for v in own.values()), default=0.0)
    for fid, conv in scored.items():
        conv.decision = decision_factor(frames[fid].content, own[fid][0], best)
        conv.match *= conv.decision


async def absolute(index: VectorIndex | None, words: str, results: list[SearchResult],
                   ran: LaneRun, candidates: dict[int, Frame]) -> None:
    """Each result's absolute relevance (:mod:`mind.retrieval.relevance`): its cosine
    above the query's background in this mind, and its keyword coverage; an update takes
    the value of a statement it supersedes when that is higher and the statement is a
    candidate of this recall, returned or not (the limit must not change a result's value:
    asked for one result, "she's 13.5 kg now" scored as noise)."""
    ids = {r.frame.id for r in results}
    replaced = {old: candidates[old] for r in results for old in r.supersedes
                if old in candidates and old not in ids}
    own = await own_relevance(
        index, words, [*(r.frame for r in results), *replaced.values()], ran)
    for r in results:
        value, r.factors["coverage"], above = own[r.frame.id]
        if above is not None:
            r.factors["above_background"] = above
        # a later statement answers whatever the one it replaces answered ("she's 13.5 kg
        # now" names no weight, but replaces "she weighs 11 kg")
        r.absolute_relevance = max([value, *(own[old][0] for old in r.supersedes
                                             if old in own)])
