"""Grok (xAI) account export: ``prod-grok-backend.json`` → conversation items.

The target is the export ``.zip`` (``ttl/30d/export_data/<id>/prod-grok-backend.json``), its
unpacked directory, or the JSON file itself. The document is an object whose
``conversations`` array (streamed, one conversation at a time) holds entries
``{"conversation": {id, title, create_time, …}, "responses": [{"response": {…}}, …]}``; other
top-level keys (projects, tasks, assets) carry no chat and are skipped.

A response is ``{_id, message, sender, create_time, parent_response_id, model, …}``. Senders
come in two vocabularies: ``human``/``assistant`` and ``USER``/``ASSISTANT`` (any case;
``user``, ``grok`` and ``model`` too). Timestamps are ISO strings or MongoDB extended JSON:
``{"$date": "2025-…Z"}``, ``{"$date": {"$numberLong": "1740819600000"}}``, ``{"$date": 17…}``.
Regenerated answers share a parent: when responses name their parents, the kept branch is the
chain from the latest response back to the first (as the app shows it); otherwise all responses
in time order. Empty messages (an interrupted answer) and ``thinking_trace`` are skipped.
Ids: the item from the conversation id, turns from the response ``_id``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from mind.harvest.errors import HarvestError, keys_hint
from mind.harvest.jsonstream import (
    JsonSource,
    as_dict,
    as_list,
    as_str,
    check_turn,
    file_source,
    find_sources,
    first_str,
    id_str,
    iter_array,
    top_level,
    ts_from_any,
)
from mind.harvest.types import HarvestItem, Role, Turn, stable_id

SOURCE: Final = "grok"
FILE: Final = "prod-grok-backend.json"
EXPECTED: Final = f"a Grok account export (the .zip, its directory, or {FILE})"
_USER: Final = frozenset({"human", "user"})
_ASSISTANT: Final = frozenset({"assistant", "grok", "model"})
_TITLE_CHARS: Final = 80


def parse(target: Path | str) -> Iterator[HarvestItem]:
    path = Path(target)
    deep = sorted(path.rglob(FILE)) if path.is_dir() else []
    sources = [file_source(deep[0])] if deep else find_sources(target, (FILE,), EXPECTED)
    for src in sources:
        yield from _parse_source(src)


def timestamp(value: Any) -> str | None:
    """ISO string, epoch number, or MongoDB ``{"$date": …}`` (``$numberLong`` inside) → house
    ISO; anything else → ``None``."""
    if isinstance(value, dict):
        value = value.get("$date")
        if isinstance(value, dict):
            value = value.get("$numberLong")
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
    return ts_from_any(value)


def _role(sender: str) -> Role | None:
    lowered = sender.strip().lower()
    return "user" if lowered in _USER else "assistant" if lowered in _ASSISTANT else None


def _parse_source(src: JsonSource) -> Iterator[HarvestItem]:
    if top_level(src) != "object":
        raise HarvestError(f"expected an object with a 'conversations' array; expected {EXPECTED}",
                           path=src.path, position="top level")
    for index, raw in iter_array(src, "conversations", what="conversation"):
        entry = as_dict(raw)
        position = f"{src.name}: conversation {index}"
        if "conversation" not in entry and "responses" not in entry:
            raise HarvestError(f"not a Grok conversation: {keys_hint(entry)}; expected "
                               f"{EXPECTED}", path=src.path, position=position)
        item = _conversation(src, entry, position)
        if item is not None:
            yield item


def _kept_branch(responses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chain from the latest response back through ``parent_response_id`` (responses are
    in time order); every response when none names a parent in this conversation."""
    by_id = {id_str(r.get("_id")): r for r in responses if id_str(r.get("_id"))}
    if not any(id_str(r.get("parent_response_id")) in by_id for r in responses):
        return responses
    chain: list[dict[str, Any]] = []
    node: dict[str, Any] | None = responses[-1]
    while node is not None and len(chain) < len(responses):
        chain.append(node)
        node = by_id.get(id_str(node.get("parent_response_id")))
    return chain[::-1]


def _conversation(src: JsonSource, entry: dict[str, Any], position: str) -> HarvestItem | None:
    meta = as_dict(entry.get("conversation"))
    conv_id = id_str(meta.get("id")) or id_str(meta.get("_id"))
    rows = [as_dict(as_dict(r).get("response")) or as_dict(r)
            for r in as_list(entry.get("responses"))]
    indexed = sorted(enumerate(r for r in rows if r),
                     key=lambda p: (timestamp(p[1].get("create_time")) or "", p[0]))
    turns: list[Turn] = []
    for n, response in enumerate(_kept_branch([r for _, r in indexed])):
        role = _role(first_str(response, "sender"))
        text = as_str(response.get("message")).strip()
        if role is None or not text:
            continue
        check_turn(text, src.path, position)
        when = timestamp(response.get("create_time"))
        turn_id = id_str(response.get("_id")) or stable_id(SOURCE, conv_id, n, when, text)
        model = first_str(response, "model")
        turns.append(Turn(turn_id, role, "User" if role == "user" else "Grok", text, when,
                          {"model": model} if model and role == "assistant" else {}))
    if not turns:
        return None
    if not conv_id:
        conv_id = stable_id(SOURCE, "untitled", turns[0].timestamp, turns[0].text)
    title = (first_str(meta, "title").strip()
             or turns[0].text.split("\n", 1)[0][:_TITLE_CHARS])
    return HarvestItem(
        item_id=stable_id(SOURCE, "conversation", conv_id), source=SOURCE, kind="conversation",
        title=title, turns=tuple(turns),
        timestamp=timestamp(meta.get("create_time")) or turns[0].timestamp, position=position,
        metadata={"conversation_id": conv_id})
