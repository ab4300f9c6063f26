"""Annotated field types shared by jobs and ops: the rules of the shared vocabulary
(:mod:`vocabulary`: ids, timestamps, limits) as pydantic fields."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field

from vocabulary.ids import validate_id, validate_mind_id, validate_op_id
from vocabulary.limits import (
    MAX_EXTERNAL_ID_CHARS,
    MAX_FRAME_CHARS,
    MAX_ID_CHARS,
    MAX_LABEL_CHARS,
    MAX_NAME_CHARS,
    frame_text,
)
from vocabulary.timestamps import normalize_ts


def _gop_id(value: str) -> str:
    return validate_id(value, "gop_id", MAX_ID_CHARS)


def _external_id(value: str) -> str:
    return validate_id(value, "external_id", MAX_EXTERNAL_ID_CHARS)


def _name(value: str) -> str:
    return validate_id(value, "name", MAX_NAME_CHARS)


MindId = Annotated[str, AfterValidator(validate_mind_id)]
"""``personal`` or ``workspace:<slug>``."""

OpId = Annotated[str, AfterValidator(validate_op_id)]
Timestamp = Annotated[str, BeforeValidator(normalize_ts)]
"""UTC ISO-8601 with milliseconds and ``Z``; accepts aware datetimes and zoned ISO strings."""

FrameId = Annotated[int, Field(ge=1)]
FrameText = Annotated[str, Field(max_length=MAX_FRAME_CHARS), AfterValidator(frame_text)]
GopId = Annotated[str, Field(max_length=MAX_ID_CHARS), AfterValidator(_gop_id)]
ExternalId = Annotated[
    str, Field(max_length=MAX_EXTERNAL_ID_CHARS), AfterValidator(_external_id)
]
ContentHash = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
"""Lowercase hex SHA-256 (``mind/content_hash.hash_frame_content``)."""

Confidence = Annotated[float, Field(ge=0.0, le=1.0)]
Name = Annotated[
    str, Field(min_length=1, max_length=MAX_NAME_CHARS), AfterValidator(_name)
]
"""Entity names, relation endpoints, conversation ids: non-blank, no control characters."""
Label = Annotated[
    str, Field(min_length=1, max_length=MAX_LABEL_CHARS), AfterValidator(_name)
]
"""Entity/relation types, harvest source names."""
