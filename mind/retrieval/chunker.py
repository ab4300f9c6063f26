"""Split a long text into overlapping windows for embedding.

Pure function. A window holds at most ``max_chars`` characters, :data:`MAX_CHARS` by default:
~110 word pieces of English prose (~4.5 characters a piece), the length the default model,
all-MiniLM-L6-v2, was trained on (128 pieces), and well inside the 256 pieces it reads before it
truncates (a text is cut there only below 2 characters a piece). Longer windows embed worse:
on SciFact, windows of ~256 pieces gave the vector lane nDCG@10 0.677, of ~128 pieces 0.702
(docs/performance.md); a window it truncates is not embedded past its first 256 pieces at all.

* Sentences are the units: a sentence ends at ``.``/``!``/``?`` before whitespace or before a
  capital right after a lower-case letter or digit (text extracted from PDFs and web pages often
  lost that space: ``neurons.Despite``), and at a blank line. A sentence longer than a window
  is cut at its last space that fits (hard, only when it has none).
* Sentences are packed greedily; each window after the first starts with the last sentence of
  the window before it (when that sentence is at most half a window), so a statement that
  straddles two windows is whole in one of them.
* A text whose first line is a heading (at most :data:`MAX_HEADING_CHARS`, followed by a blank
  line: a markdown section's ``# title``, a document's title) repeats it at the head of every
  window: a window of a scientific abstract without its title lost nDCG@10 0.015 on SciFact.
* Offsets are character offsets of the window's own text in the input: neither the heading nor
  the overlap.
* A text of at most ``max_chars`` is one window, itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_CHARS = 500
MAX_HEADING_CHARS = 200

_SENTENCE_END = re.compile(r"[.!?](?:\s+|(?<=[a-z0-9][.!?])(?=[A-Z]))|\n\s*\n")
_HEADING = re.compile(r"([^\n]+)\n[ \t]*\n")


@dataclass(frozen=True, slots=True)
class Chunk:
    index: int
    text: str
    char_start: int
    char_end: int


def _heading(text: str) -> re.Match[str] | None:
    match = _HEADING.match(text)
    if match is None or len(match.group(1).strip()) > MAX_HEADING_CHARS \
            or not text[match.end():].strip():
        return None
    return match


def heading(text: str) -> str:
    """The text's first line when it is a heading: short and followed by a blank line, with
    more text after it; else ``""``."""
    match = _heading(text)
    return "" if match is None else match.group(1).strip()


def sentences(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """``text[start:end]`` as sentence spans (trimmed, none blank), each at most
    ``max_chars``: a longer sentence is cut at its last space that fits."""
    spans: list[tuple[int, int]] = []
    pos = start
    for match in [*_SENTENCE_END.finditer(text, start, end), None]:
        stop = end if match is None else match.end()
        s, e = pos, stop
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        while e - s > max_chars:
            cut = text.rfind(" ", s + 1, s + max_chars + 1)
            cut = s + max_chars if cut <= s else cut
            spans.append((s, cut))
            s = cut
            while s < e and text[s].isspace():
                s += 1
        if e > s:
            spans.append((s, e))
        pos = stop
        if match is None:
            break
    return spans


def chunk_text(text: str, *, max_chars: int = MAX_CHARS) -> list[Chunk]:
    if not text:
        return []
    if len(text) <= max_chars:
        return [Chunk(0, text, 0, len(text))]
    head = _heading(text)
    prefix = "" if head is None else f"{head.group(1).strip()}\n\n"
    budget = max(max_chars - len(prefix), max_chars // 2)
    body = 0 if head is None else head.end()
    units = sentences(text, body, len(text), budget)
    chunks: list[Chunk] = []
    first = 0  # the current window's first unit (its overlap, when it has one)
    own = 0  # its first unit of its own
    for i in range(1, len(units) + 1):
        if i < len(units) and units[i][1] - units[first][0] <= budget:
            continue
        start = units[first][0]
        chunks.append(Chunk(len(chunks), prefix + text[start:units[i - 1][1]], units[own][0],
                            units[i - 1][1]))
        last = units[i - 1]
        overlap = (i < len(units) and last[1] - last[0] <= budget // 2
                   and units[i][1] - last[0] <= budget)
        first, own = (i - 1, i) if overlap else (i, i)
    return chunks
