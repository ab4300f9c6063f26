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


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""One encoder for every write (``json.dumps`` with options builds a new one per call: an
import encodes one object per frame)."""


def dump_object(value: Mapping[str, Any] | None, what: str = "metadata") -> str:
    """Encode a JSON object compactly; non-serializable input is a ValidationError."""
    if not value:  # most saved frames: no metadata
        return "{}"
    try:
        return _ENCODER.encode(value if isinstance(value, dict) else dict(value))
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"{what} must be JSON-serializable: {exc}") from None
