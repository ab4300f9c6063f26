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

import hmac
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager

from fastapi import FastAPI

from hive_mind.api.codes import NotReadyError
from hive_mind.api.exposure import api_token
from hive_mind.contract import HostFacade
from hive_mind.scopes import guarded
from hive_mind.token_admin import TokenResolver
from hive_mind.tokens import ADMIN, Scope

log = logging.getLogger(__name__)
MCP_PATH = "/mcp"


def caller_scope(app: FastAPI) -> Callable[[str | None], Awaitable[Scope | None]]:
    """The scope of an MCP message's ``Authorization`` header, as the REST layer resolves it
    (the SDK runs tool calls on the session's task, not the HTTP request's: the scope the auth
    layer bound to the request does not reach them, so each message binds it again)."""
    settings = app.state.settings
    token = api_token(settings)
    resolve = TokenResolver(settings)

    async def scope_of(header: str | None) -> Scope | None:
        if token is None:
            return ADMIN  # no token configured: everyone who passes the guard is the admin
        kind, _, value = (header or "").partition(" ")
        given = value.strip()
        if kind.lower() != "bearer" or not given:
            return None
        if hmac.compare_digest(given.encode("latin-1"), token.encode("ascii")):
            return ADMIN
        return await resolve(given) if given.isascii() else None

    return scope_of


def mount_mcp(app: FastAPI, bind_host: str, *, server_reads: bool = False
              ) -> Callable[[], AbstractAsyncContextManager[None]] | None:
    """Add the ``/mcp`` route; returns the lifespan to enter (None when MCP is unavailable)."""
    try:
        from mcp.server.transport_security import TransportSecuritySettings

        from hive_mind.mcp_server import build_server, streamable_http_app
    except ImportError as exc:
        log.warning("MCP over HTTP disabled: %s", exc)
        return None

    async def get_facade() -> HostFacade:
        facade: HostFacade | None = getattr(app.state, "facade", None)
        if facade is None:
            raise NotReadyError("the mind host is not open")
        return guarded(facade)  # the calling request's scope (bound per MCP message)

    server = build_server(get_facade, server_reads=server_reads)
    server.caller_scope = caller_scope(app)
    mcp_app = streamable_http_app(
        server, host=bind_host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    app.add_route(MCP_PATH, mcp_app, methods=["GET", "POST", "DELETE"],  # type: ignore[arg-type]
                  include_in_schema=False)
    lifespan: Callable[[], AbstractAsyncContextManager[None]] = mcp_app.lifespan
    return lifespan
