"""``/healthz`` (the process answers) and ``/readyz`` (it can do its job: facade open, its
warm-up done, data dir writable, Redis reachable in distributed mode). Both are exempt from
auth and carry no data; neither writes anything (a probe every few seconds from a load
balancer, or from anyone, must not touch the data dir)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from hive_mind.contract import HostFacade

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="Liveness: the process is up")
async def healthz() -> dict[str, Any]:
    return {"status": "ok"}


def _writable(folder: Path) -> bool:
    """The data dir exists and this process may create files in it (``access(2)``: also
    False on a read-only mount), checked without writing."""
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


@router.get("/readyz", summary="Readiness: facade open and warmed up, data dir writable, "
                               "Redis reachable",
            responses={503: {"description": "not ready; `pending` names the warm-up steps "
                                            "still running"}})
async def readyz(request: Request) -> JSONResponse:
    """``{"status", "checks", "pending"}``: each check's outcome, and the warm-up steps the
    server still waits for (``serve`` loads the model and the minds' indexes before it says
    ready: :mod:`hive_mind.warmup`)."""
    facade: HostFacade | None = getattr(request.app.state, "facade", None)
    checks: dict[str, bool] = {"facade": facade is not None}
    pending: list[str] = []
    if facade is not None:
        # a sharded gateway holds no mind file; a facade that does not warm up has no steps
        if getattr(facade, "stores_minds", True):
            checks["data_dir"] = _writable(facade.settings.data_dir)
        checks.update(await facade.readiness())  # warmed up; distributed: Redis answers
        warming = getattr(facade, "warming_up", None)
        pending = [] if warming is None else list(warming())
    ready = all(checks.values())
    return JSONResponse({"status": "ready" if ready else "not ready", "checks": checks,
                         "pending": pending}, status_code=200 if ready else 503)
