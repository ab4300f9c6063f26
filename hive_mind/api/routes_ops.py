"""Imports, maintenance and status: ``/v1/harvest``, ``/v1/ingest``, ``/v1/maintenance``,
``/v1/cleanup``, ``/v1/stats``, ``/v1/status``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import File, Form, Path, Query, UploadFile

from hive_mind.api.deps import Facade, ServerReads, WorkspaceQuery
from hive_mind.api.models import (
    ERROR_RESPONSES,
    QUOTA_RESPONSES,
    CleanupEntitiesRequest,
    CleanupFramesRequest,
    HarvestRequest,
    IngestRequest,
    MaintenanceRequest,
)
from hive_mind.api.shaped import shaped_router
from hive_mind.api.uploads import temp_input
from hive_mind.limits import IntervalHours, Tags
from hive_mind.server_reads import ingest as client_ingest
from hive_mind.server_reads import refuse
from hive_mind.shapes import (
    HarvestReport,
    IngestReport,
    JsonObject,
    MaintenanceRun,
    MindStats,
    StatusReport,
)
from mind.errors import ValidationError
from vocabulary.enums import HarvestChoice, Importance, IngestType, MaintenanceKind

router = shaped_router(prefix="/v1", responses=ERROR_RESPONSES)


@router.post("/harvest", tags=["harvest"], responses=QUOTA_RESPONSES,
             summary="Import an export: a path on the server's disk, or the data inline")
async def harvest(body: HarvestRequest, hm: Facade, server_reads: ServerReads
                  ) -> HarvestReport:
    if (body.path is None) == (body.data is None):
        raise ValidationError('provide either "path" (on the server) or "data" (inline)')
    if body.path is not None and not server_reads:
        raise refuse("URLs" if body.source == "url" else "paths on its disk")
    options: dict[str, Any] = {"workspace": body.workspace, "auto_sync": body.auto_sync,
                               "wait": body.wait}
    if body.path is not None:  # the one case auto-sync may read again: the client named it
        summary = await hm.run_harvest(body.source, body.path, label=body.label,
                                       rereadable=True,
                                       sync_interval_hours=body.sync_interval_hours, **options)
        return summary.as_dict()
    # inline data: a private temp copy shown under the label (display only, never re-read)
    async with temp_input(body.source, body.filename, data=body.data) as target:
        return await hm.harvest(
            body.source, str(target), sync_interval_hours=body.sync_interval_hours,
            label=body.label or f"inline:{body.filename or body.source}", **options)


@router.post("/harvest/upload", tags=["harvest"], responses=QUOTA_RESPONSES,
             summary="Import an uploaded export file (multipart/form-data)")
async def harvest_upload(
    hm: Facade, source: Annotated[HarvestChoice, Form()],
    file: Annotated[UploadFile, File(description="the export (a .zip for directories)")],
    workspace: Annotated[str | None, Form()] = None,
    auto_sync: Annotated[bool | None, Form()] = None,
    sync_interval_hours: Annotated[IntervalHours | None, Form()] = None,
    wait: Annotated[bool, Form()] = True,
    label: Annotated[str | None, Form(max_length=4096, description=(
        "display name of the import (default: upload:<name>); never read as a path, so an "
        "upload cannot be auto-synced"))] = None,
) -> HarvestReport:
    async with temp_input(source, file.filename, upload=file) as target:
        return await hm.harvest(
            source, str(target), workspace=workspace, auto_sync=auto_sync,
            sync_interval_hours=sync_interval_hours, wait=wait,
            label=label or f"upload:{file.filename or source}")


@router.get("/harvest/sources", tags=["harvest"], summary="Registered harvest sources")
async def harvest_sources(hm: Facade, workspace: WorkspaceQuery = None) -> JsonObject:
    sources = await hm.harvest_sources(workspace=workspace)
    return {"sources": sources, "count": len(sources)}


@router.post("/ingest", tags=["harvest"], responses=QUOTA_RESPONSES,
             summary="Ingest a path on the server, a URL, or raw text (markdown, text, pdf)")
async def ingest(body: IngestRequest, hm: Facade, server_reads: ServerReads) -> IngestReport:
    return await client_ingest(hm, body.content, body.type_hint, server_reads=server_reads,
                               importance=body.importance, tags=body.tags,
                               workspace=body.workspace, wait=body.wait)


@router.post("/ingest/upload", tags=["harvest"], responses=QUOTA_RESPONSES,
             summary="Ingest an uploaded document (multipart/form-data)")
async def ingest_upload(
    hm: Facade, file: Annotated[UploadFile, File()],
    type_hint: Annotated[IngestType, Form()] = "auto",
    importance: Annotated[Importance, Form()] = "normal",
    tags: Annotated[Tags | None, Form()] = None,
    workspace: Annotated[str | None, Form()] = None,
    wait: Annotated[bool, Form()] = True,
) -> IngestReport:
    async with temp_input(type_hint, file.filename, upload=file) as target:
        summary = await hm.run_ingest(str(target), type_hint=type_hint, importance=importance,
                                      tags=tags or [], workspace=workspace, wait=wait,
                                      label=f"upload:{file.filename or 'document'}")
    return summary.as_dict()


@router.post("/maintenance/{kind}", tags=["maintenance"],
             summary="compact, reconcile, reembed, dedupe or sync one mind (or all)")
async def maintenance(kind: Annotated[MaintenanceKind, Path()], hm: Facade,
                      body: MaintenanceRequest | None = None) -> MaintenanceRun:
    body = body or MaintenanceRequest()
    return await hm.maintenance(kind, workspace=body.workspace, all_minds=body.all)


@router.post("/cleanup/frames", tags=["maintenance"],
             summary="compact, reconcile, wipe imported frames or wipe every frame")
async def cleanup_frames(body: CleanupFramesRequest, hm: Facade) -> JsonObject:
    return await hm.cleanup_frames(
        body.mode, workspace=body.workspace, max_temp_age_days=body.max_temp_age_days,
        max_deprecated_age_days=body.max_deprecated_age_days)


@router.post("/cleanup/entities", tags=["maintenance"],
             summary="audit, remove noise, dedup, retire orphans or wipe entities")
async def cleanup_entities(body: CleanupEntitiesRequest, hm: Facade) -> JsonObject:
    return await hm.cleanup_entities(body.mode, workspace=body.workspace)


@router.get("/stats", tags=["status"], summary="Counts of one mind")
async def stats(hm: Facade, workspace: WorkspaceQuery = None) -> MindStats:
    return await hm.stats(workspace=workspace)


@router.get("/status", tags=["status"],
            summary="Embedder, queue depth, per-mind index lag, configuration (secrets masked)")
async def status(hm: Facade, probe: Annotated[bool, Query(
        description="load the embedder to report its real state (slow for local models)")]
                 = False) -> StatusReport:
    return await hm.status(probe=probe)
