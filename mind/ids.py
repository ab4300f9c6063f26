"""Validation of identifiers that callers supply (session and project ids, workspace slugs).

The rules live in :mod:`vocabulary.ids` (shared with ``queue_schemas``); here they raise the
engine's :class:`~mind.errors.InvalidIdError` (HTTP 400 ``invalid_id``).
"""

from __future__ import annotations

from mind.errors import InvalidIdError
from vocabulary import ids


def validate_id(value: object, what: str = "gop_id") -> str:
    """A caller-chosen session or project id: non-blank, ≤ 200 chars, no control characters."""
    try:
        return ids.validate_id(value, what)
    except ValueError as exc:
        raise InvalidIdError(str(exc)) from None


def validate_slug(value: object, what: str = "workspace id") -> str:
    """A filesystem-safe slug: lowercase ASCII letters, digits and inner dashes, ≤ 64 chars."""
    try:
        return ids.validate_slug(value, what)
    except ValueError as exc:
        raise InvalidIdError(str(exc)) from None
