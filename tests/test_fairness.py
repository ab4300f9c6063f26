"""Fair order of cognify work (workers/fairness.py): the fair clock, the arq score bands, the
priority executor of the encoder lanes and the extraction thread, and the embedded runner."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mind.priority_executor import PriorityExecutor, current_priority, work_priority
from workers.fairness import (
    BULK_BASE,
    FairClock,
    band_of,
    defer_by,
    order_key,
    score,
    tag_of,
)
from workers.runner import InProcessRunner


def test_minds_take_turns_frame_for_frame() -> None:
    clock = FairClock()
    a = clock.tags("workspace:a", [64] * 10, front=None)
    assert a == [64.0 * k for k in range(10)]
    # b arrives while a's backlog waits (a's first job at the front): b starts at the front
    b = clock.tags("workspace:b", [64, 64, 64], front=0.0)
    order = sorted([(t, "a") for t in a] + [(t, "b") for t in b])
    assert [m for _, m in order[:6]] == ["a", "b"] * 3
    assert max(b) < a[3]  # all of b's jobs before a's fourth
    # a small job weighs less: c's 1-frame jobs are spaced by one frame
    assert clock.tags("workspace:c", [1, 1, 1], front=0.0) == [0.0, 1.0, 2.0]


def test_a_mind_queueing_more_continues_after_its_own_backlog() -> None:
    clock = FairClock()
    first = clock.tags("personal", [10, 10], front=None)
    more = clock.tags("personal", [10], front=first[0])
    assert more == [20.0]


def test_an_empty_queue_moves_the_clock_past_everything_served() -> None:
    clock = FairClock()
    clock.tags("workspace:a", [64] * 100, front=None)  # all served meanwhile
    b = clock.tags("workspace:b", [64], front=None)
    a = clock.tags("workspace:a", [64], front=None)
    assert b == [6400.0]  # a's old backlog, served, is no debt of b's
    assert a == [6464.0]  # nothing queued: everything tagged before has been served
    clock.advance(10.0)  # a front below the clock never moves it back
    assert clock.virtual == 6464.0


def test_order_key_puts_interactive_first_then_bulk_by_tag() -> None:
    keys = sorted([order_key("bulk", 5.0, 1), order_key("interactive", 0.0, 9),
                   order_key("bulk", 0.0, 2), order_key("interactive", 0.0, 3)])
    assert keys == [(0, 0.0, 3), (0, 0.0, 9), (1, 0.0, 2), (1, 5.0, 1)]


def test_score_bands_order_and_round_trip() -> None:
    now = int(time.time() * 1000)
    interactive = score("interactive", now_ms=now)
    bulk_low, bulk_high = score("bulk", 0.0), score("bulk", 1e9)
    assert interactive < bulk_low < bulk_high < 0 < now  # all in the past; deferred sort last
    assert [band_of(v) for v in (interactive, bulk_low, bulk_high, now)] == [
        "interactive", "bulk", "bulk", "scheduled"]
    assert tag_of(score("bulk", 123.5)) == 123.5
    assert abs(score("interactive", now_ms=now + 10**10) - interactive) == 10**10  # FIFO
    assert max(abs(interactive), abs(BULK_BASE)) < 2**53  # exact in a double
    shift = defer_by("interactive").total_seconds() * 1000
    assert shift == interactive - now


# -- the priority executor ---------------------------------------------------------------------

def test_priority_executor_runs_interactive_before_queued_bulk() -> None:
    ran: list[str] = []
    gate = threading.Event()
    threads: set[str] = set()

    def step(name: str) -> str:
        threads.add(threading.current_thread().name)
        if name == "bulk-0":
            gate.wait(5)
        ran.append(name)
        return name

    pool = PriorityExecutor("hm-test", initializer=lambda: ran.append("init"))
    with work_priority("bulk"):
        futures = [pool.submit(step, f"bulk-{i}") for i in range(4)]
    time.sleep(0.05)  # bulk-0 is running, bulk-1..3 wait
    urgent = pool.submit(step, "query")
    gate.set()
    assert urgent.result(5) == "query"
    assert [f.result(5) for f in futures] == [f"bulk-{i}" for i in range(4)]
    assert ran == ["init", "bulk-0", "query", "bulk-1", "bulk-2", "bulk-3"]
    assert threads == {"hm-test"}
    pool.shutdown()
    with pytest.raises(RuntimeError, match="shut down"):
        pool.submit(step, "late")


def test_priority_executor_errors_cancel_and_context() -> None:
    pool = PriorityExecutor("hm-test-2")
    gate = threading.Event()

    def boom() -> None:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        pool.submit(boom).result(5)
    blocker = pool.submit(gate.wait, 5)
    waiting = [pool.submit(time.sleep, 0) for _ in range(3)]
    time.sleep(0.05)
    gate.set()
    pool.shutdown(wait=True, cancel_futures=True)
    assert blocker.result(5) is True
    assert all(f.cancelled() for f in waiting)
    assert current_priority() == "interactive"
    with work_priority("bulk"):
        assert current_priority() == "bulk"
    assert current_priority() == "interactive"


async def test_priority_follows_awaits_into_started_tasks() -> None:
    async def inner() -> str:
        return current_priority()

    with work_priority("bulk"):
        seen = await asyncio.gather(inner(), asyncio.create_task(inner()))
    assert seen == ["bulk", "bulk"] and await inner() == "interactive"


# -- the embedded runner -----------------------------------------------------------------------

@dataclass
class Job:
    mind_id: str
    priority: str
    name: str
    items: list[int] = field(default_factory=lambda: [0] * 64)
    kind: str = "cognify"
    op_id: str = ""


async def test_runner_serves_interactive_first_and_lets_minds_take_turns() -> None:
    ran: list[str] = []
    gate = asyncio.Event()

    async def execute(job: Any) -> None:
        if job.name == "a0":
            await gate.wait()
        ran.append(job.name)

    runner = InProcessRunner(execute, concurrency=1)
    await runner.dispatch_many("workspace:a", [Job("workspace:a", "bulk", f"a{i}")
                                              for i in range(6)])
    await asyncio.sleep(0.01)  # a0 runs; a1..a5 wait
    await runner.dispatch_many("workspace:b", [Job("workspace:b", "bulk", f"b{i}")
                                              for i in range(2)])
    assert runner.status()["by_priority"] == {"interactive": 0, "bulk": 7}
    await runner.dispatch(Job("workspace:live", "interactive", "save"))
    await asyncio.sleep(0.01)
    assert ran == ["save"]  # in a reserved slot: the one regular slot is a0's
    gate.set()
    assert await runner.wait_idle(5)
    assert ran[:2] == ["save", "a0"]
    assert ran.index("b1") < ran.index("a3")  # b did not wait for a's backlog
    assert sorted(ran) == sorted(["save"] + [f"a{i}" for i in range(6)] + ["b0", "b1"])
    await runner.close()


async def test_reserved_slots_take_only_interactive_jobs() -> None:
    from workers.constants import RESERVED_INTERACTIVE

    gate = asyncio.Event()
    running: list[str] = []

    async def execute(job: Any) -> None:
        running.append(job.name)
        await gate.wait()

    runner = InProcessRunner(execute, concurrency=1)
    await runner.dispatch_many("workspace:a", [Job("workspace:a", "bulk", f"a{i}")
                                              for i in range(3)])
    await runner.dispatch_many("workspace:s", [Job("workspace:s", "interactive", f"s{i}")
                                              for i in range(RESERVED_INTERACTIVE + 2)])
    await asyncio.sleep(0.01)
    # one regular slot (a0) + the reserved ones (interactive only); the rest waits, saves first
    assert running == ["a0"] + [f"s{i}" for i in range(RESERVED_INTERACTIVE)]
    assert runner.in_progress == 1 + RESERVED_INTERACTIVE
    assert runner.status()["by_priority"] == {"interactive": 2, "bulk": 2}
    gate.set()
    assert await runner.wait_idle(5)
    assert running[1 + RESERVED_INTERACTIVE:][:2] == [f"s{RESERVED_INTERACTIVE}",
                                                      f"s{RESERVED_INTERACTIVE + 1}"]
    await runner.close()


async def test_a_retried_job_keeps_its_place() -> None:
    ran: list[str] = []
    failed: set[str] = set()

    async def execute(job: Any) -> None:
        ran.append(job.name)
        await asyncio.sleep(0.002)  # a's 200 jobs take ≥ 0.4 s; b0's retry is due after 0.05
        if job.name == "b0" and job.name not in failed:
            failed.add(job.name)
            raise RuntimeError("transient")

    runner = InProcessRunner(execute, concurrency=1, backoff=0.05)
    await runner.dispatch_many("workspace:b", [Job("workspace:b", "bulk", "b0")])
    await runner.dispatch_many("workspace:a", [Job("workspace:a", "bulk", f"a{i}", items=[0])
                                              for i in range(200)])
    assert await runner.wait_idle(10)
    assert ran.count("b0") == 2 and ran.index("b0", 1) < 100  # not sent behind a's backlog
    assert runner.dead_letters == []
    await runner.close()


# -- the embedded runtime, end to end ----------------------------------------------------------

def _import_batch(mind: str, start: int, n: int) -> Any:
    from queue_schemas import ops

    return ops.HarvestBatch(
        mind_id=mind, source="universal", conversation_ids=[f"c{start}"],
        frames=[ops.NewFrameOp(gop_id=f"c{start}", external_id=f"m{start + i}",
                               content=f"Message {start + i}: Dana moved the Orion launch to "
                                       f"week {i % 52} after the review with Priya.")
                for i in range(n)])


@pytest.mark.slow
async def test_a_save_during_another_minds_import_is_indexed_ahead_of_it(
    tmp_path: Path,
) -> None:
    """Embedded: a bulk import's 3,000 frames are queued in workspace A; a save into B waits
    only for itself (wait_indexed) and is indexed while A's backlog is still pending."""
    from mind.embeddings.registry import EmbeddingConfig
    from queue_schemas import ops
    from workers.runtime import EmbeddedRuntime, RuntimeConfig

    config = RuntimeConfig(data_dir=tmp_path, embedding=EmbeddingConfig(
        provider="test", test_dimensions=64), concurrency=2)
    async with EmbeddedRuntime(config) as rt:
        for start in range(0, 3000, 500):
            await rt.submit("workspace:bulk", _import_batch("workspace:bulk", start, 500))
        saved = await rt.submit("workspace:live", ops.SaveFrames(
            mind_id="workspace:live",
            frames=[ops.NewFrameOp(gop_id="s", content="Remember: the budget review is Friday")]))
        assert await rt.wait_indexed("workspace:live", [saved.frames[0].id], timeout=30)
        bulk = await rt.reader("workspace:bulk")
        left = await bulk.outbox.count()
        assert left > 1000, left  # the import is far from done; the save did not wait for it
        live = await rt.reader("workspace:live")
        assert (await live.vectors.counts())["frame_vectors"] == 1
        assert await rt.wait_indexed("workspace:bulk", timeout=120)
        assert await bulk.outbox.count() == 0
