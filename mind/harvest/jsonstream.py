"""Streaming JSON and JSONL for the chat-export adapters, in bounded memory.

A :class:`JsonSource` names one JSON document (a file, or a member of an export ``.zip``) and
knows how to (re)open it as a guarded byte stream. :func:`iter_array` streams the items of the
top-level array, or of one array key of a top-level object (``{"conversations": [...]}``), with
``ijson`` (C backend); :func:`read_key` reads one small top-level value; :func:`iter_jsonl` reads
JSON Lines one line at a time. Nothing here loads a whole export. Malformed or truncated JSON,
the wrong top-level type, binary garbage and nesting deeper than a chat export's
(:mod:`mind.harvest.jsondepth`) become :class:`HarvestError` naming the file, the item index and
the byte offset reached.

The small helpers at the bottom read untrusted JSON values (``as_dict``, ``first_str`` …) and
turn export timestamps into the house format; the adapters share them.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Generator, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

import ijson

from mind.errors import InvalidTimestampError
from mind.harvest.errors import HarvestError, safe_reason
from mind.harvest.inputs import (
    SNIFF_BYTES,
    Archive,
    CountingReader,
    check_archive,
    find_member,
    is_zip,
    looks_binary,
    open_binary,
    open_member,
)
from mind.harvest.jsondepth import MAX_ITEM_BYTES, DepthLimitedReader
from mind.timeutil import format_ts, normalize_ts

MAX_TURN_CHARS: Final = 2_000_000  # one message; frames are capped at this downstream
MAX_LINE_BYTES: Final = 64 * 1024**2  # one JSONL line
_BUFFER: Final = 1 << 16
_WHITESPACE: Final = b" \t\r\n"

Opener = Callable[[], AbstractContextManager[CountingReader]]
TopLevel = Literal["array", "object"]
Buffered: TypeAlias = "io.BufferedReader[DepthLimitedReader]"


@dataclass(frozen=True, slots=True)
class JsonSource:
    name: str  # short name used in positions ("conversations.json")
    path: str  # full path for errors ("/x/export.zip!conversations.json")
    opener: Opener


@dataclass(frozen=True, slots=True)
class JsonLine:
    number: int  # 1-based line number
    value: Any
    error: str | None = None  # why the line could not be read (then ``value`` is None)


def file_source(path: Path) -> JsonSource:
    return JsonSource(path.name, str(path), lambda: open_binary(path))


def member_source(archive: Archive | Path, member: str) -> JsonSource:
    """One member of an archive opened once for the whole harvest (its reads share the
    archive's inflation budget), or of a zip file opened for each read."""
    if isinstance(archive, Path):
        path = archive
        return JsonSource(member.rsplit("/", 1)[-1], f"{path}!{member}",
                          lambda: open_member(path, member))
    return JsonSource(member.rsplit("/", 1)[-1], f"{archive.path}!{member}",
                      lambda: archive.open(member))


def find_sources(target: Path | str, wanted: tuple[str, ...], expected: str) -> list[JsonSource]:
    """The ``wanted`` files of an export given as a directory, a ``.zip`` or a single file."""
    path = Path(target)
    if not path.exists():
        raise HarvestError(f"no such file or directory; expected {expected}", path=str(path))
    check_archive(path)
    if path.is_dir():
        found: list[JsonSource] = []
        for name in wanted:
            hits = sorted(path.glob(name)) or sorted(path.glob(f"*/{name}"))
            found.extend(file_source(p) for p in hits[:1] if p.is_file())
        if not found:
            raise HarvestError(f"no {' / '.join(wanted)} in this directory; expected {expected}",
                               path=str(path))
        return found
    if is_zip(path):
        archive = Archive(path)
        members = [m for m in (find_member(archive.names, w) for w in wanted) if m is not None]
        if not members:
            raise HarvestError(f"the zip holds no {' / '.join(wanted)}; expected {expected}",
                               path=str(path))
        return [member_source(archive, m) for m in members]
    return [file_source(path)]


@contextmanager
def _open(src: JsonSource, item_depth: int, item_bytes: int | None = MAX_ITEM_BYTES
          ) -> Iterator[tuple[Buffered, CountingReader]]:
    """``src`` guarded; ``item_depth``: where the values the caller builds one at a time sit
    (:mod:`mind.harvest.jsondepth` bounds each)."""
    with src.opener() as raw:
        limited = DepthLimitedReader(raw, src.path, item_depth=item_depth,
                                     item_bytes=item_bytes)
        buf = io.BufferedReader(limited, _BUFFER)
        if looks_binary(buf.peek(SNIFF_BYTES)[:SNIFF_BYTES]):
            raise HarvestError("binary data, not a JSON export", path=src.path, position="byte 0")
        if buf.peek(3).startswith(b"\xef\xbb\xbf"):
            buf.read(3)
        yield buf, raw


def _top(src: JsonSource, buf: Buffered) -> TopLevel:
    skipped = 0
    while chunk := buf.peek(1):
        rest = chunk.lstrip(_WHITESPACE)
        if rest:
            if rest[:1] == b"[":
                return "array"
            if rest[:1] == b"{":
                return "object"
            raise HarvestError(  # what kind of start, never the bytes (they may be secret)
                f"expected a JSON array or object at the top level, found "
                f"{_start_kind(rest[:1])}", path=src.path,
                position=f"byte {skipped + len(chunk) - len(rest):,}")
        skipped += len(buf.read(len(chunk)))
    raise HarvestError("empty file; expected a JSON export", path=src.path, position="byte 0")


def _start_kind(first: bytes) -> str:
    if first in b"-0123456789":
        return "a number"
    if first == b'"':
        return "a string"
    return "text" if first.isascii() and first.isalpha() else "other data"





def open_stream(src: JsonSource) -> AbstractContextManager[tuple[Buffered, CountingReader]]:
    """``src`` as a guarded byte stream (binary refused, BOM skipped, nesting and items
    limited) and the raw reader whose ``position`` says how far it got
    (:mod:`mind.harvest.detect` sniffs it)."""
    return _open(src, 1)


def read_document(src: JsonSource) -> Any:
    """The whole document as one value: only for a document known to be small (one
    conversation per file), never for a whole export."""
    with _open(src, 0) as (buf, raw):
        _top(src, buf)
        try:
            for value in ijson.items(buf, "", use_float=True, buf_size=_BUFFER):
                return value
        except HarvestError:
            raise
        except (ijson.JSONError, ValueError, UnicodeDecodeError) as exc:
            raise HarvestError(f"malformed or truncated JSON ({safe_reason(exc)})",
                               path=src.path, position=f"near byte {raw.position:,}") from exc
    return None


def top_level(src: JsonSource) -> TopLevel:
    """Whether the document is a JSON array or object (anything else is an error)."""
    with _open(src, 0) as (buf, _raw):
        return _top(src, buf)


def iter_array(src: JsonSource, key: str | None = None, *,
               what: str = "item") -> Iterator[tuple[int, Any]]:
    """``(index, item)`` (1-based) for the top-level array, or for the array under ``key`` of a
    top-level object (nothing when the key is absent). Floats stay floats (never Decimal)."""
    with _open(src, 1 if key is None else 2) as (buf, raw):
        kind = _top(src, buf)
        if key is None and kind != "array":
            raise HarvestError(f"expected a JSON array of {what}s at the top level, found an "
                               "object", path=src.path, position="top level")
        if key is not None and kind != "object":
            return
        index = 0
        try:
            for value in ijson.items(buf, "item" if key is None else f"{key}.item",
                                     use_float=True, buf_size=_BUFFER):
                index += 1
                yield index, value
        except HarvestError:
            raise
        except (ijson.JSONError, ValueError, UnicodeDecodeError) as exc:
            raise HarvestError(
                f"malformed or truncated JSON ({safe_reason(exc)})", path=src.path,
                position=f"{what} {index + 1}, near byte {raw.position:,}") from exc


def read_key(src: JsonSource, key: str) -> Any:
    """One small top-level value of an object document (``None`` if absent or not an object)."""
    with _open(src, 1) as (buf, raw):
        if _top(src, buf) != "object":
            return None
        try:
            for value in ijson.items(buf, key, use_float=True, buf_size=_BUFFER):
                return value
        except HarvestError:
            raise
        except (ijson.JSONError, ValueError, UnicodeDecodeError) as exc:
            raise HarvestError(
                f"malformed or truncated JSON ({safe_reason(exc)})", path=src.path,
                position=f"key {key!r}, near byte {raw.position:,}") from exc
    return None


def iter_jsonl(src: JsonSource,
               max_line_bytes: int = MAX_LINE_BYTES) -> Generator[JsonLine, None, None]:
    """Each non-blank line parsed on its own; a bad line comes back with ``error`` set so the
    caller decides whether to skip it or fail. CRLF line ends are fine."""
    with _open(src, 0, None) as (buf, _raw):  # lines: bounded by ``max_line_bytes``
        number = 0
        while line := buf.readline(max_line_bytes + 1):
            number += 1
            if len(line) > max_line_bytes:
                while line and not line.endswith(b"\n"):
                    line = buf.readline(_BUFFER)
                yield JsonLine(number, None, f"line longer than {max_line_bytes:,} bytes")
                continue
            if not line.strip():
                continue
            try:
                yield JsonLine(number, json.loads(line))
            except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
                yield JsonLine(number, None, f"not valid JSON ({safe_reason(exc)})")


# --- untrusted values --------------------------------------------------------------------------

def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def first_str(obj: dict[str, Any], *keys: str) -> str:
    """The first non-blank string among ``keys`` (``""`` if none)."""
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def id_str(value: Any) -> str:
    """A string or integer id as a string; anything else is ``""``."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return ""


def ts_from_epoch(value: Any) -> str | None:
    """Epoch seconds (or milliseconds, when implausibly large) → house ISO; else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        return None
    seconds = value / 1000 if value > 1e11 else value
    try:
        return format_ts(datetime.fromtimestamp(seconds, UTC))
    except (OverflowError, OSError, ValueError):
        return None


def ts_from_iso(value: Any) -> str | None:
    """An ISO-8601 string (naive means UTC) → house ISO; anything unparseable → ``None``."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        return normalize_ts(text)
    except InvalidTimestampError:
        pass
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return format_ts(moment if moment.tzinfo else moment.replace(tzinfo=UTC))


def ts_from_any(value: Any) -> str | None:
    """Epoch number, numeric string or ISO string → house ISO; else ``None``."""
    if isinstance(value, str):
        try:
            return ts_from_epoch(float(value))
        except ValueError:
            return ts_from_iso(value)
    return ts_from_epoch(value)


def check_turn(text: str, path: str, position: str) -> str:
    """``text`` unchanged, or a :class:`HarvestError` when one message exceeds the frame cap."""
    if len(text) > MAX_TURN_CHARS:
        raise HarvestError(
            f"one message is {len(text):,} characters; the limit is {MAX_TURN_CHARS:,}",
            path=path, position=position)
    return text
