"""Validation of identifiers that callers supply (session and project ids, workspace slugs)."""

from __future__ import annotations

import re

from mind.bounds import shown
from mind.errors import InvalidIdError

MAX_ID_LENGTH = 200
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # exactly Unicode category Cc
_SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")


def validate_id(value: object, what: str = "gop_id") -> str:
    """A caller-chosen session or project id: non-blank, ≤ 200 chars, no control characters."""
    if not isinstance(value, str):
        raise InvalidIdError(f"{what} must be a string")
    if not value.strip():
        raise InvalidIdError(f"{what} must not be empty")
    if len(value) > MAX_ID_LENGTH:
        raise InvalidIdError(f"{what} is longer than {MAX_ID_LENGTH} characters")
    if _CONTROL.search(value):
        raise InvalidIdError(f"{what} {value!r} contains control characters")
    return value


def validate_slug(value: object, what: str = "workspace id") -> str:
    """A filesystem-safe slug: lowercase ASCII letters, digits and inner dashes, ≤ 64 chars."""
    if not isinstance(value, str) or not _SLUG.match(value):
        raise InvalidIdError(
            f"invalid {what} {shown(value)}: use 1-64 lowercase letters, digits and dashes"
        )
    return value
