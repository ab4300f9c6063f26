"""CombinedRetrieval: one recall over several minds (the personal mind, workspaces) and an
optional external knowledge source, with attribution and conflict notes (coverage and conflict
thresholds on the normalized score scale). ``HiveMind.recall`` runs every recall through it.

* **Minds.** Each mind in scope is searched (at most :data:`CONCURRENCY` at a time) and keeps
  its own ranking order; the access counts of the merged results only are incremented (the
  memories the caller gets, not what the merge dropped).
  :meth:`CombinedRetrievalResult.merged` interleaves the per-mind lists by normalized
  ``score`` (then ``final``; then the earlier list): the next result is always the best
  *head*, so no mind's own order changes — the conversation signals that order one mind
  are not comparable across minds, the normalized score is. Errors of a mind propagate (they
  name their fix).
* **Attribution.** Every :class:`CombinedResult` names where it came from, ``origin``:
  ``personal``, ``workspace:<id>`` or ``external:<source name>``.
* **The external source** (:mod:`mind.retrieval.external`) is asked only when the caller allows it
  (``external=True``: scope ``all``, a hybrid, non-catch-up recall), the query is not blank and
  local coverage is insufficient: fewer than :data:`LOCAL_COVERAGE_MIN_COUNT` local results
  reach :data:`LOCAL_COVERAGE_SCORE_THRESHOLD`. Its scores are on the same [0, 1] scale
  (protocol contract); it has no time window (``since``/``until`` filter the minds only). Its
  failures never fail the recall: local results are kept and ``external_error`` says what went
  wrong.
* **Conflicts** (:func:`detect_conflict`): per workspace mind, its strong results and the
  external source's (score ≥ :data:`CONFLICT_SCORE_THRESHOLD`, top :data:`CONFLICT_TOP_N`)
  that disagree on status polarity ("approved" vs "rejected"). The note is recorded once in
  ``conflicts`` and on every result it concerns (``CombinedResult.conflict``). Personal memory
  takes no part: it is one person's view, not a record that can be out of sync.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Literal

from mind.redact import mask_text
from mind.retrieval.candidates import SearchResponse, SearchResult
from mind.retrieval.external import ExternalDocument, ExternalSource, ExternalSourceError
from mind.retrieval.scoring import rank_part
from mind.retrieval.search import (
    CANDIDATES,
    HybridSearch,
    Lanes,
    Profile,
)
from vocabulary.ids import WORKSPACE_PREFIX

log = logging.getLogger(__name__)

ResultSource = Literal["workspace", "personal", "external"]
Polarity = Literal["positive", "negative"]
EXTERNAL_PREFIX = "external:"
CONCURRENCY = 8  # minds searched at once (each search already overlaps its two lanes)
LOCAL_COVERAGE_MIN_COUNT = 3
LOCAL_COVERAGE_SCORE_THRESHOLD = 0.7
CONFLICT_SCORE_THRESHOLD = 0.6
CONFLICT_TOP_N = 3

POSITIVE_STATUS = frozenset(
    "approved selected accepted confirmed greenlit greenlighted signed chosen finalized "
    "finalised".split()
)
NEGATIVE_STATUS = frozenset(
    "rejected cancelled canceled declined denied blocked postponed vetoed abandoned shelved".split()
)
NEGATORS = frozenset(
    "not never no nor isn't wasn't aren't weren't hasn't haven't hadn't didn't won't "
    "wouldn't cannot can't".split()
)
NEGATION_WINDOW = 3  # a negator this many words before a status word flips/voids it
_CLAUSE = re.compile(r"[.!?;:\n]+")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


def status_signals(text: str) -> list[tuple[str, Polarity]]:
    """Status words in ``text`` with their polarity, e.g. ``[("approved", "positive")]``.

    Whole words only, case-insensitive. A negator shortly before (same clause) flips a positive
    word ("not approved" → negative) and voids a negative one ("not cancelled" asserts nothing).
    """
    signals: list[tuple[str, Polarity]] = []
    for clause in _CLAUSE.split(text.casefold().replace("’", "'")):
        words = _WORD.findall(clause)
        for i, word in enumerate(words):
            if word not in POSITIVE_STATUS and word not in NEGATIVE_STATUS:
                continue
            negated = any(w in NEGATORS for w in words[max(0, i - NEGATION_WINDOW) : i])
            if word in POSITIVE_STATUS:
                signals.append((f"not {word}", "negative") if negated else (word, "positive"))
            elif not negated:
                signals.append((word, "negative"))
    return signals


def polarity(texts: Sequence[str]) -> Polarity | Literal["mixed"] | None:
    """The status polarity of some texts together: one polarity, ``"mixed"`` or ``None``."""
    found = {p for text in texts for _, p in status_signals(text)}
    if len(found) == 2:
        return "mixed"
    return next(iter(found)) if found else None


@dataclass(slots=True)
class CombinedResult:
    """One result with its attribution: a memory (``hit``) or an external ``document``."""

    origin: str  # personal | workspace:<id> | external:<source name>
    content: str
    score: float  # normalized, [0, 1]
    hit: SearchResult | None = None
    document: ExternalDocument | None = None
    conflict: str | None = None  # the conflict notes this result takes part in

    @property
    def kind(self) -> ResultSource:
        if self.origin.startswith(EXTERNAL_PREFIX):
            return "external"
        return "workspace" if self.origin.startswith(WORKSPACE_PREFIX) else "personal"

    @property
    def final(self) -> float:
        """The second sort key of the merge (an external document has only its score)."""
        return self.hit.final if self.hit is not None else self.score

    def add_conflict(self, note: str) -> None:
        self.conflict = note if self.conflict is None else f"{self.conflict}\n{note}"


@dataclass(frozen=True, slots=True)
class Conflict:
    """A polarity conflict between one workspace mind and the external source."""

    note: str
    origins: tuple[str, str]  # (workspace:<id>, external:<name>)


def strong(results: Sequence[CombinedResult]) -> list[CombinedResult]:
    """The results a conflict is judged on: score ≥ the threshold, the best few."""
    hits = [r for r in results if r.score >= CONFLICT_SCORE_THRESHOLD]
    return sorted(hits, key=lambda r: r.score, reverse=True)[:CONFLICT_TOP_N]


def _quote(results: Sequence[CombinedResult], wanted: Polarity) -> str:
    for r in results:
        for word, p in status_signals(r.content):
            if p == wanted:
                return f'"{word}"'
    return wanted


def detect_conflict(
    workspace: Sequence[CombinedResult], external: Sequence[CombinedResult],
    source_name: str, workspace_name: str = "workspace memory",
) -> str | None:
    """A human-readable note when strong workspace and external results disagree, else None.

    Each side's top-3 strong results must read one way only (mixed texts do not conflict).
    """
    ws, ext = strong(workspace), strong(external)
    if not ws or not ext:
        return None
    ws_pol = polarity([r.content for r in ws])
    ext_pol = polarity([r.content for r in ext])
    if ws_pol not in ("positive", "negative") or ext_pol not in ("positive", "negative"):
        return None
    if ws_pol == ext_pol:
        return None
    return (
        f"Possible conflict: {workspace_name} says {_quote(ws, ws_pol)} but {source_name} says "
        f"{_quote(ext, ext_pol)} — these sources may be out of sync; check which one is current."
    )


def has_sufficient_local_coverage(results: Sequence[CombinedResult]) -> bool:
    hits = sum(r.score >= LOCAL_COVERAGE_SCORE_THRESHOLD for r in results)
    return hits >= LOCAL_COVERAGE_MIN_COUNT


def should_query_external(
    has_source: bool, allowed: bool, query: str, local: Sequence[CombinedResult]
) -> bool:
    return (
        has_source
        and allowed
        and bool(query.strip())
        and not has_sufficient_local_coverage(local)
    )


def rescore_across(per_mind: Sequence[Sequence[CombinedResult]]) -> None:
    """Put the results of several minds on one scale before they merge: each result's lane
    ranks are its mind's own, so every mind's head scored alike (first in its lanes: 1.0) and
    the merged list was a row of heads ordered by tie-breaks — over 200 SciFact workspaces,
    nDCG@10 0.28 against 0.73 in one mind. Here the normalized score is recomputed with the
    ranks a result has among *all* the minds' results: the vector lane's by cosine similarity
    (one model, comparable across minds), the keyword lane's by its BM25 score; the other
    factors (neighbour, event-part and update gains, speaker/time match, relevance) stay.
    Each mind's list stays in its order (its scores floored from below, as in one mind);
    catch-up results keep theirs."""
    rows = [r for rows in per_mind for r in rows if r.hit is not None and r.hit.reason is None]
    by_vector = _global_ranks(rows, lambda h: h.similarity)
    by_keyword = _global_ranks(rows, lambda h: h.keyword_score)
    for r in rows:
        hit = r.hit
        assert hit is not None
        neighbour = sum(hit.factors.get(gain, 0.0) for gain in ("neighbour", "part", "update"))
        local = rank_part(hit.keyword_rank) + rank_part(hit.vector_rank) + neighbour
        if local > 0:
            merged = rank_part(by_keyword.get(id(r))) + rank_part(by_vector.get(id(r)))
            r.score = min(1.0, r.score * (merged + neighbour) / local)
    for mind_rows in per_mind:
        floor = 0.0
        for r in reversed(mind_rows):
            floor = max(floor, r.score)
            r.score = floor
            if r.hit is not None:
                r.hit.score = floor


def _global_ranks(rows: Sequence[CombinedResult],
                  value: Callable[[SearchResult], float | None]) -> dict[int, int]:
    scored = [(v, id(r)) for r in rows if r.hit is not None
              and (v := value(r.hit)) is not None]
    scored.sort(key=lambda pair: -pair[0])
    return {key: rank for rank, (_, key) in enumerate(scored)}


def merge_by_score(lists: Sequence[Sequence[CombinedResult]], limit: int
                   ) -> list[CombinedResult]:
    """At most ``limit`` results: the next one is always the head with the highest
    ``(score, final)`` (ties: the earlier list), so every list keeps its own order."""
    heads = [0] * len(lists)
    out: list[CombinedResult] = []
    while len(out) < limit:
        best: int | None = None
        for i, rows in enumerate(lists):
            if heads[i] < len(rows):
                row = rows[heads[i]]
                if best is None:
                    best = i
                    continue
                top = lists[best][heads[best]]
                if (row.score, row.final) > (top.score, top.final):
                    best = i
        if best is None:
            break
        out.append(lists[best][heads[best]])
        heads[best] += 1
    return out


@dataclass(slots=True)
class CombinedRetrievalResult:
    query: str
    per_mind: list[list[CombinedResult]] = field(default_factory=list)  # in the minds' order
    external_results: list[CombinedResult] = field(default_factory=list)
    external_name: str | None = None  # None: no external source configured
    external_queried: bool = False
    external_error: str | None = None
    conflicts: list[Conflict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    routing: dict[str, int] | None = None  # {searched, workspaces} when not every one was

    def merged(self, limit: int) -> list[CombinedResult]:
        """Minds first in their given order, the external source last (ties)."""
        return merge_by_score([*self.per_mind, self.external_results], limit)


@dataclass(frozen=True, slots=True)
class SearchOptions:
    """What every mind's :meth:`HybridSearch.search` is called with."""

    profile: Profile = "balanced"
    since: str | None = None
    until: str | None = None
    catch_up: bool | None = None
    lanes: Lanes = "hybrid"
    touch: bool = True
    candidates: int = CANDIDATES
    min_relevance: float | None = None


