"""Moving minds between the shards of a sharded deployment: ``/v1/cluster/minds`` (what
``hive-mind cluster rebalance`` drives; the steps are in :mod:`actors.moves`). Behind the API
token like every route; only a shard host answers (elsewhere 400 ``invalid``). A mind id in a
path is validated before anything looks at a file; an arriving copy is written under the
host's own ``moves/`` folder and checked (a mind file fenced for this shard) before it is
renamed into place, so no caller's string becomes a path. A release goes only to a shard and
URL the operator's configuration names (:mod:`hive_mind.move_orders`); an expected arrival
and a departure can be cancelled (``DELETE …/expect``, ``DELETE …/release``).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from fastapi import BackgroundTasks, Request
from fastapi import Path as PathParam
from fastapi.responses import FileResponse
from pydantic import Field

from hive_mind.api.deps import Facade
from hive_mind.api.models import ERROR_RESPONSES, Body
from hive_mind.api.shaped import shaped_router
from hive_mind.contract import HostFacade
from hive_mind.shapes import JsonObject
from mind.errors import InvalidIdError, ValidationError
from vocabulary.ids import validate_mind_id
from vocabulary.limits import MAX_JSON_BYTES

if TYPE_CHECKING:
    from hive_mind.sharded import ShardedHiveMind

SNAPSHOT_PATH = re.compile(r"/v1/cluster/minds/[^/]+/snapshot")  # its PUT: whole mind files
SQLITE_MAGIC = b"SQLite format 3\x00"
router = shaped_router(prefix="/v1/cluster", tags=["cluster"], responses=ERROR_RESPONSES)
MindId = Annotated[str, PathParam(max_length=80, description="personal or workspace:<slug>")]


class ReleaseRequest(Body):
    to: str = Field(max_length=16, description="the shard the mind goes to (shard-<n>)")
    epoch: int = Field(ge=0, le=2**31, description="the receiving shard's epoch")
    url: str | None = Field(
        default=None, max_length=2048,
        description="where the receiving shard serves: taken from this host's shard map "
                    "(a different URL is refused) unless a signed move order names it")
    expires: int | None = Field(default=None, ge=0, le=2**40,
                                description="a move order's expiry (Unix seconds)")
    signature: str | None = Field(
        default=None, min_length=64, max_length=64, pattern="^[0-9a-f]{64}$",
        description="a move order's signature with HIVE_MIND_CLUSTER_KEY (cluster rebalance)")


async def receive_file(request: Request, target: Path) -> None:
    """The request body into ``target`` (created 0600), written 1 MiB at a time off the event
    loop; refused at the first bytes unless they open an SQLite file."""
    fd = await asyncio.to_thread(os.open, target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        pending, checked = bytearray(), False
        async for chunk in request.stream():
            pending += chunk
            if not checked and len(pending) >= len(SQLITE_MAGIC):
                if not pending.startswith(SQLITE_MAGIC):
                    raise ValidationError("the body is not an SQLite file (a mind file)")
                checked = True
            if len(pending) >= 1 << 20:
                await asyncio.to_thread(out.write, bytes(pending))
                pending.clear()
        if not checked:
            raise ValidationError("the body is not an SQLite file (a mind file)")
        await asyncio.to_thread(out.write, bytes(pending))


def _sharded(hm: HostFacade, step: str, mind_id: str | None = None) -> ShardedHiveMind:
    """The facade as a shard host's (400 elsewhere; 403 for a scoped token: moves are the
    admin's), with ``mind_id`` validated."""
    from hive_mind.scopes import ScopedFacade, admin_only
    from hive_mind.sharded import ShardedHiveMind

    inner = hm.inner if isinstance(hm, ScopedFacade) else hm
    if not isinstance(inner, ShardedHiveMind):
        raise ValidationError("not a sharded deployment (HIVE_MIND_SHARDS is unset)")
    if inner is not hm:
        raise admin_only(step)
    if mind_id is not None:
        try:
            validate_mind_id(mind_id)
        except ValueError as exc:
            raise InvalidIdError(str(exc)) from None
    return inner


