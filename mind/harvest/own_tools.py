"""Our own MCP tools inside agent transcripts: recognised so their content is never imported.

An agent that uses hive-mind leaves its calls in its transcript: ``recall_memory`` results are
copies of memories, ``save_memory`` arguments are memories already stored. Importing them would
duplicate memories and feed recall into itself, so transcript adapters (``claude-code``,
``codex``) keep only a marker (``[Used recall_memory]``) for such a call, never its arguments
or its result.

A call is ours when its tool name is one of :data:`vocabulary.enums.MCP_TOOLS`, bare
(``recall_memory``) or namespaced the way MCP clients do it: ``mcp__<server>__<tool>``
(Claude Code), ``<server>__<tool>`` (Codex), ``<server>.<tool>`` / ``<server>/<tool>``. The
server name is whatever the user configured, so it is not checked.
"""

from __future__ import annotations

import re
from typing import Final

from vocabulary.enums import MCP_TOOLS

_OWN: Final = re.compile(
    r"(?:^|__|[./:])(" + "|".join(re.escape(name) for name in MCP_TOOLS) + r")\Z")


def own_tool(name: str) -> str | None:
    """The bare name of our tool that ``name`` calls, or ``None`` for anybody else's tool."""
    match = _OWN.search(name.strip())
    return match.group(1) if match else None


def own_tool_marker(tool: str) -> str:
    """What stays of a call to our tool ``tool``: its name, never its arguments or result."""
    return f"[Used {tool}]"
