"""The MCP server over streamable HTTP at ``/mcp``, when :mod:`hive_mind.mcp_server` is there.

Contract used (``hive_mind.mcp_server``): ``build_server(get_facade)`` with ``get_facade`` an
async callable returning the shared facade, and ``streamable_http_app(server, host=...)``
returning an ASGI app with a ``lifespan()`` async context manager (the SDK's session manager)
that the parent app must enter. The route is added as ``/mcp`` itself (a ``Mount`` would
redirect ``/mcp`` to ``/mcp/``). The API's Host/Origin guard, auth and size limit apply to it
too, whatever the bind address; the SDK's own DNS-rebinding check is turned off here, so one
rule (:mod:`hive_mind.api.guard`) decides what ``/mcp`` and the REST routes answer (the SDK's
would refuse ``Host: localhost`` without a port, and protect loopback binds only).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from fastapi import FastAPI

from hive_mind.api.codes import NotReadyError

log = logging.getLogger(__name__)
MCP_PATH = "/mcp"


def mount_mcp(app: FastAPI, bind_host: str, *, server_reads: bool = False
              ) -> Callable[[], AbstractAsyncContextManager[None]] | None:
    """Add the ``/mcp`` route; returns the lifespan to enter (None when MCP is unavailable)."""
    try:
        from mcp.server.transport_security import TransportSecuritySettings

        from hive_mind.mcp_server import build_server, streamable_http_app
    except ImportError as exc:
        log.warning("MCP over HTTP disabled: %s", exc)
        return None

    async def get_facade() -> Any:
        facade = getattr(app.state, "facade", None)
        if facade is None:
            raise NotReadyError("the mind host is not open")
        return facade

    mcp_app = streamable_http_app(
        build_server(get_facade, server_reads=server_reads), host=bind_host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    app.add_route(MCP_PATH, mcp_app, methods=["GET", "POST", "DELETE"],  # type: ignore[arg-type]
                  include_in_schema=False)
    lifespan: Callable[[], AbstractAsyncContextManager[None]] = mcp_app.lifespan
    return lifespan
