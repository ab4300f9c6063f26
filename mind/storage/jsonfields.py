"""JSON object columns (metadata, properties): one decoder and one encoder."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mind.errors import ValidationError


def load_object(raw: object) -> dict[str, Any]:
    """Decode a stored JSON object; anything that is not one reads as ``{}``."""
    if not isinstance(raw, str | bytes) or not raw or raw == "{}":  # most frames: no metadata
        return {}
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def dump_object(value: Mapping[str, Any] | None, what: str = "metadata") -> str:
    """Encode a JSON object compactly; non-serializable input is a ValidationError."""
    if not value:  # most frames: no metadata
        return "{}"
    try:
        return json.dumps(
            dict(value or {}), ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"{what} must be JSON-serializable: {exc}") from None
