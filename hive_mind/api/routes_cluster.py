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
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, File, Form, UploadFile
from fastapi import Path as PathParam
from fastapi.responses import FileResponse
from pydantic import Field

from hive_mind.api.deps import Facade
from hive_mind.api.models import ERROR_RESPONSES, Body
from mind.errors import InvalidIdError, ValidationError
from vocabulary.ids import validate_mind_id
from vocabulary.limits import MAX_JSON_BYTES

CLUSTER_MINDS = "/v1/cluster/minds/"  # its PUT carries whole mind files
router = APIRouter(prefix="/v1/cluster", tags=["cluster"], responses=ERROR_RESPONSES)
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


def _sharded(hm: Any, mind_id: str | None = None) -> Any:
    if not hasattr(hm, "holdings"):
        raise ValidationError("not a sharded deployment (HIVE_MIND_SHARDS is unset)")
    if mind_id is not None:
        try:
            validate_mind_id(mind_id)
        except ValueError as exc:
            raise InvalidIdError(str(exc)) from None
    return hm


@router.get("/minds", summary="Every mind file here with its fencing record, and moves")
async def holdings(hm: Facade) -> dict[str, Any]:
    result: dict[str, Any] = await _sharded(hm).holdings()
    return result


@router.post("/minds/{mind_id}/expect", summary="Refuse the mind here until it arrives")
async def expect(mind_id: MindId, hm: Facade) -> dict[str, Any]:
    result: dict[str, Any] = await _sharded(hm, mind_id).expect_mind(mind_id)
    return result


@router.delete("/minds/{mind_id}/expect", summary="Stop awaiting the mind here")
async def cancel_expect(mind_id: MindId, hm: Facade) -> dict[str, Any]:
    result: dict[str, Any] = await _sharded(hm, mind_id).cancel_expect(mind_id)
    return result


@router.post("/minds/{mind_id}/release",
             summary="Close the mind and hand its file to another shard")
async def release(mind_id: MindId, body: ReleaseRequest, hm: Facade) -> dict[str, Any]:
    result: dict[str, Any] = await _sharded(hm, mind_id).release_mind(
        mind_id, body.to, body.epoch, body.url, body.expires, body.signature)
    return result


@router.delete("/minds/{mind_id}/release",
               summary="Cancel a move away that did not complete: serve the mind here again")
async def cancel_release(mind_id: MindId, hm: Facade) -> dict[str, Any]:
    result: dict[str, Any] = await _sharded(hm, mind_id).cancel_release(mind_id)
    return result


@router.get("/minds/{mind_id}/snapshot", summary="A consistent copy of a released mind",
            response_class=FileResponse)
async def snapshot(mind_id: MindId, hm: Facade, background: BackgroundTasks) -> FileResponse:
    sharded = _sharded(hm, mind_id)
    folder = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="hive-mind-move-"))
    background.add_task(shutil.rmtree, folder, True)
    copy = folder / "mind.sqlite"
    await sharded.snapshot_mind(mind_id, copy)
    return FileResponse(copy, media_type="application/vnd.sqlite3")


@router.get("/minds/{mind_id}/metadata", summary="A workspace's metadata (null: personal)")
async def metadata(mind_id: MindId, hm: Facade) -> dict[str, Any]:
    return {"metadata": await _sharded(hm, mind_id).mind_metadata(mind_id)}


@router.put("/minds/{mind_id}/snapshot", summary="Admit a moved mind's copy here")
async def admit(
    mind_id: MindId, hm: Facade, file: Annotated[UploadFile, File()],
    metadata: Annotated[str | None, Form(max_length=MAX_JSON_BYTES)] = None,
) -> dict[str, Any]:
    sharded = _sharded(hm, mind_id)
    target: Path = sharded.incoming_path(mind_id)

    def write() -> None:
        with target.open("wb") as out:
            shutil.copyfileobj(file.file, out, 1 << 20)

    await asyncio.to_thread(write)
    try:
        result: dict[str, Any] = await sharded.admit_mind(mind_id, target, metadata)
    finally:
        target.unlink(missing_ok=True)
    return result


@router.post("/minds/{mind_id}/retire", summary="Put a moved mind's old file aside")
async def retire(mind_id: MindId, hm: Facade) -> dict[str, Any]:
    result: dict[str, Any] = await _sharded(hm, mind_id).retire_mind(mind_id)
    return result
