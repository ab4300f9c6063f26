"""Reading a whole mind out: its memories by session, its entities and relations, in pages.

Every read is a keyset page (``WHERE key > last ORDER BY key LIMIT n``) over an index, so
memory stays constant however many frames the mind holds and no page costs more than the
first; the caller keeps one read transaction open across the pages for a consistent copy
(:func:`open_snapshot`). Two shapes come out:

- **universal** (``.jsonl``): one message per line in the universal import format
  (:mod:`mind.harvest.universal`), which ``harvest import universal`` reads back into the
  same memories — the same texts, speakers, sessions, source times and importances. A frame
  whose content is ``"<speaker>: <text>"`` (an imported turn) is written as its speaker and
  text; any other frame as its whole content with ``"verbatim": true``, so the import stores
  it unchanged.
- **json** (``.json``): one document ``{"format": "hive-mind", "version", "mind",
  "schema_version", "counts", "conversations": [{conversation_id, title, …, "messages":
  [...]}], "entities": [...], "relations": [...]}`` — the same messages with their frame ids,
  types, sources and recording times, and the knowledge graph with each entity's and
  relation's validity. Its ``conversations`` are universal conversations too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Final

from mind.storage.connection import connect_peek

FORMAT: Final = "hive-mind"
VERSION: Final = 1
PAGE: Final = 1_000
CHUNK_BYTES: Final = 256 * 1024
RESET_KEYS: Final = frozenset({  # provenance the import writes again from the message itself
    "source", "conversation_id", "message_id", "speaker", "role", "title", "kind"})
ROLES: Final = ("user", "assistant", "system", "tool", "document")

_SESSIONS: Final = ("SELECT id, gop_id, summary, status, started_at, ended_at, project_id "
                    "FROM sessions WHERE id > ? ORDER BY id LIMIT ?")
_FRAMES: Final = ("SELECT id, t, frame_type, content, importance, source, created_at, "
                  "recorded_at, metadata, external_id, base_frame_id FROM memory_frames "
                  "WHERE gop_id = ? AND t > ? ORDER BY t LIMIT ?")
_ENTITIES: Final = ("SELECT id, entity_type, name, properties, valid_from, valid_to, "
                    "recorded_at FROM knowledge_entities WHERE id > ? ORDER BY id LIMIT ?")
_RELATIONS: Final = (
    "SELECT r.id, r.source_id, s.name, r.target_id, t.name, r.relation_type, r.confidence, "
    "r.properties, r.asserted, r.valid_from, r.valid_to, r.recorded_at "
    "FROM knowledge_relations r JOIN knowledge_entities s ON s.id = r.source_id "
    "JOIN knowledge_entities t ON t.id = r.target_id WHERE r.id > ? ORDER BY r.id LIMIT ?")

Progress = Callable[[int], None]  # frames written so far


@dataclass(frozen=True, slots=True)
class Counts:
    sessions: int
    frames: int
    entities: int
    relations: int
    schema_version: int

    def as_dict(self) -> dict[str, int]:
        return {"sessions": self.sessions, "frames": self.frames, "entities": self.entities,
                "relations": self.relations}


def open_snapshot(path: Path) -> tuple[Any, Counts]:
    """(blocking) A read-only connection to the mind file inside one read transaction (every
    later page sees the file as it was here) and what it holds."""
    conn = connect_peek(path)
    try:
        conn.execute("BEGIN")
        sessions, frames, entities, relations = (
            int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            for table in ("sessions", "memory_frames", "knowledge_entities",
                          "knowledge_relations"))
        counts = Counts(sessions, frames, entities, relations, schema_version(conn))
    except BaseException:
        conn.close()
        raise
    return conn, counts


def schema_version(conn: Any) -> int:
    row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def _json(text: str | None) -> Any:
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return {}


# -- pages ------------------------------------------------------------------------------------

def _pages(conn: Any, sql: str, *args: Any, page: int = PAGE) -> Iterator[tuple[Any, ...]]:
    """Rows of ``sql`` (keyed on its first column, bound last-but-one) page by page."""
    last: Any = args[-1]
    while True:
        rows = conn.execute(sql, (*args[:-1], last, page)).fetchall()
        yield from rows
        if len(rows) < page:
            return
        last = rows[-1][0]


def sessions(conn: Any, after: int = 0) -> Iterator[tuple[Any, ...]]:
    return _pages(conn, _SESSIONS, after)


def session_frames(conn: Any, gop_id: str, after_t: int = -1) -> Iterator[tuple[Any, ...]]:
    last, page = after_t, PAGE
    while True:
        rows = conn.execute(_FRAMES, (gop_id, last, page)).fetchall()
        yield from rows
        if len(rows) < page:
            return
        last = rows[-1][1]


def messages(conn: Any, *, full: bool, after: tuple[int, int] = (0, -1)
             ) -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
    """(session row, message) for every frame from ``after`` (session row id, frame ``t``)
    on, session by session, each in its frames' order."""
    for session in sessions(conn, after[0] - 1 if after[0] else 0):
        start = after[1] if session[0] == after[0] else -1
        first = start < 0
        for frame in session_frames(conn, session[1], start):
            yield session, message(session, frame, full=full, titled=first)
            first = False


