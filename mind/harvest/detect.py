"""Recognising harvest inputs by what they hold, never by their names.

Exports drift: ChatGPT moved from one ``conversations.json`` to dozens of JSON files, and other
tools rename members without notice. So every JSON document of an input (a file, each file of
a directory, each member of a ``.zip``) is *sniffed*: :func:`sniff` reads only its start — the
first element of a top-level array, the top-level keys of an object up to its first array (and
that array's first element), the first records of a JSON Lines file — into a :class:`Shape`.
One recogniser per source (:data:`RECOGNISERS`) says whether a shape is that source's.

Two users:

- the adapters, through :func:`json_sources`: the documents of a directory or ``.zip`` that
  their recogniser accepts, in natural name order (``part-2`` before ``part-10``, so resumed
  runs skip the same items); an input holding none is a :class:`HarvestError` listing what it
  found (member names, the kind of each and its first keys) — never an empty, "successful" run;
- ``harvest import auto``, through :func:`detect`: the source whose recogniser accepts the most
  documents (ties: :data:`PRIORITY` order), then the file type (PDF, markdown, plain text); a
  clear error naming the ``--source`` values to try when nothing fits.

Keys shown in errors are structural names only: at most :data:`SHOWN_KEYS` of them, each a
short identifier (anything else is shown as ``…``), never values.

Sniffing is bounded in every branch (:mod:`mind.harvest.skeleton`): bytes and parser events
per document and per input, and what is kept of a first element or a record is a skeleton —
never the whole value, however the document is shaped.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import ijson

from mind.harvest.errors import HarvestError, count_of
from mind.harvest.inputs import (
    SNIFF_BYTES,
    Archive,
    ArchiveError,
    check_archive,
    is_zip,
    looks_binary,
)
from mind.harvest.jsonstream import JsonSource, file_source, member_source, open_stream
from mind.harvest.skeleton import Exhausted, SniffBudget, bounded, build
from mind.harvest.takeout_html import first_header

Kind = Literal["array", "object", "jsonl", "text", "pdf", "binary", "empty", "invalid"]

MAX_DOCUMENTS: Final = 1_000  # documents sniffed per directory or archive
MAX_FILES: Final = 20_000  # files listed per directory walk
MAX_KEYS: Final = 32  # top-level keys read from one object
JSONL_RECORDS: Final = 8
JSONL_LINE: Final = 1 << 20  # a longer first line is a JSON document, not JSON Lines
SHOWN_KEYS: Final = 5
SHOWN_DOCUMENTS: Final = 8
_IDENT: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_.$-]{0,31}")
_DIGITS: Final = re.compile(r"(\d+)")
_PRIORITY_SUFFIXES: Final = (".json", ".jsonl", ".ndjson")


@dataclass(frozen=True, slots=True)
class Shape:
    """The start of one document: enough to tell which export it belongs to."""

    name: str  # the file's path relative to the input, or the zip member
    kind: Kind
    keys: tuple[str, ...] = ()  # the object's top-level keys, or the first element's
    first: Any = None  # the first element (array) or the first element of ``array_key``
    array_key: str | None = None  # the object's first array-valued key
    records: tuple[Any, ...] = ()  # the first JSON Lines records

    def describe(self) -> str:
        """``name (kind: key, key, …)`` with structural key names only."""
        shown = [k if _IDENT.fullmatch(k) else "…" for k in self.keys[:SHOWN_KEYS]]
        more = ", …" if len(self.keys) > SHOWN_KEYS else ""
        what = {"array": "JSON array", "object": "JSON object", "jsonl": "JSON Lines"}.get(
            self.kind, self.kind)
        if self.kind == "array" and self.first is None:
            what = "empty JSON array"
        return f"{self.name} ({what}: {', '.join(shown)}{more})" if shown else \
            f"{self.name} ({what})"


# --- sniffing ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Document:
    """One document of an input: its name, its JSON stream and its first raw bytes."""

    name: str
    src: JsonSource
    head: Callable[[], bytes]


def _file_head(path: Path) -> Callable[[], bytes]:
    def head() -> bytes:
        try:
            with path.open("rb") as fh:
                return fh.read(SNIFF_BYTES)
        except OSError:
            return b""
    return head


def _source_head(src: JsonSource) -> Callable[[], bytes]:
    """The first bytes through the source's own opener (a zip member, a text file)."""
    def head() -> bytes:
        try:
            with src.opener() as raw:
                return raw.read(SNIFF_BYTES)
        except ArchiveError:
            raise
        except HarvestError:
            return b""
    return head


