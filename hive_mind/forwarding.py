"""Requests one host of a sharded deployment forwards to another (issue #17).

A request reaches any ``serve`` (or a stateless ``serve --gateway``); the host that does not own
the request's mind forwards it to the owner over HTTP (:mod:`hive_mind.sharded`). Two things
travel with it, carried here in context variables set by :class:`ForwardingContext` (raw ASGI,
inside the auth layer, so only an authenticated request sets them):

- the caller's ``Authorization`` header: the owner checks the caller's own credentials, never a
  credential of the forwarding host's (calls made outside a request, MCP tool calls on their
  session's task, use this host's configured token);
- ``X-Hive-Mind-Forwarded: <hops>`` on every forwarded request: a host that received a forwarded
  request answers a call over every mind from its own minds only, and forwards a one-mind call
  at most once more (a gateway → the old owner → where the mind moved, during a rebalance), so
  two hosts with different shard maps cannot bounce a request between them (it gets a
  retryable ``fenced`` error instead). A client sending the header itself only restricts its
  request to the host it called.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

import httpx

FORWARDED_HEADER: Final = "X-Hive-Mind-Forwarded"
_FORWARDED_KEY: Final = FORWARDED_HEADER.lower().encode()
_caller_auth: ContextVar[str | None] = ContextVar("hive_mind_caller_auth", default=None)
_hops: ContextVar[int] = ContextVar("hive_mind_forwarded_hops", default=0)
MAX_HOPS: Final = 2


def forwarded() -> bool:
    """Did the current request come from another host of the deployment?"""
    return _hops.get() > 0


def may_forward() -> bool:
    """May this host forward the current one-mind call (it has not travelled too far)?"""
    return _hops.get() < MAX_HOPS


async def stamp(request: httpx.Request) -> None:
    """httpx request hook of the forwarding clients: the caller's auth and the hop count."""
    auth = _caller_auth.get()
    if auth:
        request.headers["Authorization"] = auth
    request.headers[FORWARDED_HEADER] = str(_hops.get() + 1)


@contextmanager
def forwarded_as(auth: str | None) -> Iterator[None]:
    """Calls forwarded inside this block carry ``auth`` (an MCP message's caller: the SDK runs
    it outside the HTTP request that :class:`ForwardingContext` saw)."""
    token = _caller_auth.set(auth)
    try:
        yield
    finally:
        _caller_auth.reset(token)


class ForwardingContext:
    """Records, per HTTP request, what a forwarded call must carry (see the module docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        auth, hops, seen = None, 0, 0
        for key, value in scope.get("headers", ()):
            if key == b"authorization":
                seen += 1  # several: none is forwarded (auth, when on, refused them already)
                auth = value.decode("latin-1") if seen == 1 else None
            elif key == _FORWARDED_KEY:
                text = value.strip()
                hops = min(int(text), MAX_HOPS) if text.isdigit() and len(text) < 4 else MAX_HOPS
        auth_token, hop_token = _caller_auth.set(auth), _hops.set(hops)
        try:
            await self.app(scope, receive, send)
        finally:
            _caller_auth.reset(auth_token)
            _hops.reset(hop_token)
