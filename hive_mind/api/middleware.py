"""Raw ASGI middleware: bearer-token auth, the request size limit, and the last-resort error
catcher. Raw ASGI (not ``BaseHTTPMiddleware``) so streamed bodies stay streamed and the size
limit sees every chunk of a chunked upload."""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Final

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Send
from starlette.types import Scope as Scope_

from hive_mind.api.codes import INTERNAL, status_for
from hive_mind.api.errors import error_response
from hive_mind.scopes import bound
from hive_mind.tokens import ADMIN
from hive_mind.tokens import Scope as TokenScope

log = logging.getLogger(__name__)


async def _send_error(scope: Scope_, receive: Receive, send: Send, code: str, message: str,
                      headers: dict[str, str] | None = None) -> None:
    response = error_response(code, message, status_for(code), headers=headers)
    await response(scope, receive, send)


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` once a body passes the limit; FastAPI re-raises HTTPExceptions
    from body parsing, so its handler answers 413 (or this middleware does)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body larger than {limit} bytes")


class BodyTimeout(HTTPException):
    """Raised from ``receive`` when a body stops arriving (:mod:`hive_mind.api.connections`)."""

    def __init__(self, what: str) -> None:
        super().__init__(408, what)


class BodyLimitMiddleware:
    """413 for a body over ``max_bytes``: by ``Content-Length`` before reading anything, and by
    counting the bytes actually received (chunked bodies, lying clients). 408 for a body whose
    next chunk takes longer than ``idle_seconds``, or that takes longer than ``total_seconds``
    in all (not for the ``larger`` routes: a mind file of gigabytes only has to keep coming)."""

    def __init__(self, app: ASGIApp, max_bytes: int,
                 larger: tuple[tuple[str, re.Pattern[str], int], ...] = (),
                 idle_seconds: float = 30.0, total_seconds: float = 300.0) -> None:
        self.app = app
        self.default_bytes = max_bytes
        self.larger = larger  # (method, whole path, limit): mind files moved between shards
        self.idle_seconds = idle_seconds
        self.total_seconds = total_seconds

    async def __call__(self, scope: Scope_, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path, method = scope.get("path", ""), scope.get("method", "")
        limit = next((n for verb, pattern, n in self.larger
                      if verb == method and pattern.fullmatch(path)), None)
        total = self.total_seconds if limit is None else None
        await self._limited(scope, receive, send, limit or self.default_bytes, total)

    async def _limited(self, scope: Scope_, receive: Receive, send: Send, limit: int,
                       total: float | None) -> None:
        declared = Headers(scope=scope).get("content-length")
        if declared is not None:
            try:
                length = int(declared)
            except ValueError:
                await _send_error(scope, receive, send, "invalid", "bad Content-Length header")
                return
            if length > limit:
                await _send_error(scope, receive, send, "too_large",
                                  f"request body larger than {limit} bytes")
                return
        received, complete = 0, False
        tracker = _ResponseTracker(send)
        loop = asyncio.get_running_loop()
        deadline = None if total is None else loop.time() + total

        async def limited_receive() -> Message:
            nonlocal received, complete
            if complete:  # the body is in: what follows is a wait for the disconnect
                return await receive()
            wait = self.idle_seconds if deadline is None else max(
                0.0, min(self.idle_seconds, deadline - loop.time()))
            try:
                message = await asyncio.wait_for(receive(), wait)
            except TimeoutError:
                raise BodyTimeout(f"the request body stopped arriving ({wait:.0f} s)") from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                complete = not message.get("more_body", False)
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        try:
            await self.app(scope, limited_receive, tracker.send)
        except (BodyTooLarge, BodyTimeout) as exc:
            if tracker.started:
                raise
            code = "too_large" if isinstance(exc, BodyTooLarge) else "timeout"
            await _send_error(scope, receive, send, code, str(exc.detail),
                              headers={"Connection": "close"})


class _ResponseTracker:
    """Wraps ``send`` and remembers whether the response has started (then an error can no
    longer be sent as a response of its own)."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.started = False

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        await self._send(message)


Resolver = Callable[[str], Awaitable[TokenScope | None]]
ADMIN_PATHS: Final = ("/metrics", "/v1/status", "/v1/jobs", "/v1/cluster", "/v1/tokens")
SELF_PATH: Final = "/v1/tokens/self"


class BearerAuthMiddleware:
    """``Authorization: Bearer <token>`` on every path but ``exempt`` (constant-time compare
    of the header's raw bytes with the token's; settings keep tokens printable ASCII, so the
    two encodings agree). A request with more than one ``Authorization`` header is refused.

    The configured token is the admin's; another one is looked up by ``resolve`` (a scoped
    token, :mod:`hive_mind.tokens`): its scope is bound to the request
    (:func:`hive_mind.scopes.bound`) and :data:`ADMIN_PATHS` answer it 403."""

    def __init__(self, app: ASGIApp, token: str, exempt: Iterable[str] = (),
                 resolve: Resolver | None = None) -> None:
        self.app = app
        self.token = token.encode("ascii")
        self.exempt = frozenset(exempt)
        self.resolve = resolve

    def _bearer(self, scope: Scope_) -> tuple[bytes, bool] | None:
        """The bearer token's raw bytes and whether it is the admin's (None: missing, not a
        bearer, or several headers)."""
        given_all = Headers(scope=scope).getlist("authorization")
        if len(given_all) > 1:  # which one counts would differ between this check and a
            return None         # forwarded call's: refused, never guessed
        header = given_all[0] if given_all else ""
        kind, _, value = header.partition(" ")
        given = value.strip().encode("latin-1")  # how Starlette decoded the raw bytes
        # compare even on a wrong scheme so timing does not tell which part was wrong
        matches = hmac.compare_digest(given, self.token)
        return (given, matches) if kind.lower() == "bearer" and given else None

    async def _scope(self, scope: Scope_) -> TokenScope | None:
        found = self._bearer(scope)
        if found is None:
            return None
        given, admin = found
        if admin:
            return ADMIN
        if self.resolve is None or not given.isascii():
            return None
        return await self.resolve(given.decode("ascii"))

    async def __call__(self, scope: Scope_, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.exempt:
            await self.app(scope, receive, send)
            return
        caller = await self._scope(scope)
        if caller is None:
            await _send_error(scope, receive, send, "unauthorized",
                              "missing or invalid bearer token",
                              headers={"WWW-Authenticate": 'Bearer realm="hive-mind"'})
            return
        path = scope["path"]
        if not caller.admin and path != SELF_PATH and path.startswith(ADMIN_PATHS):
            await _send_error(scope, receive, send, "forbidden",
                              "this token is scoped to workspaces: this takes the admin token")
            return
        with bound(caller):
            await self.app(scope, receive, send)


class CatchAllMiddleware:
    """An unexpected exception becomes ``500 internal`` (logged once, no traceback leaked)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope_, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        tracker = _ResponseTracker(send)
        try:
            await self.app(scope, receive, tracker.send)
        except (BodyTooLarge, BodyTimeout):
            raise
        except Exception:
            log.exception("%s %s: unexpected error", scope.get("method"), scope.get("path"))
            if tracker.started:
                return
            await error_response(INTERNAL, "internal server error", 500)(scope, receive, send)
