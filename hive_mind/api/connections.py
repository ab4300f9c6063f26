"""Connections a client opens but does not finish (issue #45): bounded in number and time.

uvicorn times a connection out only between requests (keep-alive); one that sent half its
headers, or half a body, stayed open as long as the client liked — 220 such connections held a
``serve`` for 92 s and more, before any token was checked. Here:

- **headers**: a request's headers must be complete within ``header_timeout`` seconds of the
  connection opening (or of the previous response, on a kept-alive connection): else the
  connection is closed (:class:`GuardedHttpProtocol`);
- **bodies**: each chunk of a body must arrive within ``body_timeout`` seconds of the previous
  one, and a body under the ordinary request limit must be complete within
  :data:`BODY_TOTAL_SECONDS` (:class:`hive_mind.api.middleware.BodyLimitMiddleware`: 408
  ``timeout``); a moved mind's file (``cluster rebalance``, up to 64 GiB) only needs to keep
  arriving;
- **how many**: past ``max_connections`` open connections a new one is closed at once, before
  it is read (uvicorn's own concurrency limit counts requests, not half-open connections).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger(__name__)

BODY_TOTAL_SECONDS: Final = 300.0  # a body under HIVE_MIND_MAX_REQUEST_BYTES: ≥ 35 KB/s
WARN_EVERY_SECONDS: Final = 10.0


class GuardedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a header deadline and a connection cap (the class
    attributes; :func:`guarded_protocol` sets them)."""

    header_timeout: float = 10.0
    max_connections: int = 1000
    _header_timer: asyncio.TimerHandle | None = None
    _last_warning: float = float("-inf")  # refusals are logged at most every 10 s

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            now = self.loop.time()
            if now - GuardedHttpProtocol._last_warning > WARN_EVERY_SECONDS:
                GuardedHttpProtocol._last_warning = now
                log.warning("refusing connections: %d are open (HIVE_MIND_MAX_CONNECTIONS)",
                            len(self.connections) - 1)
            transport.close()
            return
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_late)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._header_timer is None:  # the next request of a kept-alive connection
            self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def guarded_protocol(header_timeout: float, max_connections: int) -> type[Any]:
    """The protocol class ``uvicorn.Config(http=...)`` takes, with these limits."""
    return type("GuardedHttpProtocol", (GuardedHttpProtocol,), {
        "header_timeout": header_timeout, "max_connections": max_connections})
