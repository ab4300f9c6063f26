"""``python -m hive_mind.docgen [--check]``: rewrite (or only check) every generated reference:
docs/configuration.md, docs/http.md, docs/mcp.md and docs/cli.md."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from hive_mind.cli import docs as cli_docs
from hive_mind.docgen import configuration, http_reference, mcp_reference, write_or_check

COMMAND = "python -m hive_mind.docgen"
RENDERERS: tuple[tuple[Path, Callable[[], str]], ...] = (
    (configuration.DOC, configuration.render),
    (http_reference.DOC, http_reference.render),
    (mcp_reference.DOC, mcp_reference.render),
    (cli_docs.DOC, cli_docs.render),
)


def main(argv: list[str] | None = None) -> int:
    check = "--check" in (sys.argv[1:] if argv is None else argv)
    results = [write_or_check(doc, render(), check=check, command=COMMAND)
               for doc, render in RENDERERS]
    return max(results)


if __name__ == "__main__":
    sys.exit(main())
