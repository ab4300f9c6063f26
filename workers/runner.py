"""The in-process job runner of the embedded mode: the workers' job code, without Redis.

Jobs go into an asyncio priority queue in the order of :mod:`workers.fairness` (interactive
jobs first, then bulk jobs with the minds taking turns); ``concurrency`` consumer tasks run
them (they share the micro-batcher, so texts of many jobs meet in one ``embed_batch``). A
failing job is retried with a linear back-off up to ``max_tries``, in its old place; after that
it is kept as a dead letter (and its frames stay in the outbox, where a later reconcile finds
them), handed to ``on_dead_letter`` (the embedded runtime persists it in the data dir:
:mod:`workers.dead_letters`). ``wait_idle`` returns when nothing is queued or running — the
CLI waits for the work it caused before exiting. ``waiting_jobs``/``running_jobs`` are what
``hive-mind jobs`` lists.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mind.timeutil import now_iso
from workers import metrics
from workers.constants import RESERVED_INTERACTIVE, RETRY_BACKOFF_SECONDS, RUNNER_CONCURRENCY
from workers.fairness import FairClock, order_key

log = logging.getLogger(__name__)

JobFn = Callable[[Any], Awaitable[None]]
Key = tuple[int, float, int]  # workers.fairness.order_key
RECENT_DEAD_LETTERS = 10  # shown by status, as many as the Redis queue shows


@dataclass(frozen=True, slots=True)
class DeadLetter:
    job_id: str
    kind: str
    mind_id: str
    error: str
    tries: int
    at: str
    id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "job_id": self.job_id, "kind": self.kind,
                "mind_id": self.mind_id, "error": self.error, "tries": self.tries, "at": self.at}


OnDeadLetter = Callable[[DeadLetter, Any], None]


class InProcessRunner:
    """``concurrency`` jobs at once, plus :data:`RESERVED_INTERACTIVE` slots only interactive
    jobs may take: a save arriving while a bulk import fills every slot starts at once instead
    of waiting for a bulk job to end (in the micro-batcher those end together, one batch of
    512 texts at a time: seconds apart on a small CPU)."""

    def __init__(
        self,
        execute: JobFn,
        *,
        concurrency: int = RUNNER_CONCURRENCY,
        max_tries: int = 5,
        backoff: float = RETRY_BACKOFF_SECONDS,
        on_dead_letter: OnDeadLetter | None = None,
    ) -> None:
        self._execute = execute
        self.on_dead_letter = on_dead_letter
        self._waiting: dict[int, Any] = {}  # queued or waiting for a retry, by id(job)
        self._running: dict[int, Any] = {}
        self._heap: list[tuple[Key, Any, int]] = []  # (order key, job, attempt)
        self._clock = FairClock()
        self._seq = itertools.count()
        self._queued = {"interactive": 0, "bulk": 0}
        self._concurrency = concurrency
        self._max_tries = max_tries
        self._backoff = backoff
        self._tasks: set[asyncio.Task[None]] = set()
        self._active = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._ended = asyncio.Event()  # set (and replaced) each time a job's run ends
        self._pending_retries = 0
        self.dead_letters: list[DeadLetter] = []
        self.completed = 0

    @property
    def depth(self) -> int:
        return len(self._heap) + self._pending_retries

    @property
    def in_progress(self) -> int:
        return self._active

    def waiting_jobs(self) -> list[Any]:
        """Jobs queued or waiting for a retry."""
        return list(self._waiting.values())

    def running_jobs(self) -> list[Any]:
        return list(self._running.values())

    def forget(self, dead_letter_ids: set[str] | None) -> None:
        """Remove dead letters (``None``: all) after a retry or drop."""
        self.dead_letters = [] if dead_letter_ids is None else \
            [d for d in self.dead_letters if d.id not in dead_letter_ids]

    def status(self, recent: int = RECENT_DEAD_LETTERS) -> dict[str, Any]:
        """The numbers ``status`` shows, in the shape of the Redis queue's
        (:func:`workers.queue.queue_status`): newest dead letters first."""
        by_mind: dict[str, int] = {}
        for letter in self.dead_letters:
            by_mind[letter.mind_id] = by_mind.get(letter.mind_id, 0) + 1
        return {"depth": self.depth, "in_progress": self.in_progress,
                "by_priority": dict(self._queued),
                "dead_letters": len(self.dead_letters), "dead_letters_by_mind": by_mind,
                "recent_dead_letters": [d.as_dict() for d in self.dead_letters[::-1][:recent]]}

    async def dispatch(self, job: Any) -> None:
        await self.dispatch_many(job.mind_id, [job])

    async def dispatch_many(self, mind_id: str, jobs: list[Any]) -> None:
        """Queue ``mind_id``'s jobs (each with ``priority`` and ``items``) at their places."""
        if not jobs:
            return
        self._idle.clear()
        bulk = [job for job in jobs if job.priority == "bulk"]
        front = self._clock.virtual if self._queued["bulk"] else None  # None: all served
        tags = iter(self._clock.tags(mind_id, [len(job.items) for job in bulk], front=front))
        for job in jobs:
            tag = next(tags) if job.priority == "bulk" else 0.0
            self._waiting[id(job)] = job
            self._put(order_key(job.priority, tag, next(self._seq)), job, 1)

    async def settle(self, jobs: Sequence[Any], keep: int) -> list[Any]:
        """Wait until at most ``keep`` of ``jobs`` (queued here before) are still queued,
        running or waiting for a retry; those that still are. The backpressure of a producer
        that would otherwise queue a whole backlog at once (:mod:`workers.backlog`)."""
        while True:
            left = [job for job in jobs if id(job) in self._waiting or id(job) in self._running]
            if len(left) <= keep:
                return left
            await self._ended.wait()

    def _put(self, key: Key, job: Any, attempt: int) -> None:
        self._queued[job.priority] += 1
        heapq.heappush(self._heap, (key, job, attempt))
        self._pump()

    def _pump(self) -> None:
        """Start the jobs at the front while they have a slot (interactive: the reserved ones
        too)."""
        while self._heap:
            key, job, attempt = self._heap[0]
            limit = self._concurrency + (RESERVED_INTERACTIVE if key[0] == 0 else 0)
            if self._active >= limit:
                return
            heapq.heappop(self._heap)
            self._queued[job.priority] -= 1
            if job.priority == "bulk":
                self._clock.advance(key[1])  # the virtual time: the tag entering service
            self._waiting.pop(id(job), None)
            self._running[id(job)] = job
            self._active += 1
            task = asyncio.create_task(self._run(key, job, attempt), name=f"job-{job.op_id}")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(self, key: Key, job: Any, attempt: int) -> None:
        started = metrics.job_started(job.kind, job.priority)
        try:
            await self._execute(job)
            self.completed += 1
            metrics.job_ended(job.kind, job.priority, started, ok=True)
            log.info("job %s %s (%s) done in %.2fs", job.kind, job.op_id, job.mind_id,
                     time.perf_counter() - started)
        except Exception as exc:
            metrics.job_ended(job.kind, job.priority, started, ok=False)
            self._failed(key, job, attempt, exc)
        finally:
            self._running.pop(id(job), None)
            self._active -= 1
            self._ended.set()
            self._ended = asyncio.Event()
            self._pump()
            self._maybe_idle()

    def _failed(self, key: Key, job: Any, attempt: int, exc: Exception) -> None:
        if attempt >= self._max_tries:
            log.exception("job %s %s failed for good after %d tries", job.kind, job.op_id, attempt)
            letter = DeadLetter(job.op_id, job.kind, job.mind_id,
                                f"{type(exc).__name__}: {exc}", attempt, now_iso())
            self.dead_letters.append(letter)
            metrics.JOBS_DEAD_LETTERED.labels(job.kind).inc()
            if self.on_dead_letter is not None:
                try:
                    self.on_dead_letter(letter, job)
                except Exception:
                    log.exception("could not record dead letter %s", letter.id)
            return
        log.warning("job %s %s failed (try %d): %s", job.kind, job.op_id, attempt, exc)
        self._waiting[id(job)] = job
        self._pending_retries += 1
        delay = self._backoff * attempt
        asyncio.get_running_loop().call_later(delay, self._retry, key, job, attempt + 1)

    def _retry(self, key: Key, job: Any, attempt: int) -> None:
        self._pending_retries -= 1
        self._put(key, job, attempt)

    def _maybe_idle(self) -> None:
        if not self._heap and self._active == 0 and self._pending_retries == 0:
            self._idle.set()

    async def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until no job is queued, running or waiting for a retry."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def close(self) -> None:
        self._heap.clear()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
