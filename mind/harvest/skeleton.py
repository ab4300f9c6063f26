"""Reading the start of a JSON value within bounds, for recognising documents
(:mod:`mind.harvest.detect`).

A sniff reads one document for at most :data:`SNIFF_LIMIT` bytes and :data:`SNIFF_EVENTS`
parser events; detection (``harvest import auto``, which needs a sample, not every document)
also spends at most :data:`INPUT_SNIFF_EVENTS` over all the documents of one input
(:class:`SniffBudget`). What it keeps of a value is a *skeleton*
(:func:`build`): :data:`SKELETON_DEPTH` levels, the first :data:`SKELETON_ITEMS` items of an
array, :data:`SKELETON_KEYS` keys of an object, :data:`SKELETON_CHARS` characters of a string.
A document of ``[[[],[],…]]`` inflated from a small zip once made the sniff build a million
lists per member; now it costs a few kilobytes and a bounded number of events.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from mind.harvest.inputs import CountingReader
from mind.harvest.jsondepth import ItemTooLargeError

SNIFF_LIMIT: Final = 16 * 1024**2  # bytes read from one document while sniffing
SNIFF_EVENTS: Final = 250_000  # parser events of one document (~0.3 s)
INPUT_SNIFF_EVENTS: Final = 2_000_000  # of all the documents of one detection together
SKELETON_DEPTH: Final = 6
SKELETON_ITEMS: Final = 8
SKELETON_KEYS: Final = 64
SKELETON_CHARS: Final = 256


class SniffBudget:
    """Parser events the sniffs of one detection may still spend (:data:`INPUT_SNIFF_EVENTS`)."""

    def __init__(self, events: int = INPUT_SNIFF_EVENTS) -> None:
        self.events = events

    @classmethod
    def one(cls) -> SniffBudget:
        """The allowance of a document sniffed on its own."""
        return cls(SNIFF_EVENTS)

    def spend(self, n: int) -> None:
        self.events -= n


class Exhausted(Exception):
    """A sniff ran out of events or bytes: what was read so far is the shape."""


def bounded(events: Iterator[tuple[str, str, Any]], raw: CountingReader, budget: SniffBudget
             ) -> Iterator[tuple[str, str, Any]]:
    """``events`` until this document's or the detection's allowance runs out, or the value
    passes the item bounds (:mod:`mind.harvest.jsondepth`): then :class:`Exhausted`."""
    allowed = min(SNIFF_EVENTS, budget.events)
    spent = 0
    try:
        for item in events:
            spent += 1
            if spent > allowed or raw.position > SNIFF_LIMIT:
                raise Exhausted
            yield item
    except ItemTooLargeError:  # the value is larger than one item may be: read far enough
        raise Exhausted from None
    finally:
        budget.spend(spent)


class _Node:
    """A container being built: kept (part of the skeleton) or only walked through."""

    __slots__ = ("kept", "key", "value")

    def __init__(self, value: Any, kept: bool) -> None:
        self.value = value
        self.kept = kept
        self.key: str | None = None

    def room(self) -> bool:
        limit = SKELETON_KEYS if isinstance(self.value, dict) else SKELETON_ITEMS
        return self.kept and len(self.value) < limit

    def add(self, item: Any) -> None:
        if isinstance(self.value, dict):
            self.value[self.key] = item
        else:
            self.value.append(item)


_OPENING: Final = {"start_map": dict, "start_array": list}


def build(events: Iterator[tuple[str, str, Any]]) -> Any:
    """The skeleton of the next value of the event stream: at most :data:`SKELETON_DEPTH`
    levels, :data:`SKELETON_ITEMS` items, :data:`SKELETON_KEYS` keys and
    :data:`SKELETON_CHARS` characters a string (``None`` for the end of an empty array). Out
    of events (:class:`Exhausted`) a container returns as far as it was built."""
    stack: list[_Node] = []
    root: Any = None
    try:
        for _prefix, event, value in events:
            if event == "map_key":
                stack[-1].key = str(value)
            elif event in _OPENING:
                node = _Node(_OPENING[event](), not stack or (
                    stack[-1].room() and len(stack) < SKELETON_DEPTH))
                if not stack:
                    root = node.value
                elif node.kept:
                    stack[-1].add(node.value)
                stack.append(node)
            elif event in ("end_map", "end_array"):
                if not stack:
                    return None  # the end of an empty array: no first element
                stack.pop()
                if not stack:
                    return root
            else:
                item = value[:SKELETON_CHARS] if isinstance(value, str) else value
                if not stack:
                    return item
                if stack[-1].room():
                    stack[-1].add(item)
    except Exhausted:
        if isinstance(root, dict | list):
            return root
        raise
    return root
