"""The Memories page: a mind's sessions newest first, a session's frames page by page, one
frame with where it came from, and forget — shown what it removes, confirmed, then done."""

from __future__ import annotations

from typing import Annotated, Final

from fastapi import APIRouter, Form, Query, Request
from starlette.responses import Response

from hive_mind.api.deps import Facade
from hive_mind.browse import MAX_PAGE_NUMBER
from hive_mind.console.render import page
from hive_mind.console.sessions import PREFIX, check_csrf
from vocabulary.limits import INT64_MAX, MAX_ID_CHARS

router = APIRouter(include_in_schema=False)
PAGE_SIZE: Final = 50
Workspace = Annotated[str, Query(max_length=64)]
FrameId = Annotated[int, Query(ge=1, le=INT64_MAX)]
# what a frame's metadata says about where it came from, in the order shown
SOURCE_KEYS: Final = ("source", "title", "conversation_id", "message_id", "speaker", "role",
                      "kind", "url", "path", "tags")


@router.get(PREFIX + "/memories")
async def sessions(request: Request, hm: Facade, workspace: Workspace = "",
                   page_number: Annotated[int, Query(alias="page", ge=1,
                                                     le=MAX_PAGE_NUMBER)] = 1) -> Response:
    listing = await hm.list_sessions(workspace=workspace or None, page=page_number,
                                     limit=PAGE_SIZE)
    return page(request, "memories.html", active="memories", workspace=workspace,
                listing=listing)


@router.get(PREFIX + "/memories/session")
async def session(request: Request, hm: Facade,
                  session: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)],
                  workspace: Workspace = "",
                  before: Annotated[int | None, Query(ge=0, le=2**62)] = None) -> Response:
    frames = await hm.session_frames(session, workspace=workspace or None, before=before,
                                     limit=PAGE_SIZE)
    return page(request, "session.html", active="memories", workspace=workspace,
                frames=frames)


@router.get(PREFIX + "/memories/frame")
async def frame(request: Request, hm: Facade, id: FrameId, workspace: Workspace = "") -> Response:
    shown = await hm.get_frame(id, workspace=workspace or None)
    metadata = shown.get("metadata") or {}
    provenance = [(k, metadata[k]) for k in SOURCE_KEYS
                  if isinstance(metadata, dict) and metadata.get(k) not in (None, "", [])]
    return page(request, "frame.html", active="memories", workspace=workspace, frame=shown,
                provenance=provenance)


@router.get(PREFIX + "/memories/forget")
async def forget_confirm(request: Request, hm: Facade, id: FrameId,
                         workspace: Workspace = "") -> Response:
    shown = await hm.get_frame(id, workspace=workspace or None)
    return page(request, "forget.html", active="memories", workspace=workspace, frame=shown)


@router.post(PREFIX + "/memories/forget")
async def forget(request: Request, hm: Facade, csrf: Annotated[str, Form(max_length=100)],
                 id: Annotated[int, Form(ge=1, le=INT64_MAX)],
                 workspace: Annotated[str, Form(max_length=64)] = "") -> Response:
    check_csrf(request, csrf)
    removed = await hm.forget(id, workspace=workspace or None)
    return page(request, "forgotten.html", active="memories", workspace=workspace,
                removed=removed)
