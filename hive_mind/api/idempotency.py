"""Idempotency keys over HTTP (:mod:`mind.storage.idempotency`): the body's ``idempotency_key``
field or
the standard ``Idempotency-Key`` header names a write; a replayed answer carries
``Idempotent-Replayed: true`` (same body shape and status as the first answer)."""

from __future__ import annotations

from typing import Annotated, TypeVar

from fastapi import Header, Response

from hive_mind.shapes import AwarenessAdded, SavedFrame
from mind.errors import ValidationError
from mind.storage.idempotency import MAX_KEY_CHARS

KeyHeader = Annotated[str | None, Header(
    alias="Idempotency-Key", min_length=1, max_length=MAX_KEY_CHARS, pattern=r"^[!-~]+$",
    description="the standard header for the body's idempotency_key (either, or both equal)")]
REPLAYED_HEADER = "Idempotent-Replayed"


def request_key(body_key: str | None, header_key: str | None) -> str | None:
    """The key of a write, from the body field or the ``Idempotency-Key`` header."""
    if body_key is not None and header_key is not None and body_key != header_key:
        raise ValidationError(
            "the Idempotency-Key header and the idempotency_key field differ: send one key")
    return body_key if body_key is not None else header_key


Keyed = TypeVar("Keyed", SavedFrame, AwarenessAdded)  # the answers of keyed writes


def mark_replay(response: Response, result: Keyed) -> Keyed:
    """Flag a replayed answer in the response headers; returns ``result``."""
    if result["replayed"]:
        response.headers[REPLAYED_HEADER] = "true"
    return result