def shape_of(src: JsonSource) -> Shape:
    """The :class:`Shape` of one JSON source an adapter already holds."""
    return sniff(Document(src.name, src, _source_head(src)))


def sniff(doc: Document, budget: SniffBudget | None = None) -> Shape:
    """The :class:`Shape` of ``doc``; a broken document is ``invalid``, never an exception.
    ``budget``: a detection's over every document (None: this document's own)."""
    name, src = doc.name, doc.src
    if budget is not None and budget.events <= 0:
        return Shape(name, "invalid")  # the input spent its allowance: not looked at
    head = doc.head()
    if head.startswith(b"%PDF-"):
        return Shape(name, "pdf")
    if looks_binary(head):
        return Shape(name, "binary")
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if not start:
        return Shape(name, "empty")
    if start not in (b"[", b"{"):
        return Shape(name, "text")
    try:  # each reading its own allowance (or the detection's)
        if start == b"{" and (records := _jsonl_records(src, budget or SniffBudget.one())):
            return Shape(name, "jsonl", keys=_keys(records[0]), records=records)
        return _json_shape(src, name, budget or SniffBudget.one())
    except ArchiveError:
        raise  # a zip bomb or a damaged zip is the input's problem, not "some other file"
    except (HarvestError, ijson.JSONError, ValueError, UnicodeDecodeError, StopIteration,
            Exhausted):
        return Shape(name, "invalid")


def _keys(value: Any) -> tuple[str, ...]:
    return tuple(str(k) for k in value) if isinstance(value, dict) else ()


def _jsonl_records(src: JsonSource, budget: SniffBudget) -> tuple[Any, ...]:
    """The first records when ``src`` is JSON Lines (a complete object on its first line and
    another line after it), as skeletons; ``()`` for a JSON document."""
    records: list[Any] = []
    with open_stream(src) as (buf, raw):
        while len(records) < JSONL_RECORDS and (line := buf.readline(JSONL_LINE + 1)):
            if len(line) > JSONL_LINE:
                break
            if not line.strip():
                continue
            try:
                records.append(build(bounded(ijson.parse(line, use_float=True), raw, budget)))
            except (ijson.JSONError, ValueError, UnicodeDecodeError):
                if not records:
                    return ()
                continue
    return tuple(records) if len(records) > 1 else ()


def _json_shape(src: JsonSource, name: str, budget: SniffBudget) -> Shape:
    with open_stream(src) as (buf, raw):
        events = bounded(ijson.parse(buf, use_float=True), raw, budget)
        _prefix, event, _value = next(events)
        if event == "start_array":
            first = build(events)
            return Shape(name, "array", keys=_keys(first), first=first)
        keys: list[str] = []
        try:
            for prefix, event, value in events:
                if prefix == "" and event == "end_map":
                    break
                if prefix == "" and event == "map_key":
                    keys.append(str(value))
                    if len(keys) >= MAX_KEYS:
                        break
                elif keys and prefix == keys[-1] and event == "start_array":
                    first = build(events)
                    return Shape(name, "object", keys=tuple(keys), first=first,
                                 array_key=keys[-1])
        except Exhausted:
            pass  # the keys read so far
        return Shape(name, "object", keys=tuple(keys))


# --- one recogniser per source -----------------------------------------------------------------

def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _first_of(shape: Shape, *array_keys: str) -> dict[str, Any]:
    """The first element of a top-level array, or of one of ``array_keys`` of an object."""
    if shape.kind == "array" or (shape.kind == "object" and shape.array_key in array_keys):
        return _dict(shape.first)
    return {}


def _messages(conv: dict[str, Any], *keys: str) -> dict[str, Any]:
    for key in keys:
        value = conv.get(key)
        if isinstance(value, list) and value:
            return _dict(value[0])
    return {}


def is_chatgpt(shape: Shape) -> bool:
    """An array of conversations with a ``mapping`` (also under ``conversations``), or one
    such conversation as the whole document (the split layout)."""
    return ("mapping" in _first_of(shape, "conversations")
            or (shape.kind == "object" and "mapping" in shape.keys
                and ("current_node" in shape.keys or "title" in shape.keys)))


