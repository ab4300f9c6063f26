"""Harvest errors: every one names the file and the position in it."""

from __future__ import annotations

from mind.errors import ValidationError


class HarvestError(ValidationError):
    """Input that cannot be harvested (malformed, truncated, wrong source type, too large, a zip
    bomb, binary garbage). ``path`` and ``position`` say where; items before it were imported."""

    code = "harvest_input"

    def __init__(self, message: str, *, path: str = "", position: str = "") -> None:
        where = ", ".join(p for p in (path, position) if p)
        super().__init__(f"{where}: {message}" if where else message)
        self.path = path
        self.position = position
        self.reason = message
