"""The JSON shapes the facade returns (DESIGN §6), shared by CLI, MCP and HTTP."""

from __future__ import annotations

from typing import Any

from mind.frame import Frame
from mind.knowledge import Entity, KnowledgeGraph
from mind.search import SearchResult

FRAME_FIELDS = ("id", "frame_type", "gop_id", "t", "content", "importance", "source",
                "created_at", "recorded_at", "metadata")


def frame_dict(frame: Frame) -> dict[str, Any]:
    return {name: getattr(frame, name) for name in FRAME_FIELDS}


def recall_dict(result: SearchResult, origin: str) -> dict[str, Any]:
    return {
        **frame_dict(result.frame),
        "score": round(result.score, 6),
        "rrf": result.rrf,
        "relevance": result.relevance,
        "final": result.final,
        "from": origin,
    }


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
