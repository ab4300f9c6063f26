"""Jobs and the nightly maintenance: ``/v1/jobs`` (what ``hive-mind jobs`` shows and does).

``GET /v1/jobs`` lists queued, running and failed jobs per mind; ``POST /v1/jobs/{id}/retry``
and ``DELETE /v1/jobs/{id}`` act on one dead letter, ``POST /v1/jobs/retry?all=true`` and
``DELETE /v1/jobs?all=true`` on every one (``all`` must be said: a bare ``DELETE /v1/jobs``
is refused). A dead-letter id is 32 lowercase hex digits, checked before any lookup (400
``invalid``). ``POST /v1/jobs/nightly`` runs today's scheduled maintenance now.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

from hive_mind.api.deps import Facade
from hive_mind.api.models import ERROR_RESPONSES
from hive_mind.api.shaped import shaped_router
from hive_mind.shapes import Dropped, JobsReport, JsonObject, Retried
from mind.errors import ValidationError

router = shaped_router(prefix="/v1/jobs", tags=["jobs"], responses=ERROR_RESPONSES)

DeadLetterId = Annotated[str, Path(max_length=64, description=(
    "a dead letter's id (32 lowercase hex digits, from GET /v1/jobs)"))]
AllQuery = Annotated[bool, Query(alias="all", description="every dead letter (must be true)")]


def _every(all_failed: bool) -> bool:
    if not all_failed:
        raise ValidationError("name a dead letter (/v1/jobs/{id}) or pass all=true")
    return True


@router.get("", summary="Queued, running and failed jobs per mind")
async def jobs(hm: Facade) -> JobsReport:
    return await hm.jobs()


@router.post("/retry", summary="Retry every dead letter (all=true)")
async def retry_all(hm: Facade, all_failed: AllQuery = False) -> Retried:
    return await hm.retry_jobs(all_failed=_every(all_failed))


@router.delete("", summary="Drop every dead letter (all=true)")
async def drop_all(hm: Facade, all_failed: AllQuery = False) -> Dropped:
    return await hm.drop_jobs(all_failed=_every(all_failed))


@router.post("/nightly", summary="Run today's scheduled maintenance now (once per day per mind)")
async def nightly(hm: Facade) -> JsonObject:
    return await hm.nightly_maintenance()


@router.post("/{dead_letter_id}/retry", summary="Retry one dead letter")
async def retry_one(dead_letter_id: DeadLetterId, hm: Facade) -> Retried:
    return await hm.retry_jobs(dead_letter_id)


@router.delete("/{dead_letter_id}", summary="Drop one dead letter")
async def drop_one(dead_letter_id: DeadLetterId, hm: Facade) -> Dropped:
    return await hm.drop_jobs(dead_letter_id)
