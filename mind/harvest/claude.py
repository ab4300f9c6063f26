"""claude.ai export: ``conversations.json``, ``projects.json``, ``memories.json``.

The target is the export ``.zip``, its unpacked directory, or one of those files. Conversations
(``chat_messages``; also ``design_chats``) become conversation items, only the branch the user
kept (:func:`kept_branch`: edited prompts and retried answers leave their abandoned messages
beside it, linked by ``parent_message_uuid``): ``human`` → ``User``,
``assistant`` → ``Claude``, other senders keep their own role. A message's text is its ``text``
content blocks; when it has no text blocks the flat ``text`` field is used (so no message
vanishes). Artifacts (``tool_use`` with ``content``) are kept whole, other tool calls
become a one-line ``[Tool call: name] {input}`` marker; tool results and thinking are skipped.
Attachments keep their extracted content whole. Project documents become artifact items, project
prompts instruction items, and account / project memories memory items.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from mind.harvest.detect import Shape, json_sources, shape_of
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
    read_key,
    top_level,
    ts_from_any,
)
from mind.harvest.types import HarvestItem, ItemKind, Role, Turn, stable_id

SOURCE: Final = "claude"
EXPECTED: Final = ("a claude.ai export (the .zip, its directory, or conversations.json / "
                   "projects.json / memories.json)")
TOOL_INPUT_CHARS: Final = 300  # a tool call is summarised on one line


def parse(target: Path | str) -> Iterator[HarvestItem]:
    """Each JSON file of the export that holds claude.ai data by its content
    (:mod:`mind.harvest.detect`), whatever it is named; conversations first."""
    sources = json_sources(target, SOURCE, EXPECTED)
    for src in sorted(sources, key=lambda s: _rank(shape_of(s))) if len(sources) > 1 else sources:
        yield from _parse_source(src)


def _rank(shape: Shape) -> int:
    """Conversations, then projects, then memories (the order of the classic export)."""
    first = shape.first if isinstance(shape.first, dict) else {}
    return 2 if "conversations_memory" in first or "project_memories" in first else \
        1 if "docs" in first or "prompt_template" in first else 0


def _entries(src: JsonSource) -> Iterator[tuple[str, int, Any]]:
    if top_level(src) == "array":
        for index, value in iter_array(src, what="entry"):
            yield "", index, value
        return
    for key in ("conversations", "design_chats", "projects"):
        for index, value in iter_array(src, key, what=key.rstrip("s")):
            yield key, index, value
    memories = read_key(src, "memories")
    for index, value in enumerate(memories if isinstance(memories, list) else [memories], 1):
        yield "memories", index, value


def _parse_source(src: JsonSource) -> Iterator[HarvestItem]:
    recognised = 0
    for key, index, raw in _entries(src):
        entry = as_dict(raw)
        if not entry:
            continue
        if "chat_messages" in entry or ("messages" in entry and key != "projects"):
            recognised += 1
            yield from _conversation(src, f"{src.name}: conversation {index}", entry, key)
        elif "docs" in entry or "prompt_template" in entry:
            recognised += 1
            yield from _project(src, f"{src.name}: project {index}", entry)
        elif "conversations_memory" in entry or "project_memories" in entry:
            recognised += 1
            yield from _memories(src, f"{src.name}: memory {index}", entry)
        elif recognised == 0:
            hint = ("this looks like a ChatGPT export (use source 'chatgpt')" if "mapping" in entry
                    else keys_hint(entry))
            raise HarvestError(f"not a claude.ai export: {hint}; expected {EXPECTED}",
                               path=src.path, position=f"entry {index}")


def _conversation(src: JsonSource, position: str, conv: dict[str, Any],
                  key: str) -> Iterator[HarvestItem]:
    conv_id = id_str(conv.get("uuid")) or id_str(conv.get("id"))
    design = key == "design_chats"
    title = (first_str(conv, "name", "title").strip()
             or ("Claude Design Chat" if design else "Untitled"))
    created = conv.get("created_at", conv.get("create_time"))
    item_id = (stable_id(SOURCE, conv_id) if conv_id else
               stable_id(SOURCE, "conv", title, created if isinstance(created, str) else None))
    turns: list[Turn] = []
    messages = [as_dict(m) for m in
                as_list(conv.get("chat_messages")) or as_list(conv.get("messages"))]
    for number in kept_branch(messages, conv.get("current_leaf_message_uuid")):
        turn = _turn(src, f"{position}, message {number}", item_id, number,
                     messages[number - 1])
        if turn is not None:
            turns.append(turn)
    if not turns:
        return
    metadata: dict[str, Any] = {"conversation_id": conv_id or None}
    project = id_str(conv.get("project_uuid")) or id_str(as_dict(conv.get("project")).get("uuid"))
    if design:
        metadata["stream"] = "design_chats"
        project = project or id_str(conv.get("project"))
    if project:
        metadata["project_uuid"] = project
    yield HarvestItem(item_id=item_id, source=SOURCE, kind="conversation", title=title,
                      turns=tuple(turns), timestamp=ts_from_any(created)
                      or next((t.timestamp for t in turns if t.timestamp), None),
                      position=position, metadata=metadata)


def kept_branch(messages: list[dict[str, Any]], leaf: object) -> list[int]:
    """The 1-based numbers of the messages on the branch the user kept, in order.

    Editing a prompt or retrying an answer leaves the abandoned messages in ``chat_messages``
    beside the kept ones, each naming its ``parent_message_uuid`` (the first message names a
    root that is no message). The kept branch is ``current_leaf_message_uuid`` (when the
    export has it) and its parent chain; the bulk export has no such field, so it is the chain
    of the newest leaf (by ``created_at``, then position), as claude.ai shows it. Messages that
    name no parent among them (older exports) are all kept, in their order."""
    by_id = {uid: n for n, m in enumerate(messages, 1) if (uid := id_str(m.get("uuid")))}
    parents = {n: by_id.get(id_str(m.get("parent_message_uuid")) or "")
               for n, m in enumerate(messages, 1)}
    if not any(parents.values()):
        return list(range(1, len(messages) + 1))
    node = by_id.get(leaf) if isinstance(leaf, str) else None
    if node is None:
        named = {p for p in parents.values() if p}
        leaves = [n for n in by_id.values() if n not in named]
        node = max(leaves, key=lambda n: (ts_from_any(messages[n - 1].get("created_at")) or "",
                                          n), default=None)
    chain: dict[int, None] = {}
    while node is not None and node not in chain:  # a parent cycle ends the walk
        chain[node] = None
        node = parents.get(node)
    return list(chain)[::-1]


def _role(msg: dict[str, Any]) -> tuple[Role, str]:
    sender = (first_str(msg, "sender", "role", "author") or "").strip().lower()
    if sender in ("human", "user"):
        return "user", "User"
    if sender in ("assistant", "claude", "model"):
        return "assistant", "Claude"
    if sender == "tool":
        return "tool", "Tool"
    return "system", sender.capitalize() if sender else "Unknown"


def _turn(src: JsonSource, position: str, item_id: str, number: int,
          msg: dict[str, Any]) -> Turn | None:
    if not msg:
        return None
    text = message_text(msg)
    if not text:
        return None
    check_turn(text, src.path, position)
    role, speaker = _role(msg)
    turn_id = id_str(msg.get("uuid")) or id_str(msg.get("id")) or stable_id(SOURCE, item_id,
                                                                             number)
    return Turn(turn_id=turn_id, role=role, speaker=speaker, text=text,
                timestamp=ts_from_any(msg.get("created_at", msg.get("timestamp"))))


def message_text(msg: dict[str, Any]) -> str:
    """Text blocks (or the flat ``text`` when there are none), artifacts, tool-call markers and
    attachments, in order."""
    pieces: list[str] = []
    has_text = False
    content = msg.get("content")
    if isinstance(content, str) and content.strip():
        pieces.append(content.strip())
        has_text = True
    for block in (as_dict(b) for b in as_list(content)):
        kind = as_str(block.get("type"))
        if kind == "tool_use":
            pieces.append(_tool_use(block))
        elif kind not in ("tool_result", "thinking", "redacted_thinking") and as_str(
                block.get("text")).strip():
            pieces.append(as_str(block["text"]).strip())
            has_text = True
    if not has_text and as_str(msg.get("text")).strip():
        pieces.insert(0, as_str(msg["text"]).strip())
    pieces.extend(_attachments(msg))
    return "\n\n".join(p for p in pieces if p)


def _tool_use(block: dict[str, Any]) -> str:
    name = first_str(block, "name") or "tool"
    args = as_dict(block.get("input"))
    label = first_str(args, "title", "id")
    for key, head in (("content", "Artifact"), ("new_str", "Artifact update")):
        body = as_str(args.get(key))
        if body.strip():
            return f"[{head}: {label}]\n{body.strip()}" if label else f"[{head}]\n{body.strip()}"
    text = json.dumps(block.get("input"), ensure_ascii=False, separators=(",", ":"))
    if len(text) > TOOL_INPUT_CHARS:
        text = text[:TOOL_INPUT_CHARS] + "…"
    return f"[Tool call: {name}] {text}"


def _attachments(msg: dict[str, Any]) -> Iterator[str]:
    names: set[str] = set()
    for att in (as_dict(a) for a in as_list(msg.get("attachments"))):
        name = first_str(att, "file_name", "name") or "file"
        names.add(name)
        extracted = as_str(att.get("extracted_content")).strip()
        yield f"[Attached: {name}]\n{extracted}" if extracted else f"[Attached: {name}]"
    for file in (as_dict(f) for f in as_list(msg.get("files")) + as_list(msg.get("files_v2"))):
        name = first_str(file, "file_name", "name")
        if name and name not in names:
            names.add(name)
            yield f"[Shared file: {name}]"


def _document(src: JsonSource, position: str, item_id: str, kind: ItemKind, title: str,
              speaker: str, text: str, timestamp: str | None,
              metadata: dict[str, Any]) -> HarvestItem:
    check_turn(text, src.path, position)
    turn = Turn(turn_id=stable_id(SOURCE, item_id, text), role="document", speaker=speaker,
                text=text, timestamp=timestamp)
    return HarvestItem(item_id=item_id, source=SOURCE, kind=kind, title=title, turns=(turn,),
                       timestamp=timestamp, position=position, metadata=metadata)


def _project(src: JsonSource, position: str, project: dict[str, Any]) -> Iterator[HarvestItem]:
    uuid = id_str(project.get("uuid")) or id_str(project.get("id"))
    name = first_str(project, "name").strip() or "Untitled project"
    project_ts = ts_from_any(project.get("updated_at")) or ts_from_any(project.get("created_at"))
    meta = {"project_name": name, "project_uuid": uuid or None}
    prompt = as_str(project.get("prompt_template")).strip()
    if prompt:
        yield _document(src, position, stable_id(SOURCE, "project-instructions", uuid or name),
                        "instruction", f"Project instructions: {name}", f"Claude project {name}",
                        prompt, project_ts, {**meta, "type": "project_instructions"})
    for number, doc in enumerate((as_dict(d) for d in as_list(project.get("docs"))), 1):
        content = as_str(doc.get("content")).strip()
        if not content:
            continue
        filename = first_str(doc, "filename", "title").strip() or "Project Document"
        doc_id = id_str(doc.get("uuid")) or filename
        yield _document(src, f"{position}, doc {number}",
                        stable_id(SOURCE, "projdoc", uuid, doc_id), "artifact", filename,
                        f"Claude project {name}", content,
                        ts_from_any(doc.get("created_at")) or project_ts,
                        {**meta, "type": "project_knowledge", "doc_uuid": doc_id,
                         "filename": filename})


def _memories(src: JsonSource, position: str, entry: dict[str, Any]) -> Iterator[HarvestItem]:
    account = id_str(entry.get("account_uuid"))
    general = entry.get("conversations_memory")
    text = general if isinstance(general, str) else (
        json.dumps(general, ensure_ascii=False, sort_keys=True) if general else "")
    if text.strip():
        yield _document(src, position, stable_id(SOURCE, "memory", "conversations_memory",
                                                 account),
                        "memory", "Claude Memory — Conversations", "Claude Memory",
                        text.strip(), None, {"type": "conversations_memory"})
    for uuid, value in sorted(as_dict(entry.get("project_memories")).items()):
        if isinstance(value, str) and value.strip():
            yield _document(src, f"{position}, project {uuid}",
                            stable_id(SOURCE, "memory", "project_memory", account, uuid),
                            "memory", f"Claude Memory — Project {uuid}", "Claude Memory",
                            value.strip(), None,
                            {"type": "project_memory", "project_uuid": uuid})
