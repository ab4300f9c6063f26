"""``create_app(settings, facade=None, bind_host=...)``: the FastAPI app of ``hive-mind serve``.

Given no facade, the app opens one (``HiveMind.open``) in its lifespan and closes it on
shutdown. Building the app applies the exposure rule (:mod:`hive_mind.api.exposure`): beyond
loopback it refuses to exist without ``api_token`` unless ``api_insecure_no_auth`` is set.

Middleware, outermost first: the Host/Origin guard (:mod:`hive_mind.api.guard`, every path:
DNS rebinding and cross-site requests never reach auth or a body), the console's session
(:mod:`hive_mind.console.sessions`: on ``/ui`` paths a signed-in session's token becomes the
bearer header), bearer auth (when
``api_token`` is set; ``/healthz``, ``/readyz`` and the API docs exempt — the page, its assets
and ``/openapi.json``, :mod:`hive_mind.api.docs_page` —, and ``/metrics`` when
``metrics_public``), the request size limit, the
last-resort 500 catcher. The MCP streamable HTTP endpoint is mounted at ``/mcp`` when
:mod:`hive_mind.mcp_server` provides it, behind the same layers.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.types import Message, Scope

from hive_mind import console
from hive_mind.api import (
    docs_page,
    errors,
    health,
    metrics_route,
    routes_browse,
    routes_cluster,
    routes_export,
    routes_jobs,
    routes_memory,
    routes_mind,
    routes_ops,
    routes_tokens,
)
from hive_mind.api.connections import BODY_TOTAL_SECONDS
from hive_mind.api.exposure import api_token, check_exposure
from hive_mind.api.guard import HostOriginMiddleware, host_policy
from hive_mind.api.mcp_mount import mount_mcp
from hive_mind.api.middleware import BearerAuthMiddleware, BodyLimitMiddleware, CatchAllMiddleware
from hive_mind.api.routes_cluster import SNAPSHOT_PATH
from hive_mind.console.sessions import ConsoleMiddleware
from hive_mind.contract import HostFacade
from hive_mind.forwarding import ForwardingContext
from hive_mind.server_reads import reads_allowed
from hive_mind.settings import Settings
from hive_mind.token_admin import TokenResolver

log = logging.getLogger(__name__)
PUBLIC_PATHS = ("/healthz", "/readyz")
VERSION = "0.1.0"


def create_app(settings: Settings, facade: HostFacade | None = None, *, mcp: bool = True,
               bind_host: str = "127.0.0.1") -> FastAPI:
    """The HTTP API over ``facade`` (opened here on startup when not given), for a server
    listening on ``bind_host``; :class:`ConfigurationError` when that address needs a token."""
    warning = check_exposure(settings, bind_host)
    if warning is not None:
        log.warning("%s", warning)
    mcp_lifespans: list[Any] = []

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if app.state.facade is None:
                from hive_mind.facade import HiveMind

                opened = await HiveMind.open_host(settings)
                stack.push_async_callback(opened.close)
                app.state.facade = opened
                stack.callback(setattr, app.state, "facade", None)
            for enter in mcp_lifespans:
                await stack.enter_async_context(enter())
            yield

    app = FastAPI(
        title="hive-mind", version=VERSION, lifespan=lifespan, docs_url=None, redoc_url=None,
        description="Persistent memory for AI agents: REST over the hive-mind facade. "
                    "Errors are `{\"error\": {\"code\", \"message\"}}` with a stable code.",
    )
    app.state.facade = facade
    app.state.settings = settings
    app.state.server_reads = reads_allowed(settings.security.server_reads, bind_host)
    errors.install(app)
    app.include_router(health.router)
    app.include_router(routes_memory.router)
    app.include_router(routes_browse.router)
    app.include_router(routes_mind.router)
    app.include_router(routes_ops.router)
    app.include_router(routes_jobs.router)
    app.include_router(routes_export.router)
    app.include_router(routes_cluster.router)
    app.include_router(routes_tokens.router)
    app.include_router(metrics_route.router)
    docs_page.install(app, PUBLIC_PATHS)
    sessions = console.install(app)
    if mcp:
        lifespan_of = mount_mcp(app, bind_host, server_reads=app.state.server_reads)
        if lifespan_of is not None:
            mcp_lifespans.append(lifespan_of)
    # add_middleware puts each new one outside the previous: the last added runs first
    app.add_middleware(CatchAllMiddleware)
    moves_in = settings.shard_map() is not None and not settings.cluster.gateway  # a shard host
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.http.max_request_bytes,
                       larger=(("PUT", SNAPSHOT_PATH, settings.cluster.max_move_bytes),) if moves_in
                       else (), idle_seconds=settings.http.body_timeout_seconds,
                       total_seconds=BODY_TOTAL_SECONDS)
    app.add_middleware(ForwardingContext)  # inside auth: the caller's credentials, checked
    token = api_token(settings)
    if token is not None:
        public = (*PUBLIC_PATHS, *docs_page.PUBLIC_PATHS, *console.PUBLIC_PATHS)
        if settings.security.metrics_public:
            public = (*public, "/metrics")
        app.add_middleware(BearerAuthMiddleware, token=token, exempt=public,
                           resolve=TokenResolver(settings))
    app.add_middleware(ConsoleMiddleware, sessions=sessions, public=console.PUBLIC_PATHS)
    app.add_middleware(HostOriginMiddleware, policy=host_policy(settings, bind_host))
    return app


async def prepare_routes(app: FastAPI) -> None:
    """Match one request against every route before the server listens. FastAPI (0.165)
    builds a route's request handling (its parameters' and body's validators) the first time
    a request is matched against it, ~3 ms a route: 27 ms of the first recall after a start.
    The request goes straight to the router (past the middleware) for a path no route holds,
    and its 404 goes nowhere. The OpenAPI schema (``/openapi.json``, the ``/docs`` page) is
    built here too: ~0.3 s of CPU that a first request for it would take from the event loop."""
    path = "/.prepare-routes"
    scope: Scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "GET", "scheme": "http", "path": path, "raw_path": path.encode(),
             "root_path": "", "query_string": b"", "headers": [], "client": None,
             "server": None}  # no "app": the router answers 404 itself instead of raising

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        pass

    await app.router(scope, receive, send)
    app.openapi()
