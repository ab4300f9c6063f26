"""PDF files → one document item each, text extracted with ``pypdf``.

Each page's text is cut into paragraph pieces (:func:`mind.harvest.plaintext.split_parts`, so an
oversized paragraph is split at line/sentence boundaries, never dropped or cut off) and the pieces
are packed across pages into parts of up to ``PART_CHARS``; each part is one turn carrying the
page range it came from. Title = the PDF's metadata title or the file stem; the item time is the
PDF creation date, else the file's mtime. Encrypted (with a real password), corrupt or text-less
(scanned) PDFs are a :class:`HarvestError` naming the file.

The work a PDF asks for is bounded, whatever its size: a content stream that several pages
draw is read once (4.6 KB of pages sharing one stream took 33 s), all pages together read at
most :data:`MAX_CONTENT_BYTES` of decoded content, and the import's deadline
(:mod:`mind.harvest.budget`) is checked per page.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Final

from mind.harvest import budget
from mind.harvest.errors import HarvestError, safe_reason
from mind.harvest.plaintext import file_timestamp, resolve_target, split_parts
from mind.harvest.types import HarvestItem, Turn, content_ids, stable_id
from mind.timeutil import format_ts

SOURCE: Final = "pdf"
SUFFIXES: Final = (".pdf",)
PART_CHARS: Final = 3000
MAX_PDF_BYTES: Final = 512 * 1024**2
MAX_CONTENT_BYTES: Final = 16 * 1024**2  # decoded content streams read from one PDF
_HEADER_WINDOW: Final = 1024

logging.getLogger("pypdf").setLevel(logging.ERROR)


def _open_reader(stream: IO[bytes], name: str) -> Any:
    # imported here: pypdf is only loaded when a PDF is actually harvested
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    head = stream.read(_HEADER_WINDOW)
    stream.seek(0)
    if b"%PDF-" not in head:
        raise HarvestError("not a PDF (no %PDF- header)", path=name, position="byte 0")
    try:
        reader = PdfReader(stream, strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise HarvestError("encrypted PDF: a password is required", path=name)
    except HarvestError:
        raise
    except FileNotDecryptedError as exc:
        raise HarvestError(f"encrypted PDF: {safe_reason(exc)}", path=name) from exc
    except PdfReadError as exc:
        raise HarvestError(f"corrupt PDF ({safe_reason(exc)})", path=name) from exc
    except Exception as exc:  # pypdf raises many kinds on malformed input
        raise HarvestError(f"cannot read PDF ({type(exc).__name__}: {safe_reason(exc)})",
                           path=name) from exc
    return reader


def _contents_key(page: Any) -> tuple[object, ...] | None:
    """What identifies a page's content streams (their object numbers), or None."""
    try:
        raw = page.raw_get("/Contents")
    except Exception:
        return None
    refs = raw if isinstance(raw, list) else [raw]
    keys = tuple((ref.idnum, ref.generation) if hasattr(ref, "idnum") else None for ref in refs)
    return None if None in keys else keys


def _page_text(page: Any, name: str, number: int, spent: list[int]) -> str:
    """One page's text, its decoded content counted in ``spent`` against the budget."""
    try:
        contents = page.get_contents()
        spent[0] += len(contents.get_data()) if contents is not None else 0
        if spent[0] > MAX_CONTENT_BYTES:
            raise HarvestError(f"the pages hold more than {MAX_CONTENT_BYTES:,} bytes of "
                               "content to read", path=name, position=f"page {number}")
        return str(page.extract_text() or "")
    except HarvestError:
        raise
    except Exception as exc:
        raise HarvestError(
            f"cannot extract text ({type(exc).__name__}: {safe_reason(exc)})", path=name,
            position=f"page {number}",
        ) from exc


def _page_texts(reader: Any, name: str) -> list[str]:
    """Each page's text; a page drawing content streams an earlier page drew adds nothing
    (its text is that page's: read once), and all pages together read at most
    :data:`MAX_CONTENT_BYTES` of content."""
    texts: list[str] = []
    try:
        pages = list(reader.pages)
    except Exception as exc:
        raise HarvestError(f"corrupt PDF page tree ({safe_reason(exc)})", path=name) from exc
    seen: set[tuple[object, ...]] = set()
    spent = [0]
    for number, page in enumerate(pages, start=1):
        budget.check(name, f"page {number}")
        key = _contents_key(page)
        if key is not None and key in seen:
            texts.append("")
            continue
        if key is not None:
            seen.add(key)
        texts.append(_page_text(page, name, number, spent))
    return texts


