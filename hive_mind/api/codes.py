"""Error codes on the wire, shared by the HTTP API and its client (:mod:`hive_mind.remote`).

Every error response is ``{"error": {"code": "<stable code>", "message": "..."}}``. The code
is the ``code`` of the :class:`~mind.errors.HiveMindError` subclass that was raised, or one of
the HTTP-level codes below; :func:`status_for` gives the HTTP status of a code and
:func:`exception_for` turns a code and message back into the matching exception class.
"""

from __future__ import annotations

import importlib
from typing import Any, Final

from mind.errors import HiveMindError, ValidationError


class UnauthorizedError(HiveMindError):
    """Missing or wrong bearer token."""

    code = "unauthorized"


class PayloadTooLargeError(ValidationError):
    """The request body is larger than ``HIVE_MIND_MAX_REQUEST_BYTES``."""

    code = "too_large"


class ServerUnavailableError(HiveMindError):
    """The client cannot reach the server (connection refused, timeout, broken response)."""

    code = "server_unavailable"


class InvalidHostError(HiveMindError):
    """The request's Host header names a host this server does not answer (DNS rebinding)."""

    code = "invalid_host"


class ForbiddenOriginError(HiveMindError):
    """A browser request from an origin that may not call this API (cross-site)."""

    code = "forbidden_origin"


class NotReadyError(HiveMindError):
    """The server's facade is not open (starting up or shutting down)."""

    code = "not_ready"


class RemoteError(HiveMindError):
    """An error response the client has no specific class for (``internal``, ``http_4xx``…)."""

    def __init__(self, message: str, *, code: str = "error", status: int = 500) -> None:
        super().__init__(message)
        self.code = code  # per instance: whatever the server said
        self.status = status


INTERNAL: Final = "internal"
UPSTREAM_ERROR: Final = "upstream_error"  # another server's reply that was not our error JSON
INVALID_HOST: Final = "invalid_host"
FORBIDDEN_ORIGIN: Final = "forbidden_origin"

# code -> HTTP status; anything not listed is 500.
STATUS: Final[dict[str, int]] = {
    "invalid": 400, "invalid_id": 400, "invalid_timestamp": 400, "invalid_vector": 400,
    "harvest_input": 422, "unauthorized": 401, "forbidden": 403, "tier_forbidden": 403,
    "server_reads_disabled": 403, "forbidden_origin": 403, "invalid_host": 421,
    "not_found": 404,
    "method_not_allowed": 405, "conflict": 409, "embedding_mismatch": 409,
    "embedding_dim_mismatch": 409, "timeout": 408, "too_large": 413, "quota_exceeded": 429,
    "embedding_error": 502, "external_source": 502, "upstream_error": 502, "actor_closed": 503,
    "queue_unavailable": 503, "server_unavailable": 503,
    "not_ready": 503, "fenced": 503, "shard_unavailable": 503, "busy": 503,
}
# codes a client should retry after a pause (503 with ``Retry-After``: a shard restarting, or
# the hosts' shard maps converging during a move)
RETRY_AFTER: Final[dict[str, int]] = {"fenced": 5, "shard_unavailable": 5, "not_ready": 2,
                                      "busy": 10}

# code -> "module:Class" of the exception the client raises (imported only when needed).
CLASSES: Final[dict[str, str]] = {
    "error": "mind.errors:HiveMindError",
    "configuration": "mind.errors:ConfigurationError",
    "storage": "mind.errors:StorageError",
    "migration": "mind.errors:MigrationError",
    "invalid": "mind.errors:ValidationError",
    "invalid_timestamp": "mind.errors:InvalidTimestampError",
    "invalid_id": "mind.errors:InvalidIdError",
    "invalid_vector": "mind.errors:VectorError",
    "not_found": "mind.errors:NotFoundError",
    "conflict": "mind.errors:ConflictError",
    "embedding_mismatch": "mind.errors:EmbeddingFingerprintError",
    "embedding_dim_mismatch": "mind.errors:EmbeddingDimMismatchError",
    "embedding_error": "mind.embeddings.base:EmbeddingError",
    "tier_forbidden": "mind.embeddings.quota:TierError",
    "quota_exceeded": "mind.embeddings.quota:EmbeddingQuotaExceededError",
    "external_source": "mind.retrieval.external:ExternalSourceError",
    "harvest_input": "mind.harvest.errors:HarvestError",
    "actor_closed": "actors.actor:ActorClosedError",
    "queue_unavailable": "workers.queue:QueueUnavailableError",
    "unauthorized": "hive_mind.api.codes:UnauthorizedError",
    "forbidden": "hive_mind.tokens:ForbiddenError",
    "too_large": "hive_mind.api.codes:PayloadTooLargeError",
    "server_unavailable": "hive_mind.api.codes:ServerUnavailableError",
    "shard_unavailable": "hive_mind.sharded:ShardUnavailableError",
    "fenced": "mind.storage.fencing:FencedError",
    "not_ready": "hive_mind.api.codes:NotReadyError",
    "invalid_host": "hive_mind.api.codes:InvalidHostError",
    "forbidden_origin": "hive_mind.api.codes:ForbiddenOriginError",
    "server_reads_disabled": "hive_mind.server_reads:ServerReadsDisabledError",
    "busy": "hive_mind.harvest:ImportsBusyError",
}


def status_for(code: str) -> int:
    return STATUS.get(code, 500)


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **extra}}


def _resolve(code: str) -> type[HiveMindError] | None:
    target = CLASSES.get(code)
    if target is None:
        return None
    module, name = target.split(":")
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None
    return cls if isinstance(cls, type) and issubclass(cls, HiveMindError) else None


def exception_for(code: str, message: str, status: int,
                  details: dict[str, Any] | None = None) -> HiveMindError:
    """The exception a client raises for an error response (same class as on the server,
    carrying the response's ``details`` as attributes)."""
    cls = _resolve(code)
    if cls is None:
        return RemoteError(message, code=code, status=status)
    try:
        exc = cls(message)
    except TypeError:  # classes with keyword-only extras (fingerprint errors)
        exc = cls.__new__(cls)
        Exception.__init__(exc, message)
        for attr in ("stored", "runtime"):
            setattr(exc, attr, {})
        for attr, value in (details or {}).items():
            setattr(exc, attr, value)
    exc.status = status  # type: ignore[attr-defined]
    return exc
