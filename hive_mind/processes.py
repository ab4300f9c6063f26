"""Entry points of the long-running processes: the cognify worker and the mind host."""

from __future__ import annotations

import faulthandler
import logging
import signal
from typing import Any, Final

from hive_mind.settings import Settings
from mind.redact import RedactingFilter
from workers.arq_worker import make_worker
from workers.distributed import host_settings, worker_settings

# HTTP clients log every request URL at INFO (httpx: "HTTP Request: GET <url> ..."): a URL
# ingest's query token or user:password would land in the log.
QUIET_LOGGERS: Final = ("httpx", "httpcore")


def configure_logging(level: str = "INFO") -> None:
    """Log lines to stderr with URL credentials masked; ``kill -USR1 <pid>`` dumps every
    thread's stack (ops debugging)."""
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    signal.signal(signal.SIGUSR2, _dump_tasks)
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    mask_logged_urls()


def mask_logged_urls() -> None:
    """HTTP client loggers at WARNING, and every URL in a record masked
    (:class:`mind.redact.RedactingFilter`) on the HTTP client loggers and on the root handlers,
    whatever logger a record comes from. Idempotent."""
    for name in QUIET_LOGGERS:
        logger = logging.getLogger(name)
        logger.setLevel(max(logger.getEffectiveLevel(), logging.WARNING))
        _add_filter(logger)
    for handler in logging.getLogger().handlers:
        _add_filter(handler)


def _add_filter(target: logging.Filterer) -> None:
    if not any(isinstance(f, RedactingFilter) for f in target.filters):
        target.addFilter(RedactingFilter())


def _dump_tasks(signum: int, frame: object) -> None:
    """``kill -USR2 <pid>``: log every asyncio task with its stack."""
    import asyncio
    import io

    try:
        tasks = asyncio.all_tasks(asyncio.get_running_loop())
    except RuntimeError:
        return
    for task in tasks:
        out = io.StringIO()
        task.print_stack(file=out)
        logging.getLogger("hive_mind.tasks").warning("%s\n%s", task, out.getvalue())


def run_cognify_worker(settings: Settings, *, burst: bool = False) -> None:
    """Run a stateless embedding/cognify worker until stopped (or the queue is empty)."""
    cls = worker_settings(settings.queue_config(), settings.runtime_config(host=False))
    if settings.workers.metrics_port is not None:
        from hive_mind.server_reads import is_loopback
        from workers.metrics import serve_metrics

        if not is_loopback(settings.workers.metrics_host) and not settings.security.metrics_public:
            raise SystemExit(
                f"hive-mind worker: refusing to serve metrics on "
                f"{settings.workers.metrics_host}: the "
                "metrics port has no token; set HIVE_MIND_METRICS_PUBLIC=true to expose it on "
                "a trusted network, or keep HIVE_MIND_METRICS_HOST=127.0.0.1")
        port = serve_metrics(settings.workers.metrics_port, settings.workers.metrics_host)
        logging.getLogger(__name__).info("metrics on http://%s:%d/metrics",
                                         settings.workers.metrics_host, port)
    make_worker(cls, burst=burst).run()


def run_mind_host(settings: Settings, *, burst: bool = False) -> None:
    """Run the mind host's write-op consumer (the HTTP API joins it in ``serve``)."""
    holder: dict[str, Any] = {}
    cls = host_settings(
        settings.queue_config(), settings.runtime_config(),
        schedule=settings.schedule_config(), holder=holder,
    )
    try:
        make_worker(cls, burst=burst).run()
    except BaseException as exc:  # arq's shutdown itself failed: still release the minds
        logging.getLogger(__name__).error("mind host shutdown was not clean: %r", exc)
    finally:
        host = holder.get("host")
        if host is not None:
            host.abort()  # no-op after a clean close
