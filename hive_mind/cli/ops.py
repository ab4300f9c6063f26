"""Ops commands: ``status``, and the long-running processes ``serve``, ``worker``, ``mcp``."""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hive_mind.cli.common import (
    JsonOpt,
    configure_cli_logging,
    emit_json,
    kv_table,
    output,
    printable,
    run,
    state,
    table,
    with_facade,
)
from mind.errors import ConfigurationError, HiveMindError

if TYPE_CHECKING:
    from rich.console import Console

    from hive_mind.contract import MindFacade
    from hive_mind.settings import Settings

log = logging.getLogger("hive_mind.cli")


# -- status ---------------------------------------------------------------------------------

def status(
    ctx: typer.Context,
    no_probe: Annotated[bool, typer.Option(
        "--no-probe", metavar="",
        help="Do not load the embedder (faster; dimensions unknown).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Embedder, queue depth and dead letters, per-mind frames and index lag, and the
    effective configuration (secrets masked)."""
    async def report_of(hm: MindFacade) -> dict[str, Any]:  # this runtime's, or the server's
        return dict(await hm.status(probe=not no_probe))

    settings = state(ctx).settings()
    try:
        report = with_facade(ctx, report_of)
    except HiveMindError as exc:  # Redis is down: still the minds, and the queue's error
        from workers.queue import QueueUnavailableError  # arq: only when there was a queue

        if settings.url or not isinstance(exc, QueueUnavailableError):
            raise
        from hive_mind.status import unreachable_queue_report

        report = dict(run(unreachable_queue_report(settings, probe=not no_probe)))
    output(as_json, report, lambda c: render_status(c, report))


def quota_row(quota: dict[str, Any]) -> dict[str, Any]:
    """The quota as status shows it: ``used`` as "n of quota" (or "n, unlimited")."""
    if "error" in quota:
        return {"error": quota["error"]}
    limit = quota.get("quota")
    used = f"{quota.get('current')} of {limit}" if isinstance(limit, int) and limit >= 0 \
        else f"{quota.get('current')}, unlimited"
    return {"user_id": quota.get("user_id"), "tier": quota.get("tier") or "none (not gated)",
            "month": quota.get("month"), "used": used, "gated": quota.get("gated")}


def render_status(c: Console, report: dict[str, Any]) -> None:
    from rich.console import Group
    from rich.panel import Panel

    e, q = report.get("embedder", {}), report.get("queue", {})
    embedder = {k: e.get(k) for k in ("provider", "model", "backend", "dimensions", "degraded")}
    if e.get("last_error"):
        embedder["last_error"] = e["last_error"]
    if e.get("probed") is False:
        embedder["probed"] = "no (--no-probe)"
    queue = {k: q.get(k) for k in ("depth", "in_progress", "dead_letters")}
    for band, count in (q.get("by_priority") or {}).items():  # workers/fairness.py
        queue[f"queued {band}"] = count
    if q.get("resuming"):  # workers/backlog.py: backlogs being re-queued a piece at a time
        queue["backlog not queued yet"] = sum(q["resuming"].values())
    if q.get("error"):
        queue["error"] = q["error"]
    parts = [kv_table("Embedder", embedder), kv_table("Queue", queue)]
    if report.get("embedding_quota"):
        parts.append(kv_table("Embedding quota (this month)", quota_row(report["embedding_quota"])))
    if report.get("external"):
        parts.append(kv_table("External source", report["external"]))
    c.print(Panel(Group(*parts), title=f"hive-mind status ({report.get('mode')})",
                  title_align="left"))
    per_mind_dead = q.get("dead_letters_by_mind") or {}
    minds = report.get("minds", [])
    if minds:
        c.print(table("Minds", ["mind", "frames", "pending_index", "vectors", "entities",
                                "dead_letters"],
                      ([m.get("id"), m.get("frames"), m.get("pending_index"), m.get("vectors"),
                        m.get("entities"), per_mind_dead.get(m.get("id"), 0)] for m in minds)))
    else:
        c.print("No minds yet.")
    if report.get("memory_indexes"):
        render_memory_indexes(c, report["memory_indexes"])
    if report.get("schedule"):
        render_schedule(c, report["schedule"])
    for entry in q.get("recent_dead_letters") or []:
        c.print(printable(f"dead letter {entry.get('job_id')} ({entry.get('mind_id')}): "
                          f"{entry.get('error')}"), markup=False, style="red")
    c.print(kv_table("Configuration (secrets masked)", report.get("config", {})))


def render_memory_indexes(c: Console, indexes: dict[str, Any]) -> None:
    """The search indexes the process holds in memory, one row a mind."""
    def mib(value: Any) -> str:
        return "-" if value is None else f"{value / 2**20:,.1f}"

    rows = []
    for mind, found in indexes.items():
        v, k = found.get("vector") or {}, found.get("keyword") or {}
        rows.append([mind, v.get("frames", "-"), v.get("scan", "-"), mib(v.get("bytes")),
                     k.get("state", "-"), k.get("frames", "-"), mib(k.get("bytes"))])
    c.print(table("In-memory indexes (this process)", [
        "mind", "vector rows", "scan", "vector MiB", "keyword index", "keyword frames",
        "keyword MiB"], rows))


def progress_text(last: dict[str, Any]) -> str:
    """``412 of 1000: ok=410, failed=2`` (``of`` only when the report knows the minds due)."""
    counts = ", ".join(f"{k}={last[k]}" for k in ("ok", "enqueued", "running", "failed")
                       if k in last)
    expected = last.get("expected")
    return counts if expected is None else f"{last.get('minds')} of {expected}: {counts}"


def render_schedule(c: Console, schedule: dict[str, Any]) -> None:
    """The nightly maintenance: when, what, and the last run of each task."""
    when = (f"{schedule.get('time_utc')} UTC (minds spread over "
            f"{schedule.get('spread_minutes', 0):g} min), next {schedule.get('next_run')}"
            if schedule.get("enabled") else "disabled (HIVE_MIND_MAINTENANCE_ENABLED)")
    rows = []
    for task in schedule.get("tasks", []):
        last = (schedule.get("last_runs") or {}).get(task)
        rows.append([task, "-" if not last else last.get("day"),
                     "-" if not last else last.get("finished_at") or last.get("started_at"),
                     "-" if not last else progress_text(last)])
    c.print(table(f"Nightly maintenance: {when}; skipped: "
                  f"{', '.join(schedule.get('skip') or []) or 'none'}",
                  ["task", "last day", "last run", "minds"], rows))


# -- processes ------------------------------------------------------------------------------

def _process_logging(ctx: typer.Context, default: str) -> Settings:
    from hive_mind.processes import configure_logging

    level = state(ctx).log_level or default
    configure_logging(level)  # signal handlers for stack dumps (USR1 threads, USR2 tasks)
    configure_cli_logging(level)
    return state(ctx).settings()


def _call(result: Any) -> None:
    """Run an entry point that may be blocking or a coroutine."""
    if inspect.iscoroutine(result):
        asyncio.run(result)


def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535,
                                      help="Port to listen on (0: any free port).")] = 8765,
    burst: Annotated[bool, typer.Option(
        "--burst", metavar="",
        help="Only drain the host's write-op queue, then exit (no HTTP).")] = False,
    insecure_no_auth: Annotated[bool, typer.Option(
        "--insecure-no-auth", metavar="",
        help="Serve beyond loopback without HIVE_MIND_API_TOKEN: anyone who reaches the port "
             "reads and writes every mind (env HIVE_MIND_API_INSECURE_NO_AUTH).")] = False,
    gateway: Annotated[bool, typer.Option(
        "--gateway", metavar="",
        help="Sharded deployment: hold no minds, forward every request to the shard that "
             "owns its mind (HIVE_MIND_SHARDS; env HIVE_MIND_GATEWAY).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Run the mind host: owns the mind files, serves the HTTP API (OpenAPI at /docs) and MCP
    over HTTP, and applies write-ops from its Redis queue (distributed mode).

    Beyond loopback (--host 0.0.0.0, a LAN address, a host name) it refuses to start without
    HIVE_MIND_API_TOKEN. Requests must name an allowed Host (HIVE_MIND_API_ALLOWED_HOSTS) and
    come from no or an allowed browser Origin (HIVE_MIND_API_ALLOWED_ORIGINS)."""
    settings = _process_logging(ctx, "INFO")
    if insecure_no_auth:
        settings = settings.replace(api_insecure_no_auth=True)
    if gateway:
        settings = settings.replace(gateway=True)
    if settings.cluster.gateway and settings.shard_map() is None:
        raise ConfigurationError("serve --gateway needs HIVE_MIND_SHARDS (the shards it "
                                 "forwards to)")
    warning = None
    if not burst:
        from hive_mind.api.exposure import check_exposure

        warning = check_exposure(settings, host)  # before anything opens or binds
    if as_json:
        report: dict[str, Any] = {"host": host, "port": port, "mode": _mode(settings),
                                  "data_dir": str(settings.data_dir)}
        if warning is not None:
            report["warning"] = warning
        emit_json({"serve": report})
    from hive_mind.processes import run_mind_host

    if burst:
        run_mind_host(settings, burst=True)
        return
    try:
        from hive_mind.server import run_serve
    except ModuleNotFoundError as exc:
        if exc.name != "hive_mind.server":
            raise
        if not settings.redis_url:
            raise ConfigurationError("the HTTP API is not available in this build") from None
        log.warning("HTTP API not available in this build: running the write-op host only")
        run_mind_host(settings)
        return
    run_serve(settings, host, port)


def ui(
    ctx: typer.Context,
    port: Annotated[int, typer.Option("--port", min=0, max=65535,
                                      help="Port to listen on (0: any free port).")] = 8765,
    as_json: JsonOpt = False,
) -> None:
    """Open the web console: run `serve` on 127.0.0.1 and print the console's URL (sign in
    with HIVE_MIND_API_TOKEN when one is set). Stops with Ctrl-C."""
    settings = _process_logging(ctx, "WARNING")
    import asyncio

    from hive_mind.server import quiet_signals, serve

    def started(bound: int) -> None:
        url = f"http://127.0.0.1:{bound}/ui"
        if as_json:
            emit_json({"ui": {"url": url, "data_dir": str(settings.data_dir)}})
        else:
            typer.echo(f"hive-mind console: {url}", nl=True)

    with quiet_signals():
        asyncio.run(serve(settings, "127.0.0.1", port, on_started=started))


def worker(
    ctx: typer.Context,
    burst: Annotated[bool, typer.Option(
        "--burst", metavar="", help="Exit when the queue is empty.")] = False,
    check: Annotated[bool, typer.Option(
        "--check", metavar="", help="Only check that Redis is reachable and the embedder loads; "
                        "exit 0 (ok) or 1.")] = False,
    metrics_port: Annotated[int | None, typer.Option(
        "--metrics-port", metavar="PORT", min=0, max=65535,
        help="Expose Prometheus metrics on this port (0: any free one; interface: "
             "HIVE_MIND_METRICS_HOST, default 127.0.0.1).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a stateless embedding/cognify worker (distributed mode, needs Redis)."""
    if check:
        settings = state(ctx).settings()
        ok, report = run(worker_check(settings))
        if as_json:
            emit_json(report)
        if not ok:
            if not as_json:
                typer.echo(f"hive-mind: error: worker check failed: {report['message']}",
                           err=True)
            raise typer.Exit(1)
        if not as_json:
            typer.echo(f"hive-mind worker: ok: {report['message']}")
        return
    settings = _process_logging(ctx, "INFO")
    if metrics_port is not None:
        settings = settings.replace(metrics_port=metrics_port)
    if as_json:
        emit_json({"worker": {"host_id": settings.cluster.host_id, "mode": _mode(settings)}})
    from hive_mind.processes import run_cognify_worker

    run_cognify_worker(settings, burst=burst)


async def worker_check(settings: Settings) -> tuple[bool, dict[str, Any]]:
    """Redis reachable and the embedder loads (not degraded): what a supervisor probes."""
    from mind.embeddings.chain import EmbeddingProviderChain
    from mind.redact import mask_url
    from workers.queue import connect

    report: dict[str, Any] = {"ok": False, "redis": None, "embedder": None}
    if not settings.redis_url:
        report["message"] = "no Redis configured (set HIVE_MIND_REDIS_URL or --redis-url)"
        return False, report
    try:
        redis = await connect(settings.redis_url)
        try:
            await redis.ping()
        finally:
            await redis.aclose()
    except Exception as exc:
        report["message"] = str(exc) if isinstance(exc, HiveMindError) else \
            f"cannot reach Redis at {mask_url(settings.redis_url)}: {exc}"
        return False, report
    report["redis"] = mask_url(settings.redis_url)
    try:
        async with EmbeddingProviderChain(settings.embedding_config()) as chain:
            await chain.start()
            emb = chain.status()
    except Exception as exc:
        report["message"] = f"embedder failed to load: {exc}"
        return False, report
    report["embedder"] = {k: emb.get(k) for k in ("provider", "model", "backend", "dimensions",
                                                   "degraded")}
    if emb.get("degraded"):
        report["message"] = f"embedder is degraded: {emb.get('last_error') or 'no provider'}"
        return False, report
    report["ok"] = True
    report["message"] = (f"redis {report['redis']} reachable; embedder {emb.get('provider')} "
                         f"{emb.get('model') or ''} ({emb.get('dimensions')} dims) loaded")
    return True, report


def mcp(ctx: typer.Context) -> None:
    """Run the MCP server on stdio (stdout is the protocol, so there is no --json).

    When the client closes stdin it waits up to 30 s (cut short by SIGTERM/SIGINT) for the
    indexing its saves caused, then exits. With --url it is a client of a running
    `hive-mind serve`."""
    settings = _process_logging(ctx, "WARNING")
    try:
        from hive_mind.mcp_server import run_stdio
    except ModuleNotFoundError as exc:
        if exc.name != "hive_mind.mcp_server":
            raise
        raise ConfigurationError("the MCP server is not available in this build") from None
    run_stdio(settings, log_level=state(ctx).log_level or "WARNING")


def _mode(settings: Settings) -> str:
    return "client" if settings.url else "embedded" if settings.embedded else "distributed"


def register(root: typer.Typer) -> None:
    root.command("status")(status)
    root.command("serve")(serve)
    root.command("ui")(ui)
    root.command("worker")(worker)
    root.command("mcp")(mcp)
