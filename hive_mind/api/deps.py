"""Dependencies shared by the route modules."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request

from hive_mind.api.codes import NotReadyError
from hive_mind.contract import HostFacade
from hive_mind.scopes import guarded


def get_facade(request: Request) -> HostFacade:
    facade: HostFacade | None = getattr(request.app.state, "facade", None)
    if facade is None:
        raise NotReadyError("the mind host is not open")
    return guarded(facade)  # as the caller's token may use it (hive_mind.scopes)


Facade = Annotated[HostFacade, Depends(get_facade)]
WorkspaceQuery = Annotated[
    str | None, Query(description="workspace id; empty = the personal mind")]


def get_server_reads(request: Request) -> bool:
    """May clients make this server read its disk or fetch URLs (hive_mind.server_reads)."""
    return bool(getattr(request.app.state, "server_reads", False))


ServerReads = Annotated[bool, Depends(get_server_reads)]