def memory_result(result: SearchResult, origin: str) -> CombinedResult:
    return CombinedResult(origin, result.frame.content, result.score, hit=result)


def external_result(doc: ExternalDocument, source_name: str) -> CombinedResult:
    return CombinedResult(f"{EXTERNAL_PREFIX}{source_name}", doc.content, doc.score,
                          document=doc)


async def touch_given(results: Sequence[CombinedResult], searched: dict[str, HybridSearch]
                      ) -> None:
    """Count an access of the memories the caller gets — the merged list, not every mind's
    own top results (most of which a scope-wide recall drops)."""
    given: dict[str, list[int]] = {}
    for r in results:
        if r.hit is not None:
            given.setdefault(r.origin, []).append(r.hit.frame.id)
    for origin, ids in given.items():
        await searched[origin].touch(ids)


def _workspace_name(origin: str) -> str:
    return f'workspace "{origin.removeprefix(WORKSPACE_PREFIX)}"'


Searcher = HybridSearch | Callable[[], AbstractAsyncContextManager[HybridSearch]]
"""A mind's search, or what opens it for the time of its search (a mind that may be closed
before or after: the facade's leased readers)."""


class CombinedRetrieval:
    """Recall across some minds, each named by its origin, and an optional external source."""

    def __init__(
        self,
        minds: Sequence[tuple[str, Searcher]],
        external: ExternalSource | None = None,
    ) -> None:
        self._minds = list(minds)
        self._external = external

    async def search(
        self, query: str, limit: int = 10, options: SearchOptions | None = None, *,
        external: bool = True,
    ) -> CombinedRetrievalResult:
        """Search every mind (``limit`` each) and, when ``external`` allows it and local
        coverage is thin, the external source; see the module docstring."""
        opts = options or SearchOptions()
        gate = asyncio.Semaphore(CONCURRENCY)

        searched: dict[str, HybridSearch] = {}

        async def run(origin: str, searcher: Searcher) -> SearchResponse:
            async with gate:
                if isinstance(searcher, HybridSearch):
                    return await ask(origin, searcher)
                async with searcher() as mind:  # opened now, closed after its own search
                    return await ask(origin, mind)

        async def ask(origin: str, mind: HybridSearch) -> SearchResponse:
            searched[origin] = mind
            return await mind.search(
                query, limit=limit, profile=opts.profile, since=opts.since,
                until=opts.until, catch_up=opts.catch_up, lanes=opts.lanes, touch=False,
                candidates=opts.candidates, min_relevance=opts.min_relevance)

        outcomes = await asyncio.gather(*(run(o, m) for o, m in self._minds),
                                        return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        name = self._source_name()
        out = CombinedRetrievalResult(query, external_name=name)
        catching_up = False
        for (origin, _), response in zip(self._minds, outcomes, strict=True):
            assert isinstance(response, SearchResponse)
            catching_up = catching_up or response.mode == "catch_up"
            out.notes.extend(f"{origin}: {note}" for note in response.notes)
            out.per_mind.append([memory_result(r, origin) for r in response.results])
        if len(out.per_mind) > 1:
            rescore_across(out.per_mind)
        allowed = external and not catching_up and opts.lanes == "hybrid"
        local = [r for rows in out.per_mind for r in rows]
        if (self._external is not None and name is not None
                and should_query_external(True, allowed, query, local)):
            await self._search_external(self._external, name, query, limit, out)
        if opts.touch:
            await touch_given(out.merged(limit), searched)
        return out

    def _source_name(self) -> str | None:
        if self._external is None:
            return None
        return str(getattr(self._external, "name", "") or "external")

    async def _search_external(
        self, source: ExternalSource, name: str, query: str, limit: int,
        out: CombinedRetrievalResult,
    ) -> None:
        out.external_queried = True
        try:
            documents = await source.search(query, limit)
            out.external_results = [external_result(d, name) for d in documents[:limit]]
        except ExternalSourceError as exc:  # reported in the answer; interfaces show it
            log.info("%s", exc)
            out.external_error = mask_text(str(exc))
            return
        except Exception as exc:  # a custom source must not break recall either
            log.exception("external source %s failed", name)
            out.external_error = mask_text(
                f"external source {name!r} failed: {type(exc).__name__}: {exc}")
            return
        for rows in out.per_mind:
            if not rows or rows[0].kind != "workspace":
                continue
            note = detect_conflict(rows, out.external_results, name,
                                   _workspace_name(rows[0].origin))
            if note is None:
                continue
            out.conflicts.append(Conflict(note, (rows[0].origin, f"{EXTERNAL_PREFIX}{name}")))
            for r in [*strong(rows), *strong(out.external_results)]:
                r.add_conflict(note)
