"""ChatGPT export: the export ``.zip``, its unpacked directory, or one of its JSON files.

Files are recognised by their content (:mod:`mind.harvest.detect`), not their names: the
classic layout holds one ``conversations.json`` array; exports since August 2026 split the
conversations over dozens of JSON files (arrays of conversations, or one conversation per
file), read in natural name order. A conversation keeps one item id (its ``id``) whichever file
holds it, so it stays one session. The model may sit on the conversation
(``default_model_slug``) instead of each message's ``metadata``; assistant turns without their
own ``model_slug`` take it from there. Messages without ``metadata`` are ordinary messages.

Each conversation's ``mapping`` is a tree of message nodes; edits and regenerations are sibling
branches. Only the branch the user kept is harvested: ``current_node`` and its parent chain (when
``current_node`` is missing, the chain of the newest leaf), so other branches never interleave.
A conversation made by "Branch in new chat" repeats the history it was branched from under the
same message ids: those turns are keyed under the conversation they came from
(:func:`inherited`, which finds them by the branch's ``branching_from_conversation_id`` mark),
so a message is stored once per mind whichever conversation is imported first, in one export
or over several.
Text, code (fenced, with its language), execution / tool output (role ``tool``), multimodal parts
(strings; images as ``[Shared image]``, a tool's as ``[Generated image: <prompt>]``) and
attachments (``[Attached: name]``) are kept; an image tool's call (raw JSON) is ``[Image request:
<prompt>]``; hidden system messages, reasoning summaries, an image tool's notes to the model
("DALL·E displayed 1 images …") and empty messages are skipped. Custom instructions
(``user_editable_context`` nodes anywhere in the mapping, on the kept branch or not,
conversation ``custom_instructions``, top-level ``user_custom_instructions``) and top-level
``memories`` become their own items, never turns of the chat.

A bare array (the real export) is read in one streaming pass. The object form
(``{"conversations": [...], "memories": ...}``) takes one extra pass per small top-level key,
after the conversations, so memory stays bounded either way.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from mind.harvest.detect import json_sources, shape_of
from mind.harvest.errors import HarvestError, keys_hint
from mind.harvest.jsonstream import (
    JsonSource,
    as_dict,
    as_list,
    as_str,
    check_turn,
    first_str,
    id_str,
    iter_array,
    read_document,
    read_key,
    top_level,
    ts_from_any,
    ts_from_epoch,
)
from mind.harvest.types import PREVIOUS_KEY, HarvestItem, Role, Turn, external_id, stable_id

SOURCE: Final = "chatgpt"
EXPECTED: Final = "a ChatGPT export (the .zip, its folder, or its JSON files of conversations)"
_SKIPPED_TYPES: Final = frozenset({"thoughts", "reasoning_recap", "model_editable_context"})
# image generators (DALL·E; GPT-4o images): their calls are JSON, their notes to the model noise
_IMAGE_TOOLS: Final = frozenset({"dalle.text2im", "t2uay3k.sj1i4kz"})


def parse(target: Path | str) -> Iterator[HarvestItem]:
    seen: set[str] = set()  # instruction items already yielded (they repeat per conversation)
    for src in json_sources(target, SOURCE, EXPECTED):
        yield from _parse_source(src, seen)


def _parse_source(src: JsonSource, seen: set[str]) -> Iterator[HarvestItem]:
    kind = top_level(src)
    if kind == "object" and "mapping" in shape_of(src).keys:  # one conversation per file
        yield from _conversation(src, 1, as_dict(read_document(src)), seen)
        return
    found = 0
    for index, raw in iter_array(src, None if kind == "array" else "conversations",
                                 what="conversation"):
        conv = as_dict(raw)
        if not conv:
            continue  # null entries
        if "mapping" not in conv:
            if found == 0:
                raise _wrong_type(src, conv, index)
            continue
        found += 1
        yield from _conversation(src, index, conv, seen)
    if kind == "object":
        instructions = read_key(src, "user_custom_instructions")
        if instructions:
            found += 1
            yield from _instruction(src, f"{src.name}: user_custom_instructions",
                                    _instruction_text(instructions), None, seen)
        for number, entry in enumerate(_listify(read_key(src, "memories")), 1):
            found += 1
            yield from _memory(src, number, entry)
    if found == 0 and kind == "object":
        raise HarvestError(f"no 'conversations' array here; expected {EXPECTED}",
                           path=src.path, position="top level")


def _wrong_type(src: JsonSource, obj: dict[str, Any], index: int) -> HarvestError:
    if "chat_messages" in obj:
        hint = "this looks like a claude.ai export (use source 'claude')"
    elif "conversation_id" in obj and "text" in obj:
        hint = "this looks like the universal format (use source 'universal')"
    else:
        hint = keys_hint(obj)
    return HarvestError(f"not a ChatGPT export: a conversation needs a 'mapping' of messages; "
                        f"{hint}; expected {EXPECTED}", path=src.path,
                        position=f"conversation {index}")


def _listify(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value] if value else []


def kept_branch(mapping: dict[str, Any], current: Any) -> list[str]:
    """Node ids from the root to ``current`` (or to the newest leaf), following ``parent``."""
    node = current if isinstance(current, str) and current in mapping else _newest_leaf(mapping)
    chain: list[str] = []
    seen: set[str] = set()  # a parent cycle ends the walk (a set: linear in the chain)
    while isinstance(node, str) and node in mapping and node not in seen:
        chain.append(node)
        seen.add(node)
        node = as_dict(mapping[node]).get("parent")
    chain.reverse()
    return chain


def inherited(mapping: dict[str, Any], chain: list[str], conv_id: str) -> dict[str, str]:
    """Node id → the conversation it was copied from, for the kept branch's messages that a
    "Branch in new chat" copied from another conversation (under the same message ids).

    A message of the branch carries ``branching_from_conversation_id`` in its metadata, and
    ``branching_from_message_id`` (the last message copied) when ChatGPT recorded it: the
    messages up to that one came from that conversation; without it, the messages up to and
    including the marked one (whether the mark sits on the last copied message or on the
    first new one, every conversation holding a message keys it alike, which is all a key
    needs). A branch of a branch carries two such marks: the messages up to the first came
    from the first conversation, those after it up to the second from the second. Repeated
    marks of one branch (a retried message) count once."""
    homes: dict[str, str] = {}
    position = {node: n for n, node in enumerate(chain)}
    start = 0
    last = ""
    for n, node in enumerate(chain):
        meta = as_dict(as_dict(as_dict(mapping.get(node)).get("message")).get("metadata"))
        origin = id_str(meta.get("branching_from_conversation_id"))
        if not origin or origin in (conv_id, last):
            continue
        last = origin
        end = position.get(id_str(meta.get("branching_from_message_id")) or "", n) + 1
        for copied in chain[start:max(start, end)]:
            homes[copied] = origin
        start = max(start, end)
    return homes


def _newest_leaf(mapping: dict[str, Any]) -> str | None:
    best: str | None = None
    best_key: tuple[float, int] | None = None
    for order, (node_id, raw) in enumerate(mapping.items()):
        node = as_dict(raw)
        if any(isinstance(c, str) and c in mapping for c in as_list(node.get("children"))):
            continue
        created = as_dict(node.get("message")).get("create_time")
        moment = float(created) if isinstance(created, int | float) else float("-inf")
        if best_key is None or (moment, order) > best_key:
            best, best_key = node_id, (moment, order)
    return best


def _conversation(src: JsonSource, index: int, conv: dict[str, Any],
                  seen: set[str]) -> Iterator[HarvestItem]:
    position = f"{src.name}: conversation {index}"
    mapping = as_dict(conv.get("mapping"))
    conv_id = id_str(conv.get("id")) or id_str(conv.get("conversation_id"))
    title = first_str(conv, "title").strip() or "Untitled"
    chain = kept_branch(mapping, conv.get("current_node"))
    item_id = (stable_id(SOURCE, conv_id) if conv_id else
               stable_id(SOURCE, "conv", title, conv.get("create_time"),
                          chain[0] if chain else None))
    if conv.get("custom_instructions"):
        yield from _instruction(src, position, _instruction_text(conv["custom_instructions"]),
                                None, seen)
    on_chain = set(chain)
    for node_id in chain + [n for n in mapping if n not in on_chain]:  # instructions anywhere
        msg = as_dict(as_dict(mapping.get(node_id)).get("message"))
        content = as_dict(msg.get("content"))
        if as_str(content.get("content_type")) == "user_editable_context":
            text = "\n\n".join(first_str(content, k).strip()
                               for k in ("user_profile", "user_instructions") if content.get(k))
            yield from _instruction(src, position, text, ts_from_epoch(msg.get("create_time")),
                                    seen)
    model = as_str(conv.get("default_model_slug"))
    homes = inherited(mapping, chain, conv_id)
    turns: list[Turn] = []
    for node_id in chain:
        msg = as_dict(as_dict(mapping.get(node_id)).get("message"))
        content = as_dict(msg.get("content"))
        ctype = as_str(content.get("content_type"))
        meta = as_dict(msg.get("metadata"))
        if (not msg or meta.get("is_visually_hidden_from_conversation")
                or ctype in _SKIPPED_TYPES or ctype == "user_editable_context"):
            continue
        turn = _turn(src, position, node_id, msg, content, ctype, meta, model)
        if turn is not None and node_id in homes:  # stored once, under its first chat's key
            old_key = external_id(SOURCE, item_id, turn.turn_id)
            turn = replace(turn, home=stable_id(SOURCE, homes[node_id]),
                           metadata={**turn.metadata, PREVIOUS_KEY: old_key})
        if turn is not None:
            turns.append(turn)
    if not turns:
        return
    metadata: dict[str, Any] = {"conversation_id": conv_id or None}
    for key in ("default_model_slug", "gizmo_id"):
        if isinstance(conv.get(key), str):
            metadata[key] = conv[key]
    yield HarvestItem(
        item_id=item_id, source=SOURCE, kind="conversation", title=title, turns=tuple(turns),
        timestamp=ts_from_epoch(conv.get("create_time"))
        or next((t.timestamp for t in turns if t.timestamp), None),
        position=position, metadata=metadata)


def _turn(src: JsonSource, position: str, node_id: str, msg: dict[str, Any],
          content: dict[str, Any], ctype: str, meta: dict[str, Any],
          default_model: str) -> Turn | None:
    author = as_dict(msg.get("author"))
    name = as_str(author.get("name")).strip()
    role: Role
    match as_str(author.get("role")):
        case "user":
            role, speaker = "user", "User"
        case "assistant":
            role, speaker = "assistant", "ChatGPT"
        case "tool":
            role, speaker = "tool", f"Tool ({name})" if name else "Tool"
        case "system":
            role, speaker = "system", "System"
        case _:
            return None
    request = _image_request(content) if role == "assistant" and as_str(
        msg.get("recipient")) not in ("", "all") else None
    if role == "tool" and name in _IMAGE_TOOLS and ctype != "multimodal_text":
        return None  # "DALL·E displayed 1 images. The images are already plainly visible, …"
    image = "Generated image" if role == "tool" else "Shared image"
    pieces = [request or _content_text(content, ctype, image)]
    pieces += [f"[Attached: {first_str(as_dict(a), 'name') or 'file'}]"
               for a in as_list(meta.get("attachments")) if as_dict(a)]
    text = "\n".join(p for p in pieces if p).strip()
    if not text:
        return None
    turn_id = id_str(msg.get("id")) or node_id
    check_turn(text, src.path, f"{position}, message {turn_id}")
    metadata: dict[str, Any] = {}
    if isinstance(meta.get("model_slug"), str):
        metadata["model_slug"] = meta["model_slug"]
    elif role == "assistant" and default_model:
        metadata["model_slug"] = default_model
    if role == "tool" and name:
        metadata["tool"] = name
    return Turn(turn_id=turn_id, role=role, speaker=speaker, text=text,
                timestamp=ts_from_epoch(msg.get("create_time")), metadata=metadata)


def _image_request(content: dict[str, Any]) -> str | None:
    """An assistant's call of an image tool (``{"prompt": …, "size": …}``, the raw JSON it sent)
    as ``[Image request: prompt]``; ``None`` for any other message."""
    raw = as_str(content.get("text")) or "".join(
        p for p in as_list(content.get("parts")) if isinstance(p, str))
    try:
        prompt = as_str(as_dict(json.loads(raw)).get("prompt")).strip()
    except ValueError:
        return None
    return f"[Image request: {prompt}]" if prompt else None


def _content_text(content: dict[str, Any], ctype: str, image: str) -> str:
    if ctype == "code":
        language = as_str(content.get("language")).strip()
        code = as_str(content.get("text")).strip("\n")
        if not code.strip():
            return ""
        return f"```{'' if language in ('', 'unknown') else language}\n{code}\n```"
    if ctype == "tether_quote":
        head = " ".join(p for p in (first_str(content, "title"), first_str(content, "url")) if p)
        body = as_str(content.get("text"))
        return f"[Quote: {head}]\n{body}" if head else body
    parts = [_part_text(p, image) for p in as_list(content.get("parts"))]
    if any(parts):
        return "\n".join(p for p in parts if p)
    return first_str(content, "text", "result", "content")  # execution_output, browsing, unknown


def _part_text(part: Any, image: str) -> str:
    """A part's text; an image part is ``[Shared image]`` (a user's) or ``[Generated image:
    prompt]`` (a tool's), never its asset pointer."""
    if isinstance(part, str):
        return part
    obj = as_dict(part)
    if "image" in as_str(obj.get("content_type")):
        prompt = first_str(as_dict(as_dict(obj.get("metadata")).get("dalle")), "prompt").strip()
        return f"[{image}: {prompt}]" if prompt else f"[{image}]"
    return first_str(obj, "text")  # audio transcriptions and unknown parts with text


def _instruction_text(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict):
        lines = [f"{k}: {v}" for k, v in value.items() if isinstance(v, str) and v.strip()]
        if lines:
            return "\n".join(lines)
    return json.dumps(value, ensure_ascii=False, sort_keys=True) if value else ""


def _instruction(src: JsonSource, position: str, text: str, timestamp: str | None,
                 seen: set[str]) -> Iterator[HarvestItem]:
    """One instruction item per distinct text (they repeat in every conversation)."""
    if not text:
        return
    item_id = stable_id(SOURCE, "instructions", text)
    if item_id in seen:
        return
    seen.add(item_id)
    check_turn(text, src.path, position)
    turn = Turn(turn_id=item_id, role="document", speaker="ChatGPT Custom Instructions",
                text=text, timestamp=timestamp)
    yield HarvestItem(item_id=item_id, source=SOURCE, kind="instruction",
                      title="ChatGPT Custom Instructions", turns=(turn,), timestamp=timestamp,
                      position=position, metadata={"type": "custom_instructions"})


def _memory(src: JsonSource, number: int, entry: Any) -> Iterator[HarvestItem]:
    obj = as_dict(entry)
    text = entry if isinstance(entry, str) else first_str(obj, "content", "text")
    if not text and obj:
        text = json.dumps(obj, ensure_ascii=False, sort_keys=True)
    text = text.strip()
    if not text:
        return
    position = f"{src.name}: memory {number}"
    check_turn(text, src.path, position)
    created = obj.get("created_at", obj.get("create_time"))
    timestamp = ts_from_any(created)
    item_id = stable_id(SOURCE, "memory", created if isinstance(created, str | int | float)
                        else None, text)
    turn = Turn(turn_id=item_id, role="document", speaker="ChatGPT Memory", text=text,
                timestamp=timestamp)
    yield HarvestItem(item_id=item_id, source=SOURCE, kind="memory", title="ChatGPT Memory",
                      turns=(turn,), timestamp=timestamp, position=position,
                      metadata={"type": "chatgpt_memory"})
