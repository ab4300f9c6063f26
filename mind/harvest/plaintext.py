"""Plain text files → one document item each, one turn per part of up to ~2000 characters.

Paragraphs are packed into parts, and a paragraph longer than a part is
split at line, then sentence, then word boundaries (a hard cut only for one unbroken run of
characters) — nothing is dropped or cut off; every character of every paragraph lands in a part.
Ids are stable: ``stable_id("plaintext", key)`` for the item and the parts' text for turns
(:func:`~mind.harvest.types.content_ids`), where ``key`` is the file's path relative to the
harvested directory (its name for a single file) or ``sha256:<hash>`` of a raw string.

Also home of the helpers the document adapters share (:func:`split_parts`,
:func:`resolve_target`, :func:`file_timestamp`).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from mind.harvest.errors import HarvestError
from mind.harvest.inputs import read_text
from mind.harvest.types import HarvestItem, Turn, content_ids, stable_id
from mind.timeutil import format_ts

SOURCE: Final = "plaintext"
PART_CHARS: Final = 2000
SUFFIXES: Final = (".txt", ".text")
_MAX_PATH_CHARS: Final = 4096

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\f\v\r]*\n")
# Zero-width split points, coarsest first: after a newline, after a sentence end, before a word.
_BOUNDARIES: Final = (
    re.compile(r"(?<=\n)"),
    re.compile(r"(?<=[.!?…])(?=\s)|(?<=[。！？])"),
    re.compile(r"(?<=\s)(?=\S)"),
)


def _units(text: str, max_chars: int, level: int = 0) -> list[str]:
    """Contiguous pieces of ``text`` (they concatenate back to it), each ≤ ``max_chars``."""
    if len(text) <= max_chars:
        return [text]
    if level == len(_BOUNDARIES):
        return [text[i : i + max_chars] for i in range(0, len(text), max_chars)]
    out: list[str] = []
    for piece in _BOUNDARIES[level].split(text):
        if piece:
            out.extend(_units(piece, max_chars, level + 1))
    return out


def _pack(units: list[str], max_chars: int, joiner: str) -> list[str]:
    parts: list[str] = []
    for unit in units:
        if parts and len(parts[-1]) + len(joiner) + len(unit) <= max_chars:
            parts[-1] += joiner + unit
        else:
            parts.append(unit)
    return parts


def split_paragraph(paragraph: str, max_chars: int = PART_CHARS) -> list[str]:
    """An oversized paragraph → pieces ≤ ``max_chars`` cut at line/sentence/word boundaries."""
    pieces = _pack(_units(paragraph, max_chars), max_chars, "")
    return [p.strip() for p in pieces if p.strip()]


def split_parts(text: str, max_chars: int = PART_CHARS) -> list[str]:
    """Blank-line paragraphs packed greedily into parts of at most ``max_chars`` (joined by a
    blank line); whitespace-only input gives ``[]``."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    pieces: list[str] = []
    for paragraph in _PARAGRAPH_BREAK.split(text):
        paragraph = paragraph.strip()
        if paragraph:
            pieces.extend(split_paragraph(paragraph, max_chars))
    return _pack(pieces, max_chars, "\n\n")


def content_key(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_timestamp(path: Path) -> str | None:
    try:
        return format_ts(datetime.fromtimestamp(path.stat().st_mtime, UTC))
    except (OSError, OverflowError, ValueError):
        return None


def _walk(root: Path, suffixes: tuple[str, ...]) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found.extend(
            Path(folder, f) for f in files
            if not f.startswith(".") and f.lower().endswith(suffixes)
        )
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


@dataclass(frozen=True, slots=True)
class Target:
    """What a document adapter was given: files (each with its stable key) or a raw string."""

    files: tuple[tuple[Path, str], ...] = ()
    text: str | None = None


def resolve_target(target: Path | str, suffixes: tuple[str, ...], kind: str) -> Target:
    """A path (file or directory, walked recursively, dot-dirs skipped, sorted) or, for a string
    that is not an existing path, raw content. A one-line string ending in one of ``suffixes``
    that does not exist is reported as a missing file rather than harvested as text."""
    if isinstance(target, str):
        looks_like_path = (
            len(target) < _MAX_PATH_CHARS and "\n" not in target and "\x00" not in target
        )
        if not looks_like_path or not Path(target).exists():
            if looks_like_path and target.strip().lower().endswith(suffixes):
                raise HarvestError("no such file", path=target)
            return Target(text=target)
        target = Path(target)
    if not target.exists():
        raise HarvestError("no such file or directory", path=str(target))
    if target.is_dir():
        files = _walk(target, suffixes)
        if not files:
            raise HarvestError(
                f"no {kind} files ({', '.join('*' + s for s in suffixes)}) in this directory",
                path=str(target),
            )
        return Target(files=tuple((f, f.relative_to(target).as_posix()) for f in files))
    return Target(files=((target, target.name),))


def _short_title(text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first if len(first) <= 80 else first[:79].rstrip() + "…"


def build_item(
    text: str, key: str, *, name: str, title: str, timestamp: str | None,
    metadata: dict[str, object],
) -> HarvestItem | None:
    parts = split_parts(text)
    if not parts:
        return None
    item_id = stable_id(SOURCE, key)
    ids = content_ids(SOURCE, key, ((None, part) for part in parts))
    turns = tuple(
        Turn(
            turn_id=ident, role="document", speaker=name, text=part,
            timestamp=timestamp, metadata={"part": i + 1, "total_parts": len(parts)},
        )
        for i, (part, ident) in enumerate(zip(parts, ids, strict=True))
    )
    return HarvestItem(
        item_id=item_id, source=SOURCE, kind="document", title=title, turns=turns,
        timestamp=timestamp, position=name,
        metadata={**metadata, "content_type": "note", "total_parts": len(parts),
                  "chars": len(text)},
    )


def parse(target: Path | str) -> Iterator[HarvestItem]:
    """Text file, directory of ``*.txt`` files, or a raw string → document items."""
    resolved = resolve_target(target, SUFFIXES, "text")
    if resolved.text is not None:
        item = build_item(
            resolved.text, content_key(resolved.text), name="text",
            title=_short_title(resolved.text) or "Text", timestamp=None, metadata={},
        )
        if item is not None:
            yield item
        return
    for path, key in resolved.files:
        item = read_file(path, key)
        if item is not None:
            yield item


def read_file(path: Path, key: str) -> HarvestItem | None:
    """One text file as the item keyed ``key`` (``None`` when it is blank)."""
    return build_item(read_text(path), key, name=path.name, title=path.stem,
                      timestamp=file_timestamp(path), metadata={"file_path": key})
