"""Requests one host of a sharded deployment forwards to another (issue #17).

A request reaches any ``serve`` (or a stateless ``serve --gateway``); the host that does not own
the request's mind forwards it to the owner over HTTP (:mod:`hive_mind.sharded`). Two things
travel with it, carried here in context variables set by :class:`ForwardingContext` (raw ASGI,
inside the auth layer, so only an authenticated request sets them):

- the caller's ``Authorization`` header: the owner checks the caller's own credentials, never a
  credential of the forwarding host's (calls made outside a request, MCP tool calls on their
  session's task, use this host's configured token);
- ``X-Hive-Mind-Forwarded: 1`` on every forwarded request: the receiving host answers from the
  minds it owns and never forwards again, so two hosts with different shard maps cannot bounce
  a request between them (it gets a retryable ``fenced`` error instead). A client sending the
  header itself only restricts its request to the minds of the host it called.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Final

import httpx

FORWARDED_HEADER: Final = "X-Hive-Mind-Forwarded"
_FORWARDED_KEY: Final = FORWARDED_HEADER.lower().encode()
_caller_auth: ContextVar[str | None] = ContextVar("hive_mind_caller_auth", default=None)
_forwarded: ContextVar[bool] = ContextVar("hive_mind_forwarded", default=False)


def forwarded() -> bool:
    """Did the current request come from another host of the deployment?"""
    return _forwarded.get()


async def stamp(request: httpx.Request) -> None:
    """httpx request hook of the forwarding clients: the caller's auth and the hop marker."""
    auth = _caller_auth.get()
    if auth:
        request.headers["Authorization"] = auth
    request.headers[FORWARDED_HEADER] = "1"


class ForwardingContext:
    """Records, per HTTP request, what a forwarded call must carry (see the module docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        auth, hop = None, False
        for key, value in scope.get("headers", ()):
            if key == b"authorization":
                auth = value.decode("latin-1")
            elif key == _FORWARDED_KEY:
                hop = value.strip() == b"1"
        auth_token, hop_token = _caller_auth.set(auth), _forwarded.set(hop)
        try:
            await self.app(scope, receive, send)
        finally:
            _caller_auth.reset(auth_token)
            _forwarded.reset(hop_token)