def message(session: tuple[Any, ...], frame: tuple[Any, ...], *, full: bool,
            titled: bool) -> dict[str, Any]:
    """One frame as a universal message (``full``: with the frame's own fields too)."""
    (frame_id, t, frame_type, content, importance, source, created_at, recorded_at, raw_meta,
     external_id, base_frame_id) = frame
    metadata = _json(raw_meta)
    speaker = metadata.get("speaker") if isinstance(metadata.get("speaker"), str) else None
    role = metadata.get("role")
    if role not in ROLES:
        role = "user" if source == "user_stated" else "assistant"
    out: dict[str, Any] = {"conversation_id": session[1], "message_id": str(frame_id)}
    if titled and not full and session[2]:
        out["title"] = session[2]
    text, verbatim = content, True
    if speaker and content.startswith(f"{speaker}: "):
        rest = content[len(speaker) + 2:]
        if rest and rest == rest.strip():
            text, verbatim = rest, False
    if speaker:
        out["speaker"] = speaker
    out.update(role=role, text=text, timestamp=created_at, importance=importance)
    if verbatim:
        out["verbatim"] = True
    kept = {k: v for k, v in metadata.items() if k not in RESET_KEYS}
    if kept:
        out["metadata"] = kept
    if full:
        out.update(frame_id=frame_id, t=t, frame_type=frame_type, source=source,
                   recorded_at=recorded_at, external_id=external_id,
                   base_frame_id=base_frame_id)
    return out


def entities(conn: Any, after: int = 0) -> Iterator[dict[str, Any]]:
    for (ident, kind, name, props, valid_from, valid_to, recorded_at) in _pages(
            conn, _ENTITIES, after):
        yield {"id": ident, "type": kind, "name": name, "properties": _json(props),
               "valid_from": valid_from, "valid_to": valid_to, "recorded_at": recorded_at}


def relations(conn: Any, after: int = 0) -> Iterator[dict[str, Any]]:
    for (ident, source_id, source, target_id, target, kind, confidence, props, asserted,
         valid_from, valid_to, recorded_at) in _pages(conn, _RELATIONS, after):
        yield {"id": ident, "source_id": source_id, "source": source, "target_id": target_id,
               "target": target, "type": kind, "confidence": confidence,
               "properties": _json(props), "asserted": bool(asserted),
               "valid_from": valid_from, "valid_to": valid_to, "recorded_at": recorded_at}


# -- encoding -----------------------------------------------------------------------------------

