"""``/healthz`` (the process answers) and ``/readyz`` (it can do its job: facade open, data dir
writable, Redis reachable in distributed mode). Both are exempt from auth and carry no data.

``/readyz`` probes at most every :data:`PROBE_SECONDS`: its answer in between is the last
probe's, so callers without a token cannot make the server write to its data dir (the
writability probe creates and deletes a file) or ping Redis as often as they like."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

router = APIRouter(tags=["health"])
PROBE_SECONDS: Final = 5.0


@router.get("/healthz", summary="Liveness: the process is up")
async def healthz() -> dict[str, Any]:
    return {"status": "ok"}


def _writable(folder: Path) -> bool:
    try:
        fd, name = tempfile.mkstemp(prefix=".readyz-", dir=folder)
        os.close(fd)
        os.unlink(name)
        return True
    except OSError:
        return False


async def _probe(facade: Any) -> dict[str, bool]:
    checks: dict[str, bool] = {"facade": facade is not None}
    if facade is not None:
        if getattr(facade, "stores_minds", True):  # a sharded gateway holds no mind file
            checks["data_dir"] = await run_in_threadpool(_writable, facade.settings.data_dir)
        checks.update(await facade.readiness())  # distributed: Redis answers
    return checks


@router.get("/readyz", summary="Readiness: facade open, data dir writable, Redis reachable",
            responses={503: {"description": "not ready"}})
async def readyz(request: Request) -> JSONResponse:
    facade = getattr(request.app.state, "facade", None)
    last = getattr(request.app.state, "readiness", None)
    if facade is not None and last is not None and last[0] is facade \
            and time.monotonic() - last[1] < PROBE_SECONDS:
        checks = dict(last[2])
    else:
        checks = await _probe(facade)
        request.app.state.readiness = (facade, time.monotonic(), checks)
    ready = all(checks.values())
    return JSONResponse({"status": "ready" if ready else "not ready", "checks": checks},
                        status_code=200 if ready else 503)
