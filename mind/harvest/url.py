"""A web page → one document item.

``parse(url)`` fetches with :func:`mind.harvest.fetch.fetch`: only ``http``/``https``, only
public addresses (loopback, private, link-local, metadata and other internal addresses are
refused before connecting and on every redirect hop, unless the policy allows private
addresses: setting ``fetch_private_addresses``, :mod:`mind.harvest.netguard`), at most 5
redirects, one 15 s deadline for the whole fetch, the body capped at 20 MB while streaming.
It then dispatches on the content type: HTML is turned into structured text by
:mod:`mind.harvest.html` and cut at its headings into one turn per section (kept whole, never
cut at 4000 characters); ``text/markdown`` is cut the same way; ``text/plain`` is split like
:mod:`mind.harvest.plaintext`; a PDF goes through :mod:`mind.harvest.pdf`. A refused address,
a non-2xx status, the deadline or an oversized body is a :class:`HarvestError` naming the URL
(without credentials or query values).
Ids are stable: ``stable_id("url", url)`` for the item (the fragment dropped) and
the sections' heading + text for turns (``content_ids``: an edited page adds what changed);
the item time is the ``Last-Modified`` header, if any.
"""

from __future__ import annotations

import codecs
import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from mind.harvest import html as html_text
from mind.harvest import pdf
from mind.harvest.errors import HarvestError
from mind.harvest.fetch import Fetched, fetch
from mind.harvest.inputs import looks_binary
from mind.harvest.markdown import bold_terms, section_turns, split_sections
from mind.harvest.netguard import FetchPolicy
from mind.harvest.plaintext import split_parts
from mind.harvest.types import HarvestItem, Turn, content_ids, stable_id

SOURCE: Final = "url"
_HTML_TYPES: Final = ("text/html", "application/xhtml+xml")
_MARKDOWN_TYPES: Final = ("text/markdown", "text/x-markdown")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9._:-]+)""", re.I)


def _decode(body: bytes, charset: str | None, *, sniff_meta: bool) -> str:
    if not charset and sniff_meta:
        match = _META_CHARSET.search(body[:4096])
        charset = match.group(1).decode("ascii") if match else None
    if body.startswith(codecs.BOM_UTF8):
        charset = "utf-8-sig"
    try:
        codec = codecs.lookup(charset or "utf-8").name
    except LookupError:
        codec = "utf-8"
    return body.decode(codec, errors="replace")


def _sections_item(fetched: Fetched, text: str, *, title: str,
                   metadata: dict[str, object]) -> HarvestItem:
    sections = split_sections(text)
    if not sections:
        raise HarvestError("no readable text on the page", path=fetched.url)
    host = urlsplit(fetched.url).hostname or fetched.url
    turns = tuple(section_turns(SOURCE, fetched.url, sections, speaker=host,
                                timestamp=fetched.last_modified))
    entities = bold_terms(text)
    meta = {**metadata, "sections": len(turns), "chars": len(text)}
    if entities:
        meta["entities"] = entities
    return _item(fetched, title, turns, meta)


def _item(fetched: Fetched, title: str, turns: tuple[Turn, ...],
          metadata: dict[str, object]) -> HarvestItem:
    meta: dict[str, object] = {"url": fetched.url, "content_type": fetched.content_type,
                               **metadata}
    if fetched.final_url != fetched.url:
        meta["final_url"] = fetched.final_url
    return HarvestItem(
        item_id=stable_id(SOURCE, fetched.url), source=SOURCE, kind="document",
        title=title or fetched.url, turns=turns, timestamp=fetched.last_modified,
        position=fetched.url, metadata=meta,
    )


def _plain_item(fetched: Fetched, text: str) -> HarvestItem:
    parts = split_parts(text)
    if not parts:
        raise HarvestError("no readable text at this URL", path=fetched.url)
    host = urlsplit(fetched.url).hostname or fetched.url
    ids = content_ids(SOURCE, fetched.url, ((None, part) for part in parts))
    turns = tuple(
        Turn(turn_id=ident, role="document", speaker=host,
             text=part, timestamp=fetched.last_modified,
             metadata={"part": i + 1, "total_parts": len(parts)})
        for i, (part, ident) in enumerate(zip(parts, ids, strict=True))
    )
    name = urlsplit(fetched.final_url).path.rstrip("/").rsplit("/", 1)[-1]
    return _item(fetched, name or host, turns, {"total_parts": len(parts), "chars": len(text)})


def item_from_response(fetched: Fetched) -> HarvestItem:
    """Dispatch a fetched body on its content type (sniffing when the type says nothing)."""
    media, body = fetched.content_type, fetched.body
    if media == "application/pdf" or (not media.startswith("text/") and body[:5] == b"%PDF-"):
        name = urlsplit(fetched.final_url).path.rsplit("/", 1)[-1] or fetched.url
        stem = name[:-4] if name.lower().endswith(".pdf") else name
        item = pdf.parse_bytes(body, name=fetched.url, key=fetched.url, fallback_title=stem,
                               timestamp=fetched.last_modified,
                               metadata={"url": fetched.url, "final_url": fetched.final_url})
        return dataclasses.replace(item, source=SOURCE)
    head = body[:4096].lower()
    is_html = media in _HTML_TYPES or (
        media in ("", "application/octet-stream") and (b"<html" in head or b"<body" in head)
    )
    if is_html:
        doc = html_text.extract(_decode(body, fetched.charset, sniff_meta=True))
        meta: dict[str, object] = {"description": doc.description} if doc.description else {}
        return _sections_item(fetched, doc.text, title=doc.title, metadata=meta)
    if looks_binary(body[:8192]):
        raise HarvestError(f"binary content ({media or 'no content type'}), not a web page",
                           path=fetched.url, position="byte 0")
    if media.startswith("text/") or media in ("", "application/octet-stream"):
        text = _decode(body, fetched.charset, sniff_meta=False)
        if media in _MARKDOWN_TYPES:
            first = next((s.heading for s in split_sections(text) if s.level == 1), "")
            return _sections_item(fetched, text, title=first, metadata={})
        return _plain_item(fetched, text)
    raise HarvestError(f"unsupported content type {media!r}", path=fetched.url)


def parse(target: Path | str, *, policy: FetchPolicy | None = None) -> Iterator[HarvestItem]:
    """Fetch one ``http(s)`` URL and yield its document item (``policy``: which addresses may
    be fetched; default :func:`mind.harvest.netguard.default_policy`)."""
    if isinstance(target, Path):
        raise HarvestError("expected a URL, got a file path", path=str(target))
    yield item_from_response(fetch(target, policy=policy))
