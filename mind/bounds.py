"""Bounds of caller input, checked once in the engine so every surface (Python, CLI, MCP, HTTP)
refuses the same values with the same :class:`ValidationError` (HTTP 400 ``invalid``).

- :func:`bounded_int` — an ``int`` (never a ``bool``) in ``[lo, hi]``; :func:`row_id` is
  ``1 … 2**63-1``, what an SQLite INTEGER can hold, so an id like ``10**23`` is refused here
  instead of overflowing in the driver.
- :func:`bounded_text` — a ``str`` of at most ``limit`` characters (no content rule).
- :func:`name_text` — a non-blank name of at most ``limit`` characters without control
  characters (C0, DEL, C1, line/paragraph separators), bidi controls (U+061C, U+200E/F,
  U+202A–U+202E, U+2066–U+2069) or lone surrogates: what a name may not hide from the person
  who reads it. Emoji joiners (U+200D) and other format characters stay allowed.
- :func:`bounded_json` — a JSON object of at most ``limit`` bytes once encoded.
- :func:`source_time` — when something happened (a save's ``created_at``): strict ISO-8601
  with a zone, from 1900 to at most a day ahead of now (clock skew), in the house format.
- :func:`entity_input`, :func:`relation_input`, :func:`tags_input` — those rules applied to
  what a caller creates in the knowledge graph (no self-relations) and to ingest tags.

Messages name the field and its limit, never echo the (possibly huge) value. The limits
themselves live in :mod:`vocabulary.limits`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from mind.errors import InvalidTimestampError, ValidationError
from mind.knowledge.normalizer import confidence_arg
from mind.timeutil import format_ts, parse_iso
from vocabulary.limits import (
    INT64_MAX,
    MAX_FRAME_REFERENCES,
    MAX_JSON_BYTES,
    MAX_LABEL_CHARS,
    MAX_NAME_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    shown,
)

UNSAFE_IN_NAMES: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff]"
)
EARLIEST_SOURCE_TIME: Final = datetime(1900, 1, 1, tzinfo=UTC)
SOURCE_TIME_AHEAD: Final = timedelta(days=1)  # clock skew between a client and this host


def bounded_int(value: object, what: str, lo: int, hi: int, *, unit: str = "") -> int:
    """``value`` if it is an integer in ``[lo, hi]``, else a :class:`ValidationError`."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        suffix = f" {unit}" if unit else ""
        raise ValidationError(
            f"{what} must be an integer from {lo} to {hi}{suffix}, got {shown(value)}")
    return value


def bounded_float(value: object, what: str, lo: float, hi: float) -> float:
    """``value`` if it is a finite number in ``[lo, hi]``, else a :class:`ValidationError`."""
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not lo <= float(value) <= hi:
        raise ValidationError(f"{what} must be a number from {lo:g} to {hi:g}, got {shown(value)}")
    return float(value)


def row_id(value: object, what: str = "id") -> int:
    """A row id: ``1 … 2**63-1`` (SQLite INTEGER)."""
    return bounded_int(value, what, 1, INT64_MAX)


def bounded_text(value: object, what: str, limit: int) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"{what} must be text")
    if len(value) > limit:
        raise ValidationError(
            f"{what} is {len(value):,} characters; the limit is {limit:,}")
    return value


def name_text(value: object, what: str, limit: int) -> str:
    """A non-blank name within ``limit`` characters, free of control and bidi characters."""
    text = bounded_text(value, what, limit)
    if not text.strip():
        raise ValidationError(f"{what} must not be empty")
    bad = UNSAFE_IN_NAMES.search(text)
    if bad is not None:
        char = f"U+{ord(bad.group()):04X}"
        raise ValidationError(
            f"{what} contains a control or bidi character ({char}); names may not")
    return text


def bounded_json(value: Mapping[str, Any] | None, what: str, limit: int) -> None:
    """Refuse a JSON object larger than ``limit`` bytes (UTF-8, compact encoding);
    values that are not JSON are left to the encoder that stores them."""
    if not value:
        return
    try:
        size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":"),
                              default=str).encode("utf-8", "surrogatepass"))
    except (TypeError, ValueError, RecursionError):
        return
    if size > limit:
        raise ValidationError(f"{what} is {size:,} bytes as JSON; the limit is {limit:,}")


def entity_input(entity_type: object, name: object,
                 properties: Mapping[str, Any] | None = None) -> None:
    """What a caller may create as an entity: a type and a name that are names
    (:func:`name_text`, :data:`MAX_LABEL_CHARS` / :data:`MAX_NAME_CHARS`) and properties
    within :data:`MAX_JSON_BYTES`."""
    name_text(entity_type, "entity type", MAX_LABEL_CHARS)
    name_text(name, "entity name", MAX_NAME_CHARS)
    bounded_json(properties, "entity properties", MAX_JSON_BYTES)


def relation_input(source_id: object, target_id: object, relation_type: object,
                   confidence: object, properties: Mapping[str, Any] | None = None) -> None:
    """What a caller may create as a relation: two row ids, a type that is a name
    (:data:`MAX_LABEL_CHARS`), a confidence in [0, 1], properties within
    :data:`MAX_JSON_BYTES`, and two different entities (none is related to itself)."""
    source, target = row_id(source_id, "source_id"), row_id(target_id, "target_id")
    name_text(relation_type, "relation type", MAX_LABEL_CHARS)
    confidence_arg(confidence)
    bounded_json(properties, "relation properties", MAX_JSON_BYTES)
    if source == target:
        raise ValidationError(
            f"source_id and target_id are both {source}: an entity cannot be related to itself")


def tags_input(tags: object) -> list[str]:
    """At most :data:`MAX_TAGS` tags, each a name of at most :data:`MAX_TAG_CHARS`."""
    if tags is None:
        return []
    if not isinstance(tags, list | tuple):
        raise ValidationError("tags must be a list of text")
    if len(tags) > MAX_TAGS:
        raise ValidationError(f"{len(tags):,} tags; the limit is {MAX_TAGS}")
    return [name_text(tag, "tag", MAX_TAG_CHARS) for tag in tags]


def frame_refs(refs: object, what: str = "refs") -> list[int]:
    """The frames a B-frame cross-references: 1 … :data:`MAX_FRAME_REFERENCES` row ids, each
    once, in the caller's order."""
    if not isinstance(refs, list | tuple) or not refs:
        raise ValidationError(f"{what} must be a non-empty list of frame ids")
    if len(refs) > MAX_FRAME_REFERENCES:
        raise ValidationError(f"{len(refs):,} {what}; the limit is {MAX_FRAME_REFERENCES}")
    return list(dict.fromkeys(row_id(ref, f"{what} id") for ref in refs))


def source_time(value: object, what: str = "created_at") -> str:
    """When something happened, given by a caller: strict ISO-8601 with a zone (``Z`` or an
    offset), not before 1900 and at most a day ahead of now; returned in the house format."""
    if not isinstance(value, str) or len(value) > 64 or value != value.strip():
        raise InvalidTimestampError(
            f"{what} must be an ISO-8601 time with a zone like 2024-05-01T12:00:00Z, "
            f"got {shown(value)}")
    try:
        moment = parse_iso(value)
    except (InvalidTimestampError, OverflowError) as exc:
        raise InvalidTimestampError(f"{what}: {exc}") from None
    if moment < EARLIEST_SOURCE_TIME:
        raise InvalidTimestampError(f"{what} {shown(value)} is before 1900")
    if moment > datetime.now(UTC) + SOURCE_TIME_AHEAD:
        raise InvalidTimestampError(
            f"{what} {shown(value)} is more than a day in the future")
    return format_ts(moment)
