"""Harvest errors: every one names the file and the position in it, never what it holds.

An error text is stored (``harvest_runs.error``) and returned to clients, and the file may be
one the caller could not read otherwise: messages say where (path, item, byte offset) and what
kind of thing was found, never the bytes, values or keys themselves. Library exceptions go
through :func:`safe_reason`, which drops the quoted excerpts some parsers put in their text.
"""

from __future__ import annotations

import re
from typing import Any, Final

from mind.errors import ValidationError

_QUOTED: Final = re.compile(r"b?'(?:[^'\\]|\\.)*'" r'|b?"(?:[^"\\]|\\.)*"')


def safe_reason(exc: BaseException) -> str:
    """The first line of a library exception's message with quoted excerpts (``b'root:x…'``,
    ``'<token>'``) replaced by ``…``; the class name when nothing is left."""
    raw = exc.args[0] if exc.args else ""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw or exc)
    lines = text.strip().splitlines()
    first = _QUOTED.sub("…", lines[0]).strip()[:200] if lines else ""
    return first or type(exc).__name__


def count_of(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def keys_hint(obj: dict[str, Any]) -> str:
    """An object of unexpected shape described by its size, not by its keys (file content)."""
    return f"found an object with {count_of(len(obj), 'key')}, not the ones expected"


class HarvestError(ValidationError):
    """Input that cannot be harvested (malformed, truncated, wrong source type, too large, a zip
    bomb, binary garbage). ``path`` and ``position`` say where; items before it were imported."""

    code = "harvest_input"
    status = 422

    def __init__(self, message: str, *, path: str = "", position: str = "") -> None:
        where = ", ".join(p for p in (path, position) if p)
        super().__init__(f"{where}: {message}" if where else message)
        self.path = path
        self.position = position
        self.reason = message


class NothingToImport(HarvestError):
    """An input that holds nothing to import (activity markers only, no conversation, message or
    document): an error, and the run is not recorded — neither as completed, which would make
    the next run of the same file "unchanged", nor among the mind's sources."""
