"""Entry points of the long-running processes: the cognify worker and the mind host."""

from __future__ import annotations

import faulthandler
import logging
import signal

from arq.worker import run_worker

from hive_mind.settings import Settings
from workers.distributed import host_settings, worker_settings


def configure_logging(level: str = "INFO") -> None:
    """Log lines to stderr; ``kill -USR1 <pid>`` dumps every thread's stack (ops debugging)."""
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def run_cognify_worker(settings: Settings, *, burst: bool = False) -> None:
    """Run a stateless embedding/cognify worker until stopped (or the queue is empty)."""
    cls = worker_settings(settings.queue_config(), settings.runtime_config())
    run_worker(cls, burst=burst)  # type: ignore[arg-type]


def run_mind_host(settings: Settings, *, burst: bool = False) -> None:
    """Run the mind host's write-op consumer (the HTTP API joins it in ``serve``)."""
    cls = host_settings(
        settings.queue_config(), settings.runtime_config(),
        hour=settings.maintenance_hour, minute=settings.maintenance_minute,
    )
    run_worker(cls, burst=burst)  # type: ignore[arg-type]
