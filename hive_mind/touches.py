"""A recall's hits, counted in batches: the access counts popularity weighs (issue #14).

Every recall counts an access of the memories it returned. Writing that count per recall — one
op through the mind's actor, a transaction and its commit — cost a served recall's neighbours
~1-2 ms of CPU on a 2-core host (the write of one recall ran beside the next recall's lanes).
The facade instead adds a recall's hits to the mind's pending list; one ``Touch`` op per mind
writes all of them at most :data:`FLUSH_SECONDS` later. Every hit still counts (a frame recalled
twice in the window is counted twice). ``close`` writes what is pending and waits for the
writes, so a clean shutdown loses none; a crash loses at most the last window's counts, a
popularity signal, never a memory.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from vocabulary.limits import MAX_IDS_PER_OP

log = logging.getLogger(__name__)

FLUSH_SECONDS = 0.2


class TouchBuffer:
    """Pending hits per mind, written by ``write(mind, frame_ids)`` (``frame_ids`` at most
    :data:`~vocabulary.limits.MAX_IDS_PER_OP`)."""

    def __init__(self, write: Callable[[str, list[int]], Awaitable[Any]],
                 delay: float = FLUSH_SECONDS) -> None:
        self._write = write
        self._delay = delay
        self._pending: dict[str, list[int]] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._writes: set[asyncio.Future[Any]] = set()

    def add(self, mind: str, frame_ids: Sequence[int]) -> None:
        if not frame_ids:
            return
        self._pending.setdefault(mind, []).extend(frame_ids)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._delay, self._flush)

    @property
    def waiting(self) -> int:
        """Hits not yet written, and writes still running."""
        return sum(map(len, self._pending.values())) + len(self._writes)

    def _flush(self) -> None:
        self._timer = None
        pending, self._pending = self._pending, {}
        for mind, ids in pending.items():
            for start in range(0, len(ids), MAX_IDS_PER_OP):
                task = asyncio.ensure_future(self._write(mind, ids[start:start + MAX_IDS_PER_OP]))
                self._writes.add(task)
                task.add_done_callback(self._done)

    def _done(self, task: asyncio.Future[Any]) -> None:
        """Forget a finished write; its failure is logged (the recalls already answered)."""
        self._writes.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("recording recalls' hits failed: %s", task.exception())

    async def close(self) -> None:
        """Write what is pending now and wait for every write."""
        if self._timer is not None:
            self._timer.cancel()
        self._flush()
        await asyncio.gather(*self._writes, return_exceptions=True)
