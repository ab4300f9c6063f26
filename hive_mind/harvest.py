"""Harvest (chat exports, documents) and ingest (a path, a URL or raw text) into one mind.

The front of the harvest slice: the facade resolves the mind and hands over its runtime;
this module validates the source, detects ingest types, runs the driver
(:mod:`workers.harvest`) and waits for indexing when asked. A process runs at most
:data:`MAX_CONCURRENT_IMPORTS` imports at once (:func:`import_slot`: later ones wait their turn,
and past :data:`MAX_WAITING_IMPORTS` waiting are refused, 503 ``busy``), so clients of one
``serve`` cannot make it parse any number of uploads side by side. Results are typed
(:class:`~workers.harvest_summary.HarvestSummary`, :class:`IngestSummary`); the facade turns
them into dicts at the interface edge.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Final

from hive_mind.shapes import IngestReport
from mind.errors import HiveMindError, ValidationError
from mind.harvest.errors import HarvestError
from mind.harvest.registry import Parse, adapter
from vocabulary.enums import HARVEST_CHOICES, IMPORTANCES, INGEST_TYPES, JobPriority
from vocabulary.ids import PERSONAL_MIND
from workers.harvest import HarvestOptions, harvest
from workers.harvest_summary import HarvestSummary, Progress
from workers.protocol import Runtime

MAX_CONCURRENT_IMPORTS: Final = 4  # harvests and ingests one process parses at once
MAX_WAITING_IMPORTS: Final = 32  # ... and that may wait for their turn
_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary())
_waiting: dict[asyncio.AbstractEventLoop, int] = {}


class ImportsBusyError(HiveMindError):
    """This process already runs and queues as many imports as it takes: retry later."""

    code = "busy"
    status = 503
    retry_after = 10


@asynccontextmanager
async def import_slot() -> AsyncIterator[None]:
    """One of the process's :data:`MAX_CONCURRENT_IMPORTS` import slots, waited for in turn;
    :class:`ImportsBusyError` when :data:`MAX_WAITING_IMPORTS` already wait."""
    loop = asyncio.get_running_loop()
    slots = _slots.setdefault(loop, asyncio.Semaphore(MAX_CONCURRENT_IMPORTS))
    if slots.locked() and _waiting.get(loop, 0) >= MAX_WAITING_IMPORTS:
        raise ImportsBusyError(f"{MAX_CONCURRENT_IMPORTS} imports run and "
                               f"{MAX_WAITING_IMPORTS} wait here already: retry later")
    _waiting[loop] = _waiting.get(loop, 0) + 1
    try:
        await slots.acquire()
    finally:
        _waiting[loop] -= 1
        if not _waiting[loop]:
            del _waiting[loop]
    try:
        yield
    finally:
        slots.release()


_EXTENSIONS: Final = {".pdf": "pdf", ".md": "markdown", ".markdown": "markdown",
                      ".html": "markdown", ".htm": "markdown", ".txt": "plaintext",
                      ".text": "plaintext"}
FOLDER: Final = "folder"  # an ingested directory: each file by its type (mind/harvest/folder.py)


@dataclass(frozen=True, slots=True)
class IngestSummary:
    """What an ingest reports (the ``ingest_source`` tool's and ``POST /v1/ingest``'s JSON)."""

    source_type: str
    items_parsed: int
    frames_created: int
    duplicates_skipped: int
    pending_index: int
    status: str
    workspace: str
    tags: tuple[str, ...] = ()
    files: tuple[tuple[str, int], ...] = ()  # a folder: (type, files read) per type
    skipped: tuple[str, ...] = ()  # a folder: what was not read and why, one line per reason

    def as_dict(self) -> IngestReport:
        out: IngestReport = {
            "source_type": self.source_type, "items_parsed": self.items_parsed,
            "frames_created": self.frames_created, "duplicates_skipped": self.duplicates_skipped,
            "pending_index": self.pending_index, "status": self.status,
            "workspace": self.workspace}
        if self.tags:
            out["tags"] = list(self.tags)
        if self.files:
            out["files"] = dict(self.files)
            out["skipped"] = list(self.skipped)
        return out


def detect_type(content: str) -> str:
    """The ingest type of ``content`` (``ingest_source``'s and ``ingest``'s auto-detection)."""
    text = content.strip()
    if text.lower().startswith(("http://", "https://")) and "\n" not in text:
        return "url"
    single_line = "\n" not in text and len(text) < 4096
    if single_line:
        try:
            if Path(text).expanduser().is_dir():
                return FOLDER
        except OSError:
            pass
        suffix = Path(text).suffix.lower()
        if suffix in _EXTENSIONS:
            return _EXTENSIONS[suffix]
        try:
            if Path(text).expanduser().is_file():
                return "plaintext"
        except OSError:
            pass
    return detect_text_type(text)


def detect_text_type(text: str) -> str:
    """markdown or plaintext for text that is the document itself (never a path or URL)."""
    text = text.strip()
    if text.startswith("#") or "\n## " in text or "\n### " in text:
        return "markdown"
    return "plaintext"


async def harvest_into(
    runtime: Runtime, mind_id: str, source: str, path: str | Path, *,
    workspace: str | None = None, progress: Progress | None = None,
    auto_sync: bool | None = None, interval_hours: int | None = None, wait: bool = True,
    importance: str = "normal", tags: list[str] | None = None, label: str | None = None,
    rereadable: bool | None = None, priority: JobPriority = "bulk",
    parse: Parse | None = None,
) -> HarvestSummary:
    """Import ``path`` into ``mind_id`` (``workspace`` names it in the summary); ``parse``:
    instead of the source's adapter (the same source's items, read another way).

    ``priority``: of the indexing it causes (``interactive``: ingest, somebody waits for it).

    ``label``: what the import is shown as; a labelled ``path`` is taken for a private copy
    (a temp file) that auto-sync cannot read again, unless ``rereadable`` (the caller named
    ``path`` itself and shows it under another name).

    ``source`` ``auto``: the source is detected from the content (:func:`mind.harvest.detect.
    detect`); the summary's ``source`` is the one chosen and ``detected`` says why."""
    started = time.monotonic()  # the summary's elapsed_seconds cover the wait and detection
    if source not in HARVEST_CHOICES:
        raise ValidationError(f"unknown harvest source {source!r}; use one of: "
                              f"{', '.join(HARVEST_CHOICES)}")
    await runtime.check_quota()  # nothing is imported while the month's quota is used up
    async with import_slot():  # at most MAX_CONCURRENT_IMPORTS at once
        detected: str | None = None
        if source == "auto":
            source, detected = await asyncio.to_thread(_detect, path, label)
        if importance not in IMPORTANCES:
            raise ValidationError(f"importance must be one of {list(IMPORTANCES)}")
        target: Path | str = path if isinstance(path, str) and source in (
            "url", "markdown", "plaintext") else Path(path).expanduser()
        options = HarvestOptions(importance=importance, tags=list(tags or []),
                                 auto_sync=auto_sync, interval_hours=interval_hours, label=label,
                                 rereadable=rereadable, priority=priority)
        summary = await harvest(
            runtime, mind_id, source, target, options=options, progress=progress,
            wait_idle=partial(runtime.wait_indexed, mind_id, None) if wait else None,
            parse=parse or adapter(source), started=started)
        return replace(summary, workspace=workspace or PERSONAL_MIND, detected=detected)


