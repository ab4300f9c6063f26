"""The nightly maintenance schedule of embedded long-running processes (issue #13): real mind
files, real runtimes, and a virtual clock the test advances — the schedule fires once at its
time, two schedulers on one data dir run each job once, opt-outs and task subsets hold, and
`status` shows the next and the last runs."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from hive_mind.facade import HiveMind
from mind.embeddings.registry import EmbeddingConfig
from mind.mind import Mind
from mind.storage.db import Database
from queue_schemas.constants import host_queue
from tests.conftest import flushed_redis, redis_db_url
from tests.procs import ROOT, eventually, spawn, stop
from workers.claims import ClaimStore
from workers.dead_letters import DeadLetterFile
from workers.distributed import host_settings, maintenance_fanout
from workers.queue import QueueConfig
from workers.runtime import EmbeddedRuntime, RuntimeConfig
from workers.schedule import TASKS, DailyJob, ScheduleConfig, daily_jobs, next_run
from workers.scheduler import Scheduler, embedded_scheduler, in_process, schedule_status

START = datetime(2026, 3, 1, 2, 0, tzinfo=UTC)  # an hour before the default 03:17 slot
DAY1, DAY2 = date(2026, 3, 1), date(2026, 3, 2)


@pytest.mark.parametrize(("now", "expected"), [
    (datetime(2026, 3, 1, 2, 0, tzinfo=UTC), datetime(2026, 3, 1, 3, 17, tzinfo=UTC)),
    (datetime(2026, 3, 1, 3, 17, tzinfo=UTC), datetime(2026, 3, 2, 3, 17, tzinfo=UTC)),
    (datetime(2026, 3, 1, 3, 16, 59, 999, tzinfo=UTC), datetime(2026, 3, 1, 3, 17, tzinfo=UTC)),
    (datetime(2026, 12, 31, 23, 59, tzinfo=UTC), datetime(2027, 1, 1, 3, 17, tzinfo=UTC)),
    # another zone: the slot is in UTC (04:00 CET is 03:00 UTC)
    (datetime.fromisoformat("2026-03-01T04:00:00+01:00"), datetime(2026, 3, 1, 3, 17, tzinfo=UTC)),
])
def test_next_run(now: datetime, expected: datetime) -> None:
    assert next_run(now, 3, 17) == expected


def test_daily_jobs_order_skip_and_subset() -> None:
    minds = ["personal", "workspace:work", "workspace:private"]
    all_jobs = daily_jobs(minds, DAY1, ScheduleConfig())
    assert [j.job_id for j in all_jobs[0]] == [
        "compact:personal:2026-03-01", "reconcile:personal:2026-03-01",
        "harvest_sync:personal:2026-03-01"]
    subset = daily_jobs(minds, DAY1, ScheduleConfig(
        tasks=("reconcile",), skip_minds=frozenset({"workspace:private"})))
    assert [[(j.task, j.mind_id) for j in per] for per in subset] == [
        [("reconcile", "personal")], [("reconcile", "workspace:work")]]
    assert daily_jobs(minds, DAY1, ScheduleConfig(tasks=())) == []
    with pytest.raises(ValueError, match="unknown maintenance task"):
        ScheduleConfig(tasks=("vacuum",))
    assert DailyJob("compact", "personal", DAY1).op().op_id == "compact:personal:2026-03-01"  # type: ignore[union-attr]


# -- a virtual clock ----------------------------------------------------------------------------

class VirtualClock:
    """Simulated time for ``sleepers`` scheduler tasks. A sleep parks its task on a timer;
    time moves only in :meth:`advance_to`, and only while every task is parked (none is busy
    with real work), straight to the earliest timer, waking the tasks due then — until the
    next timer lies beyond the moment given. So when it returns, whatever was due has run."""

    def __init__(self, start: datetime, sleepers: int) -> None:
        self.now = start
        self.sleepers = sleepers
        self.timers: list[tuple[datetime, asyncio.Future[None]]] = []
        self.slept: list[float] = []

    def __call__(self) -> datetime:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        wake: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.timers.append((self.now + timedelta(seconds=seconds), wake))
        await wake

    async def advance_to(self, moment: datetime) -> None:
        while True:
            await settle(lambda: len(self.timers) == self.sleepers)  # all parked
            due = min(end for end, _ in self.timers)
            if due > moment:
                return
            self.now = max(self.now, due)
            for timer in [t for t in self.timers if t[0] <= self.now]:
                self.timers.remove(timer)
                timer[1].set_result(None)


async def settle(done: Callable[[], bool], limit: float = 60.0) -> None:
    """Yield to the scheduler tasks until ``done()`` (the limit only guards a hang)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    spins = 0
    while not done():
        assert loop.time() < deadline, "the schedulers did not settle"
        spins += 1
        await asyncio.sleep(0 if spins < 20 else 0.01)  # a woken task parks again at once


