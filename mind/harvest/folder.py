"""What ``ingest`` reads in a folder: every document by its type, and what it leaves and why.

A folder is walked like the document adapters walk it (recursively, sorted): markdown and HTML
files (``markdown``), plain text (``plaintext``) and PDFs (``pdf``) are counted for the adapter
that reads them; everything else is *skipped* with a reason, one line per reason: hidden files
and folders (``.obsidian/``, ``.git/``: the adapters never read them), and files of other types
(images, office documents, JSON …; a chat export is ``harvest import``'s, named in the reason).

:func:`lenient` reads the files of one type as that type's adapter reads a folder (the same
keys, so the same ids), except that a file it cannot read (a scanned or damaged PDF, a text file
over the size limit) is left out with its reason instead of ending the import there.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from mind.harvest import budget, markdown, pdf, plaintext
from mind.harvest.errors import HarvestError, count_of
from mind.harvest.plaintext import resolve_target
from mind.harvest.types import HarvestItem

Reader = Callable[[Path, str], HarvestItem | None]
_TYPES: Final[dict[str, tuple[tuple[str, ...], Reader]]] = {
    "markdown": (markdown.SUFFIXES + markdown.HTML_SUFFIXES, markdown.read_file),
    "plaintext": (plaintext.SUFFIXES, plaintext.read_file),
    "pdf": (pdf.SUFFIXES, pdf.read_file)}
KINDS: Final = {suffix: kind for kind, (suffixes, _) in _TYPES.items() for suffix in suffixes}
READS: Final = "md, txt, pdf and html"
_CHATS: Final = (".json", ".jsonl", ".ndjson", ".zip")
_EXAMPLES: Final = 3


@dataclass(frozen=True, slots=True)
class FolderPlan:
    files: dict[str, int]  # adapter source → how many files it reads, in adapter order
    skipped: tuple[str, ...]  # one line per reason


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:_EXAMPLES])
    return shown + (f" and {len(names) - _EXAMPLES} more" if len(names) > _EXAMPLES else "")


def plan(folder: Path) -> FolderPlan:
    """The files of ``folder`` each document adapter reads, and the rest with reasons; a folder
    with nothing to read is a :class:`HarvestError` saying what it holds."""
    files: Counter[str] = Counter()
    hidden: list[str] = []
    other: dict[str, list[str]] = {}
    for where, dirs, names in os.walk(folder):
        base = Path(where).relative_to(folder)
        hidden += sorted((base / d).as_posix() + "/" for d in dirs if d.startswith("."))
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            suffix = Path(name).suffix.lower()
            if name.startswith("."):
                hidden.append((base / name).as_posix())
            elif suffix in KINDS:
                files[KINDS[suffix]] += 1
            else:
                other.setdefault(suffix or "(no extension)", []).append((base / name).as_posix())
    skipped = [f"{count_of(len(names), suffix + ' file')} ({_names(names)}): not a document type "
               f"ingest reads ({READS})" + (
                   "; a chat export is imported with `hive-mind harvest import auto PATH`"
                   if suffix in _CHATS else "")
               for suffix, names in sorted(other.items())]
    if hidden:
        skipped.append(f"{len(hidden):,} hidden ({_names(hidden)}): hidden files and folders "
                       "are not read")
    if not files:
        found = "; ".join(skipped) or "it is empty"
        raise HarvestError(f"no documents to ingest ({READS}) in this folder: {found}",
                           path=str(folder))
    return FolderPlan({k: files[k] for k in _TYPES if files[k]}, tuple(skipped))


def lenient(kind: str, left_out: list[str]) -> Callable[[Path | str], Iterator[HarvestItem]]:
    """A parser of ``kind``'s files in a folder that appends ``"file: reason"`` to ``left_out``
    for each file it cannot read (the import's deadline still stops it)."""
    suffixes, read = _TYPES[kind]

    def parse(target: Path | str) -> Iterator[HarvestItem]:
        for path, key in resolve_target(target, suffixes, kind).files:
            try:
                item = read(path, key)
            except HarvestError as exc:
                budget.check(str(path))  # out of time: not this file's fault
                left_out.append(f"{key}: {exc.reason}")
                continue
            if item is not None:
                yield item
    return parse

