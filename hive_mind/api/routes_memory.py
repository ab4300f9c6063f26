"""Frames, recall and the knowledge graph: ``/v1/memories``, ``/v1/recall``, ``/v1/catch-up``,
``/v1/entities``, ``/v1/relations``."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query, Response
from fastapi.responses import JSONResponse

from hive_mind.api.deps import Facade, WorkspaceQuery
from hive_mind.api.idempotency import KeyHeader, mark_replay, request_key
from hive_mind.api.models import (
    ERROR_RESPONSES,
    QUOTA_RESPONSES,
    EntityRequest,
    RecallRequest,
    RelationRequest,
    SaveRequest,
)
from hive_mind.api.shaped import shaped_router
from hive_mind.shapes import (
    EntityList,
    Forgotten,
    FrameShape,
    RecallDetail,
    RecallResults,
    RelationShape,
    SavedEntity,
    SavedFrame,
    SessionState,
)
from vocabulary.enums import EntityType
from vocabulary.limits import INT64_MAX, MAX_ID_CHARS, MAX_NAME_CHARS

router = shaped_router(prefix="/v1", responses=ERROR_RESPONSES)
FrameId = Annotated[int, Path(ge=1, le=INT64_MAX, description="frame id")]


@router.post("/memories", tags=["memories"], status_code=201, responses=QUOTA_RESPONSES,
             summary="Save a memory: an I-frame (identical content is deduplicated), an update "
             "of one (P-frame) or a cross-reference (B-frame)")
async def save_memory(body: SaveRequest, hm: Facade, response: Response,
                      key_header: KeyHeader = None) -> SavedFrame:
    frame = await hm.save(
        body.content, importance=body.importance, source=body.source,
        workspace=body.workspace, session=body.session, metadata=body.metadata, wait=body.wait,
        created_at=body.created_at,
        idempotency_key=request_key(body.idempotency_key, key_header),
        updates=body.updates, refs=body.refs)
    if not frame["created"]:
        response.status_code = 200
    return mark_replay(response, frame)


@router.get("/memories/{frame_id}", tags=["memories"], summary="One frame by id")
async def get_memory(frame_id: FrameId, hm: Facade,
                     workspace: WorkspaceQuery = None) -> FrameShape:
    return await hm.get_frame(frame_id, workspace=workspace)


@router.get("/sessions/{session:path}/state", tags=["memories"],
            summary="A session's current state: its latest I-frame and the P-frames after it")
async def session_state(session: Annotated[str, Path(max_length=MAX_ID_CHARS)], hm: Facade,
                        workspace: WorkspaceQuery = None) -> SessionState:
    return await hm.session_state(session, workspace=workspace)


@router.delete("/memories/{frame_id}", tags=["memories"],
               summary="Forget a frame and everything derived from it")
async def forget_memory(frame_id: FrameId, hm: Facade,
                        workspace: WorkspaceQuery = None) -> Forgotten:
    return await hm.forget(frame_id, workspace=workspace)


@router.post("/recall", tags=["recall"], response_model=RecallDetail, responses=QUOTA_RESPONSES,
             summary="Hybrid search (keyword + vector) over the chosen minds")
async def recall(body: RecallRequest, hm: Facade) -> Response:
    """``results`` (each with ``from`` and ``conflict``), ``count``, ``conflicts`` (``{note,
    from}``) and ``external`` (null without an external source, else ``{name, queried,
    error}``); see docs/architecture.md, "Combined recall"."""
    detail = await hm.recall_detail(
        body.query, limit=body.limit, scope=body.scope, workspace=body.workspace,
        profile=body.profile, since=body.since, until=body.until, catch_up=body.catch_up,
        lanes=body.lanes, touch=body.touch, explain=body.explain,
        min_relevance=body.min_relevance)
    # already JSON types: rendered as is, without FastAPI's generic walk of the answer
    # (the generic serialization of an answer: ~0.5 ms of a served recall)
    return JSONResponse(detail)


@router.get("/catch-up", tags=["recall"], summary="Recent and important frames, no query")
async def catch_up(hm: Facade, limit: Annotated[int, Query(ge=1, le=100)] = 10,
                   workspace: WorkspaceQuery = None) -> RecallResults:
    results = await hm.catch_up(limit=limit, workspace=workspace)
    return {"results": results, "count": len(results)}


@router.get("/entities", tags=["knowledge graph"], summary="Search entities by name")
async def search_entities(
    hm: Facade, query: Annotated[str, Query(max_length=MAX_NAME_CHARS,
                                            description="name or part of it")] = "",
    entity_type: Annotated[EntityType | None, Query(alias="type")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 20, workspace: WorkspaceQuery = None,
) -> EntityList:
    found = await hm.search_entities(query, entity_type=entity_type, limit=limit,
                                     workspace=workspace)
    return {"entities": found, "count": len(found)}


@router.post("/entities", tags=["knowledge graph"], status_code=201,
             summary="Create or update an entity (upsert by normalized name and type)")
async def save_entity(body: EntityRequest, hm: Facade, response: Response) -> SavedEntity:
    result = await hm.save_entity(
        body.entity_type, body.name, properties=body.properties, workspace=body.workspace)
    if not result["created"]:
        response.status_code = 200
    return result


@router.post("/relations", tags=["knowledge graph"], status_code=201,
             summary="Relate two entities")
async def create_relation(body: RelationRequest, hm: Facade) -> RelationShape:
    return await hm.create_relation(
        body.source_id, body.target_id, body.relation_type, confidence=body.confidence,
        properties=body.properties, workspace=body.workspace)
