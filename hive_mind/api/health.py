"""``/healthz`` (the process answers) and ``/readyz`` (it can do its job: facade open, data dir
writable, Redis reachable in distributed mode). Both are exempt from auth and carry no data."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

router = APIRouter(tags=["health"])
REDIS_TIMEOUT = 2.0


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


async def _redis_ok(facade: Any) -> bool:
    redis = getattr(facade.runtime, "redis", None)
    if redis is None:
        return False
    try:
        return bool(await asyncio.wait_for(redis.ping(), REDIS_TIMEOUT))
    except Exception:  # any failure to answer is "not ready"
        return False


@router.get("/readyz", summary="Readiness: facade open, data dir writable, Redis reachable",
            responses={503: {"description": "not ready"}})
async def readyz(request: Request) -> JSONResponse:
    facade = getattr(request.app.state, "facade", None)
    checks: dict[str, bool] = {"facade": facade is not None}
    if facade is not None:
        checks["data_dir"] = await run_in_threadpool(_writable, facade.settings.data_dir)
        if not facade.settings.embedded:
            checks["redis"] = await _redis_ok(facade)
    ready = all(checks.values())
    return JSONResponse({"status": "ready" if ready else "not ready", "checks": checks},
                        status_code=200 if ready else 503)
