"""PacedWorker on real Redis: while jobs run, queue scans are paced (arq re-checks every
running job's id on each scan); an idle worker still picks a new job up on its fast poll."""

from __future__ import annotations

import asyncio
from typing import Any

from arq.worker import Worker, get_kwargs

from queue_schemas.codec import deserialize, serialize
from tests.conftest import REDIS_URL
from workers.arq_worker import PacedWorker, make_worker
from workers.queue import redis_settings

QUEUE = "hm-test:paced"


class Counting(PacedWorker):
    scans = 0

    async def _poll_iteration(self) -> None:
        before = self._last_poll
        await super()._poll_iteration()
        if self._last_poll != before:
            type(self).scans += 1


async def nap(ctx: dict[str, Any], seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "rested"


def settings(**extra: Any) -> type:
    return type("S", (), {"queue_name": QUEUE, "functions": [nap],
                          "redis_settings": redis_settings(REDIS_URL),
                          "job_serializer": serialize, "job_deserializer": deserialize,
                          "poll_delay": 0.01, **extra})


async def test_scans_are_paced_while_a_job_runs_and_fast_when_idle(redis: Any) -> None:
    worker = Counting(**get_kwargs(settings()), handle_signals=False)
    worker.busy_poll_delay = 0.25
    task = asyncio.create_task(worker.async_run())
    try:
        job = await redis.enqueue_job("nap", 1.0, _queue_name=QUEUE)
        assert await job.result(timeout=10, poll_delay=0.05) == "rested"
        busy_scans = Counting.scans
        # a 1 s job with 10 ms polls: ~100 scans unpaced; paced ≤ 1 per 250 ms (+ the idle ones
        # before the job was claimed and after it ended)
        assert busy_scans <= 12, busy_scans
        Counting.scans = 0
        await asyncio.sleep(1.0)
        # idle: every 10 ms poll scans the queue (paced it would be at most 5 in this second;
        # a loaded machine still manages far more than 10)
        assert Counting.scans >= 10
        second = await redis.enqueue_job("nap", 0.0, _queue_name=QUEUE)
        assert await second.result(timeout=5, poll_delay=0.02) == "rested"
    finally:
        await worker.close()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


class Claims(Worker):
    """Between PacedWorker and arq's Worker (MRO): every job id arq is asked to claim."""

    claimed: list[str]

    async def start_jobs(self, job_ids: list[bytes]) -> None:
        self.claimed.extend(i.decode() for i in job_ids)
        await super().start_jobs(job_ids)


class Probed(PacedWorker, Claims):
    pass


async def test_a_worker_never_reclaims_the_jobs_it_is_running(redis: Any) -> None:
    worker = Probed(**get_kwargs(settings()), handle_signals=False)
    worker.claimed = []
    worker.busy_poll_delay = 0.02  # ~40 scans while the jobs run
    jobs = [await redis.enqueue_job("nap", 0.8, _queue_name=QUEUE, _job_id=f"long-{i}")
            for i in range(3)]
    task = asyncio.create_task(worker.async_run())
    try:
        for job in jobs:
            assert await job.result(timeout=10, poll_delay=0.05) == "rested"
    finally:
        await worker.close()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    # each id went to arq's claim (WATCH, EXISTS, ZSCORE, MULTI) once, not on every scan
    assert sorted(worker.claimed) == ["long-0", "long-1", "long-2"], worker.claimed


def test_make_worker_builds_a_paced_worker() -> None:
    worker = make_worker(settings(), handle_signals=False)
    assert isinstance(worker, PacedWorker) and worker.queue_name == QUEUE


async def test_interactive_jobs_take_reserved_slots_bulk_jobs_never_do(redis: Any) -> None:
    from arq.jobs import Job

    from workers.fairness import defer_by

    worker = PacedWorker(**{**get_kwargs(settings()), "max_jobs": 1}, reserved=1,
                         handle_signals=False)
    worker.busy_poll_delay = 0.05
    bulk = [await redis.enqueue_job("nap", 0.6, _queue_name=QUEUE, _job_id=f"bulk-{i}")
            for i in range(2)]
    task = asyncio.create_task(worker.async_run())
    try:
        await asyncio.sleep(0.2)  # bulk-0 runs in the one regular slot
        urgent = await redis.enqueue_job("nap", 0.1, _queue_name=QUEUE, _job_id="save",
                                         _defer_by=defer_by("interactive"), _expires=60)
        for job in (*bulk, urgent):
            assert await job.result(timeout=10, poll_delay=0.05) == "rested"
    finally:
        await worker.close()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    info = {i: await Job(i, redis, _deserializer=deserialize).result_info()
            for i in ("bulk-0", "bulk-1", "save")}
    assert info["save"].start_time < info["bulk-0"].finish_time  # beside the running bulk job
    assert info["save"].finish_time < info["bulk-0"].finish_time
    assert info["bulk-1"].start_time >= info["bulk-0"].finish_time  # one bulk slot only
