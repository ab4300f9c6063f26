"""Looking through a mind page by page (the web console, ``GET /v1/sessions``, …): its
sessions newest first, a session's frames, an entity's neighbourhood and relation history,
the harvest runs. Reads only, on the mind's reader; every bound checked before SQL."""

from __future__ import annotations

from typing import Final

from hive_mind.results import entity_dict, frame_dict
from hive_mind.shapes import JsonObject
from mind.bounds import bounded_int, bounded_text
from mind.mind import Mind
from vocabulary.limits import MAX_ID_CHARS

MAX_PAGE: Final = 200
MAX_PAGE_NUMBER: Final = 1_000_000
MAX_EDGES: Final = 200


async def sessions_page(reader: Mind, page: int, limit: int) -> JsonObject:
    """Page ``page`` (1-based) of the sessions, newest first, with their frame counts."""
    bounded_int(page, "page", 1, MAX_PAGE_NUMBER)
    bounded_int(limit, "limit", 1, MAX_PAGE)
    rows = await reader.frames.session_page((page - 1) * limit, limit + 1)
    return {"sessions": rows[:limit], "page": page, "more": len(rows) > limit}


async def session_frames(reader: Mind, session: str, before: int | None, limit: int
                         ) -> JsonObject:
    """A session's frames, newest first; ``next`` is the ``before`` of the next page."""
    bounded_text(session, "session", MAX_ID_CHARS)
    bounded_int(limit, "limit", 1, MAX_PAGE)
    if before is not None:
        bounded_int(before, "before", 0, 2**62)
    frames = await reader.frames.in_session(session, before, limit + 1)
    shown = frames[:limit]
    more = len(frames) > limit
    return {"session": session, "frames": [frame_dict(f) for f in shown],
            "next": shown[-1].t if more and shown else None}


async def entity_graph(reader: Mind, entity_id: int, limit: int) -> JsonObject:
    """An entity (:func:`hive_mind.results.entity_dict`), its neighbours and every relation
    between them and it, retired ones too (``valid_to`` set), the latest valid first."""
    bounded_int(entity_id, "entity id", 1, 2**63 - 1)
    bounded_int(limit, "limit", 1, MAX_EDGES)
    kg = reader.knowledge
    entity = await kg.get_entity(entity_id)
    relations = await kg.relation_history(entity_id, limit)
    ids = list(dict.fromkeys([entity_id, *(i for r in relations
                                           for i in (r.source_id, r.target_id))]))
    nodes = [{"id": e.id, "name": e.name, "type": e.entity_type, "active": e.active}
             for e in await kg.get_entities(ids)]
    edges = [{"id": r.id, "source": r.source_id, "target": r.target_id,
              "type": r.relation_type, "confidence": r.confidence,
              "valid_from": r.valid_from, "valid_to": r.valid_to, "active": r.active}
             for r in relations]
    return {"entity": dict(await entity_dict(kg, entity)), "nodes": nodes, "edges": edges}


async def harvest_runs(reader: Mind, limit: int) -> list[JsonObject]:
    """The mind's latest harvest runs (what was imported, how far, how it ended)."""
    from mind.harvest.store import HarvestStore

    bounded_int(limit, "limit", 1, MAX_PAGE)
    return await HarvestStore(reader.db).runs(limit)
