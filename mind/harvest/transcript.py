"""Turns of an agent transcript (Claude Code, Codex): one turn per prompt, one per assistant run.

A user prompt is one turn; everything the assistant does until the next prompt (its text, one
``[Tool call: name] {input}`` line per tool call, a ``[Used recall_memory]`` marker per call of
our own tools) is one assistant turn, split only if it would exceed the frame cap. A run's
turn id is its first piece's id when it has one piece id, else ``stable_id(source, key, first,
last)`` with ``key`` naming the session (never a file path: a moved directory keeps its ids).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from mind.harvest.jsonstream import MAX_TURN_CHARS, check_turn
from mind.harvest.own_tools import own_tool, own_tool_marker
from mind.harvest.types import Turn, stable_id

TOOL_INPUT_CHARS: Final = 200


def tool_call(name: str, arguments: Any) -> str:
    """One line for a tool call: ``[Tool call: name] {input}`` (input capped at
    ``TOOL_INPUT_CHARS``), or only ``[Used tool]`` for our own tools (their arguments are
    memories or queries about memories, never imported)."""
    ours = own_tool(name)
    if ours is not None:
        return own_tool_marker(ours)
    args = arguments if isinstance(arguments, str) else json.dumps(
        arguments, ensure_ascii=False, separators=(",", ":"))
    if len(args) > TOOL_INPUT_CHARS:
        args = args[:TOOL_INPUT_CHARS] + "…"
    return f"[Tool call: {name or 'tool'}] {args}".rstrip()


@dataclass
class Transcript:
    """Collects the turns of one transcript; ``path`` names it in errors."""

    source: str
    key: str  # the session's own id: part of merged runs' turn ids
    path: str
    speaker: str  # the assistant's display name ("Claude", "Codex")
    turns: list[Turn] = field(default_factory=list)
    spans: dict[str, tuple[str, str]] = field(default_factory=dict)  # merged run → first, last
    _run: list[str] = field(default_factory=list)
    _chars: int = 0
    _ids: list[str] = field(default_factory=list)
    _ts: str | None = None
    _model: str | None = None

    def add_assistant(self, piece_id: str, ts: str | None, model: str | None,
                      pieces: list[str], position: str) -> None:
        for piece in pieces:
            check_turn(piece, self.path, position)
            if self._run and self._chars + len(piece) > MAX_TURN_CHARS:
                self.flush()
            if not self._run:
                self._ts, self._model = ts, model
            if not self._ids or self._ids[-1] != piece_id:
                self._ids.append(piece_id)
            self._run.append(piece)
            self._chars += len(piece) + 2

    def add(self, turn: Turn) -> None:
        self.flush()
        self.turns.append(turn)

    def flush(self) -> None:
        if not self._run:
            return
        first, last = self._ids[0], self._ids[-1]
        turn_id = first if first == last else stable_id(self.source, self.key, first, last)
        if first != last:
            self.spans[turn_id] = (first, last)
        meta = {"model": self._model} if self._model else {}
        self.turns.append(Turn(turn_id=turn_id, role="assistant", speaker=self.speaker,
                               text="\n\n".join(self._run), timestamp=self._ts, metadata=meta))
        self._run, self._ids, self._chars = [], [], 0
