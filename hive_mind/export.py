"""Export of one mind, streamed: what ``hive-mind export``, ``GET /v1/export`` and the MCP tool
``export_memories`` serve (the shapes are :mod:`mind.export`'s).

An :class:`Export` is opened before a byte is sent — the mind checked, a read transaction
begun on its own read-only connection, its counts taken — so a refusal is an error response,
not a truncated download; then its chunks are read page by page on a thread, each as it is
sent, and the connection closes when the last one is read (or the reader stops). A page of the
MCP tool is one short read of at most :data:`MAX_PAGE` records.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from mind import export
from mind.errors import ValidationError
from vocabulary.enums import ExportFormat, ExportPart
from vocabulary.ids import PERSONAL_MIND, split_mind_id
from vocabulary.timestamps import now_iso

MAX_PAGE: Final = 500
FRAMES_HEADER: Final = "X-Hive-Mind-Frames"  # an HTTP download's frame count
SUFFIX: Final[dict[str, str]] = {"universal": ".jsonl", "json": ".json"}
MEDIA_TYPE: Final[dict[str, str]] = {"universal": "application/x-ndjson",
                                     "json": "application/json"}


def file_name(mind_id: str, fmt: ExportFormat) -> str:
    """``personal.jsonl``, ``<workspace id>.json``, …: a mind's export file name."""
    _, slug = split_mind_id(mind_id)
    return f"{slug or PERSONAL_MIND}{SUFFIX[fmt]}"


@dataclass
class Export:
    """One mind's export, opened: ``chunks`` yields its bytes; ``done`` counts the frames
    written so far of ``frames``."""

    mind_id: str
    fmt: ExportFormat
    frames: int
    chunks: AsyncIterator[bytes]
    progress: list[int] = field(default_factory=lambda: [0])

    @property
    def done(self) -> int:
        return self.progress[0]

    @property
    def file_name(self) -> str:
        return file_name(self.mind_id, self.fmt)

    @property
    def media_type(self) -> str:
        return MEDIA_TYPE[self.fmt]


async def _on_thread(gen: Iterator[bytes], conn: Any) -> AsyncIterator[bytes]:
    try:
        while True:
            chunk = await asyncio.to_thread(next, gen, None)
            if chunk is None:
                return
            yield chunk
    finally:
        await asyncio.to_thread(_close, gen, conn)


def _close(gen: Iterator[bytes], conn: Any) -> None:
    close = getattr(gen, "close", None)
    if close is not None:
        close()
    conn.close()


async def open_export(path: Path, mind_id: str, fmt: ExportFormat) -> Export:
    """The export of the mind file at ``path`` (an existing, migrated mind)."""
    if fmt not in SUFFIX:
        raise ValidationError(f"format must be one of {', '.join(SUFFIX)}")
    conn, counts = await asyncio.to_thread(export.open_snapshot, path)
    progress = [0]

    def advance(done: int) -> None:
        progress[0] = done

    if fmt == "universal":
        gen = export.universal_chunks(conn, advance)
    else:
        gen = export.json_chunks(conn, mind_id, counts, now_iso(), advance)
    return Export(mind_id, fmt, counts.frames, _on_thread(gen, conn), progress)


async def read_page(path: Path, part: ExportPart, cursor: str | None,
                    limit: int) -> dict[str, Any]:
    """One page of the mind at ``path``: ``{"records", "next"}`` (``next``: the cursor of the
    page after, None at the end)."""
    if not 1 <= limit <= MAX_PAGE:
        raise ValidationError(f"limit must be 1 … {MAX_PAGE}")
    if part not in ("frames", "entities", "relations"):
        raise ValidationError("part must be frames, entities or relations")

    def read() -> tuple[list[dict[str, Any]], str | None]:
        conn, _ = export.open_snapshot(path)
        try:
            return export.page(conn, part, cursor, limit)
        except ValueError as exc:
            raise ValidationError(str(exc)) from None
        finally:
            conn.close()

    records, nxt = await asyncio.to_thread(read)
    return {"part": part, "records": records, "count": len(records), "next": nxt}
