"""Base models: the frozen strict model, and the versioned :class:`Envelope` of jobs and ops.

Every job (work for the stateless cognify workers) and every write-op (applied by the mind's
owner) is an ``Envelope``::

    {"kind": "cognify", "v": 2, "op_id": "3f2c…", "mind_id": "workspace:acme",
     "created_at": "2026-11-30T03:20:49.123Z", …fields of the kind…}

- ``kind`` is the discriminator of the ``AnyJob`` / ``AnyOp`` unions (job and op kinds are
  disjoint).
- ``v`` is the schema version of that kind. Each model declares ``CURRENT_VERSION`` and
  ``MIN_SUPPORTED``; a payload outside that range raises :class:`SchemaVersionError` with the fix
  in the message, and is never executed. A payload of an older supported version is upgraded on
  read by the model's :meth:`Envelope.upgrade` hook.
- ``op_id`` is the idempotency key (uuid4 hex by default, or a deterministic job id): applying
  the same op twice changes nothing.
- ``mind_id`` is ``personal`` or ``workspace:<slug>`` (never a path).
- ``created_at`` is UTC ISO-8601 with ``Z``.

Models are ``extra="forbid"`` (unknown fields are an error, not silently dropped), ``frozen`` and
``strict`` (no ``"1"`` → ``1`` coercion; sequences are lists, as JSON gives them).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from queue_schemas.errors import PayloadError, SchemaVersionError, UnknownKindError
from queue_schemas.fields import MindId, OpId, Timestamp
from vocabulary.timestamps import now_iso


class FrozenModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, defer_build=True)


def new_op_id() -> str:
    return uuid.uuid4().hex


class Envelope(FrozenModel):
    """Common header of every job and write-op (see the module docstring)."""

    CURRENT_VERSION: ClassVar[int] = 1
    MIN_SUPPORTED: ClassVar[int] = 1
    CATEGORY: ClassVar[str] = "payload"  # "job" / "op", for messages
    CONSUMER: ClassVar[str] = "process"  # "worker" / "host", for messages
    OLD_REMEDY: ClassVar[str] = "re-create it"

    kind: str
    v: int = 1  # a model that raises CURRENT_VERSION re-declares this default to match
    op_id: OpId = Field(default_factory=new_op_id)
    mind_id: MindId
    created_at: Timestamp = Field(default_factory=now_iso)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        declared = cls.model_fields["v"].default
        if declared != cls.CURRENT_VERSION or not (
            1 <= cls.MIN_SUPPORTED <= cls.CURRENT_VERSION
        ):
            raise TypeError(
                f"{cls.__name__}: the default of 'v' ({declared}) must equal CURRENT_VERSION "
                f"({cls.CURRENT_VERSION}) and 1 <= MIN_SUPPORTED <= CURRENT_VERSION"
            )

    @classmethod
    def kind_name(cls) -> str:
        default = cls.model_fields["kind"].default
        return default if isinstance(default, str) else cls.__name__

    @model_validator(mode="before")
    @classmethod
    def _read_version(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            if "v" not in data:  # built in Python: the current version
                return {**data, "v": cls.CURRENT_VERSION}
            return cls.migrate(data)
        return data

    @classmethod
    def migrate(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        """Check ``data["v"]`` and upgrade an older supported payload to ``CURRENT_VERSION``.

        Raises :class:`SchemaVersionError` for a missing, non-integer, too new or too old
        version. Returns a new dict; ``data`` is not modified.
        """
        kind = cls.kind_name()
        what = f"{cls.CATEGORY} {kind}"
        details: dict[str, Any] = {
            "kind": kind, "min_supported": cls.MIN_SUPPORTED, "current": cls.CURRENT_VERSION,
        }
        if "v" not in data:
            raise SchemaVersionError(
                f"{what} has no schema version 'v': refusing to guess", version=None, **details
            )
        version = data["v"]
        if isinstance(version, bool) or not isinstance(version, int):
            raise SchemaVersionError(
                f"{what} schema version must be an integer, got {version!r}",
                version=version, **details,
            )
        if version > cls.CURRENT_VERSION:
            raise SchemaVersionError(
                f"{what} v{version} is newer than this {cls.CONSUMER} "
                f"(supports ≤ {cls.CURRENT_VERSION}): upgrade the {cls.CONSUMER}",
                version=version, **details,
            )
        if version < cls.MIN_SUPPORTED:
            raise SchemaVersionError(
                f"{what} v{version} is older than the oldest supported v{cls.MIN_SUPPORTED}: "
                f"{cls.OLD_REMEDY}",
                version=version, **details,
            )
        payload = dict(data)
        if version == cls.CURRENT_VERSION:
            return payload
        upgraded = cls.upgrade(payload)
        if upgraded.get("v") != cls.CURRENT_VERSION:  # a bug in an upgrade hook
            raise SchemaVersionError(
                f"{what} v{version} upgrade ended at v{upgraded.get('v')!r}, "
                f"not v{cls.CURRENT_VERSION}",
                version=version, **details,
            )
        return upgraded

    @classmethod
    def upgrade(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Rewrite a payload of an older supported version (``data["v"]``) into the current one.

        Called only with ``MIN_SUPPORTED <= data["v"] < CURRENT_VERSION``, on a private copy
        the hook may modify. Models that raise ``CURRENT_VERSION`` while still reading older
        payloads override this; the default has no upgrade path.
        """
        raise SchemaVersionError(
            f"{cls.CATEGORY} {cls.kind_name()} has no upgrade from v{data.get('v')!r}",
            kind=cls.kind_name(), version=data.get("v"),
            min_supported=cls.MIN_SUPPORTED, current=cls.CURRENT_VERSION,
        )


def kind_registry(*models: type[Envelope]) -> dict[str, type[Envelope]]:
    """``{kind: model}`` for a union's members; kinds must be unique."""
    registry: dict[str, type[Envelope]] = {}
    for model in models:
        kind = model.kind_name()
        if kind in registry:
            raise TypeError(f"duplicate kind {kind!r}: {registry[kind]} and {model}")
        registry[kind] = model
    return registry


def resolve(
    data: object, registry: Mapping[str, type[Envelope]], category: str
) -> dict[str, Any]:
    """Find the model of a raw payload by ``kind`` and return it checked and upgraded."""
    if not isinstance(data, Mapping):
        raise PayloadError(f"a {category} payload must be a JSON object, got {type(data).__name__}")
    kind = data.get("kind")
    model = registry.get(kind) if isinstance(kind, str) else None
    if model is None:
        known = ", ".join(sorted(registry))
        raise UnknownKindError(f"unknown {category} kind {kind!r} (known: {known})")
    return model.migrate(data)
