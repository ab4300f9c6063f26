"""The arq ``Worker`` our processes run: arq's own, with queue polls paced while jobs run.

arq 0.28 polls its queue every ``poll_delay`` seconds. Each poll reads up to
``queue_read_limit`` job ids from the front of the queue and, for every one of them, spends
three round trips (WATCH, EXISTS, ZSCORE) finding out whether it can claim it — and a running
job stays at the front of the queue until it finishes, so a busy worker re-checks all its own
running jobs (and every other worker's) on each poll. With 32 jobs in flight and two workers that
measured 2.7 CPU-seconds of Redis and ~4 of the workers per 4,000 frames: 76 % of raw encode
throughput end to end, 95 % once polls are paced (docs/benchmarks.md, ingest). So: poll at
:data:`IDLE_POLL_SECONDS` while nothing runs (a new job is picked up at once) and at most every
:data:`BUSY_POLL_SECONDS` while jobs run (they keep the worker busy for far longer than that).
"""

from __future__ import annotations

import time
from typing import Any

from arq.worker import Worker, get_kwargs

from workers.constants import BUSY_POLL_SECONDS


class PacedWorker(Worker):
    """arq's Worker; between two polls at least ``busy_poll_delay`` while any job runs."""

    busy_poll_delay: float = BUSY_POLL_SECONDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._last_poll = 0.0

    async def _poll_iteration(self) -> None:
        now = time.monotonic()
        if self.job_counter > 0 and now - self._last_poll < self.busy_poll_delay:
            return
        self._last_poll = now
        await super()._poll_iteration()


def make_worker(settings_cls: Any, **kwargs: Any) -> PacedWorker:
    """``arq.worker.create_worker`` for :class:`PacedWorker`."""
    return PacedWorker(**{**get_kwargs(settings_cls), **kwargs})
