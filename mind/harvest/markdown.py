"""Markdown notes → one document item per file, one turn per ``#``/``##``/``###`` section.

A section's text is kept whole (no 4000-character cut; the engine chunks
long frames for embedding; only a section beyond ``MAX_SECTION_CHARS`` is split into continuation
turns, to stay under the frame limit), a heading with no body keeps its heading as its content
instead of vanishing, the preamble before the first heading is its own section (level 0),
headings inside fenced code blocks do not split, and ids are stable: the item is
``stable_id("markdown", key)`` and each section's id comes from its heading and text
(:func:`~mind.harvest.types.content_ids`), ``key`` being the path relative to the harvested
directory (the file name for a single file) or ``sha256:<hash>`` of a raw string: re-importing
a file writes nothing, an edited section is stored as a new memory, and another file with the
same name is not mistaken for this one. Bold terms (``**x**``/``__x__``) are collected into
``metadata["entities"]``. A YAML front-matter block is kept whole in ``metadata["frontmatter"]``
(its ``title:`` names the item) rather than becoming a section. HTML files (``.html``/``.htm``,
a saved page or a notes app's export) are read as their text (:mod:`mind.harvest.html`: headings
become ``#`` lines, so they cut sections the same way; ``<title>`` names the item).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from mind.harvest import html
from mind.harvest.inputs import read_text
from mind.harvest.plaintext import content_key, file_timestamp, resolve_target, split_parts
from mind.harvest.types import HarvestItem, Turn, content_ids, stable_id

SOURCE: Final = "markdown"
SUFFIXES: Final = (".md", ".markdown")
HTML_SUFFIXES: Final = (".html", ".htm")
MAX_ENTITY_CHARS: Final = 80
MAX_SECTION_CHARS: Final = 1_000_000

_HEADING = re.compile(r"^ {0,3}(#{1,3})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|(?<![\w_])__(?=\S)(.+?)(?<=\S)__(?![\w_])")
_FRONTMATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_YAML_LINE = re.compile(r"^(?:[\w\"'.-][\w\"'./ -]{0,39}:(?:\s|$)|\s+\S|-\s|#)")
_FM_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Section:
    heading: str  # heading text without the hashes; "" for the preamble
    level: int  # 1-3; 0 for the preamble
    text: str  # the section as written (heading line included), trimmed


def split_sections(text: str) -> list[Section]:
    """Cut markdown at level 1-3 ATX headings outside fenced code. Blank sections are dropped;
    a heading-only section keeps its heading line as its text."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    sections: list[Section] = []
    heading, level = "", 0
    lines: list[str] = []
    fence = ""

    def close() -> None:
        body = "\n".join(lines).strip("\n")
        if body.strip():
            sections.append(Section(heading, level, body.rstrip()))

    for line in text.split("\n"):
        fence_match = _FENCE.match(line)
        if fence_match:
            marker = fence_match.group(1)
            if not fence:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = ""
        elif not fence and (match := _HEADING.match(line)):
            close()
            heading, level, lines = match.group(2).strip(), len(match.group(1)), []
        lines.append(line)
    close()
    return sections


def bold_terms(text: str) -> list[str]:
    """Distinct bold terms (case-insensitively) in order of first appearance; short,
    whitespace-normalised ones only."""
    seen: dict[str, str] = {}
    for match in _BOLD.finditer(text):
        term = " ".join((match.group(1) or match.group(2)).split()).strip("*_ ")
        if term and len(term) <= MAX_ENTITY_CHARS:
            seen.setdefault(term.casefold(), term)
    return list(seen.values())


def section_turns(source: str, key: str, sections: list[Section], *, speaker: str,
                  timestamp: str | None) -> list[Turn]:
    """One turn per section, ids from heading + text (``content_ids``). A section beyond
    ``MAX_SECTION_CHARS`` (far above what one memory should hold, yet below the frame limit) is
    split at paragraph/line/sentence boundaries into continuation turns: split, never cut."""
    turns: list[Turn] = []
    labels: list[tuple[object, str]] = []
    for index, section in enumerate(sections):
        pieces = ([section.text] if len(section.text) <= MAX_SECTION_CHARS
                  else split_parts(section.text, MAX_SECTION_CHARS))
        for part, text in enumerate(pieces, start=1):
            meta: dict[str, object] = {"heading": section.heading, "level": section.level,
                                       "section": index + 1}
            if len(pieces) > 1:
                meta.update(part=part, total_parts=len(pieces))
            if terms := bold_terms(text):
                meta["entities"] = terms
            labels.append((section.heading, text))
            turns.append(Turn("", "document", speaker, text, timestamp, meta))
    return [replace(turn, turn_id=ident)
            for turn, ident in zip(turns, content_ids(source, key, labels), strict=True)]


def _frontmatter(text: str) -> tuple[str, str]:
    """(front matter block or "", the rest). Only a block that reads as YAML (``key:`` lines,
    list items, indented continuations, comments) counts: a leading ``---`` rule followed by
    prose stays content."""
    match = _FRONTMATTER.match(text)
    if not match:
        return "", text
    block = (match.group(1) or "").rstrip("\n")
    if not all(_YAML_LINE.match(line) for line in block.split("\n") if line.strip()):
        return "", text
    return block, text[match.end():]


def build_item(
    text: str, key: str, *, name: str, fallback_title: str, timestamp: str | None,
    metadata: dict[str, object],
) -> HarvestItem | None:
    """One document item of ``text``'s sections, or ``None`` when it is blank."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    front, body = _frontmatter(text)
    sections = split_sections(body)
    if not sections:
        if not front.strip():
            return None
        sections = [Section("", 0, f"---\n{front}\n---")]
    turns = section_turns(SOURCE, key, sections, speaker=name, timestamp=timestamp)
    fm_title = _FM_TITLE.search(front)
    first_h1 = next((s.heading for s in sections if s.level == 1 and s.heading), "")
    title = (fm_title.group(1).strip("'\" ") if fm_title else "") or first_h1 or fallback_title
    item_meta: dict[str, object] = {**metadata, "content_type": "note",
                                    "sections": len(turns), "chars": len(text)}
    entities = bold_terms(body)
    if entities:
        item_meta["entities"] = entities
    if front:
        item_meta["frontmatter"] = front
    return HarvestItem(
        item_id=stable_id(SOURCE, key), source=SOURCE, kind="document", title=title,
        turns=tuple(turns), timestamp=timestamp, position=name, metadata=item_meta,
    )


def parse(target: Path | str) -> Iterator[HarvestItem]:
    """Markdown or HTML file, directory (``*.md``/``*.markdown``/``*.html``/``*.htm``,
    recursive) or raw markdown string."""
    resolved = resolve_target(target, SUFFIXES + HTML_SUFFIXES, "markdown")
    if resolved.text is not None:
        item = build_item(resolved.text, content_key(resolved.text), name="markdown",
                          fallback_title="Markdown notes", timestamp=None, metadata={})
        if item is not None:
            yield item
        return
    for path, key in resolved.files:
        item = read_file(path, key)
        if item is not None:
            yield item


def read_file(path: Path, key: str) -> HarvestItem | None:
    """One markdown or HTML file as the item keyed ``key`` (``None`` when it is blank)."""
    text, title = read_text(path), path.stem
    if path.suffix.lower() in HTML_SUFFIXES:
        page = html.extract(text)
        text, title = page.text, page.title or title
    return build_item(text, key, name=path.name, fallback_title=title,
                      timestamp=file_timestamp(path), metadata={"file_path": key})
