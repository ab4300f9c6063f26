"""Identifier rules (stdlib only). Every check is a full match on a ``str``, so a trailing
newline (``"abc\\n"``), path tricks (``..``, ``/``, ``\\``, NUL, absolute paths), uppercase,
whitespace and non-ASCII look-alikes never pass where a slug is expected.

- A **slug** (workspace id): 1-64 lowercase ASCII letters, digits and inner dashes; the only
  caller-supplied text that becomes a path (docs/architecture.md, "Invariants").
- A **mind id**: ``personal`` or ``workspace:<slug>``.
- A **caller id** (session/GOP id, external id, conversation id, name): non-blank, within its
  limit, no control characters (Unicode category Cc) and no lone surrogates.
- An **op id** (idempotency key), a **host id**, a job kind and job-id part: short ASCII tokens.

Checks raise ``ValueError`` naming what was refused (never echoing a huge value whole).
"""

from __future__ import annotations

import re
from typing import Final, TypeGuard

from vocabulary.limits import MAX_ID_CHARS, shown

PERSONAL_MIND: Final = "personal"
WORKSPACE_PREFIX: Final = "workspace:"

SLUG_RE: Final = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
OP_ID_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,199}")
HOST_ID_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
KIND_RE: Final = re.compile(r"[a-z][a-z0-9_]{0,63}")
ID_PART_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# Unicode category Cc is exactly C0, DEL and C1; Cs is the surrogate block (one regex scan is
# ~10x faster than a per-character unicodedata lookup on bulk imports).
CONTROL_CHARS: Final = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")

_SLUG_RULE: Final = "use 1-64 lowercase letters, digits and inner dashes"


def validate_id(value: object, what: str = "gop_id", limit: int = MAX_ID_CHARS) -> str:
    """A caller-chosen id or name: a non-blank ``str`` of at most ``limit`` characters without
    control characters or lone surrogates."""
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string")
    if not value.strip():
        raise ValueError(f"{what} must not be empty")
    if len(value) > limit:
        raise ValueError(f"{what} is longer than {limit} characters")
    if CONTROL_CHARS.search(value):
        raise ValueError(f"{what} {shown(value)} contains control characters")
    return value


def is_slug(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and SLUG_RE.fullmatch(value) is not None


def validate_slug(value: object, what: str = "workspace id") -> str:
    """A filesystem-safe slug (see the module docstring)."""
    if not is_slug(value):
        raise ValueError(f"invalid {what} {shown(value)}: {_SLUG_RULE}")
    return value


def validate_mind_id(value: object) -> str:
    """``personal`` or ``workspace:<slug>``."""
    if isinstance(value, str) and (value == PERSONAL_MIND or (
            value.startswith(WORKSPACE_PREFIX) and is_slug(value[len(WORKSPACE_PREFIX):]))):
        return value
    raise ValueError(
        f"invalid mind id {shown(value)}: expected 'personal' or 'workspace:<slug>' "
        f"(slug: {_SLUG_RULE})"
    )


def workspace_mind_id(slug: str) -> str:
    """The mind id of a workspace slug (validated)."""
    return WORKSPACE_PREFIX + validate_slug(slug)


def split_mind_id(mind_id: str) -> tuple[str, str | None]:
    """``("personal", None)`` or ``("workspace", slug)`` for a valid mind id."""
    validate_mind_id(mind_id)
    if mind_id == PERSONAL_MIND:
        return PERSONAL_MIND, None
    return "workspace", mind_id[len(WORKSPACE_PREFIX):]


def validate_op_id(value: object) -> str:
    """An idempotency key: 1-200 chars of letters, digits and ``. _ : -`` (uuid hex or job id)."""
    if not isinstance(value, str) or OP_ID_RE.fullmatch(value) is None:
        raise ValueError(
            f"invalid op id {shown(value)}: 1-200 letters, digits, '.', '_', ':' or '-', "
            "starting with a letter or digit"
        )
    return value


def validate_host_id(value: object) -> str:
    if not isinstance(value, str) or HOST_ID_RE.fullmatch(value) is None:
        raise ValueError(
            f"invalid host id {shown(value)}: 1-128 letters, digits, '.', '_' or '-'"
        )
    return value
