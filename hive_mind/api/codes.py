"""Error codes on the wire, shared by the HTTP API and its client (:mod:`hive_mind.remote`).

Every error response is ``{"error": {"code": "<stable code>", "message": "..."}}``. The code
is the ``code`` of the :class:`~mind.errors.HiveMindError` subclass that was raised (the
HTTP-level ones are defined below). Each class carries its HTTP ``status`` and ``retry_after``:
:func:`status_for` reads them for a code, and :func:`exception_for` turns a code and message
back into the matching exception class.
"""

from __future__ import annotations

import importlib
from typing import Any, Final

from mind.errors import HiveMindError, ValidationError


class UnauthorizedError(HiveMindError):
    """Missing or wrong bearer token."""

    code = "unauthorized"
    status = 401


class PayloadTooLargeError(ValidationError):
    """The request body is larger than ``HIVE_MIND_MAX_REQUEST_BYTES``."""

    code = "too_large"
    status = 413


class ServerUnavailableError(HiveMindError):
    """The client cannot reach the server (connection refused, timeout, broken response)."""

    code = "server_unavailable"
    status = 503


class InvalidHostError(HiveMindError):
    """The request's Host header names a host this server does not answer (DNS rebinding)."""

    code = "invalid_host"
    status = 421


class ForbiddenOriginError(HiveMindError):
    """A browser request from an origin that may not call this API (cross-site)."""

    code = "forbidden_origin"
    status = 403


class NotReadyError(HiveMindError):
    """The server's facade is not open (starting up or shutting down)."""

    code = "not_ready"
    status = 503
    retry_after = 2


class RemoteError(HiveMindError):
    """An error response the client has no specific class for (``internal``, ``http_4xx``…)."""

    def __init__(self, message: str, *, code: str = "error", status: int = 500) -> None:
        super().__init__(message)
        self.code = code  # per instance: whatever the server said
        self.status = status


class MethodNotAllowedError(HiveMindError):
    """The route exists, not with this HTTP method."""

    code = "method_not_allowed"
    status = 405


class RequestTimeoutError(HiveMindError):
    """The request's body stopped arriving before the body deadline."""

    code = "timeout"
    status = 408


class UpstreamError(HiveMindError):
    """Another server's reply that was not our error JSON (a proxy's page, a shard's crash)."""

    code = "upstream_error"
    status = 502


INTERNAL: Final = "internal"
UPSTREAM_ERROR: Final = UpstreamError.code
INVALID_HOST: Final = InvalidHostError.code
FORBIDDEN_ORIGIN: Final = ForbiddenOriginError.code

# The modules that define error classes: each class carries its code, HTTP status and
# Retry-After (mind.errors.HiveMindError); a client imports these to turn a code it has not
# met yet back into its class (tests/test_remote_client.py checks that none is missing).
ERROR_MODULES: Final = (
    "mind.errors", "mind.embeddings.base", "mind.embeddings.quota", "mind.retrieval.external",
    "mind.harvest.errors", "mind.storage.fencing", "actors.actor", "workers.queue",
    "hive_mind.tokens", "hive_mind.sharded", "hive_mind.server_reads", "hive_mind.harvest",
    "hive_mind.remote", "hive_mind.api.codes",
)


def error_class(code: str) -> type[HiveMindError] | None:
    """The class raised with ``code`` (its module imported when it is not yet)."""
    found = HiveMindError.for_code(code)
    if found is None and code != INTERNAL:
        for module in ERROR_MODULES:
            try:
                importlib.import_module(module)
            except ImportError:  # a module of an extra this install lacks
                continue
        found = HiveMindError.for_code(code)
    return found


def status_for(code: str) -> int:
    """The HTTP status of ``code`` (500 for a code no class has)."""
    cls = error_class(code)
    return 500 if cls is None else cls.status


def retry_after_for(code: str) -> int | None:
    """Seconds a client should wait before retrying ``code`` (503 refusals that pass)."""
    cls = error_class(code)
    return None if cls is None else cls.retry_after


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **extra}}


def exception_for(code: str, message: str, status: int,
                  details: dict[str, Any] | None = None) -> HiveMindError:
    """The exception a client raises for an error response (same class as on the server,
    carrying the response's ``details`` as attributes)."""
    cls = error_class(code)
    if cls is None:
        return RemoteError(message, code=code, status=status)
    try:
        exc = cls(message)
    except TypeError:  # classes with keyword-only extras (fingerprint errors)
        exc = cls.__new__(cls)
        Exception.__init__(exc, message)
        for attr in ("stored", "runtime"):
            setattr(exc, attr, {})
    for attr, value in (details or {}).items():  # the server's, but never our own attributes
        if attr.isidentifier() and not attr.startswith("_") and attr not in ("code", "status"):
            setattr(exc, attr, value)
    exc.status = status
    return exc
