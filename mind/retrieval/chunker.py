"""Split long text into overlapping chunks for embedding.

Pure function. Paragraphs (blank-line separated) are packed greedily up to ``max_chars``;
an oversized paragraph is split at sentence ends, an oversized sentence hard-sliced. Chunk
``i >= 1`` is prefixed with the last ``overlap_chars`` of chunk ``i-1``'s own text (not of its
already-overlapped text, so overlaps never compound). Offsets are character
offsets into the input and never include the overlap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_CHARS = 2000
OVERLAP_CHARS = 200
MIN_CHUNK_CHARS = 1500

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"[.!?](?:\s+|$)")


@dataclass(frozen=True, slots=True)
class Chunk:
    index: int
    text: str
    char_start: int
    char_end: int


def _paragraphs(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    pos = 0
    for match in _PARAGRAPH_BREAK.finditer(text):
        if text[pos : match.start()].strip():
            spans.append((pos, match.start()))
        pos = match.end()
    if text[pos:].strip():
        spans.append((pos, len(text)))
    return spans or [(0, len(text))]


def _split_long(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    if end - start <= max_chars:
        return [(start, end)]
    out: list[tuple[int, int]] = []
    pos = start
    for match in _SENTENCE_END.finditer(text, start, end):
        if text[pos : match.end()].strip():
            out.append((pos, match.end()))
        pos = match.end()
    if pos < end and text[pos:end].strip():
        out.append((pos, end))
    sliced: list[tuple[int, int]] = []
    for s, e in out:
        sliced.extend((i, min(i + max_chars, e)) for i in range(s, e, max_chars))
    return sliced


def chunk_text(
    text: str,
    *,
    max_chars: int = MAX_CHARS,
    overlap_chars: int = OVERLAP_CHARS,
    min_chunk_chars: int = MIN_CHUNK_CHARS,
) -> list[Chunk]:
    if not text:
        return []
    if len(text) <= min_chunk_chars:
        return [Chunk(0, text, 0, len(text))]
    spans: list[tuple[int, int]] = []
    for start, end in _paragraphs(text):
        spans.extend(_split_long(text, start, end, max_chars))
    groups: list[list[tuple[int, int]]] = []
    size = 0
    for span in spans:
        length = span[1] - span[0]
        if groups and size + 2 + length <= max_chars:
            groups[-1].append(span)
            size += 2 + length
        else:
            groups.append([span])
            size = length
    chunks: list[Chunk] = []
    previous = ""
    for i, group in enumerate(groups):
        own = "\n\n".join(text[s:e] for s, e in group)
        body = own
        if i > 0 and overlap_chars > 0:
            tail = previous[-overlap_chars:]
            body = tail + ("" if tail.endswith("\n") else "\n") + own
        chunks.append(Chunk(i, body, group[0][0], group[-1][1]))
        previous = own
    return chunks