def is_claude(shape: Shape) -> bool:
    """claude.ai: conversations with ``chat_messages``, projects (``docs``,
    ``prompt_template``), memories (``conversations_memory``, ``project_memories``)."""
    first = _first_of(shape, "conversations", "design_chats", "projects")
    return bool({"chat_messages", "docs", "prompt_template", "conversations_memory",
                 "project_memories"} & first.keys())


def is_grok(shape: Shape) -> bool:
    """Grok: ``{conversations: [{conversation: {…}, responses: [{response: {…}}]}]}``."""
    first = _first_of(shape, "conversations")
    return isinstance(first.get("conversation"), dict) and isinstance(first.get("responses"),
                                                                      list)


_GEMINI_WORDS: Final = ("gemini", "bard")


def is_takeout_record(record: object) -> bool:
    """A Google Takeout "My Activity" record (any product): ``{header|products, title, …}``."""
    return isinstance(record, dict) and "title" in record and (
        "header" in record or "products" in record)


def is_gemini_activity(record: dict[str, Any]) -> bool:
    """A My Activity record of Gemini Apps (or Bard), by its header or products, whatever the
    file is called."""
    products = record.get("products")
    labels = [str(record.get("header", "")), *(products if isinstance(products, list) else [])]
    return any(word in str(label).lower() for label in labels for word in _GEMINI_WORDS)


def page_header(doc: Document) -> str | None:
    """The product of a Google Takeout My Activity page in HTML (Takeout's default format):
    its first card's header (:mod:`mind.harvest.takeout_html`), whatever the file is named;
    ``None`` for any other document."""
    if doc.head().lstrip(b"\xef\xbb\xbf \t\r\n")[:1] != b"<":
        return None
    try:
        with doc.src.opener() as raw:
            return first_header(raw)
    except ArchiveError:
        raise
    except HarvestError:
        return None


def is_gemini_page(doc: Document) -> bool:
    header = page_header(doc)
    return header is not None and is_gemini_activity({"header": header})


def gemini_pages(target: Path) -> list[JsonSource]:
    """The Gemini Apps My Activity pages of a directory or ``.zip`` (or the file itself)."""
    return [doc.src for doc in documents(target) if is_gemini_page(doc)]


def is_gemini(shape: Shape) -> bool:
    """Takeout "My Activity" records of Gemini Apps, or the simple dump (conversations with
    ``messages``/``turns``/``history`` of ``parts``, or one bare list of such messages)."""
    first = _first_of(shape, "conversations", "messages", "history", "turns")
    if is_takeout_record(first):
        return is_gemini_activity(first)
    if shape.kind == "object" and shape.array_key in ("history", "turns"):
        return True
    message = _messages(first, "history", "turns", "messages") if (
        shape.array_key in (None, "conversations")) else first
    if "history" in first or "turns" in first:
        return True
    return "parts" in message or str(message.get("role", "")).lower() in ("model", "gemini")


def is_universal(shape: Shape) -> bool:
    """The universal format: flat messages ``{conversation_id, text, …}`` (JSON or JSONL, a
    single message too), or conversations ``{conversation_id, messages: [{text, …}]}``."""
    if shape.kind == "jsonl":
        return all("conversation_id" in _dict(r) and "text" in _dict(r) for r in shape.records)
    if shape.kind == "object" and "conversation_id" in shape.keys:
        # one message or one conversation: the whole document, or a file of one line
        return "text" in shape.keys or shape.array_key == "messages"
    first = _first_of(shape, "conversations")
    if "conversation_id" not in first:
        return False
    return "text" in first or "text" in _messages(first, "messages")


_CLAUDE_CODE_TYPES: Final = frozenset({"user", "assistant", "summary", "system",
                                       "file-history-snapshot"})


def is_claude_code(shape: Shape) -> bool:
    """A Claude Code transcript (JSON Lines): events with ``sessionId``, ``uuid`` or a
    ``summary`` with ``leafUuid``."""
    records = [_dict(r) for r in shape.records] if shape.kind == "jsonl" else []
    return any(r.get("type") in _CLAUDE_CODE_TYPES
               and ("sessionId" in r or "leafUuid" in r or "uuid" in r) for r in records)


_CODEX_TYPES: Final = frozenset({"session_meta", "response_item", "event_msg", "turn_context",
                                 "compacted"})
_CODEX_CONTENT: Final = frozenset({"input_text", "output_text"})


