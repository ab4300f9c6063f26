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

The scan runs at C speed per chunk: escapes (``\\"``, ``\\\\`` …) are cut out by one regex
substitution, what remains is reduced to the quotes, brackets and commas, and numpy does the
rest — a mark after an odd number of quotes is inside a string (text, not structure), and the
running depth over the others is a cumulative sum. A string still open at the chunk's end, or a
backslash as its last byte, is carried to the next chunk. No bytes are kept beyond the chunk
being read.
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
_ESCAPE: Final = re.compile(rb"\\.", re.S)
_NOT_MARK: Final = bytes(b for b in range(256) if b not in b'"[]{},')
_QUOTE, _COMMA = ord('"'), ord(",")
_OPEN, _OPEN_OBJECT, _CLOSE, _CLOSE_OBJECT = b"[{]}"


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
        self._escaped = False  # the previous chunk ended on a backslash: it escapes our first byte

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
        if self._escaped:  # the chunk before ended on a backslash: this byte is escaped
            data = data[1:]
            self._escaped = False
        plain = _ESCAPE.sub(b"", data)  # an escaped character neither ends a string nor nests
        if plain.endswith(b"\\"):
            self._escaped = True
            plain = plain[:-1]
        marks = np.frombuffer(plain.translate(None, _NOT_MARK), dtype=np.uint8)
        quotes = marks == _QUOTE
        before = np.cumsum(quotes) - quotes + self._in_string  # quotes before each mark
        self._in_string = bool((int(quotes.sum()) + self._in_string) % 2)
        self._count(marks[~quotes & (before % 2 == 0)])  # outside strings

    def _count(self, codes: np.ndarray) -> None:
        if not len(codes):
            return
        opens = (codes == _OPEN) | (codes == _OPEN_OBJECT)
        steps = opens.astype(np.int64) - ((codes == _CLOSE) | (codes == _CLOSE_OBJECT))
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