def _detect(path: str | Path, label: str | None) -> tuple[str, str]:
    """``(source, why)`` for ``harvest auto``; a private copy's path is shown as its label."""
    from mind.harvest.detect import detect

    try:
        found = detect(path if isinstance(path, str) else Path(path))
    except HarvestError as exc:
        if label:
            raise HarvestError(exc.reason, path=label, position=exc.position) from None
        raise
    return found.source, f"auto: {found.source} ({found.reason})"


async def ingest_into(
    runtime: Runtime, mind_id: str, content: str, *, workspace: str | None = None,
    type_hint: str = "auto", importance: str = "normal", tags: list[str] | None = None,
    wait: bool = True, label: str | None = None,
) -> IngestSummary:
    """``label``: ``content`` is a private copy (a temp file) shown under this name."""
    if not isinstance(content, str) or not content.strip():
        raise ValidationError("content must be a path, a URL or non-empty text")
    if type_hint not in INGEST_TYPES:
        raise ValidationError(f"type_hint must be one of {list(INGEST_TYPES)}")
    kind = detect_type(content) if type_hint == "auto" else type_hint
    if kind == FOLDER:
        return await _ingest_folder(runtime, mind_id, Path(content.strip()).expanduser(),
                                    workspace=workspace, importance=importance, tags=tags,
                                    wait=wait, label=label)
    target = content.strip() if kind in ("url", "pdf") or "\n" not in content.strip() \
        else content
    summary = await harvest_into(runtime, mind_id, kind, target, workspace=workspace,
                                 wait=wait, importance=importance, tags=tags, label=label,
                                 priority="interactive")
    return IngestSummary(
        source_type=kind, items_parsed=summary.items, frames_created=summary.frames_created,
        duplicates_skipped=summary.duplicates_skipped,
        pending_index=summary.pending_index or 0, status=summary.status,
        workspace=summary.workspace or PERSONAL_MIND, tags=tuple(tags or ()))


async def _ingest_folder(runtime: Runtime, mind_id: str, folder: Path, *, workspace: str | None,
                         importance: str, tags: list[str] | None, wait: bool,
                         label: str | None) -> IngestSummary:
    """Each document type of ``folder`` by its own adapter (one import per type present), in
    one summary that also says what was skipped and why."""
    from mind.harvest.folder import lenient, plan

    layout = plan(folder)
    left_out: list[str] = []  # files of a type its adapter could not read, with the reason
    runs = [await harvest_into(runtime, mind_id, kind, folder, workspace=workspace, wait=wait,
                               importance=importance, tags=tags, label=label,
                               priority="interactive", parse=lenient(kind, left_out))
            for kind in layout.files]
    statuses = {r.status for r in runs}
    return IngestSummary(
        source_type=FOLDER, items_parsed=sum(r.items for r in runs),
        frames_created=sum(r.frames_created for r in runs),
        duplicates_skipped=sum(r.duplicates_skipped for r in runs),
        pending_index=sum(r.pending_index or 0 for r in runs),
        status=statuses.pop() if len(statuses) == 1 else "completed",
        workspace=runs[0].workspace or PERSONAL_MIND, tags=tuple(tags or ()),
        files=tuple(layout.files.items()), skipped=(*left_out, *layout.skipped))
