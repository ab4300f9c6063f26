"""Source name → adapter. Each adapter is ``parse(target) -> Iterator[HarvestItem]`` where
``target`` is a path (file, directory or ``.zip``) or, for ``url``, a URL string."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

from mind.harvest.errors import HarvestError
from mind.harvest.types import HarvestItem

Parse = Callable[[Path | str], Iterator[HarvestItem]]

SOURCES: Final = (
    "chatgpt", "claude", "claude-code", "gemini", "markdown", "plaintext", "pdf", "url",
    "universal",
)


def adapter(source: str) -> Parse:
    """The parser for ``source``; unknown names are a clear error listing the known ones."""
    from mind.harvest import (  # noqa: PLC0415 - adapters import heavy optional parsers lazily
        chatgpt, claude, claude_code, gemini, markdown, pdf, plaintext, universal, url,
    )

    table: dict[str, Parse] = {
        "chatgpt": chatgpt.parse, "claude": claude.parse, "claude-code": claude_code.parse,
        "gemini": gemini.parse, "markdown": markdown.parse, "plaintext": plaintext.parse,
        "pdf": pdf.parse, "url": url.parse, "universal": universal.parse,
    }
    try:
        return table[source]
    except KeyError:
        raise HarvestError(
            f"unknown harvest source {source!r}; use one of: {', '.join(SOURCES)}"
        ) from None
