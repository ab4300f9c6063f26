"""Queuing what a mind's outbox holds a piece at a time, in bounded memory.

Three things leave many of a mind's frames in its outbox with no job queued for them:

* a process that stopped before its indexing caught up (an import with indexing off, a crash):
  the next long-lived process that opens the mind alone resumes that **backlog**
  (:meth:`Backlogs.resume`). 100,000 frames read back with their content and made into cognify
  jobs at once took a process from 56 to 374 MB (docs/performance.md, "Resuming a backlog");
* a **re-embed** (``maintenance reembed``, after a model change) queues every frame of the
  mind, and its commit hook read them all back at once: gigabytes on a million-frame mind
  (docs/performance.md, "Re-embedding a mind");
* a **reconcile** re-sends the frames (up to 10,000) still pending after its grace period.

Each becomes a *span* of frames, and one task per mind reads the spans it is given in turn:

* A backlog's span is fixed when it starts: the rows pending up to the newest pending frame
  then. Frames written afterwards have greater ids and are this process's own: its commit hook
  queued their indexing. A re-embed's span is every frame (all of them pending again); it
  replaces what the mind's task was reading, which starts over at the first frame (a piece
  read meanwhile is dropped: its jobs carry the old model). A reconcile's span is the frames
  it found stale but those a span of the mind covers (:meth:`Backlogs.covers`): it has queued
  them or will.
* The task reads the outbox in frame id order with a cursor (the last id read),
  :data:`~workers.constants.BACKLOG_PIECE_FRAMES` rows at a time, reads those frames' content,
  and sends them as bulk jobs of the runtime's batch size (``send``: the in-process runner, or
  the Redis queue): re-embed jobs for the frames a re-embed queued, cognify jobs for the others
  (:func:`~workers.followups.outbox_jobs`).
* Before the next piece it waits until at most one piece's jobs are unfinished (``settle``: the
  runner's own account of its jobs, or the jobs' keys in Redis): backpressure from the queue,
  so at most two pieces of a span are in memory or in the queue, whatever its size, and the
  runner or the workers always have the next piece waiting.
* At most :data:`~workers.constants.BACKLOG_MINDS_AT_ONCE` minds are read at once; the others
  wait their turn (a host starting with thousands of workspaces stays bounded too). Their jobs
  are bulk, so the fair queue (:mod:`workers.fairness`) puts saves first and lets minds take
  turns.

Nothing here removes a row from the outbox: a frame leaves it when its index result is applied.
A process that stops meanwhile leaves the rest, in flight or not yet read, for the next process
that opens the mind — an unfinished re-embed included, which the next re-embed to the same
model finishes rather than starts over (:func:`actors.handlers.reembed`); a frame whose job
fails for good stays pending (a dead letter) and the cursor moves past it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from actors.actor import CommitHook, Duplicate
from actors.results import Reconciled, Reembedded, expect
from mind.frames.outbox import Outbox
from mind.mind import Mind
from queue_schemas import ops
from workers.constants import BACKLOG_MINDS_AT_ONCE, BACKLOG_PIECE_FRAMES
from workers.followups import Job, followup_jobs, outbox_jobs

log = logging.getLogger(__name__)

Lease = Callable[[str], AbstractAsyncContextManager[Mind]]
Send = Callable[[str, Sequence[Job]], Awaitable[None]]
Settle = Callable[[list[Job], int], Awaitable[list[Job]]]
"""Wait until at most ``keep`` of the jobs are unfinished; those that are."""


class Span(Protocol):
    """Frames to queue, read a piece at a time in frame id order."""

    @property
    def size(self) -> int: ...

    @property
    def what(self) -> str: ...

    def covers(self, frame_id: int) -> bool: ...

    async def piece(self, outbox: Outbox, after: int, limit: int
                    ) -> tuple[Sequence[int], dict[int, str]]:
        """The next ``limit`` frames of the span after frame ``after`` (none: its end), and
        those of them still pending, each with its outbox reason."""
        ...


@dataclass(frozen=True, eq=False)
class Pending:
    """The outbox's rows up to frame ``upto``: a backlog, or every frame after a re-embed."""

    size: int
    upto: int
    what: str

    def covers(self, frame_id: int) -> bool:
        return frame_id <= self.upto

    async def piece(self, outbox: Outbox, after: int, limit: int
                    ) -> tuple[Sequence[int], dict[int, str]]:
        waiting = await outbox.waiting_after(after, self.upto, limit)
        return list(waiting), waiting


