"""Annotated field types shared by jobs and ops (validated with stdlib + pydantic only)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field

from queue_schemas.constants import (
    MAX_EXTERNAL_ID_CHARS,
    MAX_FRAME_CHARS,
    MAX_ID_CHARS,
    MAX_LABEL_CHARS,
    MAX_NAME_CHARS,
)
from queue_schemas.ids import validate_mind_id, validate_op_id

_STRICT_ISO = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:?\d{2})"
)


_HOUSE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


def format_ts(moment: datetime) -> str:
    """The house timestamp format (same as ``mind/timeutil.py``): ``2026-11-30T03:20:49.123Z``."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime: a timezone is required")
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def now_iso() -> str:
    return format_ts(datetime.now(UTC))


def normalize_ts(value: object) -> str:
    """An aware datetime or strict ISO-8601 string with a zone → the house UTC ``Z`` format."""
    if isinstance(value, datetime):
        return format_ts(value)
    if isinstance(value, str) and _HOUSE.fullmatch(value):  # already canonical: check ranges
        try:
            datetime.fromisoformat(value[:-1])
            return value
        except ValueError as exc:
            raise ValueError(f"invalid timestamp {value!r}: {exc}") from None
    if not isinstance(value, str) or _STRICT_ISO.fullmatch(value) is None:
        raise ValueError(
            f"invalid timestamp {value!r}: expected ISO-8601 with a zone like "
            "2026-11-30T03:20:49.123Z"
        )
    text = value
    frac = re.search(r"\.(\d+)", text)
    if frac and len(frac.group(1)) > 6:  # datetime takes at most microseconds
        text = text.replace(frac.group(0), "." + frac.group(1)[:6])
    text = text.replace("Z", "+00:00")
    if re.search(r"[+-]\d{4}$", text):
        text = text[:-2] + ":" + text[-2:]
    try:
        return format_ts(datetime.fromisoformat(text))
    except ValueError as exc:
        raise ValueError(f"invalid timestamp {value!r}: {exc}") from None


# Unicode category Cc is exactly C0, DEL and C1; Cs is the surrogate block (one regex scan is
# ~10x faster than a per-character unicodedata lookup on bulk imports).
_CONTROL_OR_SURROGATE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _text_id(value: str, what: str) -> str:
    if not value.strip():
        raise ValueError(f"{what} must not be blank")
    if _CONTROL_OR_SURROGATE.search(value):
        raise ValueError(f"{what} {value!r} contains control characters")
    return value


def _frame_text(value: str) -> str:
    if not value.strip():
        raise ValueError("frame content is empty")
    if "\x00" in value:
        raise ValueError("frame content contains NUL bytes (binary data is not text)")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"frame content is not valid Unicode text: {exc.reason}") from None
    return value


def _gop_id(value: str) -> str:
    return _text_id(value, "gop_id")


def _external_id(value: str) -> str:
    return _text_id(value, "external_id")


def _name(value: str) -> str:
    return _text_id(value, "name")


def _ts(value: Any) -> Any:
    return normalize_ts(value)


MindId = Annotated[str, AfterValidator(validate_mind_id)]
"""``personal`` or ``workspace:<slug>``."""

OpId = Annotated[str, AfterValidator(validate_op_id)]
Timestamp = Annotated[str, BeforeValidator(_ts)]
"""UTC ISO-8601 with milliseconds and ``Z``; accepts aware datetimes and zoned ISO strings."""

FrameId = Annotated[int, Field(ge=1)]
FrameText = Annotated[str, Field(max_length=MAX_FRAME_CHARS), AfterValidator(_frame_text)]
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