# -- fixtures -----------------------------------------------------------------------------------

@pytest.fixture
async def data(tmp_path: Path) -> Path:
    """Three minds (personal, workspace work, workspace private), a due auto-sync source on the
    personal mind whose file changed since its import."""
    data = tmp_path / "data"
    notes = tmp_path / "notes.md"
    notes.write_text("# Garden\n\nWater the tomatoes on Tuesdays.\n")
    async with await HiveMind.open(data_dir=data, embedding_provider="test") as hm:
        await hm.create_workspace("Work")
        await hm.create_workspace("Private")
        await hm.save("The Work mind holds launch notes", workspace="work", wait=True)
        await hm.harvest("markdown", notes, auto_sync=True, sync_interval_hours=1)
    await make_due(data)
    notes.write_text("# Garden\n\nWater the tomatoes on Tuesdays.\n\n## Roses\n\nPrune in Feb.\n")
    return data


async def make_due(data: Path) -> None:
    db = await Database.open(data / "personal.mind")
    await db.execute("UPDATE harvest_sources SET last_synced_at = '2020-01-01T00:00:00.000Z'")
    await db.close()


def runtime_on(data: Path) -> EmbeddedRuntime:
    return EmbeddedRuntime(RuntimeConfig(data_dir=data,
                                         embedding=EmbeddingConfig(provider="test")))


@pytest.fixture
async def runtimes(data: Path) -> AsyncIterator[list[EmbeddedRuntime]]:
    made = [runtime_on(data), runtime_on(data)]  # two processes' worth on one data dir
    yield made
    for runtime in made:
        await runtime.close()


async def applied(data: Path, mind_file: str, prefix: str) -> list[str]:
    async with await Mind.open(data / mind_file, readonly=True) as mind:
        rows = await mind.db.fetchall(
            "SELECT op_id FROM applied_ops WHERE op_id LIKE ? ORDER BY op_id", (prefix + "%",))
    return [str(r[0]) for r in rows]


async def harvest_runs(data: Path) -> int:
    async with await Mind.open(data / "personal.mind", readonly=True) as mind:
        return int(await mind.db.fetchval("SELECT COUNT(*) FROM harvest_runs"))


def counting(runtime: EmbeddedRuntime, calls: list[str]
             ) -> Callable[[DailyJob], Awaitable[dict[str, Any]]]:
    """The real in-process executor, noting each job it runs."""
    real = in_process(runtime)

    async def execute(job: DailyJob) -> dict[str, Any]:
        calls.append(job.job_id)
        return await real(job)

    return execute


def ready(runtime: EmbeddedRuntime) -> Callable[[], Awaitable[EmbeddedRuntime]]:
    async def runtime_of() -> EmbeddedRuntime:
        return runtime

    return runtime_of


WORK = "workspaces/work/workspace.mind"
PRIVATE = "workspaces/private/workspace.mind"


# -- the schedule --------------------------------------------------------------------------------

