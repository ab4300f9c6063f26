"""Source name → adapter. Each adapter is ``parse(target) -> Iterator[HarvestItem]`` where
``target`` is a path (file, directory or ``.zip``) or, for ``url``, a URL string (markdown and
plaintext also take raw text)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final, cast

from mind.harvest.errors import HarvestError
from mind.harvest.types import HarvestItem
from vocabulary.enums import HARVEST_SOURCES

Parse = Callable[[Path | str], Iterator[HarvestItem]]

SOURCES: Final = HARVEST_SOURCES
MODULES: Final = {source: source.replace("-", "_") for source in SOURCES}  # mind.harvest.<module>


def adapter(source: str) -> Parse:
    """The parser for ``source`` (its module is imported on first use: pdf and url pull in
    heavier libraries); unknown names are a clear error listing the known ones."""
    if source not in MODULES:
        raise HarvestError(
            f"unknown harvest source {source!r}; use one of: {', '.join(SOURCES)}")
    module = importlib.import_module(f"mind.harvest.{MODULES[source]}")
    return cast(Parse, module.parse)