@dataclass(frozen=True, eq=False)
class Listed:
    """Given frames, in id order: those a reconcile found stale."""

    frames: tuple[int, ...]
    what: str = "found stale by a reconcile"

    @property
    def size(self) -> int:
        return len(self.frames)

    def covers(self, frame_id: int) -> bool:
        at = bisect_left(self.frames, frame_id)
        return at < len(self.frames) and self.frames[at] == frame_id

    async def piece(self, outbox: Outbox, after: int, limit: int
                    ) -> tuple[Sequence[int], dict[int, str]]:
        start = bisect_right(self.frames, after)
        part = self.frames[start : start + limit]
        return part, (await outbox.waiting(part) if part else {})


@dataclass(eq=False)
class _Queue:
    """One mind's spans still to read, the first from frame ``cursor`` on."""

    spans: deque[Span] = field(default_factory=deque)
    cursor: int = 0
    left: int = 0  # frames of its spans not queued yet


class Backlogs:
    """One process's reading of its minds' outboxes, a task per mind (module docstring)."""

    def __init__(self, lease: Lease, send: Send, settle: Settle, batch: int, *,
                 piece: int = BACKLOG_PIECE_FRAMES,
                 minds_at_once: int = BACKLOG_MINDS_AT_ONCE) -> None:
        self._lease = lease
        self._send = send
        self._settle = settle
        self._batch = batch
        self._piece = piece
        self._turns = asyncio.Semaphore(minds_at_once)
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._queues: dict[str, _Queue] = {}

    @property
    def busy(self) -> bool:
        """Whether a span is still being read and queued."""
        return bool(self._tasks)

    def status(self) -> dict[str, int]:
        """Per mind being read, the frames of its spans not queued yet."""
        return {mind_id: queue.left for mind_id, queue in self._queues.items()}

    def covers(self, mind_id: str, frame_id: int) -> bool:
        """Whether a span of the mind has queued the frame's indexing or will (if it is still
        pending when the cursor reaches it)."""
        queue = self._queues.get(mind_id)
        return queue is not None and any(span.covers(frame_id) for span in queue.spans)

    async def resume(self, mind_id: str) -> int:
        """Start resuming what ``mind_id``'s outbox holds now; how many frames that is (0: an
        empty outbox, or a resumption of the mind already running). Returns once the first
        piece is queued (a backlog of one piece is then queued whole), or the mind waits for
        its turn; the rest follows in the background."""
        if self._reads_outbox(mind_id):
            return 0
        async with self._lease(mind_id) as reader:
            total, upto = await reader.outbox.extent()
        if not total or self._reads_outbox(mind_id):
            return 0
        started = self._add(mind_id, Pending(total, upto, "left pending"))
        if started:
            await asyncio.wait(started, return_when=asyncio.FIRST_COMPLETED)
        return total

    async def resume_all(self, mind_ids: Iterable[str]) -> int:
        """:meth:`resume` each mind; the frames found in all of their outboxes."""
        return sum([await self.resume(mind_id) for mind_id in mind_ids])

    def on_commit(self, mind_id: str, reader: Mind) -> CommitHook:
        """The commit hook of ``mind_id``'s actor: send the indexing of the frames a commit
        wrote (:func:`~workers.followups.followup_jobs`), and read back what it put in the
        outbox again (a re-embed, a reconcile) a piece at a time, in the background."""
        async def after_commit(committed: list[tuple[Any, Any]], handed: frozenset[int]
                               ) -> None:
            queued = await followup_jobs(mind_id, committed, reader, batch=self._batch,
                                         handed=handed)
            await self._send(mind_id, queued)
            if queued:
                log.debug("mind %s: %d ops committed, %d cognify jobs queued (%d frames)",
                          mind_id, len(committed), len(queued), sum(len(j.items) for j in queued))
            for op, result in committed:
                if not isinstance(result, Duplicate):  # applied before: followed then
                    await self._follow(mind_id, reader, op, result)

        return after_commit

    async def _follow(self, mind_id: str, reader: Mind, op: Any, result: Any) -> None:
        if isinstance(op, ops.Reembed):
            total, upto = await reader.outbox.extent()
            if not expect(result, Reembedded).continued:  # every frame: start over
                self._add(mind_id, Pending(total, upto, "queued for re-embedding"),
                          instead=True)
            elif total and not self._reads_outbox(mind_id):
                self._add(mind_id, Pending(total, upto, "left by an unfinished re-embed"))
        elif isinstance(op, ops.Reconcile):
            stale = tuple(sorted(frame for frame in expect(result, Reconciled).requeue
                                 if not self.covers(mind_id, frame)))
            if stale:
                self._add(mind_id, Listed(stale))

    def _reads_outbox(self, mind_id: str) -> bool:
        queue = self._queues.get(mind_id)
        return queue is not None and any(isinstance(s, Pending) for s in queue.spans)

    def _add(self, mind_id: str, span: Span, *, instead: bool = False
             ) -> list[asyncio.Future[None]]:
        """Give the mind's task ``span`` to read after its others (``instead`` of them: from
        its first frame, at once), starting the task if it has none; then, the futures of its
        first piece queued and of its end, else none."""
        queue = self._queues.get(mind_id)
        if queue is not None:
            if instead:
                queue.spans.clear()
                queue.cursor = queue.left = 0
            queue.spans.append(span)
            queue.left += span.size
            return []
        queue = self._queues[mind_id] = _Queue(deque([span]), left=span.size)
        first = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(self._drain(mind_id, queue, first), name=f"outbox-{mind_id}")
        self._tasks[mind_id] = task
        task.add_done_callback(lambda done: self._ended(mind_id, queue, done))
        return [first, task]

    async def _drain(self, mind_id: str, queue: _Queue, first: asyncio.Future[None]) -> None:
        """Queue the jobs of the mind's spans, a piece at a time; ``first`` is resolved once
        the first piece is queued or the mind waits for its turn."""
        try:
            if self._turns.locked():
                first.set_result(None)
            async with self._turns:
                await self._read(mind_id, queue, first)
        finally:
            self._ended(mind_id, queue)  # at once: a span added from now on starts a task
            if not first.done():
                first.set_result(None)

    async def _read(self, mind_id: str, queue: _Queue, first: asyncio.Future[None]) -> None:
        unfinished: list[Job] = []
        current: Span | None = None
        sent, started = 0, 0.0
        while queue.spans:
            span, cursor = queue.spans[0], queue.cursor
            if span is not current:
                current, sent, started = span, 0, time.perf_counter()
                log.info("mind %s: queuing %d frames %s, %d at a time", mind_id, span.size,
                         span.what, self._piece)
            async with self._lease(mind_id) as reader:
                spanned, waiting = await span.piece(reader.outbox, cursor, self._piece)
                queued = await outbox_jobs(mind_id, reader, waiting, self._batch) \
                    if waiting else []
            if not queue.spans or queue.spans[0] is not span:
                continue  # replaced meanwhile (a re-embed): this piece is stale
            if not spanned:
                queue.spans.popleft()
                queue.cursor = 0
                log.info("mind %s: %d frames %s queued in %.1fs", mind_id, sent, span.what,
                         time.perf_counter() - started)
                continue
            queue.cursor = spanned[-1]
            queue.left = max(0, queue.left - len(spanned))
            await self._send(mind_id, queued)
            sent += len(waiting)
            log.debug("mind %s: %d frames %s queued so far", mind_id, sent, span.what)
            if not first.done():
                first.set_result(None)
            keep = max(len(queued), -(-self._piece // self._batch))  # one piece's jobs
            unfinished = await self._settle([*unfinished, *queued], keep)

    def _ended(self, mind_id: str, queue: _Queue, task: asyncio.Task[None] | None = None
               ) -> None:
        if self._queues.get(mind_id) is queue:
            del self._queues[mind_id]
            self._tasks.pop(mind_id, None)
        if task is not None and not task.cancelled() and task.exception() is not None:
            log.error("mind %s: queuing what its outbox holds failed (the rest stays there)",
                      mind_id, exc_info=task.exception())

    async def wait(self) -> None:
        """Until every span has queued its last piece (a wait cancelled here leaves them
        running)."""
        while self._tasks:
            await asyncio.gather(*(asyncio.shield(t) for t in list(self._tasks.values())),
                                 return_exceptions=True)

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
