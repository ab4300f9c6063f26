"""``GET /metrics``: this process's Prometheus series (:mod:`workers.metrics`), sampled from the
facade's runtime at each scrape. Behind the bearer token like every route, unless
``HIVE_MIND_METRICS_PUBLIC`` exempts it (a scraper inside a trusted network)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from hive_mind.contract import HostFacade
from workers.metrics import sample_runtime

router = APIRouter(tags=["status"])


@router.get("/metrics", summary="Prometheus metrics of this process",
            response_class=Response)
async def metrics(request: Request) -> Response:
    facade: HostFacade | None = getattr(request.app.state, "facade", None)
    if facade is not None and facade.runtime is not None:  # a gateway has no runtime
        await sample_runtime(facade.runtime)
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
