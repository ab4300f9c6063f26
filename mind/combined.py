"""CombinedRetrieval: one recall over the personal mind, a workspace mind and an optional
external knowledge source, with attribution (seed §8, with f.3's thresholds on the right scale).

* The minds in scope are searched in parallel; every result keeps its mind's normalized
  ``score`` in [0, 1] and an attribution tag (``[personal memory]``, ``[workspace memory]``,
  ``[<source name>]``). External scores are on the same [0, 1] scale (protocol contract), so
  :meth:`CombinedRetrievalResult.merged` sorts everything together; raw RRF values and reranker
  logits never enter a combined result.
* Gating (:func:`should_query_external`): the external source is asked only when it exists,
  ``scope == "all"``, the query is not blank and local coverage is insufficient — fewer than
  :data:`LOCAL_COVERAGE_MIN_COUNT` local results (personal + workspace) reach
  :data:`LOCAL_COVERAGE_SCORE_THRESHOLD`. When it exists but is not asked, ``external_skipped``
  is true. Its failures never fail the recall: local results are kept and ``external_error``
  says what went wrong. Errors of the minds themselves propagate (they name their fix).
* Conflicts (:func:`detect_conflict`): strong workspace and external results (score ≥
  :data:`CONFLICT_SCORE_THRESHOLD`) whose top-3 texts disagree on status polarity.
* The external source has no time window: ``since``/``until`` filter the minds only.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from mind.errors import ValidationError
from mind.external import ExternalDocument, ExternalSource, ExternalSourceError
from mind.scoring import PROFILES
from mind.search import MAX_LIMIT, HybridSearch, Profile, SearchResponse, SearchResult

log = logging.getLogger(__name__)

Scope = Literal["all", "personal", "workspace"]
ResultSource = Literal["workspace", "personal", "external"]
Polarity = Literal["positive", "negative"]
SCOPES = ("all", "personal", "workspace")
LOCAL_COVERAGE_MIN_COUNT = 3
LOCAL_COVERAGE_SCORE_THRESHOLD = 0.7
CONFLICT_SCORE_THRESHOLD = 0.6
CONFLICT_TOP_N = 3
PERSONAL_ATTRIBUTION = "[personal memory]"
WORKSPACE_ATTRIBUTION = "[workspace memory]"

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


def _strong(results: Sequence[CombinedResult]) -> list[CombinedResult]:
    strong = [r for r in results if r.score >= CONFLICT_SCORE_THRESHOLD]
    return sorted(strong, key=lambda r: r.score, reverse=True)[:CONFLICT_TOP_N]


def _quote(results: Sequence[CombinedResult], wanted: Polarity) -> str:
    for r in results:
        for word, p in status_signals(r.content):
            if p == wanted:
                return f'"{word}"'
    return wanted


def detect_conflict(
    workspace: Sequence[CombinedResult], external: Sequence[CombinedResult], source_name: str
) -> str | None:
    """A human-readable note when strong workspace and external results disagree, else None.

    Each side's top-3 strong results must read one way only (mixed texts do not conflict).
    """
    ws, ext = _strong(workspace), _strong(external)
    if not ws or not ext:
        return None
    ws_pol = polarity([r.content for r in ws])
    ext_pol = polarity([r.content for r in ext])
    if ws_pol not in ("positive", "negative") or ext_pol not in ("positive", "negative"):
        return None
    if ws_pol == ext_pol:
        return None
    return (
        f"Possible conflict: workspace memory says {_quote(ws, ws_pol)} but {source_name} says "
        f"{_quote(ext, ext_pol)} — these sources may be out of sync; check which one is current."
    )


def has_sufficient_local_coverage(results: Sequence[CombinedResult]) -> bool:
    strong = sum(r.score >= LOCAL_COVERAGE_SCORE_THRESHOLD for r in results)
    return strong >= LOCAL_COVERAGE_MIN_COUNT


def should_query_external(
    has_source: bool, scope: str, query: str, local: Sequence[CombinedResult]
) -> bool:
    return (
        has_source
        and scope == "all"
        and bool(query.strip())
        and not has_sufficient_local_coverage(local)
    )


@dataclass(slots=True)
class CombinedResult:
    content: str
    source: ResultSource
    attribution: str
    score: float
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class CombinedRetrievalResult:
    query: str
    workspace_results: list[CombinedResult] = field(default_factory=list)
    personal_results: list[CombinedResult] = field(default_factory=list)
    external_results: list[CombinedResult] = field(default_factory=list)
    external_available: bool = False
    external_skipped: bool = False
    external_error: str | None = None
    has_conflict: bool = False
    conflict_note: str | None = None
    notes: list[str] = field(default_factory=list)

    def merged(self, limit: int | None = None) -> list[CombinedResult]:
        """All results, best normalized score first (ties: workspace, personal, external)."""
        if limit is not None and (type(limit) is not int or limit < 1):
            raise ValidationError("limit must be a positive integer")
        everything = [*self.workspace_results, *self.personal_results, *self.external_results]
        everything.sort(key=lambda r: r.score, reverse=True)  # stable: keeps the tie order
        return everything if limit is None else everything[:limit]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def memory_result(result: SearchResult, source: ResultSource, origin: str) -> CombinedResult:
    frame = result.frame
    metadata: dict[str, Any] = {
        "frameId": frame.id,
        "frameType": frame.frame_type,
        "importance": frame.importance,
        "gopId": frame.gop_id,
        "createdAt": frame.created_at,
        "from": origin,
    }
    if frame.metadata:
        metadata["frameMetadata"] = frame.metadata
    attribution = WORKSPACE_ATTRIBUTION if source == "workspace" else PERSONAL_ATTRIBUTION
    return CombinedResult(frame.content, source, attribution, result.score, metadata)


def external_result(doc: ExternalDocument, source_name: str) -> CombinedResult:
    metadata: dict[str, Any] = {"documentId": doc.document_id, "title": doc.title}
    metadata["documentType"] = doc.document_type
    if doc.url:
        metadata["url"] = doc.url
    if doc.metadata:
        metadata["documentMetadata"] = doc.metadata
    return CombinedResult(doc.content, "external", f"[{source_name}]", doc.score, metadata)


class CombinedRetrieval:
    """Recall across the personal mind, one workspace mind and an optional external source."""

    def __init__(
        self,
        personal: HybridSearch | None,
        workspace: HybridSearch | None,
        external: ExternalSource | None = None,
        workspace_id: str | None = None,
    ) -> None:
        self._personal = personal
        self._workspace = workspace
        self._external = external
        self._workspace_origin = f"workspace:{workspace_id}" if workspace_id else "workspace"

    async def search(
        self,
        query: str,
        limit: int = 10,
        profile: Profile = "balanced",
        scope: Scope = "all",
        since: str | None = None,
        until: str | None = None,
    ) -> CombinedRetrievalResult:
        if not isinstance(query, str):
            raise ValidationError("query must be text")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise ValidationError(f"limit must be an integer between 1 and {MAX_LIMIT}")
        if scope not in SCOPES:
            raise ValidationError(f"scope must be one of {list(SCOPES)}, got {scope!r}")
        if profile not in PROFILES:
            raise ValidationError(f"profile must be one of {sorted(PROFILES)}, got {profile!r}")

        async def run(mind: HybridSearch | None, wanted: bool) -> SearchResponse | None:
            if mind is None or not wanted:
                return None
            return await mind.search(query, limit=limit, profile=profile, since=since, until=until)

        outcomes = await asyncio.gather(
            run(self._personal, scope in ("all", "personal")),
            run(self._workspace, scope in ("all", "workspace")),
            return_exceptions=True,
        )
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        personal, workspace = outcomes
        out = CombinedRetrievalResult(query, external_available=self._external is not None)
        if isinstance(personal, SearchResponse):
            out.personal_results = self._convert(personal, "personal", out.notes)
        if isinstance(workspace, SearchResponse):
            out.workspace_results = self._convert(workspace, "workspace", out.notes)
        local = [*out.personal_results, *out.workspace_results]
        if self._external is None:
            return out
        if not should_query_external(True, scope, query, local):
            out.external_skipped = True
            return out
        await self._search_external(self._external, query, limit, out)
        return out

    def _convert(
        self, response: SearchResponse, source: ResultSource, notes: list[str]
    ) -> list[CombinedResult]:
        origin = "personal" if source == "personal" else self._workspace_origin
        notes.extend(f"{origin}: {note}" for note in response.notes)
        return [memory_result(r, source, origin) for r in response.results]

    async def _search_external(
        self, source: ExternalSource, query: str, limit: int, out: CombinedRetrievalResult
    ) -> None:
        name = str(getattr(source, "name", "") or "external")
        try:
            documents = await source.search(query, limit)
            out.external_results = [external_result(d, name) for d in documents[:limit]]
        except ExternalSourceError as exc:
            log.warning("external source %s failed: %s", name, exc)
            out.external_error = str(exc)
            return
        except Exception as exc:  # a custom source must not break recall either
            log.exception("external source %s failed", name)
            out.external_error = f"external source {name!r} failed: {type(exc).__name__}: {exc}"
            return
        note = detect_conflict(out.workspace_results, out.external_results, name)
        out.has_conflict = note is not None
        out.conflict_note = note
