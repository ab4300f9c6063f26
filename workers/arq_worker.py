"""The arq ``Worker`` our processes run: arq's own, with queue polls paced while jobs run and
slots kept for interactive jobs.

arq 0.28 polls its queue every ``poll_delay`` seconds. Here a poll follows a wake-up instead
(:mod:`workers.wake`: whoever queues a job publishes on the queue's channel, and a worker's own
finished job wakes it), and the ``poll_delay`` (:data:`IDLE_POLL_SECONDS`) is only the safety
net between wake-ups: a job is picked up at once, and an idle process no longer wakes 20 times
a second for nothing (arq's own loop runs with no pause; the wait is in
:meth:`PacedWorker._poll_iteration`).

Each poll reads up to
``queue_read_limit`` job ids from the front of the queue and, for every one of them, spends
three round trips (WATCH, EXISTS, ZSCORE) finding out whether it can claim it — and a running
job stays at the front of the queue until it finishes, so a busy worker re-checks all its own
running jobs (and every other worker's) on each poll. With 32 jobs in flight and two workers that
measured 2.7 CPU-seconds of Redis and ~4 of the workers per 4,000 frames: 76 % of raw encode
throughput end to end, 95 % once polls are paced (bench/product/ingest.py). So: poll at
:data:`IDLE_POLL_SECONDS` at the latest, at once when woken while nothing runs, and at most every
:data:`BUSY_POLL_SECONDS` while jobs run (they keep the worker busy for far longer than that).
And the ids of jobs this process is running are dropped before any round trip: it cannot
claim them again, and a host — which applies its write-ops one commit at a time, so a worker's
batch of eight index results waits in its slots for ~0.2 s — spent those three trips (and a
pipeline's connection) per running job per poll (tests/test_arq_worker.py).

Interactive jobs (:mod:`workers.fairness`: the lowest scores) may also take
:data:`RESERVED_INTERACTIVE` slots beyond ``max_jobs``, which bulk jobs never get: with every
slot busy with a bulk import's jobs — which the micro-batcher finishes together, a batch at a
time, seconds apart on a small CPU — a save's job starts on the next poll instead.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from arq.worker import Worker, get_kwargs

from workers.constants import BUSY_POLL_SECONDS, RESERVED_INTERACTIVE
from workers.fairness import band_of
from workers.wake import WakeSignal


class PacedWorker(Worker):
    """arq's Worker; polls when woken or after ``idle_poll_delay`` (arq's ``poll_delay``),
    and at least ``busy_poll_delay`` apart while any job runs. ``max_jobs`` jobs at once,
    plus ``reserved`` more that only interactive jobs may take."""

    busy_poll_delay: float = BUSY_POLL_SECONDS

    def __init__(self, *args: Any, reserved: int = RESERVED_INTERACTIVE, **kwargs: Any) -> None:
        self.bulk_limit = int(kwargs.get("max_jobs", 10))
        super().__init__(*args, **{**kwargs, "max_jobs": self.bulk_limit + reserved})
        self.idle_poll_delay = self.poll_delay_s
        self.poll_delay_s = 0.0  # arq's loop does not pause: _poll_iteration waits (docstring)
        self.wake = WakeSignal(self.queue_name)
        self._last_poll: float | None = None

    async def main(self) -> None:
        try:
            await super().main()
        finally:  # cancelled by a signal or close(): the subscription goes with the loop
            await self.wake.close()

    async def _poll_iteration(self) -> None:
        if self._last_poll is None:
            self.wake.start(self.pool)
        else:
            await self._until_next_poll(self._last_poll)
        self._last_poll = time.monotonic()
        await super()._poll_iteration()

    async def _until_next_poll(self, last: float) -> None:
        """A wake-up or the idle poll delay; while jobs run, not before ``busy_poll_delay``
        since the last poll."""
        await self.wake.wait(last + self.idle_poll_delay - time.monotonic())
        if self.job_counter > 0:
            rest = last + self.busy_poll_delay - time.monotonic()
            if rest > 0:
                await asyncio.sleep(rest)

    async def start_jobs(self, job_ids: list[bytes]) -> None:
        """arq's, for the ids read from the front of the queue, but a job outside the
        interactive band starts only while fewer than ``bulk_limit`` jobs run."""
        job_ids = [i for i in job_ids if not self._running(i)]
        if not job_ids:
            return
        scores = await self.pool.zmscore(self.queue_name, [i.decode() for i in job_ids])
        for job_id, score in zip(job_ids, scores, strict=True):
            if score is None:
                continue  # finished meanwhile
            urgent = band_of(score) == "interactive"
            if self.job_counter >= (self.max_jobs if urgent else self.bulk_limit):
                return  # the ids are in score order: no job after this one may start either
            await super().start_jobs([job_id])
            task = self.tasks.get(job_id.decode())
            if task is not None:  # its end frees a slot: look at the queue again
                task.add_done_callback(lambda _: self.wake.event.set())

    def _running(self, job_id: bytes) -> bool:
        task = self.tasks.get(job_id.decode())
        return task is not None and not task.done()


def make_worker(settings_cls: Any, **kwargs: Any) -> PacedWorker:
    """``arq.worker.create_worker`` for :class:`PacedWorker`."""
    return PacedWorker(**{**get_kwargs(settings_cls), **kwargs})
