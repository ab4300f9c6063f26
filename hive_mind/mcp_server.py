"""The hive-mind MCP server (official MCP Python SDK, ``MCPServer``).

- :func:`build_server` — the server with the 20 tools (:mod:`hive_mind.mcp_tools`) and the
  resources ``memory://personal/stats``, ``memory://identity``, ``memory://awareness`` and the
  template ``memory://workspace/{id}`` (all ``application/json``).
- :func:`run_stdio` — blocking entry point of ``hive-mind mcp`` / ``python -m
  hive_mind.mcp_server``: opens one facade lazily, runs the nightly maintenance in embedded
  mode (:mod:`hive_mind.schedule`), serves stdio; when the client closes stdin
  it waits (at most ``DRAIN_SECONDS``, cut short by SIGTERM/SIGINT) for the indexing its own
  saves caused, so the next reader finds them indexed, then closes the facade. Work left at
  the bound stays in the mind's outbox and is re-queued on the next open.
  Logs go to stderr; the SDK points fd 1 at stderr while serving, so stray prints cannot
  corrupt the protocol on stdout.
- :func:`streamable_http_app` — an ASGI app serving the same server over streamable HTTP, for
  mounting inside the HTTP API at ``/mcp`` (see its docstring for the lifespan contract).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import pydantic
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, InputRequiredResult
from starlette.types import Receive, Scope, Send

from hive_mind.contract import HostFacade, MindFacade
from hive_mind.forwarding import forwarded_as
from hive_mind.mcp_tools import (
    TOOL_NAMES,
    GetFacade,
    dumps,
    error_result,
    error_text,
    register_tools,
    validation_text,
)
from hive_mind.schedule import start_schedule
from hive_mind.scopes import bound
from hive_mind.settings import Settings, load_settings
from hive_mind.shapes import AwarenessShape, JsonObject, WorkspaceView
from mind.errors import HiveMindError, InvalidIdError, NotFoundError

__all__ = ["TOOL_NAMES", "LazyFacade", "McpHttpApp", "build_server", "run_stdio",
           "streamable_http_app"]

log = logging.getLogger(__name__)

SERVER_NAME = "hive-mind-memory"
# MCP clients close stdin, wait ~2 s, then SIGTERM (the SDK's stdio client); a signal ends the
# drain at once, so a client that waits longer gets everything indexed up to this bound
DRAIN_SECONDS = 30.0
INSTRUCTIONS = (
    "hive-mind is your persistent memory across conversations. Call recall_memory before "
    "answering questions about the user, their projects or earlier decisions; call save_memory "
    "for facts worth keeping (one self-contained statement per call). Entities and relations "
    "form a knowledge graph (search_entities, save_entity, create_relation). Workspaces are "
    "separate memory spaces: create one with create_workspace before passing its id as "
    "`workspace`; omit `workspace` for the personal mind."
)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("hive-mind")
    except Exception:  # not installed as a distribution
        return "0.1.0"


CallerScope = Callable[[str | None], Awaitable[Any]]


class HiveMindMCPServer(MCPServer[Any]):
    """``MCPServer`` whose argument-validation failures read as one line per bad field.

    Over HTTP each message is handled as its own request's caller (``caller_scope``, set by
    :func:`hive_mind.api.mcp_mount.mount_mcp`): the SDK runs it on the session's task, where the
    HTTP request's context is not, so the message's ``Authorization`` is read again — its
    scope bound (:mod:`hive_mind.scopes`), and forwarded calls carry it, never this host's."""

    caller_scope: CallerScope | None = None

    async def _as_caller(self, context: Context[Any, Any] | None,
                         call: Callable[[], Awaitable[Any]]) -> Any:
        if self.caller_scope is None:  # stdio: the local user
            return await call()
        request = None if context is None else getattr(
            context.request_context, "request", None)
        auth = None if request is None else request.headers.get("authorization")
        scope = await self.caller_scope(auth)
        if scope is None:
            raise ToolError("unauthorized: missing or invalid bearer token")
        with bound(scope), forwarded_as(auth):
            return await call()

    async def read_resource(self, uri: Any, context: Context[Any, Any] | None = None) -> Any:
        return await self._as_caller(context, lambda: super(
            HiveMindMCPServer, self).read_resource(uri, context))

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None
                        ) -> CallToolResult | InputRequiredResult:
        try:
            result: CallToolResult | InputRequiredResult = await self._as_caller(
                context, lambda: super(HiveMindMCPServer, self).call_tool(
                    name, arguments, context))
            return result
        except ToolError as exc:
            if isinstance(exc.__cause__, pydantic.ValidationError):
                log.info("tool %s: bad arguments", name)
                return error_result(validation_text(exc.__cause__, name))
            if str(exc).startswith("Unknown tool"):
                return error_result(f"not_found: {exc}")
            raise


