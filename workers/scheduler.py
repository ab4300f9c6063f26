"""The thin async shell of the nightly maintenance (:mod:`workers.schedule` says what runs
and when): :func:`run_day` claims and runs (or, for the cron, enqueues) a day's jobs mind after
mind; :class:`Scheduler` fires it every day at the slot in an embedded long-running process,
with an injectable clock and sleep so tests advance time; :func:`in_process` executes a job
through a runtime — the code the distributed host runs for the same jobs; :func:`run_scheduled`
is ``hive-mind maintenance nightly``; :func:`schedule_status` is what ``status`` shows.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import asdict, dataclass, field, is_dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Final

from actors.actor import Duplicate
from actors.host import list_minds
from workers.claims import ClaimStore
from workers.dead_letters import DeadLetterFile, error_text
from workers.protocol import Runtime
from workers.schedule import (
    TASKS,
    DailyJob,
    ScheduleConfig,
    daily_jobs,
    next_run,
    start_offsets,
)

log = logging.getLogger(__name__)

MAX_NAP_SECONDS: Final = 60.0  # the loop re-reads the clock at least this often (suspend, NTP)
SCALARS: Final = (str, int, float, bool)

Execute = Callable[[DailyJob], Awaitable[dict[str, Any]]]
OnFailure = Callable[[DailyJob, Exception], None]
OnProgress = Callable[[int, int], None]


@dataclass
class DayRun:
    day: date
    ran: int = 0
    skipped: int = 0  # claimed by another process
    failed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"day": self.day.isoformat(), "ran": self.ran, "skipped": self.skipped,
                "failed": self.failed}


async def run_day(day: date, minds: Iterable[str], config: ScheduleConfig, claims: ClaimStore,
                  execute: Execute, *, on_failure: OnFailure | None = None,
                  sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                  clock: Callable[[], datetime] | None = None,
                  on_progress: OnProgress | None = None, done: str = "ok") -> DayRun:
    """Run (or, for the cron, enqueue) every job of ``day`` this process claims, mind after
    mind, each mind at its start offset (:func:`workers.schedule.start_offsets`) and at least
    ``pause_seconds`` after the previous one ran here; ``done`` is the status a successful
    ``execute`` records, ``on_progress(minds done, minds)`` follows the run."""
    report = DayRun(day)
    claims.prune(day)
    per_mind = daily_jobs(minds, day, config)
    offsets = start_offsets([jobs[0].mind_id for jobs in per_mind], day, config)
    now = clock or (lambda: datetime.now(UTC))
    started = now()
    ran_before = False
    for index, jobs in enumerate(per_mind):
        wait = offsets[index] - (now() - started).total_seconds()
        if ran_before:
            wait = max(wait, config.pause_seconds)
        if wait > 0:
            await sleep(wait)
        ran_here = False
        for job in jobs:
            if not claims.claim(job.task, job.mind_id, day, job.job_id):
                report.skipped += 1
                continue
            ran_here = True
            try:
                detail = await execute(job)
            except Exception as exc:
                log.exception("maintenance %s failed", job.job_id)
                claims.finish(job.task, job.mind_id, day, "failed", {"error": error_text(exc)})
                report.failed.append(job.job_id)
                if on_failure is not None:
                    on_failure(job, exc)
                continue
            claims.finish(job.task, job.mind_id, day, done, {"result": detail})
            report.ran += 1
        ran_before = ran_here
        if on_progress is not None:
            on_progress(index + 1, len(per_mind))
    log.info("maintenance of %s: %d jobs run here, %d claimed elsewhere, %d failed", day,
             report.ran, report.skipped, len(report.failed))
    return report


# -- in process -------------------------------------------------------------------------------

def summarize(result: Any) -> dict[str, Any]:
    """What a claim records of an op result: its numbers, one level deep (a reconcile's
    report flattened, its re-queued frame ids as a count)."""
    if isinstance(result, Duplicate):
        return {"duplicate": True}  # the per-day op id was applied already
    data = asdict(result) if is_dataclass(result) and not isinstance(result, type) else result
    out: dict[str, Any] = {}
    for key, value in (data if isinstance(data, dict) else {}).items():
        if isinstance(value, dict):
            out.update({k: v for k, v in value.items() if isinstance(v, SCALARS)})
        elif isinstance(value, list | tuple):
            out[key] = len(value)
        elif isinstance(value, SCALARS):
            out[key] = value
    return out


def in_process(runtime: Runtime) -> Execute:
    """Execute a job through ``runtime`` (embedded or host): ops through the mind's actor (its
    commit hook queues what a reconcile re-queued), re-harvests through the harvest driver —
    the code the distributed host runs for the same jobs."""
    async def execute(job: DailyJob) -> dict[str, Any]:
        op = job.op()
        if op is not None:
            return summarize(await runtime.submit(job.mind_id, op, create=False))
        from workers.harvest import harvest_stale

        outcomes = await harvest_stale(runtime, job.mind_id)
        return {"sources": len(outcomes),
                "failed": sum(1 for o in outcomes if o.status == "failed")}

    return execute


async def run_scheduled(runtime: Runtime, config: ScheduleConfig, data_dir: Path, *,
                        day: date | None = None, on_progress: OnProgress | None = None
                        ) -> DayRun:
    """Today's jobs now, in this process (``hive-mind maintenance nightly``): what the
    schedule would run, minus what a process on this data dir ran (or runs) already."""
    return await run_day(day or datetime.now(UTC).date(), runtime.list_minds(), config,
                         ClaimStore(data_dir), in_process(runtime),
                         on_failure=record_failures(data_dir), on_progress=on_progress)


def record_failures(data_dir: Path) -> OnFailure:
    """A failed scheduled task becomes a dead letter of the data dir (``hive-mind jobs``
    lists it; ``jobs retry`` runs it again under the same per-day id)."""
    store = DeadLetterFile(data_dir)

    def record(job: DailyJob, exc: Exception) -> None:
        store.add({"job_id": job.job_id, "kind": job.task, "mind_id": job.mind_id,
                   "day": job.day.isoformat(), "error": error_text(exc), "tries": 1})

    return record


def record_applied(data_dir: Path, job_id: str, detail: dict[str, Any]) -> None:
    """A scheduled job the distributed host has now applied (the cron recorded ``enqueued``):
    its claim says ``ok``, so ``status`` counts it done. Any other id is ignored."""
    parsed = parse_job_id(job_id)
    if parsed is not None:
        task, mind_id, day = parsed
        claims = ClaimStore(data_dir)
        if claims.exists(task, mind_id, day):
            claims.finish(task, mind_id, day, "ok", {"result": detail})


def parse_job_id(job_id: str) -> tuple[str, str, date] | None:
    """``(task, mind id, day)`` of a scheduled job id ``task:mind:YYYY-MM-DD``, else None."""
    task, _, rest = job_id.partition(":")
    mind_id, _, day = rest.rpartition(":")
    if task not in TASKS or not mind_id:
        return None
    try:
        return task, mind_id, date.fromisoformat(day)
    except ValueError:
        return None


def embedded_scheduler(runtime_of: Callable[[], Awaitable[Runtime]], config: ScheduleConfig,
                       data_dir: Path, **loop: Any) -> Scheduler:
    """The schedule of an embedded long-running process (``serve``, ``mcp``): jobs run through
    the runtime ``runtime_of()`` returns (an ``mcp`` server opens its facade on first use, so
    a run may be that use), failures become dead letters; ``loop`` passes ``clock``/``sleep``
    (tests)."""
    async def execute(job: DailyJob) -> dict[str, Any]:
        return await in_process(await runtime_of())(job)

    return Scheduler(config, ClaimStore(data_dir), execute, lambda: list_minds(data_dir),
                     on_failure=record_failures(data_dir), **loop)


class Scheduler:
    """Fires :func:`run_day` at ``hour:minute`` UTC every day, until :meth:`stop`.

    The slot's own date names the jobs (a run that starts late, after a suspend, still uses
    the day it was due). A slot is never run for a time before the process started; a process
    that was asleep over its slot runs it on waking."""

    def __init__(self, config: ScheduleConfig, claims: ClaimStore, execute: Execute,
                 list_minds: Callable[[], list[str]], *, on_failure: OnFailure | None = None,
                 clock: Callable[[], datetime] | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.config = config
        self.claims = claims
        self._execute = execute
        self._list_minds = list_minds
        self._on_failure = on_failure
        self._clock = clock or (lambda: datetime.now(UTC))
        self._sleep = sleep
        self._task: asyncio.Task[None] | None = None
        self.due: datetime | None = None
        self.runs: list[DayRun] = []
        self.progress: tuple[int, int] | None = None  # (minds done, minds) of the run going on

    def _progress(self, done: int, total: int) -> None:
        self.progress = (done, total)
        if done == total or done % 100 == 0:
            log.info("nightly maintenance: %d of %d minds", done, total)

    async def run(self) -> None:
        cfg = self.config
        self.due = next_run(self._clock(), cfg.hour, cfg.minute)
        while True:
            wait = (self.due - self._clock()).total_seconds()
            if wait > 0:
                await self._sleep(min(wait, MAX_NAP_SECONDS))
                continue
            try:
                self.runs.append(await run_day(
                    self.due.date(), self._list_minds(), cfg, self.claims, self._execute,
                    on_failure=self._on_failure, sleep=self._sleep, clock=self._clock,
                    on_progress=self._progress))
            except Exception:
                log.exception("nightly maintenance of %s stopped", self.due.date())
            self.due = next_run(max(self._clock(), self.due), cfg.hour, cfg.minute)

    def start(self) -> None:
        if self._task is None and self.config.enabled:
            self._task = asyncio.ensure_future(self.run())
            log.info("nightly maintenance at %02d:%02d UTC: %s", self.config.hour,
                     self.config.minute, ", ".join(self.config.tasks) or "no tasks")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


def schedule_status(config: ScheduleConfig, data_dir: Path, *,
                    now: datetime | None = None, minds: Iterable[str] | None = None
                    ) -> dict[str, Any]:
    """The schedule as ``status`` shows it: when, what, next run and last run per task —
    with ``minds`` (the data dir's), each last run says how many minds it covers of how many
    are due (``expected``), so a run going on shows its progress."""
    moment = now or datetime.now(UTC)
    last = ClaimStore(data_dir).last_runs(TASKS)
    if minds is not None:
        due = sum(1 for m in minds if m not in config.skip_minds)
        for summary in last.values():
            if summary is not None:
                summary["expected"] = due
    return {
        "enabled": config.enabled,
        "time_utc": f"{config.hour:02d}:{config.minute:02d}",
        "spread_minutes": config.spread_minutes,
        "tasks": list(config.tasks),
        "skip": sorted(config.skip_minds),
        "next_run": next_run(moment, config.hour, config.minute).strftime("%Y-%m-%dT%H:%M:%SZ")
        if config.enabled else None,
        "last_runs": last,
    }
