"""Render every command's ``--help`` into ``docs/cli.md``.

    python -m hive_mind.cli.docs            # rewrite docs/cli.md
    python -m hive_mind.cli.docs --check    # exit 1 if docs/cli.md is out of date

The help is rendered as plain text at a fixed width (no colours, no terminal detection), so
the file is the same on every machine; ``tests/test_cli_docs.py`` checks it is up to date.
``python -m hive_mind.docgen`` rewrites it with the other generated references.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hive_mind.cli import PROG, command
from hive_mind.docgen import write_or_check

WIDTH = 100
DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"

HEADER = """# `hive-mind` command line

Generated from `--help` by `python -m hive_mind.cli.docs` — do not edit by hand
(`tests/test_cli_docs.py` fails when this file is out of date).

Conventions:

- Global options (`--data-dir`, `--redis-url`, `--url`, ...) go **before** the command; each
  one overrides its `HIVE_MIND_*` environment variable (`<data dir>/.env` or `--env-file` is
  read too; never a `.env` in the working directory).
- Every command takes `--json`: one JSON document on stdout, nothing else there (except `mcp`,
  whose stdout is the MCP protocol). Progress bars and logs go to stderr.
- Errors are one line on stderr, `hive-mind: error: <message>`. Exit codes: 0 ok; 2 bad input
  or usage (invalid option or value, unknown workspace, bad id, bad configuration); 1 runtime
  failure (Redis unreachable, storage or embedding errors); 130 interrupted.
- Embedded mode (no Redis URL): commands that write wait until the background indexing they
  caused is applied before exiting, so `save` then `recall` in another process finds the
  memory by vector. Beside another process that keeps the mind open (an import, `serve`, an
  MCP server), `save` returns once the memory is committed (found by keyword at once) and that
  process indexes it.
"""


def _walk(cmd: Any, path: list[str], parent: Any) -> Iterator[tuple[list[str], Any, Any]]:
    from typer._click.core import Context

    ctx = Context(cmd, info_name=path[-1], parent=parent, terminal_width=WIDTH,
                  max_content_width=WIDTH)
    yield path, cmd, ctx
    for name in getattr(cmd, "list_commands", lambda _ctx: [])(ctx):
        sub = cmd.get_command(ctx, name)
        if sub is not None and not getattr(sub, "hidden", False):
            yield from _walk(sub, [*path, name], ctx)


def plain_help(cmd: Any, ctx: Any) -> str:
    """The click-style help of one command, without rich formatting."""
    saved = getattr(cmd, "rich_markup_mode", None)
    try:
        cmd.rich_markup_mode = None
        formatter = ctx.make_formatter()
        cmd.format_help(ctx, formatter)
        text: str = formatter.getvalue()
    finally:
        cmd.rich_markup_mode = saved
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def render() -> str:
    parts = [HEADER]
    tree = list(_walk(command(), [PROG], None))
    parts.append("## Commands\n")
    for path, cmd, _ctx in tree[1:]:
        summary = (cmd.get_short_help_str(limit=WIDTH) if hasattr(cmd, "get_short_help_str")
                   else "")
        anchor = "-".join(path).lower()
        parts.append(f"- [`{' '.join(path)}`](#{anchor}) — {summary}")
    parts.append("")
    for path, cmd, ctx in tree:
        parts.append(f"## {' '.join(path)}\n")
        parts.append("```text")
        parts.append(plain_help(cmd, ctx))
        parts.append("```\n")
    return "\n".join(parts).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    check = "--check" in (sys.argv[1:] if argv is None else argv)
    return write_or_check(DOC, render(), check=check, command="python -m hive_mind.cli.docs")


if __name__ == "__main__":
    sys.exit(main())