async def test_fires_once_at_its_time_and_again_the_next_day(
        data: Path, runtimes: list[EmbeddedRuntime]) -> None:
    clock = VirtualClock(START, sleepers=1)
    scheduler = embedded_scheduler(ready(runtimes[0]), ScheduleConfig(), data, clock=clock,
                                   sleep=clock.sleep)
    scheduler.start()
    try:
        await clock.advance_to(START)
        await clock.advance_to(datetime(2026, 3, 1, 3, 16, 59, tzinfo=UTC))
        assert await applied(data, "personal.mind", "compact:") == []  # not yet
        assert await harvest_runs(data) == 1

        await clock.advance_to(datetime(2026, 3, 1, 3, 17, tzinfo=UTC))  # the first mind
        assert await applied(data, "personal.mind", "compact:") == ["compact:personal:2026-03-01"]
        assert await applied(data, PRIVATE, "compact:") == []  # a second later, after a pause
        await clock.advance_to(datetime(2026, 3, 1, 3, 20, tzinfo=UTC))
        for mind_file in ("personal.mind", WORK, PRIVATE):
            assert await applied(data, mind_file, "compact:") == ["compact:" + mind_of(
                mind_file) + ":2026-03-01"]
            assert await applied(data, mind_file, "reconcile:") == ["reconcile:" + mind_of(
                mind_file) + ":2026-03-01"]
        assert await harvest_runs(data) == 2  # the due source was re-harvested, once
        async with await Mind.open(data / "personal.mind", readonly=True) as mind:
            assert any("Prune in Feb." in f.content for f in await mind.frames.get_recent(20))
        assert clock.slept.count(scheduler.config.pause_seconds) == 2  # minds one by one

        await clock.advance_to(datetime(2026, 3, 1, 23, 0, tzinfo=UTC))  # same day: nothing
        assert len(scheduler.runs) == 1
        await make_due(data)
        await clock.advance_to(datetime(2026, 3, 2, 3, 20, tzinfo=UTC))
        assert await applied(data, "personal.mind", "compact:") == [
            "compact:personal:2026-03-01", "compact:personal:2026-03-02"]
        synced = [r for r in ClaimStore(data).records(DAY2) if r["task"] == "harvest_sync"]
        assert [r["result"]["sources"] for r in synced if r["mind_id"] == "personal"] == [1]
        assert [r.day for r in scheduler.runs] == [DAY1, DAY2]
    finally:
        await scheduler.stop()

    status = schedule_status(ScheduleConfig(), data, now=datetime(2026, 3, 2, 12, 0, tzinfo=UTC))
    assert status["next_run"] == "2026-03-03T03:17:00Z"
    assert status["last_runs"]["compact"]["day"] == "2026-03-02"
    assert status["last_runs"]["compact"]["ok"] == 3


def mind_of(mind_file: str) -> str:
    return "personal" if mind_file == "personal.mind" else "workspace:" + mind_file.split("/")[1]


async def test_two_schedulers_on_one_data_dir_run_each_job_once(
        data: Path, runtimes: list[EmbeddedRuntime]) -> None:
    clock = VirtualClock(START, sleepers=2)
    calls: list[str] = []
    config = ScheduleConfig()
    schedulers = [Scheduler(config, ClaimStore(data), counting(runtime, calls),
                            runtime.list_minds, clock=clock, sleep=clock.sleep)
                  for runtime in runtimes]
    for scheduler in schedulers:
        scheduler.start()
    try:
        await clock.advance_to(datetime(2026, 3, 1, 3, 20, tzinfo=UTC))  # both fire
    finally:
        for scheduler in schedulers:
            await scheduler.stop()
    expected = sorted(j.job_id for per in daily_jobs(
        ["personal", "workspace:private", "workspace:work"], DAY1, config) for j in per)
    assert sorted(calls) == expected  # nine jobs, each run by one of the two
    assert sum(r.ran for s in schedulers for r in s.runs) == 9
    assert sum(r.skipped for s in schedulers for r in s.runs) == 9  # the other's claims
    assert await harvest_runs(data) == 2  # one re-harvest, not two
    records = list(ClaimStore(data).records(DAY1))
    assert len(records) == 9 and {r["status"] for r in records} == {"ok"}