@router.get("/minds", summary="Every mind file here with its fencing record, and moves")
async def holdings(hm: Facade) -> JsonObject:
    return await _sharded(hm, "holdings").holdings()


class ExpectRequest(Body):
    metadata: str | None = Field(
        default=None, max_length=MAX_JSON_BYTES,
        description="a workspace's metadata (JSON text, as GET …/metadata gives it): the "
                    "workspace is admitted with it; checked by the workspace rules")


@router.post("/minds/{mind_id}/expect", summary="Refuse the mind here until it arrives")
async def expect(mind_id: MindId, hm: Facade, body: ExpectRequest | None = None
                 ) -> JsonObject:
    metadata = None if body is None else body.metadata
    return await _sharded(hm, "expect_mind", mind_id).expect_mind(mind_id, metadata)


@router.delete("/minds/{mind_id}/expect", summary="Stop awaiting the mind here")
async def cancel_expect(mind_id: MindId, hm: Facade) -> JsonObject:
    return await _sharded(hm, "cancel_expect", mind_id).cancel_expect(mind_id)


@router.post("/minds/{mind_id}/release",
             summary="Close the mind and hand its file to another shard")
async def release(mind_id: MindId, body: ReleaseRequest, hm: Facade) -> JsonObject:
    return await _sharded(hm, "release_mind", mind_id).release_mind(
        mind_id, body.to, body.epoch, body.url, body.expires, body.signature)


@router.delete("/minds/{mind_id}/release",
               summary="Cancel a move away that did not complete: serve the mind here again")
async def cancel_release(mind_id: MindId, hm: Facade) -> JsonObject:
    return await _sharded(hm, "cancel_release", mind_id).cancel_release(mind_id)


@router.get("/minds/{mind_id}/snapshot", summary="A consistent copy of a released mind",
            response_class=FileResponse)
async def snapshot(mind_id: MindId, hm: Facade, background: BackgroundTasks) -> FileResponse:
    sharded = _sharded(hm, "snapshot_mind", mind_id)
    folder = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="hive-mind-move-"))
    background.add_task(shutil.rmtree, folder, True)
    copy = folder / "mind.sqlite"
    await sharded.snapshot_mind(mind_id, copy)
    return FileResponse(copy, media_type="application/vnd.sqlite3")


@router.get("/minds/{mind_id}/metadata", summary="A workspace's metadata (null: personal)")
async def metadata(mind_id: MindId, hm: Facade) -> JsonObject:
    return {"metadata": await _sharded(hm, "mind_metadata", mind_id).mind_metadata(mind_id)}


@router.put("/minds/{mind_id}/snapshot", summary="Admit a moved mind's copy here",
            openapi_extra={"requestBody": {"required": True, "content": {
                "application/vnd.sqlite3": {"schema": {"type": "string",
                                                       "format": "binary"}}}}})
async def admit(mind_id: MindId, hm: Facade, request: Request) -> JsonObject:
    """The body is the mind file itself. Everything that can be checked first is (a shard
    host, the mind awaited here) before a byte is read; the file is written owner-only under
    this host's ``moves/`` and refused at its first bytes unless it is an SQLite file."""
    sharded = _sharded(hm, "admit_mind", mind_id)
    target: Path = sharded.incoming_path(mind_id)
    try:
        await receive_file(request, target)
        return await sharded.admit_mind(mind_id, target)
    finally:
        target.unlink(missing_ok=True)


@router.post("/minds/{mind_id}/retire", summary="Put a moved mind's old file aside")
async def retire(mind_id: MindId, hm: Facade) -> JsonObject:
    return await _sharded(hm, "retire_mind", mind_id).retire_mind(mind_id)
