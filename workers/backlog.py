"""Resuming a mind's outbox backlog in pieces, in bounded memory.

A process that opens a mind alone re-queues the indexing its outbox still holds: what a
process killed before its indexing caught up left (an import with indexing off, a crash).
That backlog can be a whole import; 100,000 frames read back with their content and made into
cognify jobs at once took a process from 56 to 374 MB (docs/performance.md, "Resuming a
backlog"). Here each mind's backlog is resumed by a task of its own instead:

* Its extent is fixed when it starts: the rows pending up to the newest pending frame then.
  Frames written afterwards have greater ids and are this process's own: its commit hook
  queued their indexing. A reconcile in this process meanwhile re-sends none of the frames
  the resumption covers (:meth:`Backlogs.covers`): it has queued them or will.
* It reads the outbox in frame id order with a cursor (the last id read),
  :data:`~workers.constants.BACKLOG_PIECE_FRAMES` rows at a time, reads those frames'
  content, and sends them as bulk cognify jobs of the runtime's batch size (``send``: the
  in-process runner, or the Redis queue).
* Before the next piece it waits until at most one piece's jobs are unfinished (``settle``: the
  runner's own account of its jobs, or the jobs' keys in Redis): backpressure from the queue,
  so at most two pieces of a backlog are in memory or in the queue, whatever its size, and the
  runner or the workers always have the next piece waiting.
* At most :data:`~workers.constants.BACKLOG_MINDS_AT_ONCE` minds are resumed at once; the
  others wait their turn (a host starting with thousands of workspaces stays bounded too).
  Their jobs are bulk, so the fair queue (:mod:`workers.fairness`) puts saves first and lets
  minds take turns.

Nothing here removes a row from the outbox: a frame leaves it when its index result is applied.
A process that stops during a resumption leaves the rest, in flight or not yet read, for the
next process that opens the mind; a frame whose job fails for good stays pending (a dead
letter) and the cursor moves past it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager

from mind.mind import Mind
from queue_schemas import jobs
from workers.constants import BACKLOG_MINDS_AT_ONCE, BACKLOG_PIECE_FRAMES
from workers.followups import cognify_jobs, fingerprint_hint, pending_items

log = logging.getLogger(__name__)

Lease = Callable[[str], AbstractAsyncContextManager[Mind]]
Send = Callable[[str, list[jobs.CognifyJob]], Awaitable[None]]
Settle = Callable[[list[jobs.CognifyJob], int], Awaitable[list[jobs.CognifyJob]]]
"""Wait until at most ``keep`` of the jobs are unfinished; those that are."""


class Backlogs:
    """One process's resumptions, a task per mind (module docstring)."""

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
        self._left: dict[str, int] = {}  # frames of each backlog not queued yet
        self._upto: dict[str, int] = {}  # the newest frame of each backlog

    @property
    def busy(self) -> bool:
        """Whether a backlog is still being read and queued."""
        return bool(self._tasks)

    def status(self) -> dict[str, int]:
        """Per mind being resumed, the frames of its backlog not queued yet."""
        return dict(self._left)

    def covers(self, mind_id: str, frame_id: int) -> bool:
        """Whether a resumption running here has queued the frame's indexing or will (if it is
        still pending when the cursor reaches it)."""
        return frame_id <= self._upto.get(mind_id, 0)

    async def resume(self, mind_id: str) -> int:
        """Start resuming what ``mind_id``'s outbox holds now; how many frames that is (0: an
        empty outbox, or a resumption of the mind already running). Returns once the first
        piece is queued (a backlog of one piece is then queued whole), or the mind waits for
        its turn; the rest follows in the background."""
        if mind_id in self._tasks:
            return 0
        async with self._lease(mind_id) as reader:
            total, upto = await reader.outbox.extent()
        if not total:
            return 0
        self._left[mind_id], self._upto[mind_id] = total, upto
        first = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(self._drain(mind_id, upto, first), name=f"resume-{mind_id}")
        self._tasks[mind_id] = task
        task.add_done_callback(lambda done: self._ended(mind_id, done))
        await asyncio.wait([first, task], return_when=asyncio.FIRST_COMPLETED)
        return total

    async def resume_all(self, mind_ids: Iterable[str]) -> int:
        """:meth:`resume` each mind; the frames found in all of their outboxes."""
        return sum([await self.resume(mind_id) for mind_id in mind_ids])

    async def _drain(self, mind_id: str, upto: int, first: asyncio.Future[None]) -> None:
        """Queue the backlog of ``mind_id`` up to frame ``upto``, a piece at a time; ``first``
        is resolved once the first piece is queued or the mind waits for its turn."""
        if self._turns.locked():
            first.set_result(None)
        async with self._turns:
            log.info("mind %s: resuming %d frames left pending, %d at a time", mind_id,
                     self._left[mind_id], self._piece)
            started, cursor, sent = time.perf_counter(), 0, 0
            unfinished: list[jobs.CognifyJob] = []
            while True:
                async with self._lease(mind_id) as reader:
                    ids = await reader.outbox.ids_after(cursor, upto, self._piece)
                    if not ids:
                        break
                    items = await pending_items(reader, ids)
                    hint = await fingerprint_hint(reader)
                cursor = ids[-1]
                queued = cognify_jobs(mind_id, items, hint, self._batch)
                await self._send(mind_id, queued)
                sent += len(items)
                self._left[mind_id] = max(0, self._left[mind_id] - len(ids))
                log.debug("mind %s: %d frames of its backlog queued", mind_id, sent)
                if not first.done():
                    first.set_result(None)
                unfinished = await self._settle([*unfinished, *queued],
                                                -(-self._piece // self._batch))
            log.info("mind %s: re-queued %d frames left pending in %.1fs", mind_id, sent,
                     time.perf_counter() - started)

    def _ended(self, mind_id: str, task: asyncio.Task[None]) -> None:
        self._tasks.pop(mind_id, None)
        self._left.pop(mind_id, None)
        self._upto.pop(mind_id, None)
        if not task.cancelled() and task.exception() is not None:
            log.error("mind %s: resuming its backlog failed (the rest stays in the outbox)",
                      mind_id, exc_info=task.exception())

    async def wait(self) -> None:
        """Until every resumption has queued its last piece (a wait cancelled here leaves
        them running)."""
        while self._tasks:
            await asyncio.gather(*(asyncio.shield(t) for t in list(self._tasks.values())),
                                 return_exceptions=True)

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
