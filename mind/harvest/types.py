"""What every harvest adapter yields: items made of turns, with stable ids and their position.

Adapters (one module per source in this package) are pure parsers: they read a path (file,
directory or ``.zip``) or a string and *stream* :class:`HarvestItem` objects in a deterministic
order, never holding a whole export in memory. The writer (``hive_mind``/``workers``) turns each
turn into one frame; it never re-parses.

Item model
----------
- A *conversation* item has one :class:`Turn` per message turn (the branch the user kept, in
  order). Every other kind (memory, instruction, preference, artifact, rule, decision, document)
  has one or more turns too: a document section, a memory, an instruction, each as one turn whose
  ``role`` is ``"document"`` and whose ``speaker`` names where it came from.
- ``item_id`` and ``turn_id`` are stable: the same input gives the same ids (:func:`stable_id`),
  so a re-import writes nothing new and a newer export adds only what is new. A turn is keyed
  ``source:item_id:turn_id`` (:func:`external_id`), under its ``home`` item instead when it
  belongs to another item too.
- ``timestamp`` values are house ISO strings (UTC, ``Z``) or ``None`` when the source has none.
- ``position`` says where the item sits in the input ("conversations.json: conversation 17"); it
  goes into error messages and resume bookkeeping.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from vocabulary.enums import Importance
from vocabulary.limits import MAX_EXTERNAL_ID_CHARS

Role = Literal["user", "assistant", "system", "tool", "document"]
ItemKind = Literal[
    "conversation", "memory", "instruction", "preference", "artifact", "rule", "decision",
    "document",
]
ROLES: Final = ("user", "assistant", "system", "tool", "document")
ITEM_KINDS: Final = (
    "conversation", "memory", "instruction", "preference", "artifact", "rule", "decision",
    "document",
)
STABLE_ID_HEX: Final = 40
PREVIOUS_KEY: Final = "previous_external_id"
"""Turn metadata naming the external id the turn was stored under by an older version of its
adapter (ids that changed scheme): the writer re-keys that frame instead of duplicating it, and
never stores this key (:meth:`mind.harvest.store.HarvestStore.adopt_previous_keys`)."""


def stable_id(source: str, *parts: object) -> str:
    """First 40 hex chars of sha256 over ``[source, *parts]`` joined by NUL.

    ``None`` parts count as empty fields; numbers are stringified. Same input → same id.
    """
    fields = [source, *("" if p is None else str(p) for p in parts)]
    return hashlib.sha256("\x00".join(fields).encode("utf-8")).hexdigest()[:STABLE_ID_HEX]


def external_id(source: str, item_id: str, turn_id: str) -> str:
    """The frame key of one turn: ``source:item_id:turn_id`` (hashed when too long)."""
    ext = f"{source}:{item_id}:{turn_id}"
    return ext if len(ext) <= MAX_EXTERNAL_ID_CHARS else f"{source}:{stable_id(source, ext)}"


def content_ids(source: str, key: str, sections: Iterable[tuple[object, str]]) -> list[str]:
    """Turn ids of a document's sections from what they say: ``stable_id(source, key, label,
    sha256(text)[:16], n)`` with ``n`` counting repeats of the same label + text. Re-importing
    an unchanged document writes nothing; an edited section, or another document under the
    same key (two ``notes.txt`` from different folders), gets new ids, so its text is stored
    instead of being taken for what was imported before."""
    seen: dict[tuple[str, str], int] = {}
    ids = []
    for label, text in sections:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        slot = ("" if label is None else str(label), digest)
        n = seen.get(slot, 0)
        seen[slot] = n + 1
        ids.append(stable_id(source, key, slot[0], digest, n))
    return ids


@dataclass(frozen=True, slots=True)
class Turn:
    """One message turn (or one document section): becomes one frame."""

    turn_id: str  # stable within the item (the source's message id, or a stable_id)
    role: Role
    speaker: str  # display name: "User", "ChatGPT", "Claude", "Alice", a file name …
    text: str  # whole text; never truncated by an adapter
    timestamp: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    importance: Importance | None = None  # the turn's own (an export's); None: the import's
    verbatim: bool = False  # ``text`` is the memory's whole content: no "<speaker>: " before it
    home: str | None = None
    """The item whose key the turn is stored under when it is another item's turn too (a
    ChatGPT conversation branched off another repeats its messages under the same ids): the
    message is stored once per mind, whichever of the two is imported first."""


@dataclass(frozen=True, slots=True)
class HarvestItem:
    item_id: str  # stable id of the conversation / document / memory
    source: str  # adapter name: chatgpt, claude, claude-code, gemini, markdown, …
    kind: ItemKind
    title: str
    turns: tuple[Turn, ...]
    timestamp: str | None = None  # the item's own time (conversation start, file mtime …)
    position: str = ""  # where in the input, for errors and progress
    metadata: dict[str, Any] = field(default_factory=dict)
