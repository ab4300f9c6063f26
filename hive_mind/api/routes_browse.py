"""Looking through a mind a page at a time: ``/v1/sessions``, ``/v1/sessions/frames``,
``/v1/entities/{id}/graph``, ``/v1/harvest/runs`` (:mod:`hive_mind.browse`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

from hive_mind.api.deps import Facade, WorkspaceQuery
from hive_mind.api.models import ERROR_RESPONSES
from hive_mind.api.shaped import shaped_router
from hive_mind.browse import MAX_EDGES, MAX_PAGE, MAX_PAGE_NUMBER
from hive_mind.shapes import JsonObject
from vocabulary.limits import INT64_MAX, MAX_ID_CHARS

router = shaped_router(prefix="/v1", responses=ERROR_RESPONSES)
Limit = Annotated[int, Query(ge=1, le=MAX_PAGE)]


@router.get("/sessions", tags=["memories"], summary="Sessions, newest first, a page at a time")
async def list_sessions(hm: Facade, workspace: WorkspaceQuery = None,
                        page: Annotated[int, Query(ge=1, le=MAX_PAGE_NUMBER)] = 1,
                        limit: Limit = 50) -> JsonObject:
    return await hm.list_sessions(workspace=workspace, page=page, limit=limit)


@router.get("/sessions/frames", tags=["memories"], summary="A session's frames, newest first")
async def session_frames(
        hm: Facade, session: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)],
        workspace: WorkspaceQuery = None,
        before: Annotated[int | None, Query(ge=0, le=2**62,
                                            description="`next` of the page before")] = None,
        limit: Limit = 50) -> JsonObject:
    return await hm.session_frames(session, workspace=workspace, before=before, limit=limit)


@router.get("/entities/{entity_id}/graph", tags=["knowledge graph"],
            summary="An entity's neighbours and relations, retired ones too")
async def entity_graph(hm: Facade,
                       entity_id: Annotated[int, Path(ge=1, le=INT64_MAX)],
                       workspace: WorkspaceQuery = None,
                       limit: Annotated[int, Query(ge=1, le=MAX_EDGES)] = 100) -> JsonObject:
    return await hm.entity_graph(entity_id, workspace=workspace, limit=limit)


@router.get("/harvest/runs", tags=["harvest"], summary="The latest harvest runs into a mind")
async def harvest_runs(hm: Facade, workspace: WorkspaceQuery = None,
                       limit: Limit = 50) -> JsonObject:
    runs = await hm.harvest_runs(workspace=workspace, limit=limit)
    return {"runs": runs, "count": len(runs)}
