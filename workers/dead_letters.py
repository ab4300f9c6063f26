"""Dead letters — jobs that failed for good — in both modes, with ids an operator can act on.

Every dead letter has an ``id`` of 32 lowercase hex digits (:func:`new_id`);
:func:`validate_id` checks one before it is used anywhere, so what a client sends never
becomes part of a Redis key or a file name unchecked.

* **Redis** (distributed): the entry (``id, job_id, op_id, function, queue, mind_id, error,
  tries, at``) is pushed on :data:`DEAD_LETTERS_KEY` (newest first, capped) and the job's
  payload is kept at ``hm:dead-letter:<id>`` for :data:`PAYLOAD_TTL_SECONDS`, so a retry
  re-enqueues the very payload under a fresh arq job id (the op id inside is unchanged:
  applying it twice is still a no-op). Entries written before ids existed are listed with
  ``id: null``; only ``drop --all`` removes them.
* **File** (embedded): every process on a data dir appends to
  ``<data_dir>/jobs/dead-letters.jsonl`` under an exclusive ``flock``, so the CLI, an embedded
  ``serve`` and ``mcp`` servers see the same list. An entry names the frames of a failed index
  job (they stay in the outbox) or the per-day job of a failed scheduled task; a retry rebuilds
  the job from that (:mod:`workers.jobs_admin`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from mind.errors import ValidationError
from mind.redact import mask_text
from mind.storage.private_files import PRIVATE_FILE, make_private_dir
from mind.timeutil import now_iso
from queue_schemas.constants import DEAD_LETTERS_KEY, KEY_PREFIX

if TYPE_CHECKING:  # a type only: embedded processes, which share the file, never import arq
    from arq.connections import ArqRedis

DEAD_LETTERS_KEPT: Final = 10_000
PAYLOAD_KEY_PREFIX: Final = KEY_PREFIX + "dead-letter:"
PAYLOAD_TTL_SECONDS: Final = 30 * 24 * 3600  # a dead letter can be retried for 30 days
ID_RE: Final = re.compile(r"[0-9a-f]{32}")
MAX_ERROR_CHARS: Final = 2000


def new_id() -> str:
    return uuid.uuid4().hex


def validate_id(value: object) -> str:
    if not isinstance(value, str) or ID_RE.fullmatch(value) is None:
        raise ValidationError("a dead letter id is 32 lowercase hex digits (see hive-mind jobs)")
    return value


def error_text(exc: BaseException) -> str:
    return mask_text(f"{type(exc).__name__}: {exc}")[:MAX_ERROR_CHARS]


# -- Redis ------------------------------------------------------------------------------------

def payload_key(dead_letter_id: str) -> str:
    return PAYLOAD_KEY_PREFIX + validate_id(dead_letter_id)


async def record_redis(redis: ArqRedis, *, job_id: str, function: str, queue: str | None,
                       payload: Any, error: str, tries: int, signature: object = None) -> str:
    """``signature``: the op's, kept so a retry carries it again (never made anew: a
    retried op that was refused unsigned is refused again)."""
    ident = new_id()
    mind_id = payload.get("mind_id") if isinstance(payload, dict) else None
    op_id = payload.get("op_id") if isinstance(payload, dict) else None
    entry = {"id": ident, "job_id": job_id, "op_id": op_id, "function": function,
             "queue": queue, "mind_id": mind_id, "error": error[:MAX_ERROR_CHARS],
             "tries": tries, "at": now_iso()}
    if isinstance(signature, str):
        entry["signature"] = signature
    if queue is not None:
        await redis.set(payload_key(ident), json.dumps(payload), ex=PAYLOAD_TTL_SECONDS)
    await redis.lpush(DEAD_LETTERS_KEY, json.dumps(entry))  # type: ignore[misc]
    await redis.ltrim(DEAD_LETTERS_KEY, 0, DEAD_LETTERS_KEPT - 1)  # type: ignore[misc]
    return ident


def _parse(raw: bytes | str) -> dict[str, Any]:
    try:
        entry = json.loads(raw)
    except ValueError:
        return {"id": None, "error": "unreadable entry"}
    return entry if isinstance(entry, dict) else {"id": None, "error": "unreadable entry"}


async def redis_entries(redis: ArqRedis, limit: int = -1) -> list[tuple[bytes, dict[str, Any]]]:
    """``(raw, entry)`` newest first; ``limit`` -1 = all."""
    raws = await redis.lrange(DEAD_LETTERS_KEY, 0, limit if limit < 0 else limit - 1)  # type: ignore[misc]
    return [(raw, _parse(raw)) for raw in raws]


async def redis_take(redis: ArqRedis, ids: list[str] | None
                     ) -> list[tuple[dict[str, Any], Any]]:
    """Remove the given dead letters (``None``: every one) and return ``(entry, payload)``
    of each (payload ``None`` when it expired or was never kept). Removal is ``LREM`` of the
    exact entry, so two operators retrying at once never both get the same one."""
    wanted = None if ids is None else {validate_id(i) for i in ids}
    taken: list[tuple[dict[str, Any], Any]] = []
    for raw, entry in await redis_entries(redis):
        if wanted is not None and entry.get("id") not in wanted:
            continue
        if not await redis.lrem(DEAD_LETTERS_KEY, 1, raw):  # type: ignore[misc,arg-type]
            continue  # someone else took it meanwhile
        payload = None
        ident = entry.get("id")
        if isinstance(ident, str) and ID_RE.fullmatch(ident):
            stored = await redis.getdel(payload_key(ident))
            payload = None if stored is None else json.loads(stored)
        taken.append((entry, payload))
    return taken


async def redis_restore(redis: ArqRedis, entry: dict[str, Any], payload: Any) -> None:
    """Put back a dead letter whose retry could not be enqueued."""
    if payload is not None and isinstance(entry.get("id"), str):
        await redis.set(payload_key(entry["id"]), json.dumps(payload), ex=PAYLOAD_TTL_SECONDS)
    await redis.lpush(DEAD_LETTERS_KEY, json.dumps(entry))  # type: ignore[misc]


# -- file (embedded) --------------------------------------------------------------------------

class DeadLetterFile:
    """The embedded mode's dead letters, shared by every process on one data dir."""

    def __init__(self, data_dir: Path) -> None:
        self.folder = data_dir / "jobs"
        self.path = self.folder / "dead-letters.jsonl"

    @contextlib.contextmanager
    def _locked(self, exclusive: bool) -> Iterator[None]:
        make_private_dir(self.folder)
        fd = os.open(self.folder / "dead-letters.lock", os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)  # releases the lock

    def _read(self) -> list[dict[str, Any]]:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                if isinstance(entry, dict):
                    out.append(entry)
        return out

    def _write(self, entries: list[dict[str, Any]]) -> None:
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.writelines(json.dumps(e, default=str) + "\n" for e in entries)
        os.replace(temp, self.path)

    def add(self, entry: dict[str, Any]) -> str:
        """Append one entry (oldest beyond :data:`DEAD_LETTERS_KEPT` dropped); returns its id."""
        entry = {"id": new_id(), "at": now_iso(), **entry}
        with self._locked(exclusive=True):
            entries = [*self._read(), entry]
            self._write(entries[-DEAD_LETTERS_KEPT:])
        return str(entry["id"])

    def entries(self) -> list[dict[str, Any]]:
        """Newest first."""
        if not self.path.exists():
            return []
        with self._locked(exclusive=False):
            return list(reversed(self._read()))

    def take(self, ids: list[str] | None) -> list[dict[str, Any]]:
        """Remove and return the given entries (``None``: all), newest first."""
        wanted = None if ids is None else {validate_id(i) for i in ids}
        if not self.path.exists():
            return []
        with self._locked(exclusive=True):
            entries = self._read()
            keep = [e for e in entries if wanted is not None and e.get("id") not in wanted]
            if len(keep) != len(entries):
                self._write(keep)
        return [e for e in reversed(entries) if wanted is None or e.get("id") in wanted]


def persist_to(data_dir: Path) -> Any:
    """The in-process runner's ``on_dead_letter``: the failed job's frames (and, for a
    re-embed, its target model) go to the data dir's file, enough to rebuild the job."""
    store = DeadLetterFile(data_dir)

    def record(letter: Any, job: Any) -> None:
        entry = {**letter.as_dict(), "error": mask_text(str(letter.error))[:MAX_ERROR_CHARS],
                 "frame_ids": [item.frame_id for item in getattr(job, "items", [])],
                 "priority": getattr(job, "priority", "bulk")}
        target = getattr(job, "fingerprint", None)
        if target is not None:
            entry["fingerprint"] = target.model_dump(mode="json")
        store.add(entry)

    return record
