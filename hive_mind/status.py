"""``hive-mind status``: embedder, queue and per-mind index state, plus the configuration.

``memory_indexes`` are the search indexes the process holds in memory for the minds it has
open (a served process's, through ``GET /v1/status``; a one-shot CLI process opens none): per
mind the vector index's rows, bytes and scan, and the keyword index's state (``building`` for
the ~45 s after a large mind's first recall, FTS5 answering meanwhile).

Everything is read through the process's runtime (:class:`workers.protocol.Runtime`): the
minds' counts from its catalog (:mod:`actors.catalog`: short looks at files that changed, no
actor opened), the embedder it loaded (probed only when asked), and
the numbers of its own job queue — the in-process runner's depth, running jobs and dead
letters in embedded mode, Redis's in distributed mode.

Nothing here shows a secret: the configuration is :meth:`Settings.redacted`, and error texts
(which may quote a provider or Redis URL) go through :func:`mind.redact.mask_text`."""

from __future__ import annotations

from typing import Any

from hive_mind.settings import Settings
from hive_mind.shapes import StatusReport
from mind.errors import HiveMindError
from mind.redact import mask_text, mask_url
from mind.retrieval.external import ExternalSourceError
from workers.host_runtime import HostRuntime
from workers.protocol import Runtime
from workers.scheduler import schedule_status


async def minds_status(runtime: Runtime) -> list[dict[str, Any]]:
    """Every mind's counts from the runtime's catalog: a short look at the files that changed
    since the last report, none at the others (a thousand workspaces in well under a second)."""
    ids = runtime.list_minds()
    counts = await runtime.census(ids)
    return [{"id": m, **counts[m].as_dict()} for m in ids if m in counts]


async def embedder_status(settings: Settings, runtime: Runtime, *, probe: bool
                          ) -> dict[str, Any]:
    """The runtime's own embedder (started now if it was not yet, when ``probe``)."""
    if not probe:
        cfg = settings.embedding_config()
        return {"provider": cfg.provider, "model": cfg.model, "backend": cfg.backend,
                "dimensions": None, "degraded": None, "probed": False}
    status = (await runtime.embedder_ready()).status()
    return {"provider": status["provider"], "model": status["model"],
            "backend": status.get("backend"),
            "dimensions": status["dimensions"], "degraded": status["degraded"],
            "last_error": mask_text(str(status["last_error"])) if status.get("last_error")
            else None, "probed": True}


async def quota_report(runtime: Runtime) -> dict[str, object] | None:
    """This month's embedding count of ``HIVE_MIND_USER_ID``, its tier and quota (-1: none);
    a counter that cannot be read (Redis down) is reported as the error."""
    try:
        return await runtime.quota_status()
    except HiveMindError as exc:
        return {"error": mask_text(str(exc))}


async def external_status(settings: Settings, *, probe: bool) -> dict[str, Any] | None:
    """The external knowledge source (null when none is configured): its name, URL (masked),
    timeout, and — only when probing — whether it answers a one-result search."""
    source = settings.external_source()
    if source is None:
        return None
    out: dict[str, Any] = {"name": source.name, "url": mask_url(source.base_url),
                           "timeout": source.timeout, "reachable": None, "error": None}
    if probe:
        async with source:
            try:
                await source.search("hive-mind status probe", 1)
                out["reachable"] = True
            except ExternalSourceError as exc:
                out["reachable"], out["error"] = False, mask_text(str(exc))
    return out


async def collect(settings: Settings, runtime: Runtime, *, probe: bool = True
                  ) -> StatusReport:
    minds = await minds_status(runtime)
    return {
        "mode": "embedded" if settings.embedded else "distributed",
        "embedder": await embedder_status(settings, runtime, probe=probe),
        "external": await external_status(settings, probe=probe),
        "queue": await runtime.queue_status(),
        "embedding_quota": await quota_report(runtime),
        "minds": minds,
        "memory_indexes": dict(runtime.memory_indexes()),
        "schedule": schedule_status(settings.schedule_config(), settings.data_dir,
                                    minds=[m["id"] for m in minds]),
        "config": settings.redacted(),
    }


async def unreachable_queue_report(settings: Settings, *, probe: bool = True
                                   ) -> StatusReport:
    """``status`` of a distributed data dir while Redis is unreachable (the facade cannot open):
    the minds and the embedder as usual, the queue as the error — ops scripts still get their
    JSON."""
    runtime = HostRuntime.unconnected(settings.runtime_config(), settings.queue_config())
    try:
        return await collect(settings, runtime, probe=probe)
    finally:
        await runtime.close()
