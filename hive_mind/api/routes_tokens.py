"""``/v1/tokens``: scoped tokens (:mod:`hive_mind.tokens`), the admin's to make, list and
revoke; ``GET /v1/tokens/self`` tells any valid token its own scope (how a gateway learns a
token's scope from the shards). Made or revoked on any host of a sharded deployment, a token
is installed on (removed from) every shard (:mod:`hive_mind.token_admin`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi import Path as PathParam
from pydantic import Field

from hive_mind.api.models import ERROR_RESPONSES, Body
from hive_mind.forwarding import forwarded
from hive_mind.scopes import current
from hive_mind.token_admin import TokenAdmin
from hive_mind.tokens import MAX_MINDS

router = APIRouter(prefix="/v1/tokens", tags=["tokens"], responses=ERROR_RESPONSES)
TokenId = Annotated[str, PathParam(pattern="^[0-9a-f]{16}$")]


class TokenRequest(Body):
    workspaces: list[Annotated[str, Field(max_length=80)]] = Field(
        min_length=1, max_length=MAX_MINDS,
        description="the workspace ids it opens (`personal`: the personal mind)")
    read_only: bool = Field(default=False, description="reads only")
    expires: str | None = Field(default=None, max_length=64,
                                description="`30d`, `12h`, `90m` from now, or an ISO time")
    label: str | None = Field(default=None, max_length=200, description="display only")


class InstalledToken(Body):
    id: str = Field(pattern="^[0-9a-f]{16}$")
    hash: str = Field(pattern="^[0-9a-f]{64}$")
    minds: list[Annotated[str, Field(max_length=80)]] = Field(min_length=1,
                                                               max_length=MAX_MINDS)
    read_only: bool = False
    expires: str | None = Field(default=None, max_length=64)
    created: str = Field(default="", max_length=64)
    label: str | None = Field(default=None, max_length=200)


def _admin(request: Request) -> TokenAdmin:
    admin = TokenAdmin(request.app.state.settings, request.headers.get("authorization"))
    if forwarded():  # installed by another host, which reaches the others itself
        admin.peers = []
    return admin


@router.get("/self", summary="This request's token: its scope")
async def whoami() -> dict[str, Any]:
    return current().as_dict()


@router.post("", status_code=201, summary="Make a scoped token (shown once)")
async def create(body: TokenRequest, request: Request) -> dict[str, Any]:
    return await _admin(request).create(body.workspaces, read_only=body.read_only,
                                        expires=body.expires, label=body.label)


@router.get("", summary="The scoped tokens (never the tokens themselves)")
async def listing(request: Request) -> dict[str, Any]:
    return {"tokens": await _admin(request).listing()}


@router.put("/{token_id}", summary="Install a token made on another host of the deployment")
async def install(token_id: TokenId, body: InstalledToken, request: Request) -> dict[str, Any]:
    return _admin(request).install({**body.model_dump(), "id": token_id})


@router.delete("/{token_id}", summary="Revoke a scoped token")
async def revoke(token_id: TokenId, request: Request) -> dict[str, Any]:
    return await _admin(request).revoke(token_id)
