"""``hive-mind serve``: the HTTP API (uvicorn) and, in distributed mode, the host's write-op
consumer (arq) in one event loop, sharing one facade and therefore one runtime (one writer
per mind file in this process: the consumer's settings come from the runtime,
:meth:`workers.protocol.Runtime.consumer_settings`).

Start: open the facade → start the nightly maintenance (embedded mode; in distributed mode the
arq worker's cron runs it) → start the warm-up (the model, the minds' readers and in-memory
indexes: :mod:`hive_mind.warmup`; ``/readyz`` answers 503 and names what is pending until it
is done) → start the arq host worker (its startup sweeps every outbox, once, each backlog a
piece at a time in the background: the runtime then sends nothing again on a mind's first use)
→ serve HTTP. Stop (SIGTERM /
SIGINT, or the server failing): uvicorn finishes in-flight requests → the worker stops taking
jobs, lets running ones finish for ``WORKER_GRACE_SECONDS`` and cancels the rest (arq
re-delivers them; op ids make that harmless) → the schedule stops (a task cut short is run
again the next night) → the facade closes the minds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any

import uvicorn
from arq.worker import Worker

from hive_mind.api.connections import guarded_protocol
from hive_mind.contract import HostFacade
from hive_mind.schedule import start_schedule
from hive_mind.settings import Settings
from mind.errors import ConfigurationError
from workers.arq_worker import make_worker

log = logging.getLogger(__name__)
WORKER_GRACE_SECONDS = 10.0


class HostWorker:
    """The arq consumer of this host's queue, run as a task of the current event loop."""

    def __init__(self, settings_cls: type) -> None:
        self.worker: Worker = make_worker(settings_cls, handle_signals=False)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self.worker.async_run())
        self._task.add_done_callback(self._ended)

    @staticmethod
    def _ended(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("host worker stopped: %r", task.exception())

    async def stop(self, grace: float = WORKER_GRACE_SECONDS) -> None:
        worker = self.worker
        worker.allow_pick_jobs = False
        running = [t for t in worker.tasks.values() if not t.done()]
        if running:
            await asyncio.wait(running, timeout=grace)
        worker.handle_sig(signal.SIGUSR1)  # cancels what is left and the poll loop
        pending = [t for t in (self._task, *worker.tasks.values()) if t is not None]
        await asyncio.gather(*pending, return_exceptions=True)
        if worker.on_shutdown is not None and "host" in worker.ctx:
            await worker.on_shutdown(worker.ctx)
        pool = worker._pool  # arq's close() re-gathers cancelled tasks and raises; do its part
        if pool is not None:
            with contextlib.suppress(Exception):
                await pool.delete(worker.health_check_key)
                await pool.close(close_connection_pool=True)
            worker._pool = None


async def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8765, *,
                on_started: Callable[[int], None] | None = None) -> None:
    """Run until stopped; ``on_started(port)`` is called once the socket listens. Refuses
    (:class:`ConfigurationError`) a bind beyond loopback without a token before opening
    anything (:func:`~hive_mind.api.exposure.check_exposure`)."""
    from hive_mind.api import create_app
    from hive_mind.api.app import prepare_routes
    from hive_mind.api.exposure import check_exposure
    from hive_mind.facade import HiveMind

    check_exposure(settings, host)
    settings = settings.replace(url=None)  # the server is never a client
    facade = await HiveMind.open_host(settings)
    worker: HostWorker | None = None

    async def facade_of() -> HostFacade:
        return facade

    runtime = facade.runtime  # a gateway (sharded, issue #17) has none: it holds no mind
    # embedded: the nightly maintenance here
    schedule = None if runtime is None else start_schedule(settings, facade_of)
    warming = facade.start_warm_up()  # /readyz answers 503 until it is done
    try:
        consumer = None if runtime is None else runtime.consumer_settings(
            settings.schedule_config())
        if consumer is not None:
            worker = HostWorker(consumer)
            worker.start()
        app = create_app(settings, facade, bind_host=host)
        await prepare_routes(app)  # a route's first request would build its validators
        server = uvicorn.Server(uvicorn_config(app, settings, host, port))
        reporter = None if on_started is None else asyncio.ensure_future(
            _report_port(server, on_started))
        log.info("hive-mind starting on %s:%d (%s, data %s)", host, port, _role(settings),
                 "none" if runtime is None else settings.data_dir)
        await server.serve()
        if reporter is not None:
            reporter.cancel()
    finally:
        warming.cancel()
        await asyncio.gather(warming, return_exceptions=True)
        if schedule is not None:
            await schedule.stop()
        if worker is not None:
            await worker.stop()
        await facade.close()
        log.info("hive-mind server stopped")


def uvicorn_config(app: Any, settings: Settings, host: str, port: int,
                   **extra: Any) -> uvicorn.Config:
    """How ``serve`` runs the app: no server header, a graceful shutdown, and the connection
    bounds of :mod:`hive_mind.api.connections` (header deadline, connection cap)."""
    options: dict[str, Any] = {"log_config": None, "server_header": False,
                               "timeout_graceful_shutdown": 30, **extra}
    return uvicorn.Config(app, host=host, port=port, http=guarded_protocol(
        settings.http.header_timeout_seconds, settings.http.max_connections), **options)


def _role(settings: Settings) -> str:
    mode = "embedded" if settings.embedded else "distributed"
    if settings.shard_map() is None:
        return f"{mode} mode"
    if settings.cluster.gateway:
        return "sharded gateway"
    return f"{mode} mode, {settings.cluster.host_id}"


async def _report_port(server: uvicorn.Server, on_started: Callable[[int], None]) -> None:
    while not server.started:
        if server.should_exit:
            return
        await asyncio.sleep(0.02)
    on_started(bound_port(server))


def bound_port(server: uvicorn.Server) -> int:
    """The port a started server listens on (useful with ``port=0``)."""
    for listener in server.servers:
        for sock in listener.sockets:
            return int(sock.getsockname()[1])
    raise RuntimeError("server is not listening")


@contextlib.contextmanager
def quiet_signals() -> Iterator[None]:
    """uvicorn re-raises the signal that stopped it once ``serve()`` returns; with the default
    handlers that would kill the process before the facade closes. Absorb it instead."""
    def note(signum: int, frame: object) -> None:
        log.info("signal %s received while shutting down", signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, note) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run_serve(settings: Settings, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Blocking entry point of ``hive-mind serve``."""
    with quiet_signals():
        asyncio.run(serve(settings, host, port))


def main(argv: list[str] | None = None) -> int:
    """``python -m hive_mind.server [--host H] [--port P]``; settings from the environment."""
    import argparse

    from hive_mind.processes import configure_logging
    from hive_mind.settings import load_settings

    parser = argparse.ArgumentParser(prog="hive_mind.server", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--log-level", default="INFO")
    parser.add_argument("--insecure-no-auth", action="store_true",
                        help="serve beyond loopback without HIVE_MIND_API_TOKEN (dangerous)")
    args = parser.parse_args(argv)
    configure_logging(args.log_level)
    try:
        settings = load_settings()
        if args.insecure_no_auth:
            settings = settings.replace(api_insecure_no_auth=True)
        run_serve(settings, args.host, args.port)
    except ConfigurationError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
