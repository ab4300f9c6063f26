"""The one exception tree of hive-mind.

::

    HiveMindError
    ├── ConfigurationError          bad settings, missing SQLite features (FTS5, sqlite-vec)
    ├── StorageError                SQLite failures translated at the boundary
    │   └── MigrationError          a schema migration failed or the file is newer than the code
    ├── ValidationError             bad caller input (also a ValueError)
    │   ├── InvalidTimestampError   not a strict ISO-8601 timestamp with a timezone
    │   ├── InvalidIdError          ids that are not safe slugs (path tricks, NUL, …)
    │   └── VectorError             wrong dimension or non-finite values
    ├── NotFoundError               unknown frame / session / entity / workspace (also a KeyError)
    ├── ConflictError               a write that contradicts existing state
    ├── EmbeddingFingerprintError   stored vectors were made by another model or dimension
    │   └── EmbeddingDimMismatchError
    ├── EmbeddingError              a provider failed (mind/embeddings/base.py)
    │   └── ProviderNotConfigured
    ├── TierError                   the tier does not include a provider (embeddings/quota.py)
    ├── EmbeddingQuotaExceededError this month's embedding quota is used up (same module)
    ├── ExternalSourceError         the optional external knowledge source
    (mind/retrieval/external.py)
    ├── ActorClosedError            a write reached a mind that is shutting down (actors/)
    └── QueueUnavailableError       Redis cannot be reached (workers/queue.py)

Job payloads that must never run (unknown kind or schema version) raise
``queue_schemas.errors.PayloadError`` (a ``ValueError``: ``queue_schemas`` depends only on
pydantic) and are dead-lettered by the workers.

Library errors (sqlite3, redis, HTTP) never escape a public method untranslated.
"""

from __future__ import annotations

from typing import ClassVar


class HiveMindError(Exception):
    """Root of every error hive-mind raises on purpose.

    Each subclass names its stable wire ``code``, the HTTP ``status`` it answers with and, for
    a refusal worth retrying after a pause, ``retry_after`` seconds: the one table of errors
    (:mod:`hive_mind.api.codes` reads it, :meth:`for_code` finds a class by its code)."""

    code: str = "error"
    status: int = 500
    retry_after: int | None = None
    _by_code: ClassVar[dict[str, type[HiveMindError]]] = {}

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "code" in cls.__dict__:
            HiveMindError._by_code.setdefault(cls.code, cls)

    @staticmethod
    def for_code(code: str) -> type[HiveMindError] | None:
        """The class raised with ``code`` among those imported so far."""
        return HiveMindError._by_code.get(code)


HiveMindError._by_code["error"] = HiveMindError


class ConfigurationError(HiveMindError):
    code = "configuration"


class StorageError(HiveMindError):
    code = "storage"


class MigrationError(StorageError):
    code = "migration"


class ValidationError(HiveMindError, ValueError):
    code = "invalid"
    status = 400


class InvalidTimestampError(ValidationError):
    code = "invalid_timestamp"
    status = 400


class InvalidIdError(ValidationError):
    code = "invalid_id"
    status = 400


class VectorError(ValidationError):
    code = "invalid_vector"
    status = 400


class NotFoundError(HiveMindError, KeyError):
    code = "not_found"
    status = 404

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "not found"


class ConflictError(HiveMindError):
    code = "conflict"
    status = 409


class EmbeddingFingerprintError(HiveMindError):
    """The mind's vectors were written by a different embedding model."""

    code = "embedding_mismatch"
    status = 409

    def __init__(self, message: str, *, stored: dict[str, object], runtime: dict[str, object]):
        super().__init__(message)
        self.stored = stored
        self.runtime = runtime


class EmbeddingDimMismatchError(EmbeddingFingerprintError):
    code = "embedding_dim_mismatch"
    status = 409
