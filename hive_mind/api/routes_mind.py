"""Identity, awareness and workspaces: ``/v1/identity``, ``/v1/awareness``,
``/v1/workspaces``."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query, Response

from hive_mind.api.deps import Facade, WorkspaceQuery
from hive_mind.api.idempotency import KeyHeader, mark_replay, request_key
from hive_mind.api.models import (
    ERROR_RESPONSES,
    AwarenessRequest,
    DefaultWorkspace,
    IdentityRequest,
    WorkspaceCreate,
    WorkspaceUpdate,
)
from hive_mind.api.shaped import shaped_router
from hive_mind.shapes import (
    AwarenessAdded,
    AwarenessCleared,
    AwarenessList,
    IdentitySaved,
    IdentityView,
    WorkspaceDefault,
    WorkspaceDeleted,
    WorkspaceList,
    WorkspaceMeta,
    WorkspaceView,
)
from vocabulary.enums import AwarenessCategory
from vocabulary.limits import INT64_MAX

router = shaped_router(prefix="/v1", responses=ERROR_RESPONSES)
# ``:path`` so an encoded slash (``%2e%2e%2fx``) reaches the facade's slug check (400
# invalid_id) instead of falling through to a 404 route miss
WorkspaceId = Annotated[str, Path(description="workspace id (a slug)")]


@router.get("/identity", tags=["identity"], summary="Who this mind is")
async def get_identity(hm: Facade, workspace: WorkspaceQuery = None) -> IdentityView:
    return await hm.get_identity(workspace=workspace)


@router.put("/identity", tags=["identity"],
            summary="Create or update the identity (given fields only)")
async def set_identity(body: IdentityRequest, hm: Facade) -> IdentitySaved:
    return await hm.set_identity(
        workspace=body.workspace, name=body.name, role=body.role, department=body.department,
        personality=body.personality, capabilities=body.capabilities,
        system_prompt=body.system_prompt)


@router.get("/awareness", tags=["awareness"], summary="Live awareness items")
async def get_awareness(hm: Facade, category: AwarenessCategory | None = None,
                        workspace: WorkspaceQuery = None) -> AwarenessList:
    items = await hm.get_awareness(category=category, workspace=workspace)
    return {"items": items, "count": len(items)}


@router.post("/awareness", tags=["awareness"], status_code=201, summary="Add an awareness item")
async def set_awareness(body: AwarenessRequest, hm: Facade, response: Response,
                        key_header: KeyHeader = None) -> AwarenessAdded:
    result = await hm.set_awareness(
        body.category, body.content, priority=body.priority, ttl_minutes=body.ttl_minutes,
        workspace=body.workspace,
        idempotency_key=request_key(body.idempotency_key, key_header))
    return mark_replay(response, result)


@router.delete("/awareness", tags=["awareness"],
               summary="Remove one item (id) or every item of a category")
async def clear_awareness(
    hm: Facade, item_id: Annotated[int | None, Query(alias="id", ge=1, le=INT64_MAX)] = None,
    category: AwarenessCategory | None = None, workspace: WorkspaceQuery = None,
) -> AwarenessCleared:
    return await hm.clear_awareness(item_id=item_id, category=category, workspace=workspace)


@router.get("/workspaces", tags=["workspaces"],
            summary="Every workspace with its counts, the personal mind's stats, the default")
async def list_workspaces(hm: Facade) -> WorkspaceList:
    return await hm.list_workspaces()


@router.post("/workspaces", tags=["workspaces"], status_code=201, summary="Create a workspace")
async def create_workspace(body: WorkspaceCreate, hm: Facade) -> WorkspaceMeta:
    return await hm.create_workspace(
        body.name, group=body.group, icon=body.icon, model=body.model, workspace_id=body.id)


@router.put("/workspaces/default", tags=["workspaces"],
            summary="Set (or clear, with null) the default workspace")
async def set_default_workspace(body: DefaultWorkspace, hm: Facade
                                ) -> WorkspaceDefault:
    return await hm.set_default_workspace(body.workspace or None)


@router.get("/workspaces/{workspace_id:path}", tags=["workspaces"],
            summary="One workspace with its stats")
async def get_workspace(workspace_id: WorkspaceId, hm: Facade) -> WorkspaceView:
    return await hm.get_workspace(workspace_id)


@router.patch("/workspaces/{workspace_id:path}", tags=["workspaces"],
              summary="Rename or regroup a workspace")
async def update_workspace(workspace_id: WorkspaceId, body: WorkspaceUpdate,
                           hm: Facade) -> WorkspaceMeta:
    return await hm.update_workspace(workspace_id, name=body.name, group=body.group,
                                     icon=body.icon, model=body.model)


@router.delete("/workspaces/{workspace_id:path}", tags=["workspaces"],
               summary="Delete a workspace and its mind file")
async def delete_workspace(workspace_id: WorkspaceId, hm: Facade) -> WorkspaceDeleted:
    return await hm.delete_workspace(workspace_id)
