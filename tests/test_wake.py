"""Wake-ups on real Redis (workers/wake.py): a job queued with a wake-up starts at once, long
before the worker's next poll; without one the poll still finds it; a finished job frees its
slot for a waiting one at once; a lost subscription comes back; an idle worker polls rarely."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from arq.connections import ArqRedis
from arq.worker import get_kwargs

from queue_schemas.codec import deserialize, serialize
from tests.conftest import REDIS_URL
from workers.arq_worker import PacedWorker
from workers.queue import redis_settings
from workers.wake import notify

QUEUE = "hm-test:wake"
SLOW_POLL = 5.0  # the idle poll of these workers: a job started well before it was woken


async def nap(ctx: dict[str, Any], seconds: float) -> float:
    await asyncio.sleep(seconds)
    return time.monotonic()


class Counting(PacedWorker):
    scans = 0

    async def _poll_iteration(self) -> None:
        await super()._poll_iteration()
        self.scans += 1


def build(poll_delay: float = SLOW_POLL, **extra: Any) -> Counting:
    settings = type("S", (), {"queue_name": QUEUE, "functions": [nap],
                              "redis_settings": redis_settings(REDIS_URL),
                              "job_serializer": serialize, "job_deserializer": deserialize,
                              "poll_delay": poll_delay})
    return Counting(**{**get_kwargs(settings), **extra}, handle_signals=False)


async def running(worker: Counting) -> AsyncIterator[Counting]:
    task = asyncio.create_task(worker.async_run())
    try:
        await asyncio.wait_for(worker.wake.subscribed.wait(), 5)
        await asyncio.sleep(0.05)  # its first poll (an empty queue) is behind it
        yield worker
    finally:
        await worker.close()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@pytest.fixture
async def worker(request: pytest.FixtureRequest) -> AsyncIterator[Counting]:
    async for w in running(build(**getattr(request, "param", {}))):
        yield w


async def queue(redis: ArqRedis, seconds: float, *, wake: bool = True, job_id: str | None = None
                ) -> Any:
    job = await redis.enqueue_job("nap", seconds, _queue_name=QUEUE, _job_id=job_id)
    if wake:
        await notify(redis, QUEUE)
    return job


async def test_a_job_queued_with_a_wake_up_starts_at_once(redis: ArqRedis,
                                                          worker: Counting) -> None:
    sent = time.monotonic()
    job = await queue(redis, 0.0)
    done = await job.result(timeout=SLOW_POLL / 2, poll_delay=0.01)
    assert done - sent < 1.0  # not at the next poll, 5 s away


@pytest.mark.parametrize("worker", [{"poll_delay": 0.3}], indirect=True)
async def test_without_a_wake_up_the_next_poll_finds_the_job(redis: ArqRedis,
                                                             worker: Counting) -> None:
    job = await queue(redis, 0.0, wake=False)
    assert await job.result(timeout=5, poll_delay=0.02) > 0


@pytest.mark.parametrize("worker", [{"max_jobs": 1, "reserved": 0}], indirect=True)
async def test_a_finished_job_wakes_its_worker_for_the_next_one(redis: ArqRedis,
                                                                worker: Counting) -> None:
    worker.busy_poll_delay = 0.05
    sent = time.monotonic()
    first = await queue(redis, 0.3, job_id="first")
    second = await queue(redis, 0.0, job_id="second")  # waits: the one slot is taken
    assert await first.result(timeout=5, poll_delay=0.02) > 0
    assert await second.result(timeout=SLOW_POLL / 2, poll_delay=0.02) - sent < 1.5


async def test_an_idle_worker_polls_at_its_poll_delay_only(redis: ArqRedis) -> None:
    async for w in running(build(poll_delay=0.5)):
        w.scans = 0
        await asyncio.sleep(1.3)
        assert w.scans <= 3, w.scans  # at 50 ms (the old poll): ~26


async def test_a_lost_subscription_comes_back(redis: ArqRedis, worker: Counting) -> None:
    killed = await redis.execute_command("CLIENT", "KILL", "TYPE", "pubsub")
    assert int(killed) >= 1
    deadline = time.monotonic() + 5
    while worker.wake.subscribed.is_set() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    await asyncio.wait_for(worker.wake.subscribed.wait(), 5)
    await asyncio.sleep(0.05)
    sent = time.monotonic()
    job = await queue(redis, 0.0)
    assert await job.result(timeout=SLOW_POLL / 2, poll_delay=0.01) - sent < 1.0


async def test_a_wake_up_to_an_unreachable_redis_is_dropped_not_raised() -> None:
    down = ArqRedis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.5)
    try:
        await notify(down, QUEUE)  # the job would be queued already: nothing to undo
    finally:
        await down.aclose()
