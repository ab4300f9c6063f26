"""The JSON shapes the facade returns (DESIGN §6), shared by CLI, MCP and HTTP."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mind.frame import Frame
from mind.knowledge import Entity, KnowledgeGraph
from mind.search import SearchResult

FRAME_FIELDS = ("id", "frame_type", "gop_id", "t", "content", "importance", "source",
                "created_at", "recorded_at", "metadata")


def frame_dict(frame: Frame) -> dict[str, Any]:
    return {name: getattr(frame, name) for name in FRAME_FIELDS}


def merge_by_score(lists: Sequence[Sequence[dict[str, Any]]], limit: int
                   ) -> list[dict[str, Any]]:
    """Merge per-mind result lists, each already in its mind's ranking order, into one list of
    at most ``limit``: the next result is always the head with the highest ``score`` (then
    ``final``; then the earlier list), so no mind's own order is changed — the conversation
    signals that order one mind are not comparable across minds, the normalized score is."""
    heads = [0] * len(lists)
    out: list[dict[str, Any]] = []
    while len(out) < limit:
        best = None
        for i, rows in enumerate(lists):
            if heads[i] < len(rows):
                row = rows[heads[i]]
                if best is None or (row["score"], row["final"]) > (
                        lists[best][heads[best]]["score"], lists[best][heads[best]]["final"]):
                    best = i
        if best is None:
            break
        out.append(lists[best][heads[best]])
        heads[best] += 1
    return out


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