def _codex_record(record: dict[str, Any]) -> bool:
    if record.get("type") in _CODEX_TYPES and isinstance(record.get("payload"), dict):
        return True  # the rollout format since late 2025
    if "record_type" in record or {"session_id", "ts", "text"} <= record.keys():
        return True  # older rollouts' state lines; the history file
    content = record.get("content")
    return record.get("type") == "message" and isinstance(content, list) and any(
        _dict(c).get("type") in _CODEX_CONTENT for c in content)


def is_codex(shape: Shape) -> bool:
    """A Codex CLI rollout (``session_meta`` / ``response_item`` records, or the older
    ``{id, timestamp, instructions}`` header then ``message`` records) or its history file."""
    records = [_dict(r) for r in shape.records] if shape.kind == "jsonl" else []
    if records and {"id", "timestamp"} <= records[0].keys() and "instructions" in records[0]:
        return True
    return any(_codex_record(r) for r in records)


Recogniser = Callable[[Shape], bool]
RECOGNISERS: Final[dict[str, Recogniser]] = {
    "chatgpt": is_chatgpt, "claude": is_claude, "grok": is_grok, "gemini": is_gemini,
    "codex": is_codex, "claude-code": is_claude_code, "universal": is_universal,
}
PRIORITY: Final = tuple(RECOGNISERS)  # the most specific shapes first; universal last
JSON_SOURCES: Final = ("chatgpt", "claude", "gemini", "grok", "universal")
JSONL_SOURCES: Final = ("claude-code", "codex", "universal")


def classify(shape: Shape) -> str | None:
    """The first source (in :data:`PRIORITY` order) whose recogniser accepts ``shape``."""
    return next((s for s in PRIORITY if RECOGNISERS[s](shape)), None)


# --- the documents of an input -----------------------------------------------------------------

def _natural(name: str) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else p.lower() for p in _DIGITS.split(name))


def _order(names: Iterable[str]) -> list[str]:
    """JSON-named documents first (they are sniffed first), each group in natural order."""
    return sorted(names, key=lambda n: (not n.lower().endswith(_PRIORITY_SUFFIXES),
                                        _natural(n)))


def _walk(root: Path) -> list[str]:
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            found.append(Path(folder, name).relative_to(root).as_posix())
            if len(found) >= MAX_FILES:
                return found
    return found


def documents(target: Path) -> list[Document]:
    """Every document of a directory or ``.zip`` (capped at :data:`MAX_DOCUMENTS`), or the
    single file itself; a damaged ``.zip`` is an error (:func:`~mind.harvest.inputs.
    check_archive`)."""
    check_archive(target)
    if target.is_dir():
        names = _order(_walk(target))[:MAX_DOCUMENTS]
        return [Document(n, file_source(target / n), _file_head(target / n)) for n in names]
    if is_zip(target):
        archive = Archive(target)  # one ZipFile and one inflation budget for every read
        names = _order(archive.names)[:MAX_DOCUMENTS]
        members = [member_source(archive, n) for n in names]
        return [Document(n, src, _source_head(src)) for n, src in zip(names, members, strict=True)]
    return [Document(target.name, file_source(target), _file_head(target))]


def _where(target: Path) -> str:
    return "the directory" if target.is_dir() else "the zip" if is_zip(target) else "the file"


def found_text(shapes: list[Shape]) -> str:
    """What an input holds, for an error: how many documents, the first few described."""
    shown = "; ".join(s.describe() for s in shapes[:SHOWN_DOCUMENTS])
    more = f"; and {len(shapes) - SHOWN_DOCUMENTS:,} more" if len(shapes) > SHOWN_DOCUMENTS \
        else ""
    return f"{count_of(len(shapes), 'file')}: {shown}{more}" if shapes else "no files"


def json_sources(target: Path | str, source: str, expected: str) -> list[JsonSource]:
    """The documents of ``target`` that are ``source``'s by their content (the whole input
    when it is one plain file: the adapter reports its exact problem). Nothing recognised is
    a :class:`HarvestError` listing what was found."""
    path = Path(target)
    if not path.exists():
        raise HarvestError(f"no such file or directory; expected {expected}", path=str(path))
    check_archive(path)
    if path.is_file() and not is_zip(path):
        return [file_source(path)]
    accepts = RECOGNISERS[source]
    shapes = [(sniff(doc), doc.src) for doc in documents(path)]
    hits = [src for shape, src in shapes if accepts(shape)]
    if not hits:
        other = Counter(s for s in (classify(shape) for shape, _ in shapes) if s)
        hint = (f"; it looks like source {other.most_common(1)[0][0]!r}" if other else "")
        raise HarvestError(
            f"{_where(path)} holds nothing importable as {source}: found "
            f"{found_text([shape for shape, _ in shapes])}{hint}; expected {expected}",
            path=str(path))
    return hits


