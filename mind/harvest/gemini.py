"""Gemini exports → conversation items: the Google Takeout format and simple JSON dumps.

1. **Google Takeout "My Activity"** (``Takeout/My Activity/Gemini Apps/MyActivity.json``, given
   as the file, the Takeout directory or the ``.zip``; recognised by its records, never by its
   name, so a renamed file is found and another product's ``MyActivity.json`` is not — see
   :func:`mind.harvest.detect.is_gemini`): an array of records ``{header, title,
   time, products, safeHtmlItem, attachedFiles, subtitles}``, streamed with ``ijson``. Takeout has
   no thread ids, so **each exchange record is one conversation item**: the prompt (``User``)
   and the HTML response as text (``Gemini``). Grouping by day would invent threads and change an
   item whenever a newer export adds to that day; ``metadata["day"]`` lets a reader regroup. Ids:
   ``stable_id("gemini", "takeout", time, prompt)``. Records are told apart by their structure,
   not by the words of one language (Takeout localises the title: "Prompted …", "Eingegebener
   Prompt: …"): a record with a response (``safeHtmlItem``) or attached files is an exchange,
   and so is one whose title starts with a known prompt label (:data:`PROMPT_LABELS`, which is
   also cut off the prompt; an unknown label stays in the prompt's text). Other records ("Used
   Gemini Apps", "Created Gem", "Gave feedback") are activity markers and are skipped; an
   export of another product, or Gemini activity without a single exchange, is an error (so
   nothing is recorded as imported).
   **The same activity as an HTML page** (``MyActivity.html`` or a localized name:
   Takeout's default format) is read card by card (:mod:`mind.harvest.takeout_html`): the
   header names the product, the body's first line is the title (the prompt after its
   label), the lines up to the time line are kept in the prompt (attachment notes), the time
   line is read from the account's language (:mod:`mind.harvest.takeout_time`; an ambiguous
   one keeps no time rather than a guessed one, and the line itself keys the item) and the
   markup after it is the answer. JSON wins when an input holds both.
2. **A simple JSON dump**: an array of conversations, ``{conversations: […]}``,
   one ``{history|messages|turns: […]}`` conversation or a bare array of messages (``role``/
   ``author``/``sender`` with ``parts``/``text``/``content``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Final

import ijson

from mind.harvest import inputs
from mind.harvest.detect import (
    gemini_pages,
    is_gemini_activity,
    is_takeout_record,
    json_sources,
)
from mind.harvest.errors import HarvestError, NothingToImport, count_of, keys_hint, safe_reason
from mind.harvest.html import html_to_text
from mind.harvest.inputs import SNIFF_BYTES, CountingReader
from mind.harvest.jsonstream import JsonSource
from mind.harvest.plaintext import file_timestamp
from mind.harvest.takeout_html import Card, cards
from mind.harvest.takeout_time import parse_time
from mind.harvest.types import HarvestItem, Role, Turn, stable_id
from mind.timeutil import format_ts, is_strict_iso, normalize_ts

SOURCE: Final = "gemini"
TAKEOUT_FILE: Final = "MyActivity.json"
PROMPT_LABELS: Final = re.compile(r"(?:Prompted|Eingegebener Prompt:)\s+")
"""Title labels of a prompt record in the Takeout languages seen so far (English, German);
the HTML format separates label and prompt by a no-break space."""
_USER_ROLES: Final = frozenset({"user", "human"})
_ASSISTANT_ROLES: Final = frozenset({"model", "assistant", "gemini", "bard"})
_TITLE_CHARS: Final = 80


def _short(text: str, fallback: str) -> str:
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), fallback)
    return first if len(first) <= _TITLE_CHARS else first[: _TITLE_CHARS - 1].rstrip() + "…"


def _first(record: dict[str, Any], *keys: str) -> Any:
    return next((record[k] for k in keys if record.get(k) not in (None, "")), None)


def _timestamp(value: object) -> str | None:
    """Strict ISO strings and epoch numbers (seconds, or milliseconds when huge) → house ISO."""
    try:
        if isinstance(value, str) and is_strict_iso(value.strip()):
            return normalize_ts(value.strip())
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return format_ts(datetime.fromtimestamp(value / 1000 if value > 1e11 else value, UTC))
    except (ValueError, OverflowError, OSError):
        pass
    return None


def _names(value: object) -> list[str]:
    """Names from a list of strings or ``{name|title|fileName}`` objects."""
    entries = value if isinstance(value, list) else []
    names = [e if isinstance(e, str) else _first(e, "name", "title", "fileName")
             for e in entries if isinstance(e, str | dict)]
    return [n.strip() for n in names if isinstance(n, str) and n.strip()]


# -- Takeout "My Activity" --------------------------------------------------------------------
def prompt_of(title: str) -> tuple[str, bool]:
    """``(prompt, labelled)``: the title without its prompt label, and whether it had one."""
    label = PROMPT_LABELS.match(title)
    return (title[label.end():].strip(), True) if label else (title.strip(), False)


def _takeout_item(record: dict[str, Any], position: str) -> HarvestItem | None:
    """One JSON record → an exchange item, or ``None`` for an activity marker."""
    title = record.get("title")
    html_items = record.get("safeHtmlItem")
    answers = [e["html"] for e in (html_items if isinstance(html_items, list) else [])
               if isinstance(e, dict) and isinstance(e.get("html"), str)]
    return _exchange(title if isinstance(title, str) else "", record.get("time"), answers,
                     position, attached=_names(record.get("attachedFiles")),
                     subtitles=_names(record.get("subtitles")))


def _card_item(card: Card, position: str) -> HarvestItem | None:
    """One HTML card → an exchange item (its time parsed from the localized time line, or
    the line itself as the id's time when it cannot be read for sure)."""
    title, *extra = card.lines or [""]
    raw_time = card.time_text and (parse_time(card.time_text) or card.time_text)
    return _exchange(title, raw_time, [card.answer_html], position, extra=extra,
                     fmt="takeout-my-activity-html")


def _exchange(title: str, raw_time: object, answers: list[str], position: str, *,
              attached: list[str] | None = None, subtitles: list[str] | None = None,
              extra: list[str] | None = None, fmt: str = "takeout-my-activity",
              ) -> HarvestItem | None:
    prompt, labelled = prompt_of(title)
    response = "\n\n".join(r for r in map(html_to_text, answers) if r.strip())
    attached = attached or []
    if not (labelled or response or attached):
        return None  # an activity marker ("Used Gemini Apps", "Created Gem" …), not an exchange
    user_text = "\n\n".join([*([prompt] if prompt else []), *(["\n".join(extra)] if extra else []),
                              *(f"[Attached file: {name}]" for name in attached)])
    if not user_text and not response:
        return None
    when = _timestamp(raw_time)
    item_id = stable_id(SOURCE, "takeout", raw_time, prompt)
    turns = [Turn(stable_id(SOURCE, item_id, "user"), "user", "User", user_text, when,
                  {"attached_files": attached} if attached else {})] if user_text else []
    if response:
        turns.append(Turn(stable_id(SOURCE, item_id, "assistant"), "assistant", "Gemini",
                          response, when))
    meta = {"format": fmt, "time": raw_time, "day": when and when[:10],
            "subtitles": subtitles, "attached_files": attached}
    return HarvestItem(
        item_id=item_id, source=SOURCE, kind="conversation",
        title=_short(prompt, "Gemini exchange"), turns=tuple(turns), timestamp=when,
        position=position, metadata={k: v for k, v in meta.items() if v},
    )


# -- the simple JSON dump -----------------------------------------------------------------------
def _role(entry: dict[str, Any]) -> Role | None:
    """user|human → user; model|assistant|gemini|bard → assistant; system and others → None."""
    value = str(_first(entry, "role", "author", "sender") or "").strip().lower()
    return "user" if value in _USER_ROLES else "assistant" if value in _ASSISTANT_ROLES else None


def _part_text(part: object) -> str:
    if isinstance(part, str) or not isinstance(part, dict):
        return part if isinstance(part, str) else ""
    if isinstance(part.get("text"), str):
        return str(part["text"])
    if isinstance(data := _first(part, "fileData", "file_data"), dict):
        label = _first(data, "displayName", "fileUri", "file_uri", "mimeType", "mime_type")
        return f"[Shared file: {label or 'file'}]"
    if isinstance(data := _first(part, "inlineData", "inline_data"), dict):
        return f"[Shared media: {_first(data, 'mimeType', 'mime_type') or 'unknown'}]"
    return ""


def _entry_text(entry: dict[str, Any]) -> str:
    for value in (entry.get("parts"), entry.get("text"), entry.get("content")):
        if isinstance(value, dict) and isinstance(value.get("parts"), list):
            value = value["parts"]
        text = ("\n".join(t for t in map(_part_text, value) if t) if isinstance(value, list)
                else value if isinstance(value, str) else "")
        if text.strip():
            return text.strip()
    return ""


def _entries(conversation: dict[str, Any]) -> list[Any]:
    value = _first(conversation, "messages", "turns", "history")
    return value if isinstance(value, list) else []


def _conversation_item(conversation: dict[str, Any], position: str,
                       fallback_ts: str | None) -> HarvestItem | None:
    rows: list[tuple[int, Role, str, str | None, object]] = []
    for index, entry in enumerate(_entries(conversation)):
        role = _role(entry) if isinstance(entry, dict) else None
        if role is not None and (text := _entry_text(entry)):
            rows.append((index, role, text,
                         _timestamp(_first(entry, "createTime", "create_time", "timestamp")),
                         _first(entry, "id", "messageId", "message_id")))
    if not rows:
        return None
    title = _first(conversation, "title", "name")
    model = _first(conversation, "model", "modelVersion", "model_version")
    raw_time = _first(conversation, "createTime", "create_time", "timestamp", "created_at")
    conv_id = _first(conversation, "id", "conversationId", "conversation_id")
    digest = stable_id(SOURCE, *(f"{role}:{text}" for _, role, text, _, _ in rows))
    item_id = stable_id(SOURCE, str(conv_id) if conv_id is not None
                        else f"{title}\x00{raw_time}\x00{model}\x00{digest}")
    turns = tuple(
        Turn(str(mid) if mid is not None else stable_id(SOURCE, item_id, i, role), role,
             "User" if role == "user" else "Gemini", text, when)
        for i, role, text, when, mid in rows
    )
    when = _timestamp(raw_time) or next((t.timestamp for t in turns if t.timestamp), None)
    first_user = next((t.text for t in turns if t.role == "user"), "")
    meta = {"format": "gemini-json", "message_count": len(turns),
            "conversation_id": conv_id and str(conv_id), "model": model and str(model)}
    return HarvestItem(
        item_id=item_id, source=SOURCE, kind="conversation",
        title=str(title) if title else _short(first_user, "Gemini conversation"),
        turns=turns, timestamp=when or fallback_ts, position=position,
        metadata={k: v for k, v in meta.items() if v is not None},
    )


# -- streaming dispatch ---------------------------------------------------------------------------
def _conversations(elements: Iterable[Any], name: str, fallback_ts: str | None
                   ) -> Iterator[HarvestItem]:
    for n, element in enumerate(elements, start=1):
        if not isinstance(element, dict):
            raise HarvestError("expected a JSON object", path=name, position=f"element {n}")
        position = f"{Path(name).name}: conversation {n}"
        if (item := _conversation_item(element, position, fallback_ts)) is not None:
            yield item


@dataclass
class _Counts:
    """My Activity records of Gemini Apps read, and the exchanges among them, over an input."""

    gemini: int = 0
    exchanges: int = 0


def _takeout(first: dict[str, Any], records: Iterator[Any], name: str, counts: _Counts
             ) -> Iterator[HarvestItem]:
    def rows() -> Iterator[tuple[str | None, HarvestItem | None]]:
        for n, record in enumerate(itertools.chain([first], records), start=1):
            if not isinstance(record, dict):
                raise HarvestError("expected a JSON object", path=name, position=f"record {n}")
            if not is_gemini_activity(record):
                yield str(record.get("header", "?")), None
            else:
                yield None, _takeout_item(record, f"{Path(name).name}: record {n}")
    return _activity(rows(), name, counts)


def _page(stream: IO[bytes] | CountingReader, name: str, counts: _Counts
          ) -> Iterator[HarvestItem]:
    """A My Activity page in HTML (Takeout's default format)."""
    def rows() -> Iterator[tuple[str | None, HarvestItem | None]]:
        for n, card in enumerate(cards(stream, name), start=1):
            if not is_gemini_activity({"header": card.header}):
                yield card.header or "?", None
            else:
                yield None, _card_item(card, f"{Path(name).name}: activity {n}")
    return _activity(rows(), name, counts)


def _activity(rows: Iterator[tuple[str | None, HarvestItem | None]], name: str,
              counts: _Counts) -> Iterator[HarvestItem]:
    """The exchanges of My Activity rows (``(other product, None)`` or ``(None, exchange or
    marker)``, counted in ``counts``); another product's activity only is an error."""
    others: set[str] = set()
    gemini = 0
    for other, item in rows:
        if other is not None:
            others.add(other)
            continue
        gemini += 1
        counts.gemini += 1
        if item is not None:
            counts.exchanges += 1
            yield item
    if not gemini and others:
        raise HarvestError(f"My Activity of {count_of(len(others), 'other product')}, not of "
                           "Gemini Apps", path=name)


def _no_exchange(counts: _Counts, name: str) -> None:
    """Gemini activity without one prompt or answer: nothing to import, which is an error."""
    if counts.gemini and not counts.exchanges:
        raise NothingToImport(f"{count_of(counts.gemini, 'Gemini Apps activity record')} and "
                              "not one prompt or answer among them: nothing to import", path=name)


def _from_array(events: Iterable[Any], name: str, fallback_ts: str | None, counts: _Counts
                ) -> Iterator[HarvestItem]:
    elements = ijson.items(events, "item")
    first = next(elements, None)
    if first is None:
        return
    if is_takeout_record(first):
        yield from _takeout(first, elements, name, counts)
    elif isinstance(first, dict) and _entries(first):
        yield from _conversations(itertools.chain([first], elements), name, fallback_ts)
    elif isinstance(first, dict) and _role(first) is not None:  # one bare list of messages
        messages = [first, *elements]
        yield from _conversations([{"messages": messages}], name, fallback_ts)
    else:
        hint = keys_hint(first) if isinstance(first, dict) else f"found {type(first).__name__}"
        raise HarvestError(f"not a Gemini export (first element: {hint})", path=name,
                           position="element 1")


def _from_object(events: Iterable[Any], name: str, fallback_ts: str | None
                 ) -> Iterator[HarvestItem]:
    document = dict(ijson.kvitems(events, ""))  # the simple dump is small: built whole
    conversations = document.get("conversations")
    if isinstance(conversations, list):
        yield from _conversations(conversations, name, fallback_ts)
    elif _entries(document):
        yield from _conversations([document], name, fallback_ts)
    else:
        raise HarvestError(f"not a Gemini export (top level: {keys_hint(document)})",
                           path=name)


def parse_stream(stream: IO[bytes] | CountingReader, name: str, fallback_ts: str | None = None,
                 counts: _Counts | None = None) -> Iterator[HarvestItem]:
    """Stream one JSON document (Takeout or simple dump) into items; ``counts``: of the whole
    input it belongs to (None: this document is the input)."""
    alone = counts is None
    counts = counts or _Counts()
    events = ijson.parse(stream, use_float=True)
    try:
        try:
            first = next(events)
        except ijson.IncompleteJSONError as exc:
            if "premature EOF" not in str(exc):
                raise
            raise HarvestError("empty file, expected JSON", path=name) from exc
        chained = itertools.chain([first], events)
        if first[1] == "start_array":
            yield from _from_array(chained, name, fallback_ts, counts)
        elif first[1] == "start_map":
            yield from _from_object(chained, name, fallback_ts)
        else:
            raise HarvestError("not a Gemini export (top-level JSON is not an array or object)",
                               path=name)
    except HarvestError:
        raise
    except (ijson.JSONError, UnicodeDecodeError) as exc:
        reason = safe_reason(exc)
        where = getattr(stream, "position", None)
        raise HarvestError(f"malformed JSON ({reason})", path=name,
                           position=f"near byte {where:,}" if where is not None else "") from exc
    if alone:
        _no_exchange(counts, name)


EXPECTED: Final = (f"Gemini Apps activity from Google Takeout (a {TAKEOUT_FILE} or its HTML "
                   "page, found by content under any name) or a Gemini JSON dump")


def _sources(path: Path) -> list[JsonSource]:
    """The Gemini documents of ``path`` by their content: a renamed ``MyActivity.json`` is
    found, another product's My Activity is not (:func:`mind.harvest.detect.is_gemini`); the
    HTML pages of Gemini Apps activity when there is no JSON."""
    try:
        return json_sources(path, SOURCE, EXPECTED)
    except HarvestError:
        if pages := gemini_pages(path):
            return pages
        raise


def _is_html(src: JsonSource) -> bool:
    with src.opener() as raw:
        return raw.read(SNIFF_BYTES).lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"<"


def parse(target: Path | str) -> Iterator[HarvestItem]:
    """A Gemini JSON file or My Activity page, a Takeout directory or a Takeout ``.zip`` →
    conversation items."""
    path = Path(target)
    archived = inputs.is_zip(path) if path.exists() else False
    counts = _Counts()
    for src in _sources(path):
        fallback = None if archived else file_timestamp(Path(src.path))
        html_page = _is_html(src)
        with src.opener() as stream:
            yield from _page(stream, src.path, counts) if html_page else parse_stream(
                stream, src.path, fallback, counts)
    _no_exchange(counts, str(path))
