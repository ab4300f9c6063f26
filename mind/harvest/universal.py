"""The universal import format, for any chat tool without its own adapter.

One JSON object per line (JSONL)::

    {"conversation_id", "message_id", "speaker", "role"?, "text", "timestamp"?, "title"?,
     "importance"?, "verbatim"?, "metadata"?}

(one line is a file too), or one such object as the whole document, or a JSON array of such
objects, or a JSON array of conversations
``{"conversation_id", "title"?, "messages": [...]}`` (also under a top-level
``{"conversations": [...]}``). ``role`` is ``user|assistant|system``
(``human``/``ai``/``bot``/``model``/``tool``/``document`` are understood); without it the role is
the one that speaker had explicitly earlier in the file, else inferred from ``speaker`` ("user",
"human", "me" → user, anything else → assistant). ``speaker`` may be any name (it defaults from
``role`` when absent). ``timestamp`` is ISO-8601 (naive means UTC) or epoch
seconds/milliseconds. ``importance`` (``critical|important|normal|temporary|deprecated``) is the
memory's own, instead of the import's. A message is stored as ``"<speaker>: <text>"``; with
``"verbatim": true`` its text is the memory's whole content, kept as it is (``hive-mind
export`` writes both kinds, so its output re-imports into the same memories).

Flat messages are grouped by consecutive runs of ``conversation_id`` so memory stays bounded by
one conversation. When a conversation id comes back later in the file, that run becomes another
item with the *same* ``item_id`` (so its turns land in the same session) and the title seen first.
Missing required fields, bad roles or timestamps and malformed lines are a :class:`HarvestError`
naming the line (JSONL) or entry (JSON array).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any, Final

from mind.harvest.errors import HarvestError
from mind.harvest.jsonstream import (
    JsonSource,
    as_dict,
    as_list,
    as_str,
    check_turn,
    file_source,
    id_str,
    iter_array,
    iter_jsonl,
    read_document,
    read_key,
    top_level,
    ts_from_any,
)
from mind.harvest.types import HarvestItem, Role, Turn, stable_id
from vocabulary.enums import IMPORTANCES, Importance

SOURCE: Final = "universal"
EXPECTED: Final = ("universal format: JSONL of {conversation_id, message_id, speaker, text, ...} "
                   "or a JSON array of such messages or of {conversation_id, messages} objects")
_ROLES: Final[dict[str, Role]] = {
    "user": "user", "human": "user", "assistant": "assistant", "ai": "assistant",
    "bot": "assistant", "model": "assistant", "system": "system", "tool": "tool",
    "document": "document",
}
_USERISH: Final = frozenset({"user", "human", "me"})
_MAX_SPEAKERS: Final = 10_000  # speakers whose explicit role is remembered
_DEFAULT_SPEAKER: Final[dict[Role, str]] = {
    "user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool",
    "document": "Document",
}


def parse(target: Path | str) -> Iterator[HarvestItem]:
    path = Path(target)
    if path.is_dir():
        raise HarvestError(f"is a directory; expected a file in the {EXPECTED}", path=str(path))
    src = file_source(path)
    if _is_jsonl(path, src):
        yield from _Grouper(src).run(_jsonl_rows(src))
        return
    if top_level(src) == "object":
        yield from _Grouper(src).run(_object_rows(src))
        return
    yield from _Grouper(src).run((f"entry {i}", v) for i, v in iter_array(src, what="entry"))


def _object_rows(src: JsonSource) -> Iterator[tuple[str, Any]]:
    """The conversations of ``{"conversations": [...]}``, or the document itself when it is
    one message (``{"conversation_id", "text", …}``)."""
    found = False
    for i, value in iter_array(src, "conversations", what="entry"):
        found = True
        yield f"entry {i}", value
    if not found and read_key(src, "conversation_id") is not None:
        yield "the message", read_document(src)


def _is_jsonl(path: Path, src: JsonSource) -> bool:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return True
    if suffix == ".json" or top_level(src) == "array":
        return False
    with closing(iter_jsonl(src)) as lines:  # an object per line, or one pretty-printed object?
        first = next(lines, None)
    return first is not None and first.error is None


def _jsonl_rows(src: JsonSource) -> Iterator[tuple[str, Any]]:
    for line in iter_jsonl(src):
        if line.error is not None:
            raise HarvestError(f"{line.error}; expected {EXPECTED}", path=src.path,
                               position=f"line {line.number}")
        yield f"line {line.number}", line.value


class _Grouper:
    def __init__(self, src: JsonSource) -> None:
        self.src = src
        self.titles: dict[str, str] = {}  # one short string per conversation, not per message
        self.speaker_roles: dict[str, Role] = {}  # a role given once holds for that speaker
        self.conv_id: str | None = None
        self.turns: list[Turn] = []
        self.where = ""

    def _fail(self, where: str, message: str) -> HarvestError:
        return HarvestError(f"{message}; expected {EXPECTED}", path=self.src.path, position=where)

    def run(self, rows: Iterator[tuple[str, Any]]) -> Iterator[HarvestItem]:
        for where, raw in rows:
            if not isinstance(raw, dict):
                raise self._fail(where, f"expected a JSON object, found {type(raw).__name__}")
            if "messages" in raw:
                yield from self._flush()
                yield from self._conversation(where, raw)
                continue
            conv_id = self._required_id(where, raw, "conversation_id")
            if conv_id != self.conv_id:
                yield from self._flush()
                self.conv_id, self.where = conv_id, where
            self._title(conv_id, raw)
            message_id = self._required_id(where, raw, "message_id")
            turn = self._turn(where, raw, message_id)
            if turn is not None:
                self.turns.append(turn)
        yield from self._flush()

    def _required_id(self, where: str, obj: dict[str, Any], key: str) -> str:
        value = id_str(obj.get(key))
        if not value:
            raise self._fail(where, f"missing required field {key!r}")
        return value

    def _title(self, conv_id: str, obj: dict[str, Any]) -> None:
        title = as_str(obj.get("title")).strip()
        if title and conv_id not in self.titles:
            self.titles[conv_id] = title

    def _turn(self, where: str, msg: dict[str, Any], message_id: str) -> Turn | None:
        if not isinstance(msg.get("text"), str):
            raise self._fail(where, "missing required field 'text' (a string)")
        raw_role, speaker = msg.get("role"), as_str(msg.get("speaker")).strip()
        role: Role
        if raw_role is None or raw_role == "":
            if not speaker:
                raise self._fail(where, "missing required field 'speaker'")
            role = self.speaker_roles.get(speaker) or (
                "user" if speaker.lower() in _USERISH else "assistant")
        elif isinstance(raw_role, str) and raw_role.strip().lower() in _ROLES:
            role = _ROLES[raw_role.strip().lower()]
            if speaker and len(self.speaker_roles) < _MAX_SPEAKERS:
                self.speaker_roles.setdefault(speaker, role)
        else:
            raise self._fail(where, "role is not one of user, assistant, system")
        timestamp = None
        if msg.get("timestamp") not in (None, ""):
            timestamp = ts_from_any(msg["timestamp"])
            if timestamp is None:
                raise self._fail(where, "timestamp is not ISO-8601 or epoch seconds")
        importance = self._importance(where, msg.get("importance"))
        verbatim = msg.get("verbatim")
        if verbatim not in (None, True, False):
            raise self._fail(where, "verbatim must be true or false")
        text = msg["text"] if verbatim else msg["text"].strip()
        if not text.strip():
            return None
        check_turn(text, self.src.path, where)
        metadata = as_dict(msg.get("metadata"))
        return Turn(turn_id=message_id, role=role, speaker=speaker or _DEFAULT_SPEAKER[role],
                    text=text, timestamp=timestamp, metadata=dict(metadata),
                    importance=importance, verbatim=bool(verbatim))

    def _importance(self, where: str, value: Any) -> Importance | None:
        if value is None or value == "":
            return None
        for known in IMPORTANCES:
            if value == known:
                return known
        raise self._fail(where, "importance is not one of " + ", ".join(IMPORTANCES))

    def _item(self, conv_id: str, where: str, turns: list[Turn]) -> HarvestItem:
        return HarvestItem(
            item_id=stable_id(SOURCE, conv_id), source=SOURCE, kind="conversation",
            title=self.titles.get(conv_id, conv_id), turns=tuple(turns),
            timestamp=turns[0].timestamp, position=f"{self.src.name}: {where}",
            metadata={"conversation_id": conv_id})

    def _flush(self) -> Iterator[HarvestItem]:
        if self.conv_id is not None and self.turns:
            yield self._item(self.conv_id, self.where, self.turns)
        self.conv_id, self.turns = None, []

    def _conversation(self, where: str, conv: dict[str, Any]) -> Iterator[HarvestItem]:
        conv_id = id_str(conv.get("conversation_id")) or id_str(conv.get("id"))
        if not conv_id:
            raise self._fail(where, "missing required field 'conversation_id'")
        self._title(conv_id, conv)
        if not isinstance(conv.get("messages"), list):
            raise self._fail(where, "'messages' must be an array")
        turns: list[Turn] = []
        for number, msg in enumerate(as_list(conv["messages"]), 1):
            at = f"{where}, message {number}"
            if not isinstance(msg, dict):
                raise self._fail(at, f"expected a JSON object, found {type(msg).__name__}")
            message_id = id_str(msg.get("message_id")) or stable_id(SOURCE, conv_id, number)
            turn = self._turn(at, msg, message_id)
            if turn is not None:
                turns.append(turn)
        if turns:
            yield self._item(conv_id, where, turns)