class LazyFacade:
    """An async callable that opens one :class:`~hive_mind.facade.HiveMind` on first use and
    shares it (``get_facade`` for :func:`build_server`); :meth:`close` closes it."""

    def __init__(self, settings: Settings | None = None) -> None:
        self._settings = settings
        self._mind: MindFacade | None = None
        self._lock = asyncio.Lock()

    async def __call__(self) -> MindFacade:
        if self._mind is None:
            async with self._lock:
                if self._mind is None:
                    from hive_mind.facade import HiveMind

                    self._mind = await HiveMind.open(self._settings or load_settings())
        return self._mind

    async def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for the indexing this process caused (True: all done)."""
        if self._mind is None:
            return True
        return await self._mind.wait_idle(timeout)

    async def close(self) -> None:
        mind, self._mind = self._mind, None
        if mind is not None:
            await mind.close()


def _resource_error(exc: HiveMindError) -> ResourceError:
    if isinstance(exc, NotFoundError | InvalidIdError):
        return ResourceNotFoundError(error_text(exc))
    return ResourceError(error_text(exc))


def build_server(get_facade: GetFacade, *, server_reads: bool = True) -> HiveMindMCPServer:
    """The MCP server; ``get_facade`` is an async callable returning the shared facade.
    ``server_reads`` False: tools refuse file paths and URLs (served over HTTP to remote
    clients, :mod:`hive_mind.server_reads`)."""
    server = HiveMindMCPServer(SERVER_NAME, version=_version(), instructions=INSTRUCTIONS,
                               log_level="WARNING")
    register_tools(server, get_facade, server_reads=server_reads)

    async def guarded(fn: Callable[[MindFacade], Awaitable[object]]) -> str:
        try:
            return dumps(await fn(await get_facade()))
        except HiveMindError as exc:
            raise _resource_error(exc) from None

    @server.resource("memory://personal/stats", name="personal_stats",
                     mime_type="application/json",
                     description="Personal mind statistics: frames, knowledge graph, embedder.")
    async def personal_stats() -> str:
        async def read(mind: MindFacade) -> JsonObject:
            stats = await mind.stats()
            return {
                "frames": {"total": stats["frames"], "by_type": stats["by_type"],
                           "by_importance": stats["by_importance"],
                           "pending_index": stats["pending_index"],
                           "vectors": stats["vectors"]},
                "knowledge_graph": {"entities": stats["entities"],
                                    "entity_types": stats["entity_types"]},
                "embedding": await _embedding(mind),
            }
        return await guarded(read)

    @server.resource("memory://identity", name="identity", mime_type="application/json",
                     description="Who the user/agent is (without the system prompt).")
    async def identity() -> str:
        async def read(mind: MindFacade) -> JsonObject:
            row = dict(await mind.get_identity())
            row.pop("system_prompt", None)
            return row
        return await guarded(read)

    @server.resource("memory://awareness", name="awareness", mime_type="application/json",
                     description="Live awareness items (tasks, actions, pending, flags).")
    async def awareness() -> str:
        async def read(mind: MindFacade) -> list[AwarenessShape]:
            return await mind.get_awareness()
        return await guarded(read)

    @server.resource("memory://workspace/{id}", name="workspace", mime_type="application/json",
                     description="One workspace: its metadata and statistics.")
    async def workspace(id: str) -> str:
        async def read(mind: MindFacade) -> WorkspaceView:
            return await mind.get_workspace(id)
        return await guarded(read)

    return server


async def _embedding(mind: MindFacade) -> JsonObject:
    runtime = mind.runtime if isinstance(mind, HostFacade) else None
    if runtime is None:  # a client, or a gateway: no embedder here
        return {"provider": mind.settings.embedding.provider, "model": None,
                "dimensions": None, "available_providers": []}
    status = (await runtime.embedder_ready()).status()
    return {k: status.get(k) for k in
            ("provider", "model", "dimensions", "degraded", "available_providers")}


# -- stdio ------------------------------------------------------------------------------------

def run_stdio(settings: Settings | None = None, *, log_level: str = "WARNING",
              drain_seconds: float = DRAIN_SECONDS) -> None:
    """Serve MCP over stdin/stdout until the client closes stdin (blocking), then drain."""
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, log_level.upper(), 30),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = settings or load_settings()
    facade = LazyFacade(settings)
    server = build_server(facade)

    async def main() -> None:
        schedule = start_schedule(settings, facade)  # the nightly maintenance (embedded)
        try:
            async with anyio.create_task_group() as tg:
                if sys.platform != "win32":
                    tg.start_soon(_stop_on_signal, tg.cancel_scope)
                await server.run_stdio_async()  # returns when the client closes stdin
                tg.cancel_scope.cancel()
            await _drain(facade, drain_seconds)
        finally:
            with anyio.CancelScope(shield=True):
                if schedule is not None:
                    await schedule.stop()
                await facade.close()

    anyio.run(main)


async def _drain(facade: LazyFacade, timeout: float) -> None:
    """The bounded wait of a clean exit; a signal meanwhile stops it (the outbox keeps the
    rest, re-queued on the next open)."""
    done = False
    async with anyio.create_task_group() as tg:
        if sys.platform != "win32":
            tg.start_soon(_stop_on_signal, tg.cancel_scope)
        done = await facade.drain(timeout)
        tg.cancel_scope.cancel()
    if not done:
        log.warning("exiting with indexing still pending (bound %.0f s or a signal); it is "
                    "re-queued when the mind is next opened", timeout)


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    """SIGTERM/SIGINT end the server cleanly, so the facade is closed (minds flushed)."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            log.info("signal %s: stopping the MCP server", signum)
            scope.cancel()
            return


