"""The harvest driver: adapter items → frames → bulk ``HarvestBatch`` ops through the actor.

One session per item (conversation, document), one frame per turn with the turn's own time as
``created_at`` and provenance in ``metadata`` (docs/architecture.md, "Data flows"). Parsing runs
in a thread (adapters are synchronous and CPU-bound) while up to ``in_flight`` batches are being
committed, so parsing and writing overlap; each committed batch queues its cognify jobs through
the actor's commit hook, so the embedding micro-batcher fills while the import runs.

Resumable: a run is keyed by (source, path, content hash); each batch advances the run's
``items_done`` in the same transaction as its frames, so a restarted import skips exactly the
items already committed. Idempotent: every frame has a stable ``external_id``.

It reads and writes through a :class:`~workers.protocol.MindAccess` — the process's runtime
(so ``wait_idle`` covers what a harvest wrote, in both modes) or, in a host process's own
maintenance jobs, its ``MindHost`` — and reports typed values
(:mod:`workers.harvest_summary`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import ConfigDict, TypeAdapter

from actors.results import FramesSaved
from mind.errors import ValidationError
from mind.harvest import budget
from mind.harvest.errors import HarvestError, NothingToImport
from mind.harvest.inputs import DamagedArchive
from mind.harvest.registry import adapter
from mind.harvest.store import HarvestStore
from mind.harvest.types import HarvestItem, external_id, stable_id
from mind.redact import has_secrets, mask_text
from queue_schemas import ops
from vocabulary.enums import Importance, JobPriority
from vocabulary.limits import MAX_FRAME_CHARS, MAX_FRAMES_PER_OP
from workers import metrics
from workers.harvest_input import RAW_TEXT_LABEL, fingerprint_target
from workers.harvest_summary import HarvestSummary, Progress, ProgressEvent, SyncOutcome
from workers.protocol import MindAccess

log = logging.getLogger(__name__)

BATCH_FRAMES: Final = 2_000
IN_FLIGHT: Final = 3
POLL_SECONDS: Final = 0.25
NO_PATH: Final = ("inline data, uploads and raw text have none (import the file by its path, "
                  "or send it again to update it)")
NOT_SYNCABLE: Final = ("no path or URL the server read itself is recorded for this source: "
                       "import it again by path with auto-sync on (hive-mind harvest import "
                       "SOURCE PATH --auto-sync) to resume syncing")


@dataclass
class HarvestOptions:
    importance: Importance = "normal"
    tags: list[str] = field(default_factory=list)
    batch_frames: int = BATCH_FRAMES
    in_flight: int = IN_FLIGHT
    auto_sync: bool | None = None
    interval_hours: int | None = None
    label: str | None = None
    """Display name recorded (runs, sources, summaries, errors) instead of the input's path.
    A labelled input is taken for a private copy (inline data or an upload in a temp file):
    unless ``rereadable`` says otherwise it has no path auto-sync may read again."""
    rereadable: bool | None = None
    """The target is a path or URL the caller itself named, which auto-sync may read again
    (default: only when there is no ``label``). Never true of a URL carrying credentials."""
    priority: JobPriority = "bulk"
    """Of the cognify work the import causes: ``interactive`` for one ingested document."""


@dataclass
class _Batch:
    frames: list[ops.NewFrameOp] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)
    conversations: list[str] = field(default_factory=list)
    items: int = 0
    kinds: Counter[str] = field(default_factory=Counter)  # items by kind (conversation …)
    skipped: int = 0
    done: bool = False


@dataclass
class _Tally:
    items: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    turns: int = 0
    created: int = 0
    duplicates: int = 0


_FRAMES: Final = TypeAdapter(list[ops.NewFrameOp], config=ConfigDict(defer_build=True))


def item_frames(item: HarvestItem, options: HarvestOptions) -> list[ops.NewFrameOp]:
    """One frame per non-empty turn; the speaker leads the content so "what did Alice say
    about X" matches both lanes. The item's frames are checked in one call (a fifth less time
    than building them one by one; the parser's thread shares the GIL with the writer's)."""
    gop = f"harvest:{item.source}:{item.item_id}"
    conversation_id = str(item.metadata.get("conversation_id") or item.item_id)
    title = mask_text(item.title)  # a page titled by its URL: no credentials in memories
    out: list[dict[str, Any]] = []
    for turn in item.turns:
        if not turn.text.strip():
            continue
        if turn.verbatim:
            content = turn.text
        elif item.kind == "conversation":
            content = f"{turn.speaker}: {turn.text}"
        else:
            titled = title and title not in turn.text[:200]
            content = f"{title}\n\n{turn.text}" if titled else turn.text
        if len(content) > MAX_FRAME_CHARS:
            raise HarvestError(
                f"message {turn.turn_id} has {len(content):,} characters; one memory holds at "
                f"most {MAX_FRAME_CHARS:,}", position=item.position)
        metadata: dict[str, Any] = {
            **{k: mask_text(v) if isinstance(v, str) else v for k, v in turn.metadata.items()},
            "source": item.source, "conversation_id": conversation_id,
            "message_id": turn.turn_id, "speaker": turn.speaker, "role": turn.role,
            "title": title, "kind": item.kind,
        }
        if options.tags:
            metadata["tags"] = list(options.tags)
        out.append({
            "gop_id": gop, "content": content,
            "importance": turn.importance or options.importance, "source": "import",
            "created_at": turn.timestamp or item.timestamp, "metadata": metadata,
            "external_id": external_id(item.source, turn.home or item.item_id, turn.turn_id),
            "dedup": False,
        })
    return _FRAMES.validate_python(out)


class _Reader:
    """Pulls whole items off the adapter iterator (in a thread) into batches."""

    def __init__(self, items: Iterator[HarvestItem], skip: int, options: HarvestOptions) -> None:
        self._items = items
        self._skip = skip
        self._options = options
        self._carry: list[ops.NewFrameOp] = []
        self.error: HarvestError | None = None

    def next_batch(self) -> _Batch:
        batch = _Batch()
        limit = min(self._options.batch_frames, MAX_FRAMES_PER_OP)
        while len(batch.frames) < limit:
            if self._carry:  # the rest of an item with more turns than fit one op
                take = self._carry[: limit - len(batch.frames)]
                self._carry = self._carry[len(take):]
                batch.frames += take
                if not self._carry:
                    batch.items += 1
                continue
            try:
                budget.check()
                item = next(self._items, None)
                if item is not None and self._skip > 0:
                    self._skip -= 1
                    batch.skipped += 1
                    continue
                frames = item_frames(item, self._options) if item is not None else []
            except HarvestError as exc:  # commit what came before, then report it
                self.error = exc
                item = None
            if item is None:
                batch.done = True
                break
            batch.kinds[item.kind] += 1
            if frames:
                batch.titles[frames[0].gop_id] = mask_text(item.title)[:500]
                batch.conversations.append(str(item.metadata.get("conversation_id")
                                               or item.item_id)[:500])
            room = limit - len(batch.frames)
            batch.frames += frames[:room]
            self._carry = frames[room:]
            if not self._carry:
                batch.items += 1
        return batch


async def harvest(
    minds: MindAccess, mind_id: str, source: str, target: Path | str, *,
    options: HarvestOptions | None = None, progress: Progress | None = None,
    wait_idle: Callable[[float | None], Awaitable[bool]] | None = None,
    parse: Callable[[Path | str], Iterator[HarvestItem]] | None = None,
    started: float | None = None,
) -> HarvestSummary:
    """Import ``target`` with the ``source`` adapter into ``mind_id``; returns a summary.
    ``started``: the ``time.monotonic()`` the summary's ``elapsed_seconds`` count from (the
    caller's start, before it detected the source or waited its turn; default now).

    A :class:`HarvestError` is raised after the batches before it were committed and the
    run was recorded as failed (its ``summary`` attribute holds the partial summary)."""
    options = options or HarvestOptions()
    parse = parse or adapter(source)
    started = time.monotonic() if started is None else started
    naming = _Naming.of(source, target, options)
    if options.auto_sync and naming.no_sync:  # refused before anything is read
        raise ValidationError(naming.no_sync)
    try:
        path_label, content_hash = await asyncio.to_thread(fingerprint_target, source, target)
    except HarvestError as exc:
        raise naming.clean(exc) from None
    if path_label == RAW_TEXT_LABEL:
        naming = naming.raw_text()
        if options.auto_sync:
            raise ValidationError(naming.no_sync)
    sync_path = None if naming.no_sync else path_label
    path_label = naming.display(path_label)
    # no content hash (a URL): every run is new, nothing to resume or to call unchanged
    salt = "" if content_hash else str(time.time_ns())
    run_id = stable_id("harvest-run", source, path_label, content_hash, salt)[:32]
    store = HarvestStore((await minds.reader(mind_id)).db)
    previous = await store.run(run_id)
    summary = HarvestSummary(source=source, path=path_label, mind=mind_id, run_id=run_id,
                             content_hash=content_hash)
    if previous is not None and previous["status"] == "completed":
        return await _finish_summary(minds, replace(summary, status="unchanged"), started,
                                     progress, wait_idle)
    skip = int(previous["items_done"]) if previous is not None else 0
    summary = replace(summary, resumed_from=skip)
    with budget.deadline():  # parsing and writing; the threads it parses in see it
        return await _run(minds, summary, options, naming, parse(target), skip, sync_path,
                          started, progress, wait_idle)


async def _run(minds: MindAccess, summary: HarvestSummary, options: HarvestOptions,
               naming: _Naming, items: Iterator[HarvestItem], skip: int, sync_path: str | None,
               started: float, progress: Progress | None,
               wait_idle: Callable[[float | None], Awaitable[bool]] | None) -> HarvestSummary:
    """The batches of one harvest run, recorded as it ends (see :func:`harvest`)."""
    mind_id, source, run_id = summary.mind, summary.source, summary.run_id
    path_label, content_hash = summary.path, summary.content_hash
    tally = _Tally()
    reader = _Reader(iter(items), skip, options)
    pending: list[asyncio.Task[Any]] = []
    outbox = (await minds.reader(mind_id)).outbox
    common: dict[str, Any] = {"source": source[:100], "run_id": run_id,
                              "source_path": path_label[:4096], "content_hash": content_hash}

    async def settle(task: asyncio.Task[Any]) -> None:
        result = await task
        frames = result.frames if isinstance(result, FramesSaved) else ()
        created = sum(1 for f in frames if f.created)
        tally.created += created
        metrics.HARVEST_FRAMES.labels(source).inc(created)
        tally.duplicates += sum(1 for f in frames if not f.created)

    try:
        while True:
            batch = await asyncio.to_thread(reader.next_batch)
            if batch.frames or batch.items:
                op = ops.HarvestBatch(
                    mind_id=mind_id, priority=options.priority,
                    conversation_ids=batch.conversations, frames=batch.frames,
                    titles=batch.titles, items=batch.items,
                    cursor=str(skip + tally.items + batch.items), **common)
                pending.append(asyncio.ensure_future(minds.submit(mind_id, op)))
                tally.items += batch.items
                tally.kinds += batch.kinds
                tally.turns += len(batch.frames)
            while len(pending) >= max(1, options.in_flight) or (batch.done and pending):
                await settle(pending.pop(0))
            if progress:  # indexing runs beside parsing: its bar moves from the start
                progress(ProgressEvent("parse", skip + tally.items, tally.created,
                                       duplicates=tally.duplicates,
                                       pending_index=await outbox.count()))
            if batch.done:
                break
        if reader.error is not None:
            raise reader.error
    except Exception as exc:
        if isinstance(exc, NothingToImport | DamagedArchive) and not tally.items and not skip:
            raise naming.clean(exc) from None  # nothing read, nothing recorded
        for task in pending:
            try:
                await settle(task)
            except Exception:
                log.exception("harvest batch failed while stopping")
        error = naming.scrub(str(exc))
        summary = replace(summary, status="failed", error=error, items=tally.items,
                          frames_created=tally.created, duplicates_skipped=tally.duplicates)
        await _record(minds, summary, options, sync_path)
        if isinstance(exc, HarvestError):
            clean = naming.clean(exc)
            clean.summary = summary  # type: ignore[attr-defined]
            raise clean from None
        raise
    if not tally.items and not skip:
        raise NothingToImport("nothing importable was found in it (no conversation, message "
                              "or document); nothing was recorded", path=path_label)
    summary = replace(summary, status="completed", items=tally.items,
                      kinds=dict(sorted(tally.kinds.items())) or None,
                      frames_created=tally.created, duplicates_skipped=tally.duplicates)
    await _record(minds, summary, options, sync_path)
    return await _finish_summary(minds, summary, started, progress, wait_idle)


async def _record(minds: MindAccess, summary: HarvestSummary, options: HarvestOptions,
                  sync_path: str | None) -> None:
    await minds.submit(summary.mind, ops.FinishHarvest(
        mind_id=summary.mind, run_id=summary.run_id, source=summary.source,
        status="failed" if summary.status == "failed" else "completed",
        path=summary.path, sync_path=sync_path,
        content_hash=summary.content_hash, items=summary.items,
        frames=summary.frames_created, error=summary.error, auto_sync=options.auto_sync,
        interval_hours=options.interval_hours))


async def _finish_summary(
    minds: MindAccess, summary: HarvestSummary, started: float, progress: Progress | None,
    wait_idle: Callable[[float | None], Awaitable[bool]] | None,
) -> HarvestSummary:
    reader = await minds.reader(summary.mind)

    def event(phase: Literal["index", "done"], pending: int) -> ProgressEvent:
        return ProgressEvent(phase, summary.items, summary.frames_created, pending_index=pending)

    written = time.monotonic()
    if wait_idle is not None:
        waiter = asyncio.ensure_future(wait_idle(None))
        while not waiter.done():
            if progress:
                progress(event("index", await reader.outbox.count()))
            await asyncio.wait({waiter}, timeout=POLL_SECONDS)
        await waiter
    done = time.monotonic()
    summary = replace(summary, pending_index=await reader.outbox.count(),
                      elapsed_seconds=round(done - started, 3),
                      index_wait_seconds=round(done - written, 3))
    if progress:
        progress(event("done", summary.pending_index or 0))
    return summary


async def harvest_stale(minds: MindAccess, mind_id: str) -> list[SyncOutcome]:
    """Re-harvest every auto-sync source of a mind whose interval has passed (maintenance).

    Only ``source_path`` is read again: the path or URL a local user, or a client allowed
    server reads, named itself (never a label; see :class:`_Naming`). A due source without
    one (recorded before schema 10, which cleared every older path) is reported as skipped."""
    store = HarvestStore((await minds.reader(mind_id)).db)
    out: list[SyncOutcome] = []
    for row in await store.stale():
        source, path = str(row["source"]), row["source_path"]
        if not path:
            out.append(SyncOutcome(source, "skipped", reason=NOT_SYNCABLE))
            continue
        target: Path | str = path if source == "url" else Path(path)
        try:
            summary = await harvest(minds, mind_id, source, target)
        except Exception as exc:
            log.exception("auto-sync of %s for %s failed", source, mind_id)
            out.append(SyncOutcome(source, "failed", error=mask_text(str(exc))))
            continue
        out.append(SyncOutcome(source, summary.status, summary=summary))
    return out


@dataclass(frozen=True)
class _Naming:
    """What an import is called where it is recorded, and whether auto-sync may read it again.

    A label is display-only: it is recorded as the run's path and the source's display name,
    never as ``source_path`` (what :func:`harvest_stale` re-reads). A labelled target is a
    private copy (a temp file) whose path is replaced by the label in every error; URLs are
    masked (:mod:`mind.redact`) everywhere they are recorded."""

    label: str | None
    hidden: tuple[str, ...]  # private paths that errors must not show
    no_sync: str  # why auto-sync cannot re-read this input ("" when it can)

    @classmethod
    def of(cls, source: str, target: Path | str, options: HarvestOptions) -> _Naming:
        label = mask_text(options.label) if options.label else None
        private = not options.rereadable if options.rereadable is not None else bool(label)
        hidden: tuple[str, ...] = ()
        if private and label:
            forms = {str(target)}
            if isinstance(target, Path) or "://" not in target:
                forms.add(str(Path(target).expanduser().resolve()))
            hidden = tuple(sorted(forms, key=len, reverse=True))
        no_sync = ""
        if private:
            no_sync = f"auto_sync needs a path or URL the server reads itself; {NO_PATH}"
        elif source == "url" and has_secrets(str(target)):
            no_sync = ("auto_sync cannot keep a URL that carries credentials (user:password@ "
                       "or a secret query parameter): they are never stored, so it could not "
                       "be fetched again")
        return cls(label, hidden, no_sync)

    def raw_text(self) -> _Naming:
        return _Naming(self.label, self.hidden,
                       self.no_sync or f"auto_sync needs a file; {NO_PATH}")

    def display(self, path_label: str) -> str:
        return (self.label or mask_text(path_label))[:4096]

    def scrub(self, text: str) -> str:
        for private in self.hidden:
            text = text.replace(private, self.label or "")
        return mask_text(text)

    def clean(self, exc: HarvestError) -> HarvestError:
        return HarvestError(self.scrub(exc.reason), path=self.scrub(exc.path),
                            position=self.scrub(exc.position))
