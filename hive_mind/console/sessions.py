"""The console's sign-in: a session cookie after a token login, and the CSRF token of each
session.

A browser cannot send a bearer header from a link or a form, and the token must stay out of
URLs and of the browser's storage. So ``POST /ui/login`` takes the token once, checks it as
the API does (the admin token, or a scoped token through the same resolver), and keeps it in
this process's memory under a random session id; the browser holds only that id, in an
``HttpOnly``, ``SameSite=Strict`` cookie limited to ``/ui`` (``Secure`` behind HTTPS).

:class:`ConsoleMiddleware` sits between the Host/Origin guard and the bearer check: for a
``/ui`` path it drops any ``Authorization`` header the client sent and, for a live session,
puts the session's own token there — so the bearer layer checks it on every request (a revoked
scoped token stops working at once), binds its scope, and forwarded calls of a sharded
deployment carry it. A request without a session gets the login page (a ``GET``) or 403.

Every state-changing form carries the session's CSRF token (synchronizer pattern,
:func:`check_csrf`); the login form, which comes before any session, a double-submit token
(a random cookie and the same value in the form). Sessions live in memory: a restart of
``serve`` signs everyone out.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass, field
from typing import Final

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from hive_mind.tokens import ForbiddenError

PREFIX: Final = "/ui"
SESSION_COOKIE: Final = "hm_console"
LOGIN_COOKIE: Final = "hm_console_login"
CSRF_FIELD: Final = "csrf"
CSRF_HEADER: Final = "x-csrf-token"
SESSION_SECONDS: Final = 12 * 3600
MAX_SESSIONS: Final = 10_000
UNSAFE: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass
class ConsoleSession:
    token: str | None  # None: the server has no token (loopback without one)
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    expires: float = field(default_factory=lambda: time.monotonic() + SESSION_SECONDS)


def _key(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


class ConsoleSessions:
    """Live sessions of this process, by the SHA-256 of their cookie's value."""

    def __init__(self) -> None:
        self._live: dict[str, ConsoleSession] = {}

    def open(self, token: str | None) -> tuple[str, ConsoleSession]:
        now = time.monotonic()
        if len(self._live) >= MAX_SESSIONS:
            self._live = {k: s for k, s in self._live.items() if s.expires > now}
            while len(self._live) >= MAX_SESSIONS:  # the oldest go first
                self._live.pop(next(iter(self._live)))
        session_id = secrets.token_urlsafe(32)
        session = ConsoleSession(token)
        self._live[_key(session_id)] = session
        return session_id, session

    def find(self, session_id: str | None) -> ConsoleSession | None:
        if not session_id:
            return None
        session = self._live.get(_key(session_id))
        if session is None or session.expires <= time.monotonic():
            return None
        return session

    def close(self, session_id: str | None) -> None:
        if session_id:
            self._live.pop(_key(session_id), None)


def is_console(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def set_cookie(response: Response, request: Request, name: str, value: str,
               max_age: int | None) -> None:
    response.set_cookie(name, value, max_age=max_age, path=PREFIX, httponly=True,
                        samesite="strict", secure=request.url.scheme == "https")


def session_of(request: Request) -> ConsoleSession:
    """The request's session (the middleware let it through only with one)."""
    session = request.scope.get("state", {}).get("console")
    if not isinstance(session, ConsoleSession):
        raise ForbiddenError("sign in to the console first")
    return session


def check_csrf(request: Request, given: str | None) -> None:
    """Refuse a state-changing request whose CSRF token is not its session's."""
    expected = session_of(request).csrf
    value = given or request.headers.get(CSRF_HEADER) or ""
    if not hmac.compare_digest(value.encode(), expected.encode()):
        raise ForbiddenError("the form is out of date (CSRF check): reload the page and retry")


class ConsoleMiddleware:
    """Session cookies → the bearer header, for ``/ui`` paths (see the module docstring).
    ``public``: console paths served without a session (the login page, static assets)."""

    def __init__(self, app: ASGIApp, sessions: ConsoleSessions, public: frozenset[str]) -> None:
        self.app = app
        self.sessions = sessions
        self.public = public

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_console(scope["path"]):
            await self.app(scope, receive, send)
            return
        headers = [(k, v) for k, v in scope["headers"] if k != b"authorization"]
        if scope["path"] in self.public:
            await self.app({**scope, "headers": headers}, receive, send)
            return
        cookies = Request({**scope, "headers": headers}).cookies
        session = self.sessions.find(cookies.get(SESSION_COOKIE))
        if session is None:
            await self._sign_in_first(scope, receive, send)
            return
        if session.token is not None:
            headers.append((b"authorization", f"Bearer {session.token}".encode("latin-1")))
        state = {**scope.get("state", {}), "console": session}
        await self.app({**scope, "headers": headers, "state": state}, receive, send)

    async def _sign_in_first(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope.get("method", "GET")
        htmx = Headers(scope=scope).get("hx-request") is not None
        if method in UNSAFE or htmx:
            response: Response = Response("sign in to the console first", status_code=403,
                                          media_type="text/plain",
                                          headers={"Cache-Control": "no-store"})
        else:
            response = RedirectResponse(f"{scope.get('root_path', '')}{PREFIX}/login",
                                        status_code=303)
        await response(scope, receive, send)
