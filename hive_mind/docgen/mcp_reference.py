"""``docs/mcp.md`` from the MCP server itself: its instructions, every tool with its
description, hints and input schema, and the resources, as an MCP client lists them.

The server is built as ``hive-mind mcp`` builds it (:func:`hive_mind.mcp_server.build_server`)
with a facade getter that is never called: listing tools opens no mind.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from hive_mind.docgen import DOCS, generated_note
from hive_mind.docgen.schema_text import cell, properties_table, slug

DOC = DOCS / "mcp.md"
COMMAND = "python -m hive_mind.docgen"
TEST = "tests/test_reference_docs.py"

INTRO = """\
`hive-mind mcp` serves these tools over stdio (an agent starts it; see the README for the
client configuration), and `hive-mind serve` serves the same server over streamable HTTP at
`/mcp`, behind the HTTP API's token ([docs/http.md](http.md)). Without `--url` the stdio server
works on the data dir directly (several agent windows may each run one); with `--url` (or
`HIVE_MIND_URL`) it is a client of a running `serve`.

Every tool answers JSON text. A failure is a tool result flagged as an error whose text starts
with the error's stable code (`not_found: …`, `invalid: …`), the same codes as the HTTP API;
bad arguments are named field by field (`invalid arguments for save_memory: content: …`). A
workspace id is a slug from `list_workspaces` / `create_workspace`; omitting `workspace` means
the personal mind, and an unknown workspace is an error, never created implicitly.
"""


async def listing() -> dict[str, Any]:
    """What an MCP client lists: the server's name and instructions, tools, resources."""
    from hive_mind.mcp_server import SERVER_NAME, build_server

    async def no_facade() -> Any:
        raise RuntimeError("listing the MCP server opens no mind")

    server = build_server(no_facade)
    return {
        "name": SERVER_NAME,
        "instructions": server.instructions or "",
        "tools": [t.model_dump(mode="json", exclude_none=True) for t in await server.list_tools()],
        "resources": [r.model_dump(mode="json", exclude_none=True)
                      for r in await server.list_resources()],
        "templates": [t.model_dump(mode="json", exclude_none=True)
                      for t in await server.list_resource_templates()],
    }


def _kind(annotations: dict[str, Any]) -> str:
    if annotations.get("read_only_hint"):
        return "reads"
    return "writes, destructive" if annotations.get("destructive_hint") else "writes"


def _first_sentence(text: str) -> str:
    """Up to the first full stop that ends a sentence (not the one of "e.g.")."""
    return re.split(r"(?<=\.)(?<!e\.g\.)(?<!i\.e\.)\s+(?=[A-Z])", text, maxsplit=1)[0]


def _tool(tool: dict[str, Any]) -> list[str]:
    out = [f"### {tool['name']}\n", f"*{_kind(tool.get('annotations', {}))}*\n",
           tool.get("description", "") + "\n"]
    table = properties_table(tool.get("input_schema", {}))
    out += [*table, ""] if table else ["No arguments.\n"]
    return out


def render(listed: dict[str, Any] | None = None) -> str:
    """The whole of docs/mcp.md."""
    listed = asyncio.run(listing()) if listed is None else listed
    parts = ["# MCP server\n", generated_note(COMMAND, TEST) + "\n", INTRO,
             f"Server name `{listed['name']}`. Its instructions to the agent:\n",
             "> " + listed["instructions"] + "\n", "## Tools\n",
             "| tool | kind | what it does |", "|---|---|---|"]
    for tool in listed["tools"]:
        parts.append(f"| [`{tool['name']}`](#{slug(tool['name'])}) | "
                     f"{_kind(tool.get('annotations', {}))} | "
                     f"{cell(_first_sentence(tool.get('description', '')))} |")
    parts.append("")
    for tool in listed["tools"]:
        parts += _tool(tool)
    parts += ["## Resources\n", "| URI | name | what it holds | type |", "|---|---|---|---|"]
    for resource in [*listed["resources"], *listed["templates"]]:
        uri = resource.get("uri") or resource.get("uri_template", "")
        parts.append(f"| `{uri}` | {resource.get('name', '')} | "
                     f"{cell(resource.get('description', ''))} | "
                     f"{resource.get('mime_type', '')} |")
    return "\n".join(parts).rstrip() + "\n"