# -- streamable HTTP --------------------------------------------------------------------------

class McpHttpApp:
    """ASGI app serving one MCP server over streamable HTTP at whatever path routes to it.

    Mount it with ``app.add_route("/mcp", mcp_app, methods=["GET", "POST", "DELETE"])``
    (a Starlette ``Mount`` would redirect ``/mcp`` to ``/mcp/``, and MCP clients do not follow
    redirects). The SDK's session manager needs a running task group: enter
    ``async with mcp_app.lifespan():`` in the parent app's lifespan. Used standalone (e.g.
    ``uvicorn``) the ASGI ``lifespan`` scope does that itself.
    """

    def __init__(self, server: MCPServer[Any], manager: Any) -> None:
        self.server = server
        self.session_manager = manager

    def lifespan(self) -> AbstractAsyncContextManager[None]:
        manager_run: AbstractAsyncContextManager[None] = self.session_manager.run()
        return manager_run

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _serve_lifespan(self, receive, send)
            return
        await self.session_manager.handle_request(scope, receive, send)


async def _serve_lifespan(app: McpHttpApp, receive: Receive, send: Send) -> None:
    await receive()  # lifespan.startup
    running = app.lifespan()
    try:
        await running.__aenter__()
    except Exception as exc:
        await send({"type": "lifespan.startup.failed", "message": repr(exc)})
        return
    await send({"type": "lifespan.startup.complete"})
    await receive()  # lifespan.shutdown
    await running.__aexit__(None, None, None)
    await send({"type": "lifespan.shutdown.complete"})


def streamable_http_app(
    server: MCPServer[Any], *, stateless: bool = True, json_response: bool = True,
    host: str = "127.0.0.1", transport_security: TransportSecuritySettings | None = None,
) -> McpHttpApp:
    """An ASGI app for ``server`` over streamable HTTP (see :class:`McpHttpApp` for mounting).

    ``stateless``/``json_response`` (default on): every POST is answered with plain JSON and no
    session state, so it works behind any proxy and with simple HTTP clients. When ``host`` is
    a loopback address and no ``transport_security`` is given, the SDK turns DNS-rebinding
    protection on (Host/Origin must be localhost with a port); pass
    ``TransportSecuritySettings(enable_dns_rebinding_protection=False)`` when the parent app
    does its own checks (e.g. bearer-token auth).
    """
    server.streamable_http_app(stateless_http=stateless, json_response=json_response,
                               host=host, transport_security=transport_security)
    return McpHttpApp(server, server.session_manager)


if __name__ == "__main__":
    run_stdio()
