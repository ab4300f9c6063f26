"""Dependencies shared by the route modules."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Query, Request

from hive_mind.api.codes import NotReadyError


def get_facade(request: Request) -> Any:
    facade = getattr(request.app.state, "facade", None)
    if facade is None:
        raise NotReadyError("the mind host is not open")
    return facade


Facade = Annotated[Any, Depends(get_facade)]
WorkspaceQuery = Annotated[
    str | None, Query(description="workspace id; empty = the personal mind")]