async def test_opt_out_and_task_subset(data: Path, runtimes: list[EmbeddedRuntime]) -> None:
    clock = VirtualClock(START, sleepers=1)
    config = ScheduleConfig(tasks=("compact",), skip_minds=frozenset({"workspace:private"}))
    scheduler = embedded_scheduler(ready(runtimes[0]), config, data, clock=clock,
                                   sleep=clock.sleep)
    scheduler.start()
    try:
        await clock.advance_to(datetime(2026, 3, 1, 3, 20, tzinfo=UTC))
    finally:
        await scheduler.stop()
    assert await applied(data, "personal.mind", "compact:") == ["compact:personal:2026-03-01"]
    assert await applied(data, WORK, "compact:") == ["compact:workspace:work:2026-03-01"]
    assert await applied(data, PRIVATE, "compact:") == []  # opted out
    for mind_file in ("personal.mind", WORK):
        assert await applied(data, mind_file, "reconcile:") == []  # not a configured task
    assert await harvest_runs(data) == 1  # no re-harvest either
    assert {r["mind_id"] for r in ClaimStore(data).records(DAY1)} == {"personal",
                                                                      "workspace:work"}


async def test_a_failed_task_is_recorded_and_the_others_still_run(
        data: Path, runtimes: list[EmbeddedRuntime]) -> None:
    """A mind whose file cannot be read fails its jobs; the claim and a dead letter say so,
    and the other minds are maintained all the same."""
    (data / PRIVATE).write_bytes(b"this is not a SQLite database" * 100)
    for suffix in ("-wal", "-shm"):
        (data / (PRIVATE + suffix)).unlink(missing_ok=True)
    clock = VirtualClock(START, sleepers=1)
    scheduler = embedded_scheduler(ready(runtimes[0]), ScheduleConfig(tasks=("compact",)), data,
                                   clock=clock, sleep=clock.sleep)
    scheduler.start()
    try:
        await clock.advance_to(datetime(2026, 3, 1, 3, 20, tzinfo=UTC))
    finally:
        await scheduler.stop()
    assert scheduler.runs[0].failed == ["compact:workspace:private:2026-03-01"]
    assert await applied(data, WORK, "compact:") == ["compact:workspace:work:2026-03-01"]
    letters = DeadLetterFile(data).entries()
    assert [(e["kind"], e["mind_id"], e["day"]) for e in letters] == [
        ("compact", "workspace:private", "2026-03-01")]
    last = schedule_status(ScheduleConfig(), data)["last_runs"]["compact"]
    assert last["failed"] == 1 and last["failed_minds"] == ["workspace:private"]


async def test_the_distributed_cron_runs_the_same_schedule(data: Path) -> None:
    """The host's fan-out: the configured tasks of the minds not opted out, under the same
    per-day ids and claims, minds spread out by the pause; disabled, no cron at all."""
    redis_url = redis_db_url(12)
    async with flushed_redis(redis_url) as redis:
        config = ScheduleConfig(tasks=("compact", "harvest_sync"),
                                skip_minds=frozenset({"workspace:private"}))
        runtime = RuntimeConfig(data_dir=data, embedding=EmbeddingConfig(provider="test"))
        queue = QueueConfig(redis_url=redis_url, host_id="cron2")
        assert host_settings(queue, runtime, schedule=ScheduleConfig(enabled=False)
                             ).cron_jobs == []  # type: ignore[attr-defined]
        settings = host_settings(queue, runtime, schedule=config)
        ctx: dict[str, Any] = {"redis": redis}
        await settings.on_startup(ctx)  # type: ignore[attr-defined]
        try:
            assert (await maintenance_fanout(ctx))["enqueued"] == 4
            assert (await maintenance_fanout(ctx))["enqueued"] == 0  # a double fire
        finally:
            await settings.on_shutdown(ctx)  # type: ignore[attr-defined]
        today = datetime.now(UTC).date().isoformat()
        scores = {k.decode(): v for k, v in await redis.zrange(
            host_queue("cron2"), 0, -1, withscores=True)}
        assert sorted(scores) == sorted(f"{task}:{mind}:{today}" for task in config.tasks
                                        for mind in ("personal", "workspace:work"))
        assert scores[f"compact:workspace:work:{today}"] - scores[
            f"compact:personal:{today}"] >= 1000  # the second mind one pause (1 s) later
        assert {r["status"] for r in ClaimStore(data).records(date.fromisoformat(today))} == {
            "enqueued"}


