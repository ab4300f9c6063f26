"""HybridSearch: keyword (FTS5) + vector lanes, fused, then conversation signals and re-score.

The formula and the measurements behind it: docs/architecture.md, "How a result's place is
computed".
* the keyword lane tokenizes like ``unicode61`` and quotes every term
  (:mod:`mind.retrieval.text_query`), ranks by BM25 over the frame's text and its context
  (:mod:`mind.storage.search_context`); any FTS error falls back to an escaped LIKE search, so
  no query string can raise;
* the vector lane ranks frames by their own vector *or* their best chunk (one lane, both
  sources: a frame without chunks is never hidden), from an exact in-memory index;
* each lane draws :data:`CANDIDATES` whatever the limit; every candidate then gets the other
  lane's score too, and the lanes are fused by rank and score (:func:`mind.retrieval.scoring.fuse`);
* session and time-window filters apply inside both lanes, before truncation;
* a two-event question ("how long between A and B") runs both lanes for each event too
  (:mod:`mind.retrieval.query_parts`), each event's fused lanes adding to the candidates;
* conversation signals (:mod:`mind.retrieval.conversation`) and the bounded re-score
  (:mod:`mind.retrieval.scoring`) follow; each result has ``rrf`` (the fused lanes), ``relevance``,
  ``final`` (the sort key), ``factors`` (every signal, for ``explain``) and a normalized
  ``score`` in [0, 1] on the scale every threshold uses: the lanes' reciprocal ranks
  (1/(K + rank)) + the neighbour gain, × speaker/time match × relevance, over the best a fresh
  normal memory reaches (first in every lane: 1.0; first in one lane of two: 0.5). It does not
  depend on how the other candidates score, and the session bonus orders but does not raise it
  — except that a result ranked above another is raised to at least its score, so scores
  never increase down the list; a reranked list carries only reranked scores (the pool is
  re-scored, nothing unreranked is appended);
* catch-up questions without a topic ("where were we") return the briefing of
  :mod:`mind.retrieval.catchup`; with a topic ("what did we decide about the database") the
  lanes run and decisions rank first; each result names the ``path`` that ran;
* a later statement is lifted above the one it supersedes, and each result gets its absolute
  relevance (:mod:`mind.retrieval.lifts`).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

import numpy as np

from mind.embeddings.base import Embedder, backend_switch_hint
from mind.errors import (
    EmbeddingDimMismatchError,
    EmbeddingFingerprintError,
    HiveMindError,
    StorageError,
    ValidationError,
)
from mind.frames.model import Frame
from mind.frames.queries import FrameQueries, frames_by_id, time_window_clause
from mind.frames.store import FrameStore
from mind.knowledge.graph import with_session_proximity
from mind.knowledge.store import KnowledgeGraph
from mind.knowledge.supersession import pairs_sync
from mind.knowledge.updates import is_history_query
from mind.retrieval import conversation
from mind.retrieval.candidates import Conv, LaneRun, Ranked, SearchResponse, SearchResult
from mind.retrieval.catchup import catch_up_frames, catch_up_topic, topic_text
from mind.retrieval.conversation import (
    Signals,
    frames_at,
    is_conversation,
    is_gathering,
    named_speakers,
    neighbour_gains,
    session_bonus,
    speaker_of,
    spread_factors,
)
from mind.retrieval.keyword_index import KeywordIndex
from mind.retrieval.lifts import absolute, decisions_first, supersede
from mind.retrieval.query_parts import anchor_window, event_parts
from mind.retrieval.query_time import TimeWindow, in_windows, time_windows, told_in_windows
from mind.retrieval.scoring import (
    NO_RESCORE,
    PROFILES,
    RRF_K,
    age_days,
    factors,
    fuse,
    monotone,
    normalized_score,
    rank_part,
    reference_relevance,
    relevance,
    sort_key,
)
from mind.retrieval.text_query import fts_match_expression, query_terms
from mind.retrieval.vector_index import VectorIndex
from mind.retrieval.vectors import Fingerprint, VectorStore
from mind.storage.db import Database
from mind.storage.sqlutil import escape_like
from vocabulary.enums import RecallLanes, RecallProfile

log = logging.getLogger(__name__)

Profile = RecallProfile
Lanes = RecallLanes
MAX_LIMIT = 1000
RERANK_POOL = 30
# Each lane draws this many candidates whatever the limit, so the first k results of
# ``limit=k`` are the first k of ``limit=70`` (issue #11: a small limit used to cut each lane
# to 2 × limit before fusion, and an exact match lost its other lane's contribution). 70, not
# the 100 of #11: every candidate is read, fused and re-scored, and a served recall at 100,000
# frames spends ~1/3 of its time there; product path with limit 10 (bench/evals/recall_eval.py),
# 100 / 70 / 50 / 30 gave LoCoMo dev R@10 0.8083 / 0.8087 / 0.8052 / 0.7967 and conv R@5
# 0.8933 / 0.8933 / 0.8867 / 0.9000 (docs/performance.md, "Retrieval quality")
CANDIDATES = 70
KEYWORD_RESERVE = 3  # the keyword lane reads 3 × CANDIDATES: the rest completes vector hits
# lane scores closer together than this are not stretched over the whole 0..1 range: cosine
# similarities within 0.3 (two near-equal vector hits are near-equal, not first and last);
# BM25 scores are never stretched, each is its share of the best one: BM25 has a natural zero
# (no query word matched), while the lowest score read depends only on how many candidates
# were read. Measured against half the best as the floor: SciFact nDCG@10 0.7489 → 0.7514,
# LoCoMo dev R@10 0.8122 → 0.8117, synthetic chats R@5 unchanged (docs/performance.md)
VECTOR_MIN_SPREAD = 0.3
KEYWORD_MIN_SPREAD = 1.0


def _bm25(context_weight: float) -> str:
    """The keyword lane's score: BM25 with the frame's own text weighing 1 and its context
    (source date in words, previous turn) ``context_weight`` (0.3 by default)."""
    return f"bm25(memory_frames_fts, 1.0, {float(context_weight)!r})"


class Reranker(Protocol):
    """A cross-encoder: one relevance logit per (query, document)."""

    async def score_batch(self, query: str, documents: Sequence[str]) -> Sequence[float]: ...


class HybridSearch:
    def __init__(
        self,
        db: Database,
        embedder: Embedder | None = None,
        *,
        vector_index: VectorIndex | None = None,
        reranker: Reranker | None = None,
        rerank_pool: int = RERANK_POOL,
        on_hits: Callable[[list[int]], Awaitable[None]] | None = None,
        signals: Signals | None = None,
        index_of: Callable[[Fingerprint], Awaitable[VectorIndex | None]] | None = None,
        keyword_index: KeywordIndex | None = None,
    ) -> None:
        """``index_of``: where the vector lane gets its index, given the fingerprint it read
        (a mind's own, :meth:`mind.mind.Mind.vector_index`), instead of ``vector_index``;
        ``keyword_index``: the in-memory BM25 the keyword lane asks before FTS5
        (:mod:`mind.retrieval.keyword_index`; a mind's own: :meth:`mind.mind.Mind.keyword_index`).
        """
        self.signals = signals
        self._db = db
        self.embedder = embedder
        self.reranker = reranker
        self.rerank_pool = rerank_pool
        self._index = vector_index
        self._owns_index = vector_index is None and index_of is None
        self._index_of = index_of
        self._keywords = keyword_index
        self._frames = FrameQueries(db)
        self._kg = KnowledgeGraph(db)
        self._vectors = VectorStore(db)
        self._on_hits = on_hits

    async def close(self) -> None:
        if self._owns_index and self._index is not None:
            self._index.close()
            self._index = None

    async def search(
        self,
        query: str,
        *,
        limit: int = 20,
        session: str | None = None,
        profile: Profile = "balanced",
        since: str | None = None,
        until: str | None = None,
        recent_entity_ids: Sequence[int] = (),
        graph_distances: dict[int, int] | None = None,
        rerank: bool = True,
        catch_up: bool | None = None,
        touch: bool = True,
        lanes: Lanes = "hybrid",
        candidates: int = CANDIDATES,
        min_relevance: float | None = None,
    ) -> SearchResponse:
        """Search the mind. ``lanes`` restricts to one lane (evaluation, debugging);
        ``candidates`` is what each lane draws (fewer: a routed scope-wide recall, where a
        mind contributes a few results of the merged list); ``min_relevance`` drops results
        whose absolute relevance (:mod:`mind.retrieval.relevance`) is below it (a briefing
        has none and keeps its results)."""
        if not isinstance(query, str):
            raise ValidationError("query must be text")
        if not 1 <= limit <= MAX_LIMIT:
            raise ValidationError(f"limit must be between 1 and {MAX_LIMIT}")
        if lanes not in ("hybrid", "keyword", "vector"):
            raise ValidationError(f"lanes must be hybrid, keyword or vector, got {lanes!r}")
        if profile not in PROFILES:
            raise ValidationError(f"profile must be one of {sorted(PROFILES)}, got {profile!r}")
        if min_relevance is not None and not 0.0 <= min_relevance <= 1.0:
            raise ValidationError("min_relevance must be between 0 and 1")
        where, params = _filters(session, since, until)
        topic = catch_up_topic(query) if catch_up is None else None
        if catch_up or topic == "":
            return await self._catch_up(query, limit, session, profile, touch)
        if not query.strip():
            return SearchResponse(query, [], "empty", notes=["empty query"])
        n = max(candidates, limit)
        signals = self.signals or conversation.DEFAULT_SIGNALS
        path = f"catch-up about {topic!r}: lanes, decisions first" if topic else "lanes"
        # a topical catch-up's keyword lane and coverage leave its catch-up phrase out ("decide",
        # "we" would match every decision); the vector lane and the signals read the question
        words = topic_text(query) if topic else query
        ran = LaneRun(bm25=_bm25(signals.context_weight), context_weight=signals.context_weight)

        prefetched: dict[int, Frame] = {}
        # a two-event question: each event's own lanes too (mind.retrieval.query_parts)
        split = event_parts(words) if signals.parts and not topic else None
        part_runs = [LaneRun(bm25=ran.bm25, context_weight=ran.context_weight)
                     for _ in (split.parts if split else ())]

        async def part_lanes(text: str, run: LaneRun) -> None:
            async def keyword_part() -> None:
                run.keyword_hits = await self._keyword_lane(text, n, where, params, run)

            await asyncio.gather(
                *([self._vector_lane(text, n, where, params, run)] if lanes != "keyword" else []),
                *([keyword_part()] if lanes != "vector" else []))

        async def keyword() -> None:
            hits = await self._keyword_lane(words, n * KEYWORD_RESERVE, where, params, ran)
            ran.keyword_hits, ran.keyword_reserve = hits[:n], dict(hits[n:])
            # the lane's frames are read while the vector lane's product runs: off the
            # critical path (reading a recall's ~140 candidates took 3.6 ms at 1,000,000
            # frames, after both lanes)
            prefetched.update(await self._frames.get_many([fid for fid, _ in ran.keyword_hits]))

        # the FTS query and the matrix product run side by side; the vector lane starts first,
        # so its fingerprint read goes to the reader's connection before the FTS query; the
        # graph signal needs only the query, so its reads queue behind them while the matrix
        # product runs, off the recall's critical path
        lanes_done = asyncio.gather(
            *([self._vector_lane(query, n, where, params, ran)] if lanes != "keyword" else []),
            *([keyword()] if lanes != "vector" else []),
            *(part_lanes(text, run) for text, run in zip(
                split.parts if split else (), part_runs, strict=True)))
        graph = None
        if graph_distances is None and signals.rescore:
            graph = asyncio.ensure_future(self._graph_distances(
                query, recent_entity_ids, PROFILES[profile].graph_depth))
            graph.add_done_callback(_discard_unread_error)
        await lanes_done
        if signals.complete:
            await self._complete(query, ran)
        lane_rrf = _fused(ran)
        part_scores = [_fused(run) for run in part_runs]
        part_gain: dict[int, float] = {}
        for scores in part_scores:
            for fid, value in scores.items():
                part_gain[fid] = part_gain.get(fid, 0.0) + signals.parts * value
        candidates_ = list(dict.fromkeys([*lane_rrf, *part_gain]))
        missing = [fid for fid in candidates_ if fid not in prefetched]
        # the candidates' frames and their supersession pairs in one trip (a recall at 100,000
        # frames spent ~0.4 ms on a trip of the pairs' own)
        fetched, pairs = await self._db.run(lambda db: (
            frames_by_id(db, missing) if missing else {}, pairs_sync(db, candidates_)))
        frames = {fid: frame for fid in candidates_
                  if (frame := prefetched.get(fid) or fetched.get(fid)) is not None}
        lane_rrf = {fid: v for fid, v in lane_rrf.items() if fid in frames}
        part_gain = {fid: v for fid, v in part_gain.items() if fid in frames}
        anchor = (anchor_window(split, part_scores[1], frames)
                  if split is not None and signals.anchor_time else None)
        scored = await self._conversation(query, lane_rrf, frames, where, params, signals,
                                          part_gain, [anchor] if anchor else [])
        if topic:  # a catch-up about a topic: its decisions first (mind.retrieval.catchup)
            await decisions_first(self._index, words, scored, frames, ran)
        if graph is not None:
            graph_distances = await graph
        graph_distances = graph_distances or {}
        if graph_distances:
            graph_distances = await with_session_proximity(self._db, {
                fid: f.gop_id for fid, f in frames.items() if is_conversation(f.gop_id)},
                graph_distances)
        weights = PROFILES[profile] if signals.rescore else NO_RESCORE
        now = datetime.now(UTC)
        k_rank = {fid: i for i, (fid, _) in enumerate(ran.keyword_hits)}
        v_rank = {fid: i for i, fid in enumerate(ran.similarity)}
        lanes_on = max(ran.active, 1)

        def entry(fid: int, conv: Conv) -> Ranked:
            frame = frames[fid]
            prior = factors(
                age_days=age_days(frame.recorded_at, now),
                access_count=frame.access_count,
                importance=frame.importance,
                graph_distance=graph_distances.get(fid),
            )
            rel = prior.relevance(weights)
            final = conv.fused * conv.match * rel
            score = normalized_score(
                (rank_part(k_rank.get(fid)) + rank_part(v_rank.get(fid)) + conv.neighbour
                 + conv.part + conv.update) * conv.match * rel, weights, lanes_on)
            return (sort_key(final, prior.popularity), score, fid, conv, prior, rel, final)

        # every candidate is scored; only those that can be returned (the limit, or the
        # reranker's pool) become results — the rest only floor the scores above them
        ranked = sorted((entry(fid, conv) for fid, conv in scored.items()), key=lambda r: r[0])
        if signals.supersede and pairs.superseded_by and not is_history_query(query):
            ranked = await supersede(self._db, ranked, pairs, frames, where, params, entry, query)
        if signals.spread and is_gathering(query):
            shares = spread_factors([(r[2], frames[r[2]].gop_id) for r in ranked], signals.spread)
            for r in ranked:
                r[3].spread = shares[r[2]]
                r[3].match *= shares[r[2]]
            ranked = sorted((entry(r[2], r[3]) for r in ranked), key=lambda r: r[0])
        floors = monotone([r[1] for r in ranked])
        keep = max(limit, self.rerank_pool) if rerank and self.reranker is not None else limit
        k_score = dict(ran.keyword_hits)
        results: list[SearchResult] = []
        for (_, _, fid, conv, prior, rel, final), score in zip(ranked[:keep], floors,
                                                               strict=False):
            results.append(SearchResult(
                frames[fid], lane_rrf.get(fid, 0.0), rel, final, score,
                k_rank.get(fid), v_rank.get(fid), ran.similarity.get(fid),
                keyword_score=k_score.get(fid),
                factors={**conv.explain(), **prior.as_dict(), "relevance": rel},
                superseded_by=pairs.superseded_by.get(fid, []),
                supersedes=pairs.supersedes.get(fid, []), path=path))
        await absolute(self._index, words, results, ran, frames)
        if rerank and self.reranker is not None and results:
            results = await self._rerank(query, results, limit, ran.notes)
        if min_relevance is not None:
            results = [r for r in results if (r.absolute_relevance or 0.0) >= min_relevance]
        results = results[:limit]
        if self._keywords is not None:
            self._keywords.warm()  # after the answer: never beside the first recall's loads
        if touch:
            await self.touch([r.frame.id for r in results])
        mode = "hybrid" if ran.active == 2 else ("vector" if ran.similarity else "keyword")
        if topic:
            ran.notes.append(path)
        return SearchResponse(query, results, mode, ran.degraded, ran.notes)

    async def _conversation(
        self, query: str, lane_rrf: dict[int, float], frames: dict[int, Frame], where: str,
        params: list[Any], signals: Signals, part_gain: dict[int, float],
        extra_windows: list[TimeWindow],
    ) -> dict[int, Conv]:
        """Session lane, neighbour expansion, event parts, speaker and time
        (:mod:`mind.retrieval.conversation`); neighbours the lanes missed are added to
        ``frames`` (inside the same filters). ``part_gain``: what each candidate gains from a
        two-event question's parts; ``extra_windows``: time windows besides the query's own
        (after / before an event's time)."""
        session_of = {fid: f.gop_id for fid, f in frames.items()}
        base = {fid: lane_rrf.get(fid, 0.0) + part_gain.get(fid, 0.0)
                for fid in dict.fromkeys([*lane_rrf, *part_gain])}
        bonus = session_bonus(base, session_of, RRF_K, signals)
        out = {fid: Conv(lane_rrf.get(fid, 0.0), bonus.get(fid, 0.0),
                         part=part_gain.get(fid, 0.0)) for fid in base}
        strongest = sorted(out.items(), key=lambda kv: -kv[1].fused)
        gains = neighbour_gains([(frames[fid], c.fused) for fid, c in strongest], signals)
        if gains:
            at = {(f.gop_id, f.t): f.id for f in frames.values()}
            missing = [slot for slot in gains if slot not in at]
            for slot, frame in (await frames_at(self._db, missing, where, params)).items():
                frames[frame.id] = frame
                at[slot] = frame.id
                out[frame.id] = Conv(0.0, 0.0)
            for slot, gain in gains.items():
                if slot in at:
                    out[at[slot]].neighbour = gain
        windows = [*time_windows(query), *extra_windows] if signals.time_boost else []
        named = named_speakers(query, filter(None, (speaker_of(f) for f in frames.values()))
                               ) if signals.speaker_boost else set()
        for fid, conv in out.items():
            conv.speaker = bool(named) and speaker_of(frames[fid]) in named
            frame = frames[fid]
            conv.time = in_windows(windows, frame.created_at) or (
                signals.told_time and told_in_windows(windows, frame.content, frame.created_at))
            conv.match = ((1 + signals.speaker_boost * conv.speaker)
                          * (1 + signals.time_boost * conv.time))
        return out

    # -- lanes ------------------------------------------------------------------------------

    async def _keyword_lane(
        self, query: str, n: int, where: str, params: list[Any], lanes: LaneRun
    ) -> list[tuple[int, float]]:
        """``(frame id, score)`` best first: the score is −BM25 over the frame's text and its
        context (:mod:`mind.storage.search_context`), or −position for the LIKE fallback."""
        terms = query_terms(query)
        if not terms:
            return []
        lanes.active += 1
        if self._keywords is not None and not where and self._keywords.worth_asking():
            # a filtered query goes to FTS5 (mind.retrieval.keyword_index)
            hits = await asyncio.to_thread(self._keywords.search_sync, query, n,
                                           lanes.context_weight)
            if hits is not None:
                return hits
        extra = f" AND {where}" if where else ""
        # the frames table is joined only for a filter: the FTS rowid is the frame id, and a
        # lookup per match made the query 2.6× slower (6.4 → 2.4 ms at 100,000 frames)
        source = ("memory_frames_fts JOIN memory_frames f ON f.id = memory_frames_fts.rowid"
                  if where else "memory_frames_fts")
        try:
            rows = await self._db.fetchall(
                f"SELECT memory_frames_fts.rowid, -{lanes.bm25} AS s FROM {source} "
                f"WHERE memory_frames_fts MATCH ?{extra} ORDER BY s DESC LIMIT ?",
                (fts_match_expression(terms), *params, n),
            )
        except StorageError as exc:
            log.warning("FTS query failed (%s); using LIKE fallback", exc)
            likes = " OR ".join("f.content LIKE ? ESCAPE '\\'" for _ in terms)
            rows = await self._db.fetchall(
                f"SELECT f.id FROM memory_frames f WHERE ({likes}){extra} "
                "ORDER BY f.created_at DESC LIMIT ?",
                (*(f"%{escape_like(t)}%" for t in terms), *params, n),
            )
            return [(r[0], -float(i)) for i, r in enumerate(rows)]
        return [(r[0], float(r[1])) for r in rows]

    async def _vector_lane(
        self, query: str, n: int, where: str, params: list[Any], lanes: LaneRun
    ) -> None:
        embedder = self.embedder
        if embedder is None:
            lanes.notes.append("no embedder: keyword search only")
            return
        if embedder.degraded:
            lanes.degraded = True
            lanes.notes.append(
                f"embedder {embedder.provider} is degraded: semantic search off, keyword only"
            )
            return
        # the query is embedded while the fingerprint is read and the keyword lane runs
        embedding = asyncio.ensure_future(embedder.embed_batch([query]))
        embedding.add_done_callback(_discard_unread_error)
        try:
            await self._vector_hits(embedder, embedding, query, n, where, params, lanes)
        finally:
            embedding.cancel()

    async def _vector_hits(
        self, embedder: Embedder, embedding: asyncio.Future[np.ndarray], query: str, n: int,
        where: str, params: list[Any], lanes: LaneRun,
    ) -> None:
        stored = await self._vectors.fingerprint()
        if stored is None:
            lanes.notes.append("this mind has no vectors yet: keyword search only")
            return
        dims = int(embedder.dimensions)
        runtime = {"provider": embedder.provider, "model": embedder.model_id, "dim": dims}
        if stored.dim != dims:
            raise EmbeddingDimMismatchError(
                f"this mind stores {stored.dim}-dimensional vectors ({stored.provider}/"
                f"{stored.model}) but the embedder makes {dims}; run "
                "`hive-mind maintenance reembed` or configure the model it was indexed with",
                stored=stored.as_dict(), runtime=runtime,
            )
        if (stored.provider, stored.model) != (embedder.provider, embedder.model_id):
            raise EmbeddingFingerprintError(
                f"this mind's vectors come from {stored.provider}/{stored.model}, the embedder "
                f"is {embedder.provider}/{embedder.model_id}; run `hive-mind maintenance reembed`"
                f"{backend_switch_hint(stored.model, embedder.model_id)}",
                stored=stored.as_dict(), runtime=runtime,
            )
        vector = (await embedding)[0]
        allowed = None
        if where:
            sql = f"SELECT f.id FROM memory_frames f WHERE {where}"
            allowed = [r[0] for r in await self._db.fetchall(sql, params)]
        if self._index_of is not None:
            self._index = await self._index_of(stored)
        if self._index is None:
            self._index = VectorIndex(self._db.path, dims)
        lanes.query_vector = np.asarray(vector, dtype=np.float32)
        hits = await self._index.search(lanes.query_vector, n, allowed)
        lanes.active += 1
        lanes.similarity = dict(hits)

    async def _complete(self, query: str, ran: LaneRun) -> None:
        """Give every candidate both lanes' scores: a frame the keyword lane found but the
        vector lane's top k missed gets its cosine similarity (exact, from the index), and a
        frame only the vector lane found gets its BM25 when it is among the keyword lane's
        next ``KEYWORD_RESERVE - 1`` × k (the same FTS query: BM25 is computed for every match
        anyway). Completed frames rank after the lane's own top k, in score order. Without
        this an exact match found by one lane only is fused against frames that merely placed
        in both top k's (issue #11's code-word drill: a note holding the only copy of a code
        word fell out of the top 3)."""
        if ran.active < 2 or self._index is None or ran.query_vector is None:
            return
        missing = [fid for fid, _ in ran.keyword_hits if fid not in ran.similarity]
        sims = await self._index.similarities(ran.query_vector, missing)
        for fid, sim in sorted(sims.items(), key=lambda kv: -kv[1]):
            ran.similarity[fid] = sim
        in_keyword = {fid for fid, _ in ran.keyword_hits}
        found = [(fid, ran.keyword_reserve[fid]) for fid in ran.similarity
                 if fid not in in_keyword and fid in ran.keyword_reserve]
        ran.keyword_hits += sorted(found, key=lambda r: -r[1])

    async def _graph_distances(self, query: str, recent: Sequence[int], depth: int
                               ) -> dict[int, int]:
        try:
            seeds = list(recent) + [e.id for e in await self._kg.find_entities_in_text(query)]
            if not seeds:
                return {}
            return await self._kg.frame_distances_from_entities(list(dict.fromkeys(seeds)),
                                                                depth)
        except HiveMindError as exc:  # graph signal is optional
            log.warning("graph proximity unavailable: %s", exc)
            return {}

    # -- rerank, catch-up, touch ------------------------------------------------------------

    async def _rerank(
        self, query: str, results: list[SearchResult], limit: int, notes: list[str]
    ) -> list[SearchResult]:
        assert self.reranker is not None
        pool = results[: max(self.rerank_pool, limit)]
        try:
            logits = list(await self.reranker.score_batch(query, [r.frame.content for r in pool]))
        except Exception as exc:  # a broken reranker must not break recall
            log.warning("reranker failed (%s); keeping fused order", exc)
            notes.append("reranker failed: fused order kept")
            return results
        if len(logits) != len(pool):
            notes.append("reranker returned a wrong number of scores: fused order kept")
            return results
        for result, logit in zip(pool, logits, strict=True):
            result.final = float(logit)
            result.score = 1.0 / (1.0 + math.exp(-float(logit)))
            result.reranked = True
        pool.sort(key=lambda r: r.final, reverse=True)
        return pool

    async def _catch_up(
        self, query: str, limit: int, session: str | None, profile: Profile, touch: bool
    ) -> SearchResponse:
        weights = PROFILES[profile]
        now = datetime.now(UTC)
        results = []
        for frame, reason in await catch_up_frames(self._db, limit, session=session):
            rel = relevance(
                weights, age_days=age_days(frame.last_accessed, now),
                access_count=frame.access_count, importance=frame.importance,
            )
            score = min(1.0, rel / reference_relevance(weights))
            results.append(SearchResult(frame, 0.0, rel, rel, score, reason=reason,
                                        path="briefing"))
        if touch:
            await self.touch([r.frame.id for r in results])
        return SearchResponse(query, results, "catch_up")

    async def touch(self, ids: list[int]) -> None:
        """Count an access of these frames (the results a caller was given)."""
        if not ids:
            return
        if self._on_hits is not None:
            await self._on_hits(ids)
        elif not self._db.readonly:
            await FrameStore(self._db).touch(ids)


def _discard_unread_error(future: asyncio.Future[Any]) -> None:
    """A future the search did not wait for (the query embedding when a mind has no vectors or
    another fingerprint, the graph read when a lane failed) may fail unread: fetch its error so
    asyncio does not log it as never retrieved."""
    if not future.cancelled():
        future.exception()


def _fused(run: LaneRun) -> dict[int, float]:
    """A lane run's keyword and vector hits fused (:func:`mind.retrieval.scoring.fuse`): the
    question's own, and each event's of a two-event question."""
    best = max((score for _, score in run.keyword_hits), default=0.0)
    return fuse([run.keyword_hits, list(run.similarity.items())],
                min_spreads=(KEYWORD_MIN_SPREAD * best, VECTOR_MIN_SPREAD))





def _filters(session: str | None, since: str | None, until: str | None) -> tuple[str, list[Any]]:
    clause, params = time_window_clause(since, until, column="f.created_at")
    parts = [clause] if clause else []
    values: list[Any] = list(params)
    if session:
        parts.append("f.gop_id = ?")
        values.append(session)
    return " AND ".join(parts), values
