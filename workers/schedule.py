"""The nightly maintenance schedule, what and when: pure, shared by every mode.

What runs: for each mind in turn, the configured tasks of :data:`TASKS` — ``compact``,
``reconcile`` (its outbox sweep re-queues lost index work) and ``harvest_sync`` (re-harvest
stale auto-sync sources) — each under its per-day id ``job_id(task, mind, day)``, which is
also the op id the mind records in ``applied_ops``. Workspaces in ``skip_minds`` are left out.
When: :func:`next_run`, ``hour:minute`` UTC; the minds start spread over ``spread_minutes``
after it (:func:`start_offsets`: evenly, each with a jitter inside its own slice, never two
closer than ``pause_seconds``), so a thousand workspaces' maintenance does not land at once.

Who runs it (:mod:`workers.scheduler`, the thin async shell around this):

* distributed: the host's arq cron (:func:`workers.distributed.maintenance_fanout`) enqueues
  the day's jobs, each mind's deferred to its start offset;
* embedded long-running processes (``serve`` without Redis, ``mcp`` over stdio): a
  ``Scheduler`` task executes them in process, one mind after another, each at its offset (and
  ``pause_seconds`` after the previous mind finished);
* CLI-only users: ``hive-mind maintenance nightly`` from a systemd timer or cron.

Each (task, mind, day) runs once however many processes share the data dir: a claim file
(:mod:`workers.claims`) decides who runs it, and the per-day op id makes a second apply a no-op.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Final, Literal, get_args

from queue_schemas import ops
from queue_schemas.constants import job_id

MaintenanceTask = Literal["compact", "reconcile", "harvest_sync"]  # in the order they run
TASKS: Final[tuple[MaintenanceTask, ...]] = get_args(MaintenanceTask)
PAUSE_SECONDS: Final = 1.0  # between two minds: interactive writes get the writer meanwhile


@dataclass(frozen=True)
class ScheduleConfig:
    enabled: bool = True
    hour: int = 3
    minute: int = 17
    tasks: tuple[str, ...] = TASKS
    skip_minds: frozenset[str] = frozenset()
    pause_seconds: float = PAUSE_SECONDS
    spread_minutes: float = 0.0  # settings default: 60 (HIVE_MIND_MAINTENANCE_SPREAD_MINUTES)

    def __post_init__(self) -> None:
        unknown = [t for t in self.tasks if t not in TASKS]
        if unknown:
            raise ValueError(f"unknown maintenance task(s) {unknown}: use {list(TASKS)}")


@dataclass(frozen=True)
class DailyJob:
    task: str
    mind_id: str
    day: date

    @property
    def job_id(self) -> str:
        return job_id(self.task, self.mind_id, self.day)

    def op(self) -> ops.Compact | ops.Reconcile | None:
        """The write-op of ``compact``/``reconcile`` (op id = the per-day id); None for
        ``harvest_sync``, which reads sources and writes through harvest batches."""
        if self.task == "compact":
            return ops.Compact(op_id=self.job_id, mind_id=self.mind_id)
        if self.task == "reconcile":
            return ops.Reconcile(op_id=self.job_id, mind_id=self.mind_id)
        return None




def jitter(day: date, mind_id: str) -> float:
    """A fraction in [0, 1), the same in every process for one mind and day."""
    digest = hashlib.blake2b(f"{day.isoformat()}:{mind_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def start_offsets(minds: Sequence[str], day: date, config: ScheduleConfig) -> list[float]:
    """Seconds after the slot at which each mind's jobs start: mind ``i`` at ``i × gap`` plus a
    jitter of up to ``gap − pause_seconds``, where ``gap`` spreads the minds over
    ``spread_minutes`` (and is never below ``pause_seconds``) — so two minds never start closer
    than ``pause_seconds``, and the plan is the same for every process on the data dir."""
    if not minds:
        return []
    gap = max(config.pause_seconds, config.spread_minutes * 60 / len(minds))
    slack = gap - config.pause_seconds
    return [i * gap + jitter(day, mind) * slack for i, mind in enumerate(minds)]


def next_run(now: datetime, hour: int, minute: int) -> datetime:
    """The first ``hour:minute:00`` UTC strictly after ``now`` (an aware datetime)."""
    now = now.astimezone(UTC)
    slot = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    return slot if slot > now else slot + timedelta(days=1)


def daily_jobs(minds: Iterable[str], day: date, config: ScheduleConfig) -> list[list[DailyJob]]:
    """The day's jobs, one list per mind (minds in ``skip_minds`` left out), tasks in the
    order of :data:`TASKS` (compact before the reconcile sweep, re-harvest last)."""
    tasks = [t for t in TASKS if t in config.tasks]
    return [[DailyJob(task, mind, day) for task in tasks]
            for mind in minds if mind not in config.skip_minds and tasks]