def encode(value: Any) -> bytes:
    """Compact UTF-8 JSON; text that is not valid Unicode (a lone surrogate) is escaped."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":")).encode("ascii")


class _Chunks:
    """Pieces gathered into chunks of about :data:`CHUNK_BYTES`."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def add(self, part: bytes) -> bytes | None:
        self.parts.append(part)
        self.size += len(part)
        return self.take() if self.size >= CHUNK_BYTES else None

    def take(self) -> bytes:
        out = b"".join(self.parts)
        self.parts, self.size = [], 0
        return out


def universal_chunks(conn: Any, progress: Progress | None = None) -> Iterator[bytes]:
    """The mind's frames as universal JSON Lines, in chunks."""
    chunks = _Chunks()
    for done, (_, msg) in enumerate(messages(conn, full=False), 1):
        chunk = chunks.add(encode(msg) + b"\n")
        if chunk is not None:
            yield chunk
            if progress is not None:
                progress(done)
    yield chunks.take()


def json_chunks(conn: Any, mind_id: str, counts: Counts, exported_at: str,
                progress: Progress | None = None) -> Iterator[bytes]:
    """The mind as one JSON document (module docstring), in chunks."""
    chunks = _Chunks()
    head = {"format": FORMAT, "version": VERSION, "mind": mind_id, "exported_at": exported_at,
            "schema_version": counts.schema_version, "counts": counts.as_dict()}
    chunks.add(encode(head)[:-1] + b',"conversations":[')
    current: int | None = None
    for done, (session, msg) in enumerate(messages(conn, full=True), 1):
        if session[0] != current:
            conversation = {"conversation_id": session[1], "title": session[2] or session[1],
                            "status": session[3], "started_at": session[4],
                            "ended_at": session[5], "project_id": session[6]}
            opening = (b"]}," if current is not None else b"") + encode(conversation)[:-1]
            chunks.add(opening + b',"messages":[')
            current = session[0]
        else:
            chunks.add(b",")
        chunk = chunks.add(encode(msg))
        if chunk is not None:
            yield chunk
            if progress is not None:
                progress(done)
    chunks.add(b"]}]" if current is not None else b"]")
    for key, rows in (("entities", entities(conn)), ("relations", relations(conn))):
        chunks.add(f',"{key}":['.encode())
        for n, row in enumerate(rows):
            chunk = chunks.add((b"," if n else b"") + encode(row))
            if chunk is not None:
                yield chunk
        chunks.add(b"]")
    chunks.add(b"}\n")
    yield chunks.take()


def page(conn: Any, part: str, cursor: str | None, limit: int
         ) -> tuple[list[dict[str, Any]], str | None]:
    """One page of ``part`` (``frames``, ``entities``, ``relations``) after ``cursor`` (the
    ``next`` of the page before; ``None``: from the start): (records, next cursor or None)."""
    if part == "frames":
        session, t = _frame_cursor(cursor)
        rows = list(islice(messages(conn, full=True, after=(session, t)), limit + 1))
        more = len(rows) > limit
        rows = rows[:limit]
        nxt = f"{rows[-1][0][0]}:{rows[-1][1]['t']}" if more and rows else None
        return [msg for _, msg in rows], nxt
    after = _id_cursor(cursor)
    records = list(islice((entities if part == "entities" else relations)(conn, after),
                          limit + 1))
    more = len(records) > limit
    records = records[:limit]
    return records, (str(records[-1]["id"]) if more and records else None)


def _frame_cursor(cursor: str | None) -> tuple[int, int]:
    if not cursor:
        return 0, -1
    session, sep, t = cursor.partition(":")
    if not (sep and session.isdigit() and t.isdigit()) or len(cursor) > 40:
        raise ValueError("cursor must be the 'next' of the page before")
    return int(session), int(t)


def _id_cursor(cursor: str | None) -> int:
    if not cursor:
        return 0
    if not cursor.isdigit() or len(cursor) > 20:
        raise ValueError("cursor must be the 'next' of the page before")
    return int(cursor)
