"""Claude Code: a ``~/.claude`` directory (or one session ``.jsonl`` file).

Harvested, in this order (sorted, so runs are deterministic):

- ``CLAUDE.md`` → instruction; ``rules/**/*.md`` → rule; ``plans/*.md`` → artifact;
- per project directory ``projects/<p>/``: ``CLAUDE.md`` → instruction, ``memory/*.md`` → memory
  (frontmatter ``type``: user → preference, feedback → decision, else memory; LF or CRLF),
  and the session transcripts ``*.jsonl`` → one conversation item per file.

Transcripts are streamed line by line into turns as :mod:`mind.harvest.transcript` describes
(a prompt is one turn; the assistant's run until the next prompt, with one ``[Tool call: Name]
{input}`` line per tool call, is one turn; calls of hive-mind's own MCP tools, e.g.
``mcp__hive-mind__recall_memory``, leave only a ``[Used recall_memory]`` marker). Tool results,
thinking, meta lines (``isMeta``), sub-agent lines (``isSidechain``) and local command output
are skipped; broken lines are skipped and counted in the item's ``skipped_lines``. A session's
title is the one the user set (``custom-title``), else a ``summary`` whose ``leafUuid`` is an
event of this transcript (found in any transcript of its project: Claude Code writes summaries
into the transcript open at the time; summaries naming other sessions never name this one),
else its first prompt.

Ids: documents from their relative paths; a session from its transcript's ``sessionId`` (the
file name when absent) and its turns from event ``uuid`` values, so a moved or re-exported
project directory writes nothing. Sessions imported before (keyed by the transcript's relative
path) are recognised: every turn names its old external id (``PREVIOUS_KEY`` in its metadata)
and the writer re-keys a frame stored under it instead of storing the turn again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from mind.harvest.errors import HarvestError
from mind.harvest.inputs import read_text
from mind.harvest.jsonstream import (
    as_dict,
    as_list,
    as_str,
    check_turn,
    file_source,
    first_str,
    iter_jsonl,
    ts_from_iso,
)
from mind.harvest.plaintext import file_timestamp
from mind.harvest.transcript import Transcript, tool_call
from mind.harvest.types import (
    PREVIOUS_KEY,
    HarvestItem,
    ItemKind,
    Role,
    Turn,
    external_id,
    stable_id,
)

SOURCE: Final = "claude-code"
EXPECTED: Final = "a Claude Code directory (~/.claude with projects/, CLAUDE.md, rules/, plans/)"
MEMORY_KINDS: Final[dict[str, ItemKind]] = {
    "user": "preference", "feedback": "decision", "project": "memory", "reference": "memory",
}
_FRONTMATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)(.*)\Z", re.S)
_COMMAND = re.compile(
    r"<command-name>(.*?)</command-name>.*?(?:<command-args>(.*?)</command-args>|\Z)", re.S)
_SUMMARY_LINE = re.compile(rb'\s*\{\s*"type"\s*:\s*"summary"')
_NOISE = ("<local-command-stdout>", "<local-command-stderr>", "[Request interrupted by user")


def parse(target: Path | str) -> Iterator[HarvestItem]:
    root = Path(target)
    if root.is_file() and root.suffix == ".jsonl":
        item = _session(root.parent, root, root.parent.name)
        if item is not None:
            yield item
        return
    if not root.is_dir():
        raise HarvestError(f"not a directory; expected {EXPECTED}", path=str(root))
    if not any((root / n).exists() for n in ("projects", "CLAUDE.md", "rules", "plans")):
        raise HarvestError(f"no projects/, CLAUDE.md, rules/ or plans/ here; expected {EXPECTED}",
                           path=str(root))
    found: list[tuple[Path, ItemKind, str]] = [(root / "CLAUDE.md", "instruction", "CLAUDE.md")]
    found += [(p, "rule", f"Rule: {p.stem}") for p in sorted((root / "rules").rglob("*.md"))]
    found += [(p, "artifact", f"Plan: {p.stem}") for p in sorted((root / "plans").glob("*.md"))]
    for path, kind, title in found:
        if path.is_file() and (item := _document(root, path, kind, title, {})) is not None:
            yield item
    projects = root / "projects"
    for project in sorted(p for p in projects.iterdir() if p.is_dir()) if projects.is_dir() else []:
        yield from _project(root, project)


def _project(root: Path, project: Path) -> Iterator[HarvestItem]:
    name = project.name
    claude_md = project / "CLAUDE.md"
    if claude_md.is_file():
        item = _document(root, claude_md, "instruction", f"Project CLAUDE.md ({name})",
                         {"project": name})
        if item is not None:
            yield item
    for path in sorted((project / "memory").glob("*.md")):
        if path.is_file() and (item := _memory(root, path, name)) is not None:
            yield item
    sessions = sorted(p for p in project.glob("*.jsonl") if p.is_file())
    elsewhere = _summaries(sessions)
    for path in sessions:
        if (item := _session(root, path, name, elsewhere)) is not None:
            yield item


def _summaries(paths: list[Path]) -> dict[str, str]:
    """``leafUuid`` → summary over a project's transcripts: Claude Code writes a session's
    summary into whichever transcript is open then, mostly another session's. Only the lines
    that start as a summary record are parsed; a later one for the same leaf wins."""
    found: dict[str, str] = {}
    for path in paths:
        try:
            with path.open("rb") as lines:
                for line in lines:
                    if not _SUMMARY_LINE.match(line):
                        continue
                    try:
                        record = as_dict(json.loads(line))
                    except ValueError:
                        continue
                    leaf, text = first_str(record, "leafUuid"), first_str(record, "summary")
                    if leaf and text.strip():
                        found[leaf] = text.strip()
        except OSError:
            continue  # the session pass reports an unreadable file
    return found


def _document(root: Path, path: Path, kind: ItemKind, title: str, metadata: dict[str, Any],
              text: str | None = None) -> HarvestItem | None:
    rel = path.relative_to(root).as_posix()
    if text is None:
        text = read_text(path).replace("\r\n", "\n").replace("\r", "\n")
    body = text.strip()
    if not body:
        return None
    check_turn(body, str(path), rel)
    item_id = stable_id(SOURCE, rel)
    timestamp = file_timestamp(path)
    turn = Turn(turn_id=stable_id(SOURCE, rel, body), role="document", speaker=path.name,
                text=body, timestamp=timestamp)
    return HarvestItem(item_id=item_id, source=SOURCE, kind=kind, title=title, turns=(turn,),
                       timestamp=timestamp, position=rel,
                       metadata={"file_path": rel, "category": kind, **metadata})


def parse_frontmatter(text: str) -> tuple[dict[str, str], str]:
    """``(fields, body)`` of a ``---`` frontmatter block; LF, CRLF and CR line ends alike."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    match = _FRONTMATTER.match(text)
    if match is None:
        return {}, text
    fields: dict[str, str] = {}
    for line in match.group(1).split("\n"):
        key, sep, value = line.partition(":")
        if sep and key.strip():
            fields[key.strip().lower()] = value.strip().strip("'\"")
    return fields, match.group(2)


