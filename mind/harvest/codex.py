"""Codex CLI: a ``~/.codex`` directory, one rollout ``.jsonl`` file, or ``history.jsonl``.

Harvested (sorted, so runs are deterministic): every session transcript under the directory
(``sessions/YYYY/MM/DD/rollout-*.jsonl``, ``archived_sessions/``; a ``.jsonl`` file counts when
its first record is a rollout record, whatever its name) → one conversation item per file;
then ``history.jsonl`` (one ``{session_id, ts, text}`` line per prompt, across sessions) → one
conversation item of user prompts per session that has no transcript in the same import.

Rollout records, both layouts Codex has written:

- current: ``{"timestamp", "type", "payload"}`` with ``type`` one of ``session_meta`` (id, cwd,
  git, cli_version), ``turn_context`` (the model), ``response_item`` (a Responses API item:
  ``message``, ``function_call``, ``reasoning`` …), ``compacted`` (a summary after a context
  compaction), ``event_msg`` (UI events: ``user_message``, ``agent_message``, ``item_completed``
  with a ``UserMessage``/``AgentMessage`` item, turn markers, token counts …) and the markers
  newer versions add (``world_state``, ``tool_manifest`` …: skipped);
- older (before mid-2025): a bare session meta ``{"id", "timestamp", "instructions"}`` first,
  then bare response items and ``{"record_type": "state"}`` lines.

A message can be written in up to three forms (response item, ``user_message``/
``agent_message`` event, ``item_completed`` item): every form is read and each message taken
once (:mod:`mind.harvest.codex_forms`), so prompts Codex Desktop writes only as events are
turns, and a message written in several forms is one.

Turns as in :mod:`mind.harvest.transcript`: a user prompt is one turn (the environment
context, AGENTS.md and user-instruction blocks Codex injects are skipped, ``developer``
messages too); assistant text, ``function_call``/``custom_tool_call``/``local_shell_call``/
``web_search_call`` (one ``[Tool call: name] {input}`` line each) until the next prompt are one
assistant turn; tool outputs and reasoning are skipped; a generated image is a short
``[Generated image: …]`` line, never its data; calls of hive-mind's own MCP tools
(``hive-mind__recall_memory``…) keep only a ``[Used recall_memory]`` marker. A ``compacted``
summary is a ``system`` turn. The title is the first prompt (the request part of a prompt Codex
Desktop wrapped in IDE context). Ids: the item from the session id (``session_meta.id``; the
file name when absent), turns from the file name and line numbers (rollouts are append-only), so
a moved ``~/.codex`` writes nothing and a continued session adds only its new turns.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from mind.harvest.codex_forms import Echoes, Form, Record, message_form
from mind.harvest.errors import HarvestError
from mind.harvest.jsonstream import (
    JsonSource,
    as_dict,
    as_list,
    as_str,
    check_turn,
    file_source,
    first_str,
    iter_jsonl,
    ts_from_epoch,
    ts_from_iso,
)
from mind.harvest.plaintext import file_timestamp
from mind.harvest.transcript import Transcript, tool_call
from mind.harvest.types import HarvestItem, Turn, stable_id

SOURCE: Final = "codex"
EXPECTED: Final = ("a Codex CLI directory (~/.codex with sessions/ and history.jsonl), a "
                   "rollout-*.jsonl session file or history.jsonl")
HISTORY: Final = "history.jsonl"
ROLLOUT_TYPES: Final = frozenset({"session_meta", "response_item", "event_msg", "turn_context",
                                  "compacted", "world_state", "tool_manifest",
                                  "sampling_boundary", "inter_agent_communication",
                                  "inter_agent_communication_metadata"})
ITEM_TYPES: Final = frozenset({"message", "reasoning", "function_call", "function_call_output",
                               "custom_tool_call", "custom_tool_call_output", "local_shell_call",
                               "web_search_call"})
_REQUEST: Final = "## My request for Codex:"  # Codex Desktop's IDE context ends here
_TITLE_CHARS: Final = 80


def parse(target: Path | str) -> Iterator[HarvestItem]:
    root = Path(target)
    if root.is_file():
        kind = _kind(file_source(root))
        if kind == "history":
            yield from _history(root, set())
        elif kind == "rollout":
            if (item := _rollout(root.parent, root)) is not None:
                yield item
        else:
            raise HarvestError(f"not a Codex rollout or history file; expected {EXPECTED}",
                               path=str(root))
        return
    if not root.is_dir():
        raise HarvestError(f"no such file or directory; expected {EXPECTED}", path=str(root))
    files = sorted(p for p in root.rglob("*.jsonl") if p.is_file() and p.name != HISTORY)
    rollouts = [p for p in files if _kind(file_source(p)) == "rollout"]
    history = root / HISTORY
    if not rollouts and not history.is_file():
        found = ", ".join(p.relative_to(root).as_posix() for p in files[:5]) or "no .jsonl files"
        raise HarvestError(f"no Codex sessions or history here (found: {found}); expected "
                           f"{EXPECTED}", path=str(root))
    sessions: set[str] = set()
    for path in rollouts:
        item = _rollout(root, path)
        if item is not None:
            sessions.add(item.metadata["session_id"])
            yield item
    if history.is_file():
        yield from _history(history, sessions)


def _kind(src: JsonSource) -> str | None:
    """``rollout`` or ``history`` from the first readable record, else ``None``."""
    for line in iter_jsonl(src):
        record = as_dict(line.value)
        if not record:
            continue
        if "session_id" in record and "text" in record:
            return "history"
        kind = record.get("type")
        if (kind in ROLLOUT_TYPES and "payload" in record) or kind in ITEM_TYPES:
            return "rollout"
        if "record_type" in record or ("id" in record and "timestamp" in record and not kind):
            return "rollout"
        return None
    return None


def _assistant_pieces(item: dict[str, Any]) -> list[str]:
    kind = item.get("type")
    if kind in ("message", "agent_message"):
        return [text for b in as_list(item.get("content"))
                if (text := as_str(as_dict(b).get("text")).strip())]
    if kind == "function_call":  # an MCP tool's namespace ("mcp__server__") prefixes its name
        name = first_str(item, "namespace") + first_str(item, "name")
        return [tool_call(name, item.get("arguments"))]
    if kind == "custom_tool_call":
        return [tool_call(first_str(item, "name"), item.get("input"))]
    if kind == "local_shell_call":
        return [tool_call("local_shell", as_dict(item.get("action")).get("command"))]
    if kind == "web_search_call":
        return [tool_call("web_search", item.get("action"))]
    if kind == "tool_search_call":
        return [tool_call("tool_search", item.get("arguments"))]
    if kind == "image_generation_call":
        prompt = first_str(item, "revised_prompt").strip()
        return [f"[Generated image: {prompt}]" if prompt else "[Generated image]"]
    return []  # tool outputs, reasoning, snapshots, encrypted compactions


def _records(src: JsonSource, info: dict[str, Any]) -> Iterator[Record]:
    """``(line, kind, payload, raw timestamp)`` of both layouts (the timestamp is turned into
    the house format only where a turn needs it); broken lines are counted."""
    for line in iter_jsonl(src):
        record = as_dict(line.value)
        if line.error or not record:
            info["skipped"] += 1
            continue
        raw_ts = record.get("timestamp")
        if "payload" in record and isinstance(record.get("type"), str):
            yield line.number, str(record["type"]), as_dict(record["payload"]), raw_ts
        elif "record_type" in record:
            continue
        elif not record.get("type") and "id" in record:
            yield line.number, "session_meta", record, raw_ts
        else:
            yield line.number, "response_item", record, None


@dataclass(frozen=True, slots=True)
class _Piece:
    """What one record adds to the transcript, kept until every message form was counted."""

    number: int  # its line
    role: str  # user, system (a compaction summary) or assistant
    texts: list[str]
    raw_ts: Any
    model: str | None
    form: Form | None  # a message (checked for echoes), or None (a tool call, a summary)


def _title(first_user: str) -> str:
    text = first_user.rsplit(_REQUEST, 1)[-1].strip()
    return text.split("\n", 1)[0][:_TITLE_CHARS]


def _rollout(root: Path, path: Path) -> HarvestItem | None:
    src = file_source(path)
    transcript = Transcript(SOURCE, path.name, str(path), "Codex")
    info: dict[str, Any] = {"skipped": 0}
    echoes = Echoes()
    pieces: list[_Piece] = []
    model: str | None = None
    for number, kind, payload, raw_ts in _records(src, info):
        form = message_form(kind, payload)
        if form is not None:
            if form[2]:
                echoes.count(form)
                texts = (_assistant_pieces(payload) if form[:2] == (0, "assistant")
                         else [form[2]])
                pieces.append(_Piece(number, form[1], texts, raw_ts, model, form))
        elif kind == "session_meta" and "session_id" not in info:
            info["session_id"] = first_str(payload, "id")
            info["started"] = ts_from_iso(payload.get("timestamp")) or ts_from_iso(raw_ts)
            info["cwd"] = first_str(payload, "cwd") or None
            info["git_branch"] = first_str(as_dict(payload.get("git")), "branch") or None
            info["cli_version"] = first_str(payload, "cli_version") or None
        elif kind == "turn_context":
            model = first_str(payload, "model") or model
        elif kind == "compacted" and (text := as_str(payload.get("message")).strip()):
            pieces.append(_Piece(number, "system", [text], raw_ts, model, None))
        elif kind == "response_item" and payload.get("role") in (None, "assistant") and (
                calls := _assistant_pieces(payload)):
            pieces.append(_Piece(number, "assistant", calls, raw_ts, model, None))
    for piece in pieces:
        if piece.form is not None and piece.form[0] and echoes.repeated(piece.form):
            continue
        position = f"{src.name}: line {piece.number}"
        piece_id = stable_id(SOURCE, path.name, piece.number)
        ts = ts_from_iso(piece.raw_ts)
        if piece.role == "assistant":
            transcript.add_assistant(piece_id, ts, piece.model, piece.texts, position)
            continue
        text = check_turn(piece.texts[0], str(path), position)
        transcript.add(Turn(piece_id, "user", "User", text, ts) if piece.role == "user" else
                       Turn(piece_id, "system", "Codex (summary)", text, ts))
    transcript.flush()
    turns = transcript.turns
    if not turns:
        return None
    session_id = info.get("session_id") or path.stem.removeprefix("rollout-")
    started: str | None = info.get("started") or turns[0].timestamp or file_timestamp(path)
    first_user = next((t.text for t in turns if t.role == "user"), "")
    where = f"in {Path(info['cwd']).name}" if info.get("cwd") else ""
    title = _title(first_user) or " ".join(
        p for p in ("Codex session", where, (started or "")[:10]) if p)
    rel = path.relative_to(root).as_posix()
    metadata: dict[str, Any] = {
        "session_id": session_id, "file_path": rel, "skipped_lines": info["skipped"],
        "cwd": info.get("cwd"), "git_branch": info.get("git_branch"),
        "cli_version": info.get("cli_version")}
    return HarvestItem(item_id=stable_id(SOURCE, "session", session_id), source=SOURCE,
                       kind="conversation", title=title, turns=tuple(turns),
                       timestamp=started, position=rel, metadata=metadata)


def _history(path: Path, sessions: set[str]) -> Iterator[HarvestItem]:
    """One item of prompts per session of ``history.jsonl`` not already read from its
    transcript (history holds only prompts: a transcript says more)."""
    src = file_source(path)
    prompts: dict[str, list[Turn]] = {}
    for line in iter_jsonl(src):
        record = as_dict(line.value)
        session_id, text = first_str(record, "session_id"), as_str(record.get("text")).strip()
        if not session_id or not text or session_id in sessions:
            continue
        check_turn(text, str(path), f"{src.name}: line {line.number}")
        raw_ts = record.get("ts")
        turn_id = stable_id(SOURCE, "history", session_id, raw_ts, text)
        prompts.setdefault(session_id, []).append(
            Turn(turn_id, "user", "User", text, ts_from_epoch(raw_ts)))
    for session_id, turns in prompts.items():
        first = turns[0].text.split("\n", 1)[0][:_TITLE_CHARS]
        yield HarvestItem(
            item_id=stable_id(SOURCE, "session", session_id), source=SOURCE,
            kind="conversation", title=f"Codex prompts: {first}", turns=tuple(turns),
            timestamp=turns[0].timestamp, position=f"{src.name}: session {session_id}",
            metadata={"session_id": session_id, "file_path": src.name, "history_only": True})
