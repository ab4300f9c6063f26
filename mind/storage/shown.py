"""How a message names a mind file: as the mind it holds, never by the server's absolute path.

Storage errors reach network clients (HTTP, MCP over HTTP, a forwarded call): a path like
``/srv/hive-mind/workspaces/acme/workspace.mind`` told them the server's layout. Messages say
``workspace acme`` or ``the personal mind`` (or the file's name for any other file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

_WORKSPACE_FILE: Final = "workspace.mind"
_PERSONAL_FILE: Final = "personal.mind"


def shown(path: str | Path) -> str:
    """The name a message gives the mind file at ``path``."""
    p = Path(path)
    if p.name == _WORKSPACE_FILE and p.parent.name:
        return f"the mind file of workspace {p.parent.name}"
    if p.name == _PERSONAL_FILE:
        return "the personal mind file"
    return f"the mind file {p.name}"