def _info(reader: Any) -> tuple[str, str, str | None]:
    """(title, author, creation time) from the document info, each possibly empty."""
    try:
        meta = reader.metadata
    except Exception:
        return "", "", None
    if meta is None:
        return "", "", None
    title = author = ""
    created: str | None = None
    try:
        title = " ".join(str(meta.title or "").split())
        author = " ".join(str(meta.author or "").split())
        moment = meta.creation_date
        if isinstance(moment, datetime):
            created = format_ts(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
    except Exception:  # a malformed info dictionary never fails the import
        pass
    return title, author, created


def _parts(pages: list[str]) -> list[tuple[str, int, int]]:
    """(text, first page, last page) parts packed across pages."""
    parts: list[tuple[str, int, int]] = []
    for number, text in enumerate(pages, start=1):
        for piece in split_parts(text, PART_CHARS):
            if parts and len(parts[-1][0]) + 2 + len(piece) <= PART_CHARS:
                prev, first, _ = parts[-1]
                parts[-1] = (prev + "\n\n" + piece, first, number)
            else:
                parts.append((piece, number, number))
    return parts


def parse_stream(
    stream: IO[bytes], *, name: str, key: str, fallback_title: str,
    timestamp: str | None, metadata: dict[str, object],
) -> HarvestItem:
    """One PDF (seekable binary stream) → one document item; ``key`` makes the ids."""
    reader = _open_reader(stream, name)
    pages = _page_texts(reader, name)
    parts = _parts(pages)
    if not parts:
        raise HarvestError(
            f"no extractable text in {len(pages)} page(s) (a scanned PDF? run OCR first)",
            path=name,
        )
    title, author, created = _info(reader)
    when = created or timestamp
    speaker = name.rsplit("/", 1)[-1]
    ids = content_ids(SOURCE, key, ((None, text) for text, _, _ in parts))
    turns = tuple(
        Turn(
            turn_id=ident, role="document", speaker=speaker,
            text=text, timestamp=when,
            metadata={"part": i + 1, "total_parts": len(parts), "page_start": first,
                      "page_end": last},
        )
        for i, ((text, first, last), ident) in enumerate(zip(parts, ids, strict=True))
    )
    item_meta: dict[str, object] = {**metadata, "content_type": "paper", "pages": len(pages),
                                    "total_parts": len(parts)}
    if author:
        item_meta["author"] = author
    return HarvestItem(
        item_id=stable_id(SOURCE, key), source=SOURCE, kind="document",
        title=title or fallback_title, turns=turns, timestamp=when, position=name,
        metadata=item_meta,
    )


def parse_bytes(data: bytes, *, name: str, key: str, fallback_title: str,
                timestamp: str | None = None,
                metadata: dict[str, object] | None = None) -> HarvestItem:
    """A PDF held in memory (e.g. fetched by :mod:`mind.harvest.url`)."""
    return parse_stream(io.BytesIO(data), name=name, key=key, fallback_title=fallback_title,
                        timestamp=timestamp, metadata=metadata or {})


def parse(target: Path | str) -> Iterator[HarvestItem]:
    """A PDF file, or a directory of ``*.pdf`` files (recursive, sorted)."""
    resolved = resolve_target(target, SUFFIXES, "PDF")
    if resolved.text is not None:
        raise HarvestError("no such PDF file", path=resolved.text[:200])
    for path, key in resolved.files:
        yield read_file(path, key)


def read_file(path: Path, key: str) -> HarvestItem:
    """One PDF file as the item keyed ``key`` (its path relative to the harvested folder)."""
    try:
        size = path.stat().st_size
        if size > MAX_PDF_BYTES:
            raise HarvestError(
                f"is {size:,} bytes; the limit for a PDF is {MAX_PDF_BYTES:,}", path=str(path)
            )
        with path.open("rb") as stream:
            return parse_stream(stream, name=str(path), key=key, fallback_title=path.stem,
                                timestamp=file_timestamp(path), metadata={"file_path": key})
    except OSError as exc:
        raise HarvestError(f"cannot read ({exc.strerror or exc})", path=str(path)) from exc
