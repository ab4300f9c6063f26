"""Wake-ups: whoever queues a job tells that queue's workers at once, instead of leaving it to
their next poll.

arq finds new jobs only by polling its queue. Polling fast (every 50 ms) cost an idle process
16-18 ms of CPU a second on a 2-core VM (each wake-up of the event loop and its Redis round
trip: bench/components/host_queue_cost.py) and still left each job waiting 25 ms on average before
it started — at both ends of an import, where nothing else overlaps the wait. So every place
that queues a job (:func:`notify` after ``enqueue_job``) publishes on the queue's channel, and
each worker process subscribes to its queue's channel on a connection of its own
(:class:`WakeSignal`). A worker waits for a wake-up or its idle poll delay, whichever comes
first (:class:`workers.arq_worker.PacedWorker`); its own finished jobs wake it too (a slot
freed while jobs wait in the queue).

Best effort by design: pub/sub keeps nothing for a subscriber that is away, and a failed
publish is logged, not raised — the job is in the queue either way, and the poll, now a
safety net, finds it (jobs deferred to a wall-clock time, an enqueuer that does not publish,
a subscription being re-made after Redis went away).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from queue_schemas.constants import wake_channel

log = logging.getLogger(__name__)

RETRY_FIRST_SECONDS = 0.5  # a lost subscription is re-made after this, doubling ...
RETRY_MAX_SECONDS = 10.0  # ... up to this (the polls go on meanwhile)


def channel_of(redis: Any, queue_name: str) -> str:
    """``queue_name``'s wake-up channel on the Redis database ``redis`` (a pool) uses."""
    return wake_channel(queue_name, int(redis.connection_pool.connection_kwargs.get("db") or 0))


async def notify(redis: Any, queue_name: str) -> None:
    """Wake the workers of ``queue_name`` (call after queueing one or more jobs on it)."""
    try:
        await redis.publish(channel_of(redis, queue_name), b"1")
    except Exception as exc:  # the job is queued: the next poll finds it
        log.debug("no wake-up sent to %s: %s", queue_name, exc)


class WakeSignal:
    """A worker's subscription to its queue's channel, as an :class:`asyncio.Event`."""

    def __init__(self, queue_name: str) -> None:
        self.queue_name = queue_name
        self.channel = ""  # known once started: it names the pool's database
        self.event = asyncio.Event()
        self.subscribed = asyncio.Event()  # set while the subscription stands (tests, status)
        self._task: asyncio.Task[None] | None = None

    def start(self, redis: Any) -> None:
        if self._task is None:
            self.channel = channel_of(redis, self.queue_name)
            self._task = asyncio.ensure_future(self._listen(redis))

    async def wait(self, timeout: float) -> bool:
        """Until a wake-up (True, and the signal is reset) or ``timeout`` seconds (False)."""
        if not self.event.is_set():
            if timeout <= 0:
                return False
            try:
                await asyncio.wait_for(self.event.wait(), timeout)
            except TimeoutError:
                return False
        self.event.clear()
        return True

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _listen(self, redis: Any) -> None:
        pause = RETRY_FIRST_SECONDS
        while True:
            pubsub = redis.pubsub()
            try:
                await pubsub.subscribe(self.channel)
                self.subscribed.set()
                pause = RETRY_FIRST_SECONDS
                self.event.set()  # whatever was published while away: poll now
                async for message in pubsub.listen():
                    if message.get("type") == "message":
                        self.event.set()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("wake-up subscription to %s lost (%s); polling until it is back",
                            self.channel, exc)
            finally:
                self.subscribed.clear()
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            await asyncio.sleep(pause)
            pause = min(pause * 2, RETRY_MAX_SECONDS)
