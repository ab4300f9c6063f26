"""The Workspaces page: every workspace with its memories, the frames still waiting for
their index and its last write; create one; download a mind's export."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Query, Request
from starlette.responses import RedirectResponse, Response, StreamingResponse

from hive_mind.api.deps import Facade
from hive_mind.console.render import page
from hive_mind.console.sessions import PREFIX, check_csrf
from vocabulary.enums import ExportFormat
from vocabulary.limits import MAX_SHORT_NAME_CHARS

router = APIRouter(include_in_schema=False)


@router.get(PREFIX + "/workspaces")
async def workspaces(request: Request, hm: Facade,
                     created: Annotated[str, Query(max_length=64)] = "") -> Response:
    listing = await hm.list_workspaces()
    rows = sorted(listing["workspaces"], key=lambda w: w.get("last_write") or "", reverse=True)
    return page(request, "workspaces.html", active="workspaces", listing=listing, rows=rows,
                created=created)


@router.post(PREFIX + "/workspaces")
async def create(request: Request, hm: Facade, csrf: Annotated[str, Form(max_length=100)],
                 name: Annotated[str, Form(min_length=1, max_length=MAX_SHORT_NAME_CHARS)],
                 workspace_id: Annotated[str, Form(max_length=64)] = "",
                 group: Annotated[str, Form(max_length=100)] = "general") -> Response:
    check_csrf(request, csrf)
    made = await hm.create_workspace(name, group=group or "general",
                                     workspace_id=workspace_id or None)
    return RedirectResponse(f"{request.scope.get('root_path', '')}{PREFIX}/workspaces?created="
                            f"{made['id']}", status_code=303)


@router.get(PREFIX + "/export")
async def export(hm: Facade, workspace: Annotated[str, Query(max_length=64)] = "",
                 format: ExportFormat = "universal") -> Response:
    """The mind's export as a download, streamed from one snapshot (as ``GET /v1/export``)."""
    opened = await hm.export_mind(workspace=workspace or None, fmt=format)
    return StreamingResponse(opened.chunks, media_type=opened.media_type, headers={
        "Content-Disposition": f'attachment; filename="{opened.file_name}"',
        "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"})