def _memory(root: Path, path: Path, project: str) -> HarvestItem | None:
    fields, body = parse_frontmatter(read_text(path))
    memory_type = fields.get("type", "").lower()
    metadata = {"project": project, "memory_type": memory_type or None,
                "description": fields.get("description") or None}
    title = fields.get("name") or path.stem
    item = _document(root, path, MEMORY_KINDS.get(memory_type, "memory"), title, metadata, body)
    return item


def _user_text(content: Any) -> str:
    if isinstance(content, str):
        text = content
    else:
        blocks = [as_dict(b) for b in as_list(content)]
        text = "\n\n".join(as_str(b.get("text")).strip() if b.get("type") == "text"
                           else "[Shared image]" if b.get("type") == "image" else ""
                           for b in blocks)
    text = text.strip()
    if text.startswith(_NOISE):
        return ""
    if text.startswith("<command-"):
        command = _COMMAND.search(text)
        if command is not None:
            return f"{command.group(1).strip()} {(command.group(2) or '').strip()}".strip()
    return text


def _assistant_pieces(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content.strip()] if content.strip() else []
    pieces = []
    for block in (as_dict(b) for b in as_list(content)):
        kind = block.get("type")
        if kind == "tool_use":
            pieces.append(tool_call(first_str(block, "name"), block.get("input")))
        elif kind not in ("thinking", "redacted_thinking", "tool_result") and (
                text := as_str(block.get("text")).strip()):
            pieces.append(text)
    return pieces


