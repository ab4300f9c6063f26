"""The Imports page: upload an export (its format detected, or chosen) and follow it on a live
progress bar (htmx polls the progress part of the page until the import is done); the mind's
past harvest runs and sources; sync the auto-sync sources now.

An upload is written to a private temp file whose name is ours (only its extension is taken
from the client, :func:`hive_mind.api.uploads.safe_suffix`) and imported in the background
under ``upload:<name>``: a label, never a path anything re-reads. The imports this process
runs are kept in memory (the last :data:`KEPT`) to show their progress."""

from __future__ import annotations

import asyncio
import logging
import secrets
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Final

from fastapi import APIRouter, File, Form, Query, Request, UploadFile
from starlette.concurrency import run_in_threadpool
from starlette.responses import RedirectResponse, Response

from hive_mind.api.deps import Facade
from hive_mind.api.uploads import CHUNK, safe_suffix
from hive_mind.console.render import page
from hive_mind.console.sessions import PREFIX, check_csrf
from hive_mind.contract import HostFacade
from mind.errors import HiveMindError
from vocabulary.enums import HARVEST_CHOICES, HarvestChoice
from workers.harvest_summary import ProgressEvent

log = logging.getLogger(__name__)
router = APIRouter(include_in_schema=False)
KEPT: Final = 100
Workspace = Annotated[str, Query(max_length=64)]
JobId = Annotated[str, Query(pattern=r"^[A-Za-z0-9_-]{16,64}$")]


@dataclass
class ImportJob:
    """One upload being imported: what the progress bar shows."""

    label: str
    workspace: str
    phase: str = "upload"  # upload, parse, index, done, failed
    items: int = 0
    frames: int = 0
    duplicates: int = 0
    pending: int = 0
    pending_most: int = 0
    error: str | None = None
    summary: dict[str, object] = field(default_factory=dict)

    def update(self, event: ProgressEvent) -> None:
        self.phase, self.items, self.frames = event.phase, event.items, event.frames_written
        self.duplicates = event.duplicates or self.duplicates
        if event.pending_index is not None:
            self.pending = event.pending_index
            self.pending_most = max(self.pending_most, event.pending_index)

    @property
    def finished(self) -> bool:
        return self.phase in ("done", "failed")

    @property
    def fraction(self) -> float | None:
        """How far the import is (0-1), None while parsing (its length is not known)."""
        if self.phase == "done":
            return 1.0
        if self.phase == "index" and self.pending_most:
            return 0.5 + 0.5 * (self.pending_most - self.pending) / self.pending_most
        return None


class ImportJobs:
    """This process's console imports, by a random id."""

    def __init__(self) -> None:
        self.jobs: dict[str, ImportJob] = {}
        self.tasks: set[asyncio.Task[None]] = set()

    def add(self, job: ImportJob) -> str:
        while len(self.jobs) >= KEPT:
            self.jobs.pop(next(iter(self.jobs)))
        ident = secrets.token_urlsafe(16)
        self.jobs[ident] = job
        return ident


def _jobs(request: Request) -> ImportJobs:
    jobs = getattr(request.app.state, "console_imports", None)
    if jobs is None:
        jobs = request.app.state.console_imports = ImportJobs()
    assert isinstance(jobs, ImportJobs)
    return jobs


async def _run(hm: HostFacade, job: ImportJob, source: HarvestChoice, folder: Path,
               target: Path) -> None:
    try:
        summary = await hm.run_harvest(source, target, workspace=job.workspace or None,
                                       progress=job.update, label=job.label)
        job.summary = dict(summary.as_dict())
        failed = job.summary.get("status") == "failed"
        job.phase = "failed" if failed else "done"
        job.error = str(job.summary.get("error") or "") or None
    except HiveMindError as exc:
        job.phase, job.error = "failed", str(exc) or exc.code
    except Exception:
        log.exception("console import %s failed", job.label)
        job.phase, job.error = "failed", "internal error (see the server log)"
    finally:
        await run_in_threadpool(shutil.rmtree, folder, True)


@router.get(PREFIX + "/imports")
async def imports(request: Request, hm: Facade, workspace: Workspace = "") -> Response:
    runs = await hm.harvest_runs(workspace=workspace or None, limit=20)
    sources = await hm.harvest_sources(workspace=workspace or None)
    here = [(ident, job) for ident, job in reversed(_jobs(request).jobs.items())
            if job.workspace == workspace][:10]
    return page(request, "imports.html", active="imports", workspace=workspace, runs=runs,
                sources=sources, choices=HARVEST_CHOICES, uploads=here)


@router.post(PREFIX + "/imports")
async def upload(request: Request, hm: Facade, csrf: Annotated[str, Form(max_length=100)],
                 file: Annotated[UploadFile, File()],
                 source: Annotated[HarvestChoice, Form()] = "auto",
                 workspace: Annotated[str, Form(max_length=64)] = "") -> Response:
    check_csrf(request, csrf)
    await hm.harvest_runs(workspace=workspace or None, limit=1)  # an unknown mind: refused now
    folder = Path(tempfile.mkdtemp(prefix="hive-mind-console-"))
    target = folder / f"input{safe_suffix(file.filename, source)}"
    with target.open("wb") as out:
        while chunk := await file.read(CHUNK):
            await run_in_threadpool(out.write, chunk)
    job = ImportJob(label=f"upload:{file.filename or source}", workspace=workspace)
    jobs = _jobs(request)
    ident = jobs.add(job)
    task = asyncio.create_task(_run(hm, job, source, folder, target))
    jobs.tasks.add(task)
    task.add_done_callback(jobs.tasks.discard)
    return RedirectResponse(f"{request.scope.get('root_path', '')}{PREFIX}/imports/run?id="
                            f"{ident}", status_code=303)


@router.get(PREFIX + "/imports/run")
async def run(request: Request, id: JobId) -> Response:
    job = _jobs(request).jobs.get(id)
    return page(request, "import_run.html", active="imports", ident=id, job=job,
                fraction=job.fraction if job else None, status=200 if job else 404)


@router.get(PREFIX + "/imports/progress")
async def progress(request: Request, id: JobId) -> Response:
    job = _jobs(request).jobs.get(id)
    return page(request, "_progress.html", ident=id, job=job,
                fraction=job.fraction if job else None, status=200 if job else 404)


@router.post(PREFIX + "/imports/sync")
async def sync(request: Request, hm: Facade, csrf: Annotated[str, Form(max_length=100)],
               workspace: Annotated[str, Form(max_length=64)] = "") -> Response:
    check_csrf(request, csrf)
    result = await hm.maintenance("sync", workspace=workspace or None)
    return page(request, "synced.html", active="imports", workspace=workspace, result=result)
