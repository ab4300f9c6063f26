"""Export: ``GET /v1/export`` (one mind, streamed as a download) and ``GET /v1/export/page``
(a bounded page of records)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query
from fastapi.responses import StreamingResponse

from hive_mind.api.deps import Facade, WorkspaceQuery
from hive_mind.api.models import ERROR_RESPONSES
from hive_mind.api.shaped import shaped_router
from hive_mind.export import FRAMES_HEADER, MAX_PAGE
from hive_mind.shapes import JsonObject
from vocabulary.enums import ExportFormat, ExportPart

router = shaped_router(prefix="/v1", tags=["export"], responses=ERROR_RESPONSES)
CURSOR_CHARS = 40


@router.get("/export", summary="One mind's memories and knowledge graph, streamed",
            response_class=StreamingResponse,
            responses={200: {"content": {"application/x-ndjson": {}, "application/json": {}},
                             "description": "universal JSON Lines, or one JSON document"}})
async def export(hm: Facade, workspace: WorkspaceQuery = None,
                 format: Annotated[ExportFormat, Query(
                     description="universal (JSON Lines that `harvest import universal` "
                                 "reads back) or json (with entities and relations)")
                 ] = "universal") -> StreamingResponse:
    """Opened before the first byte (a refusal is an error response); read from one snapshot
    of the mind page by page as it is sent, in constant memory."""
    opened = await hm.export_mind(workspace=workspace, fmt=format)
    return StreamingResponse(opened.chunks, media_type=opened.media_type, headers={
        "Content-Disposition": f'attachment; filename="{opened.file_name}"',
        "Cache-Control": "no-store", FRAMES_HEADER: str(opened.frames)})


@router.get("/export/page", summary="A page of one mind's export")
async def export_page(
        hm: Facade, workspace: WorkspaceQuery = None, part: ExportPart = "frames",
        cursor: Annotated[str | None, Query(max_length=CURSOR_CHARS,
                                            description="`next` of the page before")] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100) -> JsonObject:
    return await hm.export_page(workspace=workspace, part=part, cursor=cursor, limit=limit)
