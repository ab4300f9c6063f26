"""One guarded GET for the url adapter: vetted connections, redirects by hand, one deadline.

:func:`fetch` is ``httpx`` with three changes.

- **Connections go through** :class:`_GuardedBackend`: it resolves the host itself, vets every
  address with :mod:`mind.harvest.netguard` (loopback, private, link-local, … refused unless
  the policy allows them) and connects to the vetted IP, while the request keeps the name for
  its ``Host`` header and for TLS (SNI, certificate check). What was checked is what is
  connected to, so DNS rebinding gains nothing. httpx 0.28 takes no network backend, so
  :class:`_GuardedTransport` replaces its connection pool (the loopback test fails loudly if a
  later httpx stops honouring that). Proxies and ``.netrc`` from the environment are ignored
  (``trust_env=False``): a proxy would connect where the guard cannot see.
- **Redirects are followed here**, at most :data:`MAX_REDIRECTS` hops, each hop ``http`` or
  ``https`` only and vetted like the first (a numeric host before any connection, a name at
  connect time).
- **One deadline** for the whole fetch (lookup, connect, TLS, every redirect, the body):
  each socket operation may wait only for what is left of it, so a server dripping bytes is
  cut at the deadline, not after a per-read timeout per byte.

Errors are :class:`HarvestError` naming the URL without its credentials or query values
(:func:`mind.redact.mask_url`); the body is capped at ``max_bytes`` while streaming.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Final, NoReturn
from urllib.parse import urldefrag, urlsplit

import httpcore
import httpx

from mind.harvest.errors import HarvestError
from mind.harvest.netguard import (
    BlockedAddressError,
    FetchPolicy,
    check_literal,
    default_policy,
    vetted_addresses,
)
from mind.redact import mask_url
from mind.timeutil import format_ts

USER_AGENT: Final = "hive-mind/0.1 (knowledge harvester)"
TIMEOUT_SECONDS: Final = 15.0
MAX_RESPONSE_BYTES: Final = 20 * 1024**2
MAX_REDIRECTS: Final = 5
_ACCEPT: Final = "text/html, text/plain, application/pdf, */*"


@dataclass(frozen=True, slots=True)
class Fetched:
    url: str  # as requested (fragment dropped)
    final_url: str  # after redirects
    content_type: str  # lower-case media type without parameters; "" when absent
    charset: str | None
    body: bytes
    last_modified: str | None  # house ISO


def check_url(url: str, policy: FetchPolicy | None = None) -> str:
    """The URL without its fragment; only absolute http(s) URLs with a host pass, and a host
    written as a refused address is refused here, before any lookup or connection."""
    shown = mask_url(url.strip())
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError as exc:
        raise HarvestError(f"not a valid URL ({exc})", path=shown) from None
    if parts.scheme.lower() not in ("http", "https"):
        raise HarvestError(
            f"unsupported URL scheme {parts.scheme or '(none)'!r}: only http and https",
            path=shown,
        )
    if not host:
        raise HarvestError("URL has no host", path=shown)
    try:
        check_literal(host, policy)
    except HarvestError as exc:
        raise HarvestError(exc.reason, path=shown) from None
    return urldefrag(url.strip()).url


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ends = time.monotonic() + seconds

    def error(self, shown: str) -> HarvestError:
        return HarvestError(f"took longer than {self.seconds:g} s (the limit for the whole "
                            f"fetch: connect, redirects and body)", path=shown)

    def left(self, timeout: float | None, late: type[httpcore.TimeoutException]) -> float:
        """The time a socket operation may take: ``timeout`` cut to what is left."""
        remaining = self.ends - time.monotonic()
        if remaining <= 0:
            raise late(f"the {self.seconds:g} s deadline has passed")
        return remaining if timeout is None else min(timeout, remaining)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, deadline: _Deadline) -> None:
        self._inner, self._deadline = inner, deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._deadline.left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._deadline.left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname,
                                      self._deadline.left(timeout, httpcore.ConnectTimeout))
        return _DeadlineStream(inner, self._deadline)

    def get_extra_info(self, info: str) -> object:
        return self._inner.get_extra_info(info)


class _GuardedBackend(httpcore.SyncBackend):
    def __init__(self, policy: FetchPolicy, deadline: _Deadline) -> None:
        self._policy, self._deadline = policy, deadline

    def _resolve(self, host: str, port: int) -> list[str]:
        """Vetted addresses of ``host``; the lookup may take only what is left of the deadline
        (``getaddrinfo`` cannot be interrupted, so it runs on a daemon thread)."""
        box: list[list[str] | Exception] = []

        def lookup() -> None:
            try:
                box.append(vetted_addresses(host, port, self._policy))
            except Exception as exc:  # handed to the caller below
                box.append(exc)

        worker = threading.Thread(target=lookup, name="hive-mind-resolve", daemon=True)
        worker.start()
        worker.join(self._deadline.left(None, httpcore.ConnectTimeout))
        if not box:
            raise httpcore.ConnectTimeout(f"looking up {host} outlasted the deadline")
        found = box[0]
        if isinstance(found, OSError):
            raise httpcore.ConnectError(f"cannot resolve {host}: {found}") from found
        if isinstance(found, Exception):
            raise found
        return found

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
                    ) -> httpcore.NetworkStream:
        failure: httpcore.ConnectError | None = None
        for address in self._resolve(host, port):
            try:
                stream = super().connect_tcp(
                    address, port, self._deadline.left(timeout, httpcore.ConnectTimeout),
                    local_address, socket_options)
            except httpcore.ConnectError as exc:
                failure = exc
                continue
            return _DeadlineStream(stream, self._deadline)
        assert failure is not None  # _resolve returns at least one address
        raise failure


class _GuardedTransport(httpx.HTTPTransport):
    def __init__(self, policy: FetchPolicy, deadline: _Deadline) -> None:
        super().__init__(trust_env=False)
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            network_backend=_GuardedBackend(policy, deadline))


def _last_modified(value: str | None) -> str | None:
    if not value:
        return None
    try:
        return format_ts(parsedate_to_datetime(value))
    except (TypeError, ValueError, IndexError):
        return None


def _read(response: httpx.Response, url: str, shown: str, max_bytes: int,
          deadline: _Deadline) -> Fetched:
    if not response.is_success:
        raise HarvestError(
            f"HTTP {response.status_code} {response.reason_phrase}".rstrip(), path=shown)
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise HarvestError(
            f"response is {int(declared):,} bytes; the limit is {max_bytes:,}", path=shown)
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise HarvestError(f"response exceeds the limit of {max_bytes:,} bytes",
                               path=shown, position=f"byte {size:,}")
        if time.monotonic() > deadline.ends:  # a dripping body ends at the deadline
            raise deadline.error(shown)
        chunks.append(chunk)
    media = response.headers.get("content-type", "").split(";")[0].strip().lower()
    return Fetched(
        url=url, final_url=str(response.url), content_type=media,
        charset=response.charset_encoding, body=b"".join(chunks),
        last_modified=_last_modified(response.headers.get("last-modified")),
    )


def _refuse_hop(hop: int, target: str, exc: HarvestError, shown: str) -> NoReturn:
    raise HarvestError(f"redirect {hop} to {mask_url(target)}: {exc.reason}",
                       path=shown) from None


def fetch(url: str, *, max_bytes: int = MAX_RESPONSE_BYTES,
          deadline: float = TIMEOUT_SECONDS, policy: FetchPolicy | None = None) -> Fetched:
    """GET ``url`` within ``deadline`` seconds in all, following at most
    :data:`MAX_REDIRECTS` redirects; ``policy`` defaults to :func:`netguard.default_policy`."""
    policy = policy or default_policy()
    url = check_url(url, policy)
    shown = mask_url(url)
    clock = _Deadline(deadline)
    current = url
    headers = {"User-Agent": USER_AGENT, "Accept": _ACCEPT}
    try:
        with httpx.Client(transport=_GuardedTransport(policy, clock), headers=headers,
                          timeout=deadline, follow_redirects=False, trust_env=False) as client:
            for hop in range(MAX_REDIRECTS + 1):
                try:
                    with client.stream("GET", current) as response:
                        if not response.is_redirect:
                            return _read(response, url, shown, max_bytes, clock)
                        target = str(response.url.join(response.headers["location"]))
                except BlockedAddressError as exc:
                    if hop:
                        _refuse_hop(hop, current, exc, shown)
                    raise HarvestError(exc.reason, path=shown) from None
                try:
                    current = check_url(target, policy)
                except HarvestError as exc:
                    _refuse_hop(hop + 1, target, exc, shown)
            raise HarvestError(f"more than {MAX_REDIRECTS} redirects", path=shown)
    except httpx.TimeoutException as exc:
        raise clock.error(shown) from exc
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise HarvestError(f"fetch failed ({type(exc).__name__}: {exc})", path=shown) from exc
