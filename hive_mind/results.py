"""The JSON shapes the facade returns (DESIGN §6), shared by CLI, MCP and HTTP."""

from __future__ import annotations

from typing import Any

from mind.combined import CombinedResult, CombinedRetrievalResult
from mind.external import ExternalDocument
from mind.frame import Frame
from mind.knowledge import Entity, KnowledgeGraph
from mind.search import SearchResult

FRAME_FIELDS = ("id", "frame_type", "gop_id", "t", "content", "importance", "source",
                "created_at", "recorded_at", "metadata")


def frame_dict(frame: Frame) -> dict[str, Any]:
    return {name: getattr(frame, name) for name in FRAME_FIELDS}


def recall_dict(result: SearchResult, origin: str, *, explain: bool = False) -> dict[str, Any]:
    out = {
        **frame_dict(result.frame),
        "score": round(result.score, 6),
        "rrf": result.rrf,
        "relevance": result.relevance,
        "final": result.final,
        "from": origin,
    }
    if explain:
        out["explain"] = explain_dict(result)
    return out


def external_dict(doc: ExternalDocument, origin: str, *, explain: bool = False
                  ) -> dict[str, Any]:
    """A document of the external source in a recall result's shape: the frame fields it has
    no value for are null, ``id`` is the source's document id (text), ``source`` is
    ``external``, ``metadata`` holds ``title``, ``type``, ``url`` and the source's own
    ``metadata``; no lane scores (``rrf``, ``relevance``, ``final``, ``explain`` are null)."""
    out: dict[str, Any] = dict.fromkeys(FRAME_FIELDS)
    out.update({
        "id": doc.document_id, "content": doc.content, "source": "external",
        "metadata": {"title": doc.title, "type": doc.document_type, "url": doc.url,
                     "metadata": doc.metadata},
        "score": round(doc.score, 6), "rrf": None, "relevance": None, "final": None,
        "from": origin,
    })
    if explain:
        out["explain"] = None
    return out


def combined_dict(result: CombinedResult, *, explain: bool = False) -> dict[str, Any]:
    """One recall result (DESIGN §6): a frame or an external document, ``from`` naming where
    it came from and ``conflict`` the conflict note(s) it takes part in (else null)."""
    if result.hit is not None:
        out = recall_dict(result.hit, result.origin, explain=explain)
    else:
        assert result.document is not None
        out = external_dict(result.document, result.origin, explain=explain)
    out["conflict"] = result.conflict
    return out


def recall_response(combined: CombinedRetrievalResult, limit: int, *, explain: bool = False
                    ) -> dict[str, Any]:
    """The whole answer of a recall, as ``POST /v1/recall`` returns it: ``results`` (merged,
    at most ``limit``), ``count``, ``conflicts`` (``{note, from: [workspace:<id>,
    external:<name>]}``, each also on the results it concerns) and ``external`` (null when no
    external source is configured, else ``{name, queried, error}``)."""
    results = [combined_dict(r, explain=explain) for r in combined.merged(limit)]
    external = None if combined.external_name is None else {
        "name": combined.external_name, "queried": combined.external_queried,
        "error": combined.external_error}
    return {"results": results, "count": len(results),
            "conflicts": [{"note": c.note, "from": list(c.origins)} for c in combined.conflicts],
            "external": external}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def explain_dict(result: SearchResult) -> dict[str, Any]:
    """Why a result ranked where it did (``recall --explain``): each lane's 1-based rank (null
    when that lane did not find it), the cosine ``similarity`` of the vector lane, ``lanes``
    (the lanes' fused score), the conversation signals added to it (``session``,
    ``neighbour``) giving ``fused``, the ``match`` multiplier (speaker × time), the re-score
    factors combined into ``relevance``, and ``final`` = fused × match × relevance, the sort
    key; ``score`` is ``final`` normalized to [0, 1]. ``popularity`` only breaks ties. Floats
    are rounded to 6 digits. A catch-up result has no lanes or factors (nulls) and names its
    ``reason`` instead; a result a cross-encoder re-ranked carries ``reranked: true`` and its
    ``final`` is the reranker's logit."""
    factors = result.factors

    def factor(name: str) -> float | None:
        return _rounded(factors.get(name))

    out: dict[str, Any] = {
        "keyword_rank": None if result.keyword_rank is None else result.keyword_rank + 1,
        "vector_rank": None if result.vector_rank is None else result.vector_rank + 1,
        "similarity": _rounded(result.similarity),
        "lanes": _rounded(result.rrf),
        "session": factor("session"),
        "neighbour": factor("neighbour"),
        "fused": factor("fused"),
        "speaker_match": bool(factors.get("speaker")),
        "time_match": bool(factors.get("time")),
        "match": factor("match"),
        "recency": factor("recency"),
        "importance": factor("importance"),
        "proximity": factor("proximity"),
        "popularity": factor("popularity"),
        "relevance": _rounded(result.relevance),
        "final": _rounded(result.final),
        "score": _rounded(result.score),
    }
    if result.reason is not None:
        out["reason"] = result.reason
    if result.reranked:
        out["reranked"] = True
    return out


async def entity_dict(kg: KnowledgeGraph, entity: Entity) -> dict[str, Any]:
    outgoing = await kg.get_relations_from(entity.id)
    incoming = await kg.get_relations_to(entity.id)
    return {
        "id": entity.id, "type": entity.entity_type, "name": entity.name,
        "properties": entity.properties, "valid_from": entity.valid_from,
        "valid_to": entity.valid_to,
        "relations": {
            "outgoing": [{"target_id": r.target_id, "type": r.relation_type,
                          "confidence": r.confidence} for r in outgoing if r.active],
            "incoming": [{"source_id": r.source_id, "type": r.relation_type,
                          "confidence": r.confidence} for r in incoming if r.active],
        },
    }
