"""Per-day claims of the nightly maintenance: which process runs ``task`` on ``mind`` on ``day``.

Every process that shares a data dir (an embedded ``serve``, any number of ``mcp`` stdio
servers, the CLI's ``maintenance nightly`` from a timer, a distributed host) may reach the
same slot. Before a scheduled job runs, its claim file is created with ``O_CREAT | O_EXCL``
under ``<data_dir>/schedule/<day>/``: the file system lets exactly one process create it, the
others skip the job. The claim then records the outcome, and ``status`` reads the newest
claims as "last run per task".

A process killed while it holds a claim leaves the job undone for that day (the claim says
``running``); the next night runs it again, and nothing is lost meanwhile: the outbox keeps
pending index work and a later reconcile re-queues it. The op ids are the same per-day ids,
recorded in the mind's ``applied_ops``, so even a job that ran without a claim (redelivery,
two hosts) is applied once.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Final

from mind.storage.private_files import PRIVATE_FILE, make_private_dir
from mind.timeutil import now_iso
from vocabulary.ids import validate_mind_id

SCHEDULE_DIR: Final = "schedule"
KEEP_DAYS: Final = 14  # claim folders older than this are removed
LAST_RUN_DAYS: Final = 8  # how far back status looks for a task's last run


def claim_name(task: str, mind_id: str) -> str:
    """``compact.personal.json``, ``reconcile.workspace_acme.json`` (slugs hold no ``_``)."""
    return f"{task}.{validate_mind_id(mind_id).replace(':', '_')}.json"


class ClaimStore:
    def __init__(self, data_dir: Path) -> None:
        self.root = data_dir / SCHEDULE_DIR

    def _path(self, task: str, mind_id: str, day: date) -> Path:
        return self.root / day.isoformat() / claim_name(task, mind_id)

    def claim(self, task: str, mind_id: str, day: date, job_id: str) -> bool:
        """True when this process now owns the job (nobody claimed it before)."""
        path = self._path(task, mind_id, day)
        make_private_dir(path.parent)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
        except FileExistsError:
            return False
        record = {"job_id": job_id, "task": task, "mind_id": mind_id, "day": day.isoformat(),
                  "status": "running", "started_at": now_iso(), "pid": os.getpid(),
                  "host": socket.gethostname()}
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(record, out)
        return True

    def exists(self, task: str, mind_id: str, day: date) -> bool:
        try:
            return self._path(task, mind_id, day).exists()
        except ValueError:  # not a valid mind id: no claim of ours
            return False

    def finish(self, task: str, mind_id: str, day: date, status: str,
               detail: dict[str, Any]) -> None:
        """Record the outcome (``ok``, ``failed``, ``enqueued``) of a job this process claimed."""
        path = self._path(task, mind_id, day)
        record = _read(path) or {}
        record.update(status=status, finished_at=now_iso(), **detail)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(record, out, default=str)
        os.replace(temp, path)

    def _days(self) -> list[tuple[date, Path]]:
        if not self.root.is_dir():
            return []
        out = []
        for child in self.root.iterdir():
            with contextlib.suppress(ValueError):
                out.append((date.fromisoformat(child.name), child))
        return sorted(out, reverse=True)

    def records(self, day: date) -> Iterator[dict[str, Any]]:
        folder = self.root / day.isoformat()
        if folder.is_dir():
            for path in sorted(folder.glob("*.json")):
                record = _read(path)
                if record is not None:
                    yield record

    def last_runs(self, tasks: tuple[str, ...]) -> dict[str, dict[str, Any] | None]:
        """Per task, a summary of the newest day it ran (``None``: not in the last week):
        each day's claims read once (a thousand minds × three tasks are 3,000 files)."""
        out: dict[str, dict[str, Any] | None] = dict.fromkeys(tasks)
        for day, _ in self._days()[:LAST_RUN_DAYS]:
            records = list(self.records(day))
            for task in tasks:
                if out[task] is None:
                    out[task] = _summary(day, [r for r in records if r.get("task") == task])
            if all(out.values()):
                break
        return out

    def prune(self, today: date, keep_days: int = KEEP_DAYS) -> None:
        oldest = today - timedelta(days=keep_days)
        for day, folder in self._days():
            if day < oldest:
                shutil.rmtree(folder, ignore_errors=True)


def _summary(day: date, records: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not records:
        return None
    statuses = [str(r.get("status")) for r in records]
    finished = [str(r["finished_at"]) for r in records if r.get("finished_at")]
    return {
        "day": day.isoformat(),
        "started_at": min(str(r.get("started_at", "")) for r in records),
        "finished_at": max(finished) if finished else None,
        "minds": len(records),
        **{s: statuses.count(s) for s in sorted(set(statuses))},
        "failed_minds": sorted(str(r.get("mind_id")) for r in records
                               if r.get("status") == "failed"),
    }


def _read(path: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # being written by its owner, or gone
    return record if isinstance(record, dict) else None
