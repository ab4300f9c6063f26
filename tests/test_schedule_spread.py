"""The nightly fan-out spread over a window (workers/schedule.py ``start_offsets``) and run
that way (``run_day`` with a clock): jittered, rate-limited, the same plan in every process,
its progress visible to the caller and in ``status``."""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from workers.claims import ClaimStore
from workers.schedule import DailyJob, ScheduleConfig, start_offsets
from workers.scheduler import parse_job_id, record_applied, run_day, schedule_status

DAY = date(2026, 3, 1)


def test_a_thousand_minds_spread_over_the_window_at_least_a_pause_apart() -> None:
    minds = [f"workspace:w-{k:04d}" for k in range(1000)]
    config = ScheduleConfig(spread_minutes=60, pause_seconds=1.0)
    offsets = start_offsets(minds, DAY, config)
    assert offsets == sorted(offsets) and offsets[0] >= 0 and offsets[-1] < 3600
    gaps = [b - a for a, b in itertools.pairwise(offsets)]
    assert min(gaps) >= 1.0 - 1e-9  # never two minds closer than the pause
    assert max(gaps) > 3.6 > min(gaps)  # jittered, not a fixed beat
    assert start_offsets(minds, DAY, config) == offsets  # every process plans the same
    assert start_offsets(minds, DAY + timedelta(days=1), config) != offsets


@pytest.mark.parametrize(("n", "spread", "pause", "expected"), [
    (3, 0, 1.0, [0.0, 1.0, 2.0]),  # no window: a pause apart, as before
    (0, 60, 1.0, []),
    (2, 1, 40.0, None),  # a window shorter than the pauses: the pauses win
])
def test_offsets_edge_cases(n: int, spread: float, pause: float,
                            expected: list[float] | None) -> None:
    minds = [f"workspace:m{k}" for k in range(n)]
    offsets = start_offsets(minds, DAY, ScheduleConfig(spread_minutes=spread,
                                                       pause_seconds=pause))
    if expected is not None:
        assert offsets == expected
    else:
        assert offsets[1] - offsets[0] >= pause


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 3, 17, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


async def test_run_day_starts_each_mind_at_its_offset_and_reports_progress(
        tmp_path: Path) -> None:
    clock = Clock()
    start = clock.now
    minds = [f"workspace:m{k}" for k in range(10)]
    config = ScheduleConfig(spread_minutes=10, pause_seconds=1.0, tasks=("compact",))
    started: dict[str, float] = {}
    progress: list[tuple[int, int]] = []

    async def execute(job: DailyJob) -> dict[str, Any]:
        started[job.mind_id] = (clock.now - start).total_seconds()
        clock.now += timedelta(seconds=5)  # the job itself takes a while
        return {}

    run = await run_day(DAY, minds, config, ClaimStore(tmp_path), execute, sleep=clock.sleep,
                        clock=clock, on_progress=lambda d, t: progress.append((d, t)))
    assert run.ran == 10
    for mind, offset in zip(minds, start_offsets(minds, DAY, config), strict=True):
        assert started[mind] == pytest.approx(offset) or started[mind] > offset
    assert max(started.values()) < 600  # the whole run inside its window
    assert progress == [(k, 10) for k in range(1, 11)]


async def test_status_shows_a_run_going_on(tmp_path: Path) -> None:
    claims = ClaimStore(tmp_path)
    for k in range(3):
        mind = f"workspace:m{k}"
        assert claims.claim("compact", mind, DAY, f"compact:{mind}:{DAY}")
        claims.finish("compact", mind, DAY, "ok" if k < 2 else "enqueued", {})
    minds = ["personal", *(f"workspace:m{k}" for k in range(4))]
    last = schedule_status(ScheduleConfig(skip_minds=frozenset({"personal"})), tmp_path,
                           minds=minds)["last_runs"]["compact"]
    assert (last["minds"], last["expected"], last["ok"], last["enqueued"]) == (3, 4, 2, 1)
    # the distributed host applies the enqueued one: its claim says ok
    record_applied(tmp_path, f"compact:workspace:m2:{DAY}", {"removed": 0})
    record_applied(tmp_path, f"compact:workspace:m3:{DAY}", {})  # never claimed: ignored
    record_applied(tmp_path, "save:personal:abc", {})  # not a scheduled job
    last = schedule_status(ScheduleConfig(), tmp_path, minds=minds)["last_runs"]["compact"]
    assert (last["minds"], last["ok"]) == (3, 3)


@pytest.mark.parametrize(("job_id", "parsed"), [
    ("compact:personal:2026-03-01", ("compact", "personal", DAY)),
    ("reconcile:workspace:acme:2026-03-01", ("reconcile", "workspace:acme", DAY)),
    ("harvest_sync:workspace:a-b:2026-03-01", ("harvest_sync", "workspace:a-b", DAY)),
    ("compact:personal:yesterday", None),
    ("dedupe:personal:2026-03-01", None),
    ("compact:2026-03-01", None),
    ("", None),
])
def test_parse_job_id(job_id: str, parsed: tuple[str, str, date] | None) -> None:
    assert parse_job_id(job_id) == parsed
