"""Identifier rules shared by the schemas and the key helpers (stdlib only).

A mind id is ``personal`` or ``workspace:<slug>``; the slug is the same filesystem-safe slug the
engine accepts (``mind/ids.py``): lowercase ASCII letters, digits and inner dashes, ≤ 64 chars. The
check is a full-match regex on a ``str``, so path tricks (``..``, ``/``, ``\\``, NUL, absolute
paths, uppercase, whitespace, non-ASCII look-alikes) never pass.
"""

from __future__ import annotations

import re
from typing import Final

PERSONAL_MIND: Final = "personal"
WORKSPACE_PREFIX: Final = "workspace:"

SLUG_RE: Final = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
OP_ID_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,199}")
HOST_ID_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
KIND_RE: Final = re.compile(r"[a-z][a-z0-9_]{0,63}")
ID_PART_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def validate_slug(value: object, what: str = "workspace id") -> str:
    if not isinstance(value, str) or SLUG_RE.fullmatch(value) is None:
        raise ValueError(
            f"invalid {what} {value!r}: use 1-64 lowercase letters, digits and inner dashes"
        )
    return value


def validate_mind_id(value: object) -> str:
    """``personal`` or ``workspace:<slug>``; anything else raises ``ValueError``."""
    if isinstance(value, str):
        if value == PERSONAL_MIND:
            return value
        if value.startswith(WORKSPACE_PREFIX) and SLUG_RE.fullmatch(
            value[len(WORKSPACE_PREFIX):]
        ):
            return value
    raise ValueError(
        f"invalid mind id {value!r}: expected 'personal' or 'workspace:<slug>' "
        "(slug: 1-64 lowercase letters, digits and inner dashes)"
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
            f"invalid op id {value!r}: 1-200 letters, digits, '.', '_', ':' or '-', "
            "starting with a letter or digit"
        )
    return value


def validate_host_id(value: object) -> str:
    if not isinstance(value, str) or HOST_ID_RE.fullmatch(value) is None:
        raise ValueError(
            f"invalid host id {value!r}: 1-128 letters, digits, '.', '_' or '-'"
        )
    return value
