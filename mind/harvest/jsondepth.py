"""A nesting limit and item bounds for streamed JSON, checked on the bytes before the parser
sees them.

``ijson`` builds a prefix string per nesting level (``item.item.item…``), so 100,000 nested
brackets — a 200 KB file — ask it for ~25 GB and take the process down; Python's ``json``
raises ``RecursionError`` instead. :class:`DepthLimitedReader` wraps the raw stream of a JSON or
JSONL document and raises :class:`HarvestError` as soon as objects/arrays nest deeper than
:data:`MAX_JSON_DEPTH` (chat exports nest about ten deep).

It also bounds what the parser builds for *one item* — a value below ``item_depth`` (an element
of the top-level array at 1, of an array under a top-level key at 2; a whole JSON Lines record
or document at 0): at most :data:`MAX_ITEM_CONTAINERS` arrays/objects, :data:`MAX_ITEM_VALUES`
values (commas) and :data:`MAX_ITEM_BYTES` bytes. ``[[],[],…]`` inflated from a small zip is
a few bytes per Python list: 64 MB of it became gigabytes inside ``ijson.items``. An item is
refused (:class:`ItemTooLargeError`) one chunk after it passes a bound, before the parser
builds it; a structural character at ``item_depth`` or above (a comma between items, a
closing bracket) starts the next item's count.

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
MAX_ITEM_CONTAINERS: Final = 1_000_000  # ~100,000 message nodes of a ChatGPT conversation
MAX_ITEM_VALUES: Final = 4_000_000
MAX_ITEM_BYTES: Final = 64 * 1024**2
_STRING_BODY: Final = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.S)  # unrolled: fast
_STRING: Final = re.compile(rb'"' + _STRING_BODY.pattern + rb'"', re.S)
_NOT_STRUCTURE: Final = bytes(b for b in range(256) if b not in b"[]{},")
_OPENERS: Final = np.frombuffer(b"[{", dtype=np.uint8)
_CLOSERS: Final = np.frombuffer(b"]}", dtype=np.uint8)
_COMMA: Final = ord(",")


class ItemTooLargeError(HarvestError):
    """One item of a JSON document is larger than the item bounds (see the module)."""


def _since_reset(counts: np.ndarray, reset: np.ndarray, carry: int) -> np.ndarray:
    """For each position, how many of ``counts`` fell after the last reset position (before
    any: plus ``carry``, the count the previous chunk ended with)."""
    cum = np.cumsum(counts)
    last = np.maximum.accumulate(np.where(reset, np.arange(len(counts)), -1))
    base = np.where(last >= 0, cum[np.maximum(last, 0)], -carry)
    return cum - base


class DepthLimitedReader(io.RawIOBase):
    """``raw`` as read, refusing JSON nested deeper than ``limit`` (a :class:`HarvestError`
    naming ``name`` and the byte offset)."""

    def __init__(self, raw: io.RawIOBase, name: str, limit: int = MAX_JSON_DEPTH,
                 item_depth: int = 0, item_bytes: int | None = MAX_ITEM_BYTES) -> None:
        self._raw = raw
        self.name = name
        self.limit = limit
        self.item_depth = item_depth
        self.item_bytes = item_bytes  # None: the caller bounds bytes itself (JSONL lines)
        self.depth = 0
        self.position = 0
        self._containers = 0  # the current item's, so far
        self._values = 0
        self._item_bytes = 0
        self._in_string = False
        self._escaped = False  # the previous chunk ended on a backslash inside a string

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = self._raw.readinto(buffer) or 0
        if n:
            self._item_bytes += n
            self._scan(bytes(memoryview(buffer)[:n]))
            self.position += n
            if self.item_bytes is not None and self._item_bytes > self.item_bytes:
                self._too_large(f"{self.item_bytes:,} bytes")
        return n

    def _too_large(self, what: str) -> None:
        raise ItemTooLargeError(f"one item holds more than {what} (not a chat export)",
                                path=self.name, position=f"near byte {self.position:,}")

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
        self._count(outside.translate(None, _NOT_STRUCTURE))

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

    def _count(self, structure: bytes) -> None:
        if not structure:
            return
        codes = np.frombuffer(structure, dtype=np.uint8)
        opens = np.isin(codes, _OPENERS)
        steps = opens.astype(np.int64) - np.isin(codes, _CLOSERS)
        running = np.cumsum(steps) + self.depth
        deepest = int(running.max())
        if deepest > self.limit:
            raise HarvestError(
                f"JSON nested deeper than {self.limit} levels (not a chat export)",
                path=self.name, position=f"near byte {self.position:,}")
        self.depth = max(0, int(running[-1]))
        reset = running <= self.item_depth  # between items, or outside them
        containers = _since_reset(opens, reset, self._containers)
        values = _since_reset(codes == _COMMA, reset, self._values)
        if int(containers.max()) > MAX_ITEM_CONTAINERS:
            self._too_large(f"{MAX_ITEM_CONTAINERS:,} arrays and objects")
        if int(values.max()) > MAX_ITEM_VALUES:
            self._too_large(f"{MAX_ITEM_VALUES:,} values")
        self._containers, self._values = int(containers[-1]), int(values[-1])
        if reset.any():
            self._item_bytes = 0
