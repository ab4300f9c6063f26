"""Priority and fairness of the cognify queue on a real Redis with real worker processes
(workers/fairness.py, workers/arq_worker.py): an interactive job queued behind a bulk backlog
is the next one started by any worker, and a second bulk mind takes turns with the first."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from arq.jobs import Job

from queue_schemas.codec import deserialize
from queue_schemas.constants import COGNIFY_QUEUE
from queue_schemas.jobs import CognifyItem, CognifyJob
from tests.conftest import REDIS_URL
from tests.procs import eventually, spawn, stop
from workers.distributed import CognifyQueue
from workers.fairness import band_of

WORKERS = 2


def job(mind_id: str, name: str, n: int, priority: str = "bulk") -> CognifyJob:
    return CognifyJob(mind_id=mind_id, op_id=name, priority=priority,  # type: ignore[arg-type]
                      items=[CognifyItem(frame_id=i + 1, content=f"{name} says hello {i}")
                             for i in range(n)])


async def started(redis: Any, ids: list[str]) -> dict[str, float]:
    """Start times (epoch seconds) of the finished jobs among ``ids``."""
    out = {}
    for job_id in ids:
        info = await Job(job_id, redis, _deserializer=deserialize).result_info()
        if info is not None:
            out[job_id] = info.start_time.timestamp()
    return out


async def test_interactive_job_jumps_a_running_backlog_and_minds_take_turns(
    redis: Any, tmp_path: Path,
) -> None:
    queue = CognifyQueue(redis)
    backlog = [job("workspace:bulk", f"a{k:02d}", 8) for k in range(40)]
    await queue.send("workspace:bulk", backlog)
    env = {"HIVE_MIND_DATA_DIR": str(tmp_path / "data"), "HIVE_MIND_REDIS_URL": REDIS_URL,
           "HIVE_MIND_HOST_ID": "fair", "HIVE_MIND_EMBEDDING_PROVIDER": "test",
           "HIVE_MIND_WORKER_MAX_JOBS": "1"}
    workers = [spawn(["worker"], env, tmp_path / f"worker-{i}.log") for i in range(WORKERS)]
    a_ids = [j.op_id for j in backlog]
    try:
        async def some_done() -> bool:
            return len(await started(redis, a_ids)) >= 4

        await eventually(some_done, 60, "the workers to work through the backlog")
        other = [job("workspace:other", f"b{k}", 8) for k in range(3)]
        live = job("workspace:live", "live-save", 1, "interactive")
        sent_at = time.time()
        await queue.send("workspace:other", other)
        await queue.send("workspace:live", [live])
        scores = dict(await redis.zrange(COGNIFY_QUEUE, 0, -1, withscores=True))
        assert band_of(scores[b"live-save"]) == "interactive"
        assert {band_of(v) for k, v in scores.items() if k != b"live-save"} == {"bulk"}
        every = a_ids + [j.op_id for j in other] + ["live-save"]

        async def all_done() -> bool:
            return len(await started(redis, every)) == len(every)

        await eventually(all_done, 120, "every job to finish")
    finally:
        for proc in workers:
            stop(proc)
    starts = await started(redis, every)
    live_start = starts["live-save"]
    # bulk jobs started after the save was queued but before it: at most one per worker (a
    # poll already under way); without the fair queue, the rest of the backlog (~30 jobs)
    overtaking = [j for j in a_ids if sent_at <= starts[j] < live_start]
    assert len(overtaking) <= WORKERS, overtaking
    # the second bulk mind took turns with the first instead of waiting for its backlog
    later_a = sorted(starts[j] for j in a_ids if starts[j] >= sent_at)
    assert len(later_a) >= 20
    assert max(starts[j.op_id] for j in other) < later_a[6], (starts, sent_at)
