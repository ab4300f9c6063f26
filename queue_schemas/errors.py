"""Errors of the queue schemas (all are ``ValueError``: a payload that is not acceptable).

::

    PayloadError                 bytes or a dict that is not a valid hive-mind payload
    ├── SchemaVersionError       a job/op version this process cannot read (too new / too old)
    └── UnknownKindError         a ``kind`` no model is registered for

``queue_schemas`` depends only on pydantic, so these do not derive from ``HiveMindError``;
workers and actors translate them at their boundary (typically: dead-letter the job).
"""

from __future__ import annotations


class PayloadError(ValueError):
    """A payload that must not be executed."""

    code = "invalid_payload"


class SchemaVersionError(PayloadError):
    """The payload's schema version ``v`` is outside what this process supports."""

    code = "schema_version"

    def __init__(
        self, message: str, *, kind: str = "", version: object = None,
        min_supported: int = 0, current: int = 0,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.version = version
        self.min_supported = min_supported
        self.current = current


class UnknownKindError(PayloadError):
    """The payload's ``kind`` names no known job or op."""

    code = "unknown_kind"
