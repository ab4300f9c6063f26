"""The Host/Origin guard: DNS rebinding and cross-site requests stop here, on every route
(``/mcp`` and ``/healthz`` included), before auth and before a body is read.

**Host.** A page on ``attacker.example`` whose name is re-pointed at 127.0.0.1 reaches a
loopback server with ``Host: attacker.example``; so the Host name (any port) must be one
this server answers to: the loopback names (``localhost``, ``127.0.0.1``, ``::1``), the bind
address when it is a specific IP or name, and ``HIVE_MIND_API_ALLOWED_HOSTS`` (``*`` = any).
On a wildcard bind (``0.0.0.0`` / ``::``) any Host passes only when a token is required — the
token is then what a rebinding page lacks. Refused: 421 ``invalid_host``.

**Origin.** Browsers send ``Origin`` on cross-site writes, and a ``multipart/form-data`` POST
needs no preflight; so a request carrying ``Origin`` (``null`` included) passes only when it
is same-origin (equal to the Host it was sent to), an ``http(s)://`` origin on an allowed host
name, or listed in ``HIVE_MIND_API_ALLOWED_ORIGINS``; ``Sec-Fetch-Site: cross-site`` passes
only for a listed origin. Refused: 403 ``forbidden_origin``. Requests without ``Origin``
(curl, the hive-mind client, MCP clients) pass. No CORS headers are ever sent.

Raw ASGI like :mod:`hive_mind.api.middleware`: headers only, the body stays streamed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from hive_mind.api.codes import FORBIDDEN_ORIGIN, INVALID_HOST
from hive_mind.api.errors import error_response
from hive_mind.api.exposure import api_token, is_wildcard
from hive_mind.server_reads import is_loopback
from hive_mind.settings import Settings

log = logging.getLogger(__name__)
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
_NAME = re.compile(r"^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*$")
_IPV6 = re.compile(r"^[0-9a-f:.]+(?:%[a-z0-9]+)?$")
_SCHEMES = ("http", "https")
# a policy: the named hosts, and whether any other name passes too
HostSet = tuple[frozenset[str], bool]


def host_name(authority: str) -> str | None:
    """The lower-case host name of ``host[:port]`` (``[v6]:port``, a bare v6 literal); None
    when it is not a syntactically valid name or address."""
    value = authority.strip().lower()
    if value.startswith("["):
        name, closing, port = value[1:].partition("]")
        ok = bool(closing) and _IPV6.match(name) is not None
        if not ok or (port and not (port.startswith(":") and port[1:].isdigit())):
            return None
        return name
    if value.count(":") > 1:
        return value if _IPV6.match(value) else None
    name, _, port = value.partition(":")
    name = name.removesuffix(".")
    if not _NAME.match(name) or (":" in value and not port.isdigit()):
        return None
    return name


def _names(values: Iterable[str]) -> HostSet:
    names: set[str] = set()
    wildcard = False
    for value in values:
        if value.strip() == "*":
            wildcard = True
        elif (name := host_name(value)) is not None:
            names.add(name)
        else:
            log.warning("ignoring allowed host %r: not a host name or address", value)
    return frozenset(names), wildcard


@dataclass(frozen=True)
class HostPolicy:
    """Which Host names and Origins the API answers (see the module docstring)."""

    hosts: frozenset[str]
    any_host: bool
    origins: frozenset[str]
    any_origin: bool

    def named(self, name: str) -> bool:
        return name in self.hosts or is_loopback(name)

    def host_ok(self, host: str | None) -> bool:
        name = None if host is None else host_name(host)
        return name is not None and (self.any_host or self.named(name))

    def origin_ok(self, origin: str, host: str, cross_site: bool) -> bool:
        value = origin.strip().lower()
        if self.any_origin or value in self.origins:
            return True
        scheme, sep, authority = value.partition("://")
        if cross_site or not sep or scheme not in _SCHEMES or "/" in authority:
            return False
        name = host_name(authority)
        return name is not None and (self.named(name) or authority == host.strip().lower())

    def describe(self) -> str:
        names = sorted(set(LOOPBACK_NAMES) | self.hosts)
        return "any" if self.any_host else ", ".join(names)


def host_policy(settings: Settings, bind_host: str) -> HostPolicy:
    """The policy of a server bound to ``bind_host`` under ``settings``."""
    hosts, any_host = _names(settings.security.allowed_hosts)
    if is_wildcard(bind_host):
        any_host = any_host or api_token(settings) is not None
    elif (bound := host_name(bind_host)) is not None:
        hosts |= {bound}
    origins = {o.strip().lower().rstrip("/") for o in settings.security.allowed_origins}
    return HostPolicy(hosts, any_host, frozenset(origins - {"*"}), "*" in origins)


class HostOriginMiddleware:
    """Refuse requests whose Host or Origin this server does not answer (outermost layer)."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    def _refusal(self, headers: Headers) -> tuple[str, str] | None:
        host = headers.get("host")
        if not self.policy.host_ok(host):
            shown = "no Host header" if host is None else f"Host {host[:100]!r}"
            return INVALID_HOST, (
                f"{shown} is not served here (DNS rebinding protection); allowed host names: "
                f"{self.policy.describe()}; add names with HIVE_MIND_API_ALLOWED_HOSTS")
        origin = headers.get("origin")
        cross_site = headers.get("sec-fetch-site", "").strip().lower() == "cross-site"
        if origin is None and not cross_site:
            return None
        if origin is None or not self.policy.origin_ok(origin, host or "", cross_site):
            shown = "a cross-site request" if origin is None else f"Origin {origin[:100]!r}"
            return FORBIDDEN_ORIGIN, (
                f"{shown} may not call this API (cross-site request protection); allow an "
                f"origin with HIVE_MIND_API_ALLOWED_ORIGINS")
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(Headers(scope=scope))
        if refusal is None:
            await self.app(scope, receive, send)
            return
        code, message = refusal
        log.warning("%s %s refused: %s", scope.get("method", "WS"), scope.get("path"), message)
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": code})
            return
        await error_response(code, message)(scope, receive, send)