def test_status_json_shows_the_schedule(tmp_path: Path) -> None:
    env = {**os.environ, "HIVE_MIND_DATA_DIR": str(tmp_path / "data"),
           "HIVE_MIND_EMBEDDING_PROVIDER": "test", "HIVE_MIND_MAINTENANCE_HOUR": "4",
           "HIVE_MIND_MAINTENANCE_MINUTE": "5", "HIVE_MIND_MAINTENANCE_TASKS": "compact,reconcile",
           "HIVE_MIND_MAINTENANCE_SKIP_WORKSPACES": "private"}
    env.pop("HIVE_MIND_REDIS_URL", None)
    env.pop("HIVE_MIND_URL", None)
    out = subprocess.run([sys.executable, "-m", "hive_mind", "status", "--json", "--no-probe"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    schedule = json.loads(out.stdout)["schedule"]
    assert schedule["time_utc"] == "04:05" and schedule["tasks"] == ["compact", "reconcile"]
    assert schedule["skip"] == ["workspace:private"] and schedule["enabled"] is True
    assert schedule["next_run"].endswith("T04:05:00Z")
    assert schedule["last_runs"] == dict.fromkeys(TASKS)
    bad = subprocess.run([sys.executable, "-m", "hive_mind", "status", "--json", "--no-probe"],
                         cwd=ROOT, env={**env, "HIVE_MIND_MAINTENANCE_TASKS": "compact,vacuum"},
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "HIVE_MIND_MAINTENANCE_TASKS" in bad.stderr


async def test_embedded_serve_runs_the_schedule(tmp_path: Path) -> None:
    """`serve` without Redis starts the schedule with the process and stops it on SIGTERM."""
    log = tmp_path / "serve.log"
    proc = spawn(["--log-level", "INFO", "serve", "--port", "0"], schedule_env(tmp_path), log)
    try:
        async def listening() -> bool:
            text = log.read_text()
            return "nightly maintenance at 05:06 UTC" in text and "Uvicorn running" in text

        await eventually(listening, 60, "serve to listen with its schedule")
    finally:
        stop(proc)
    assert proc.returncode == 0, log.read_text()[-2000:]
    assert "Traceback" not in log.read_text()


def test_mcp_over_stdio_runs_the_schedule(tmp_path: Path) -> None:
    """`mcp` over stdio starts it too, and exits cleanly when its client closes stdin."""
    out = subprocess.run([sys.executable, "-m", "hive_mind", "--log-level", "INFO", "mcp"],
                         cwd=ROOT, env={**os.environ, **schedule_env(tmp_path)}, input="",
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "nightly maintenance at 05:06 UTC" in out.stderr and "Traceback" not in out.stderr
    client = subprocess.run([sys.executable, "-m", "hive_mind", "--log-level", "INFO",
                             "--url", "http://127.0.0.1:9", "mcp"], cwd=ROOT,
                            env={**os.environ, **schedule_env(tmp_path)}, input="",
                            capture_output=True, text=True, timeout=120)
    assert client.returncode == 0 and "nightly maintenance" not in client.stderr  # its server's


def schedule_env(tmp_path: Path) -> dict[str, str]:
    env = {"HIVE_MIND_DATA_DIR": str(tmp_path / "data"), "HIVE_MIND_EMBEDDING_PROVIDER": "test",
           "HIVE_MIND_MAINTENANCE_HOUR": "5", "HIVE_MIND_MAINTENANCE_MINUTE": "6",
           "HF_HUB_OFFLINE": "1", "HIVE_MIND_REDIS_URL": "", "HIVE_MIND_URL": ""}
    return env
