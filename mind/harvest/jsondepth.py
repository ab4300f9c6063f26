"""A nesting limit for streamed JSON, checked on the bytes before the parser sees them.

``ijson`` builds a prefix string per nesting level (``item.item.item…``), so 100,000 nested
brackets — a 200 KB file — ask it for ~25 GB and take the process down; Python's ``json``
raises ``RecursionError`` instead. :class:`DepthLimitedReader` wraps the raw stream of a JSON or
JSONL document and raises :class:`HarvestError` as soon as objects/arrays nest deeper than
:data:`MAX_JSON_DEPTH` (chat exports nest about ten deep).

The scan runs at C speed per chunk: complete strings are cut out by one regex substitution
(a bracket inside a string is text), an unterminated string at the chunk's end is carried as
state (with a pending backslash), and the running depth over the remaining ``[]{}`` is a
numpy cumulative sum. No bytes are kept beyond the chunk being read.
"""

from __future__ import annotations

import io
import re
from typing import Final

import numpy as np

from mind.harvest.errors import HarvestError

MAX_JSON_DEPTH: Final = 128
_STRING_BODY: Final = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.S)  # unrolled: fast
_STRING: Final = re.compile(rb'"' + _STRING_BODY.pattern + rb'"', re.S)
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")
_OPENERS: Final = np.frombuffer(b"[{", dtype=np.uint8)


class DepthLimitedReader(io.RawIOBase):
    """``raw`` as read, refusing JSON nested deeper than ``limit`` (a :class:`HarvestError`
    naming ``name`` and the byte offset)."""

    def __init__(self, raw: io.RawIOBase, name: str, limit: int = MAX_JSON_DEPTH) -> None:
        self._raw = raw
        self.name = name
        self.limit = limit
        self.depth = 0
        self.position = 0
        self._in_string = False
        self._escaped = False  # the previous chunk ended on a backslash inside a string

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = self._raw.readinto(buffer) or 0
        if n:
            self._scan(bytes(memoryview(buffer)[:n]))
            self.position += n
        return n

    def _scan(self, data: bytes) -> None:
        start = self._leave_string(data) if self._in_string else 0
        if start >= len(data):
            return
        outside = _STRING.sub(b"", data[start:] if start else data)
        quote = outside.find(b'"')
        if quote >= 0:  # a string runs on into the next chunk: its start is the only quote left
            self._in_string = True
            self._escaped = False
            self._leave_string(outside[quote + 1:])
            outside = outside[:quote]
        self._count(outside.translate(None, _NOT_BRACKETS))

    def _leave_string(self, data: bytes) -> int:
        """Consume the rest of a string begun earlier; the offset after its closing quote (or
        ``len(data)`` when it goes on)."""
        begin = 1 if self._escaped and data else 0
        self._escaped = False
        end = _STRING_BODY.match(data, begin).end()  # type: ignore[union-attr]
        if end == len(data):
            return end
        if data[end:end + 1] == b"\\":  # a lone backslash at the very end
            self._escaped = True
            return len(data)
        self._in_string = False
        return end + 1

    def _count(self, brackets: bytes) -> None:
        if not brackets:
            return
        codes = np.frombuffer(brackets, dtype=np.uint8)
        steps = np.where(np.isin(codes, _OPENERS), 1, -1)
        running = np.cumsum(steps) + self.depth
        deepest = int(running.max())
        if deepest > self.limit:
            raise HarvestError(
                f"JSON nested deeper than {self.limit} levels (not a chat export)",
                path=self.name, position=f"near byte {self.position:,}")
        self.depth = max(0, int(running[-1]))