# --- harvest import auto -----------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Detection:
    source: str
    reason: str  # why, in a few words ("12 of 14 JSON files are ChatGPT conversations")
    others: dict[str, int] = field(default_factory=dict)  # other sources also found


_TEXT_SUFFIXES: Final = {".md": "markdown", ".markdown": "markdown", ".txt": "plaintext",
                         ".text": "plaintext", ".pdf": "pdf",
                         ".html": "markdown", ".htm": "markdown"}  # markdown reads HTML
ALL_SOURCES_HINT: Final = ("chatgpt, claude, claude-code, codex, gemini, grok, universal, "
                           "markdown, plaintext, pdf")


def _cannot_tell(target: Path, found: str, candidates: Iterable[str]) -> HarvestError:
    tries = ", ".join(f"--source {c}" for c in candidates)
    return HarvestError(f"cannot tell which export this is: found {found}; import it with one "
                        f"of: {tries}", path=str(target))


def detect(target: Path | str) -> Detection:
    """Which source reads ``target`` (a URL, file, directory or ``.zip``), by its content."""
    text = str(target).strip()
    if isinstance(target, str) and text.lower().startswith(("http://", "https://")):
        return Detection("url", "an http(s) URL")
    path = Path(target).expanduser()
    if not path.exists():
        raise HarvestError("no such file or directory", path=str(path))
    budget = SniffBudget()
    docs = documents(path)
    shapes = [sniff(doc, budget) for doc in docs]
    votes = Counter(s for s in (classify(shape) for shape in shapes) if s)
    pages = {doc.name: header for doc, shape in zip(docs, shapes, strict=True)
             if shape.kind == "text" and (header := page_header(doc)) is not None}
    votes.update("gemini" for header in pages.values()
                 if is_gemini_activity({"header": header}))
    if votes:
        ranked = sorted(votes.items(), key=lambda kv: (-kv[1], PRIORITY.index(kv[0])))
        source, n = ranked[0]
        others = dict(ranked[1:])
        also = "".join(f"; also {count_of(m, 'file')} of {s}" for s, m in others.items())
        what = "the file" if len(shapes) == 1 and not path.is_dir() and not is_zip(path) else \
            f"{n} of {count_of(len(shapes), 'file')} in {_where(path)}"
        return Detection(source, f"{what}: {_SHAPES[source]}{also}", others)
    if path.is_dir() and (path / "CLAUDE.md").is_file() and any(
            (path / n).is_dir() for n in ("projects", "rules", "plans")):
        return Detection("claude-code", "a Claude Code directory (CLAUDE.md with projects/, "
                                        "rules/ or plans/)")
    if not is_zip(path):
        typed = Counter(t for t in map(_type_of, shapes) if t is not None)
        typed.subtract(t for s in shapes if s.name in pages  # another product's activity
                       and (t := _type_of(s)) is not None)
        typed = +typed
        if typed:
            kind = typed.most_common(1)[0][0]
            return Detection(kind, f"{count_of(typed[kind], 'file')} of type {kind}")
    json_like = any(s.kind in ("array", "object", "invalid") for s in shapes)
    jsonl = any(s.kind == "jsonl" for s in shapes)
    candidates = (JSONL_SOURCES if jsonl and not json_like else
                  JSON_SOURCES if json_like and not jsonl else ALL_SOURCES_HINT.split(", "))
    raise _cannot_tell(path, found_text(shapes), candidates)


def _type_of(shape: Shape) -> str | None:
    suffix = Path(shape.name).suffix.lower()
    if shape.kind == "pdf":
        return "pdf"
    if shape.kind == "text":
        return "markdown" if _TEXT_SUFFIXES.get(suffix) == "markdown" else "plaintext"
    return None


_SHAPES: Final = {
    "chatgpt": "ChatGPT conversations (a mapping of message nodes)",
    "claude": "claude.ai conversations / projects / memories (chat_messages)",
    "grok": "Grok conversations (conversation + responses)",
    "gemini": "Gemini conversations or Takeout activity (JSON or HTML)",
    "codex": "Codex CLI session records",
    "claude-code": "Claude Code transcript events",
    "universal": "universal-format messages (conversation_id + text)",
}

