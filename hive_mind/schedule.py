"""The nightly maintenance of an embedded long-running process (``hive-mind serve`` without
Redis, ``hive-mind mcp`` over stdio): the schedule of :mod:`workers.scheduler`, started with the
process and stopped before its facade closes. In distributed mode the host's arq cron runs
the same schedule; a client (``--url``) leaves it to its server; CLI-only users run
``hive-mind maintenance nightly`` from a systemd timer or cron (docs/operations.md)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from hive_mind.contract import HostFacade, MindFacade
from hive_mind.settings import Settings
from mind.errors import ConfigurationError
from workers.protocol import Runtime
from workers.scheduler import Scheduler, embedded_scheduler


def start_schedule(settings: Settings, facade_of: Callable[[], Awaitable[MindFacade]]
                   ) -> Scheduler | None:
    """A running schedule, or None when this process is not the one to run it (client or
    distributed mode, or ``HIVE_MIND_MAINTENANCE_ENABLED=false``)."""
    if settings.url or not settings.embedded or not settings.maintenance.enabled:
        return None

    async def runtime_of() -> Runtime:
        facade = await facade_of()
        runtime = facade.runtime if isinstance(facade, HostFacade) else None
        if runtime is None:
            raise ConfigurationError("the nightly maintenance runs where the minds are")
        return runtime

    scheduler = embedded_scheduler(runtime_of, settings.schedule_config(), settings.data_dir)
    scheduler.start()
    return scheduler