class _Names:
    """What a transcript says its session is called: a title the user set (``custom-title``,
    the last one), else the last ``summary`` whose ``leafUuid`` is an event of this transcript.
    A transcript also carries summaries of other sessions (after ``/clear`` it opens with one
    saying "Conversation Cleared"): those name their own sessions, never this one."""

    def __init__(self) -> None:
        self.custom: list[tuple[str, str]] = []  # (sessionId it names, title)
        self.summaries: list[tuple[str, str]] = []  # (leafUuid, summary)
        self.uuids: set[str] = set()

    def see(self, kind: str, event: dict[str, Any]) -> None:
        if kind == "summary" and (text := first_str(event, "summary").strip()):
            self.summaries.append((first_str(event, "leafUuid"), text))
        elif kind == "custom-title" and (text := first_str(event, "customTitle").strip()):
            self.custom.append((first_str(event, "sessionId"), text))
        if uuid := first_str(event, "uuid"):
            self.uuids.add(uuid)

    def title(self, session_id: str, elsewhere: dict[str, str]) -> str:
        """``elsewhere``: the project's summaries by leaf, for one written into another
        transcript."""
        named = [text for owner, text in self.custom if owner in ("", session_id)]
        if named:
            return named[-1]
        return (next((text for leaf, text in reversed(self.summaries) if leaf in self.uuids), "")
                or next((text for leaf, text in reversed(elsewhere.items())
                         if leaf in self.uuids), ""))


def _session(root: Path, path: Path, project: str,
             elsewhere: dict[str, str] | None = None) -> HarvestItem | None:
    rel = path.relative_to(root).as_posix()
    src = file_source(path)
    session = Transcript(SOURCE, path.stem, str(path), "Claude")
    fallback: dict[str, str] = {}  # ids of events without a uuid: new → path-based (old)
    skipped = 0
    info: dict[str, str] = {}
    names = _Names()
    for line in iter_jsonl(src):
        event = as_dict(line.value)
        if line.error or not event:
            skipped += 1
            continue
        kind = as_str(event.get("type"))
        names.see(kind, event)
        if kind not in ("user", "assistant") or event.get("isMeta") or event.get("isSidechain"):
            continue
        for key, field in (("session_id", "sessionId"), ("cwd", "cwd"),
                           ("git_branch", "gitBranch")):
            if first_str(event, field):
                info.setdefault(key, event[field])
        session.key = info.get("session_id", path.stem)
        message = as_dict(event.get("message"))
        uuid = first_str(event, "uuid")
        if not uuid:
            uuid = stable_id(SOURCE, session.key, line.number)
            fallback[uuid] = stable_id(SOURCE, rel, line.number)
        ts = ts_from_iso(event.get("timestamp"))
        position = f"{src.name}: line {line.number}"
        if kind == "assistant":
            session.add_assistant(uuid, ts, first_str(message, "model") or None,
                                  _assistant_pieces(message.get("content")), position)
            continue
        text = _user_text(message.get("content"))
        if text:
            role: Role = "system" if event.get("isCompactSummary") else "user"
            speaker = "Claude Code (summary)" if role == "system" else "User"
            session.add(Turn(turn_id=uuid, role=role, speaker=speaker,
                             text=check_turn(text, str(path), position), timestamp=ts))
    session.flush()
    if not session.turns:
        return None
    first_user = next((t.text for t in session.turns if t.role == "user"), "")
    title = (names.title(session.key, elsewhere or {}) or first_user.strip().split("\n", 1)[0][:80]
             or f"Session {path.stem}")
    metadata: dict[str, Any] = {"project": project, "file_path": rel, "skipped_lines": skipped,
                                "session_id": session.key,
                                "cwd": info.get("cwd"), "git_branch": info.get("git_branch")}
    return HarvestItem(item_id=stable_id(SOURCE, "session", session.key), source=SOURCE,
                       kind="conversation", title=title,
                       turns=_with_previous_keys(session, rel, fallback),
                       timestamp=session.turns[0].timestamp or file_timestamp(path), position=rel,
                       metadata=metadata)


def _with_previous_keys(session: Transcript, rel: str,
                        fallback: dict[str, str]) -> tuple[Turn, ...]:
    """Each turn with the external id it had under the path-based keys (before sessions were
    keyed by ``sessionId``): the writer adopts a frame stored under that key instead of
    writing the turn again (:meth:`mind.harvest.store.HarvestStore.adopt_previous_keys`)."""
    old_item = stable_id(SOURCE, "session", rel)
    out = []
    for turn in session.turns:
        span = session.spans.get(turn.turn_id)
        old_turn = (stable_id(SOURCE, rel, *span) if span is not None
                    else fallback.get(turn.turn_id, turn.turn_id))
        previous = external_id(SOURCE, old_item, old_turn)
        out.append(replace(turn, metadata={**turn.metadata, PREVIOUS_KEY: previous}))
    return tuple(out)
