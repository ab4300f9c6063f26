"""What a harvest reports: its summary, its progress events, and an auto-sync's outcome.

Typed between the layers (driver → :mod:`hive_mind.harvest` → facade); turned into dicts only
at the interface edge by ``as_dict`` — the JSON shapes the CLI, HTTP API and MCP tools print:

- summary: ``source, path, mind, run_id, content_hash, status, items, kinds, frames_created,
  duplicates_skipped, resumed_from`` then ``error`` (a failed run), ``pending_index``,
  ``elapsed_seconds`` (a finished run: from the start until every frame is indexed, when the
  caller waits for that) and ``index_wait_seconds`` (the part of it after the last write, spent
  waiting for indexing), ``workspace`` (set by the facade) and ``detected`` (source ``auto``:
  why ``source`` was chosen);
- progress: ``{"phase": "parse", "items", "frames_written", "duplicates", "pending_index"}``
  while parsing (indexing runs beside it), ``{"phase": "index"|"done", "items",
  "frames_written", "pending_index"}`` afterwards;
- auto-sync: the run's summary, or ``{"source", "status": "skipped", "reason"}`` /
  ``{"source", "status": "failed", "error"}``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from typing_extensions import TypedDict

RunStatus = Literal["running", "completed", "unchanged", "failed"]
Phase = Literal["parse", "index", "done"]


def _without_none(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


class _Kinds(TypedDict, total=False):
    kinds: dict[str, int]


class _Finish(TypedDict, total=False):
    error: str
    pending_index: int
    elapsed_seconds: float
    index_wait_seconds: float
    workspace: str
    detected: str


class HarvestReport(_Kinds, _Finish):
    """:class:`HarvestSummary` as JSON: its fields, those that are None left out."""

    source: str
    path: str
    mind: str
    run_id: str
    content_hash: str
    status: RunStatus
    items: int
    frames_created: int
    duplicates_skipped: int
    resumed_from: int


@dataclass(frozen=True, slots=True)
class HarvestSummary:
    source: str
    path: str
    mind: str
    run_id: str
    content_hash: str
    status: RunStatus = "running"
    items: int = 0
    kinds: dict[str, int] | None = None
    """The items by kind (``conversation``, ``instruction``, ``memory`` …): ``items`` is their
    sum (and the resume cursor), this says how many were conversations."""
    frames_created: int = 0
    duplicates_skipped: int = 0
    resumed_from: int = 0
    error: str | None = None
    pending_index: int | None = None
    elapsed_seconds: float | None = None
    index_wait_seconds: float | None = None
    workspace: str | None = None
    detected: str | None = None

    def as_dict(self) -> HarvestReport:
        """The JSON shape (a field added here belongs in :class:`HarvestReport` too: a test
        compares the two)."""
        kinds: _Kinds = {} if self.kinds is None else {"kinds": dict(self.kinds)}
        finish: _Finish = {}
        if self.error is not None:
            finish["error"] = self.error
        if self.pending_index is not None:
            finish["pending_index"] = self.pending_index
        if self.elapsed_seconds is not None:
            finish["elapsed_seconds"] = self.elapsed_seconds
        if self.index_wait_seconds is not None:
            finish["index_wait_seconds"] = self.index_wait_seconds
        if self.workspace is not None:
            finish["workspace"] = self.workspace
        if self.detected is not None:
            finish["detected"] = self.detected
        return {"source": self.source, "path": self.path, "mind": self.mind,
                "run_id": self.run_id, "content_hash": self.content_hash,
                "status": self.status, "items": self.items, **kinds,
                "frames_created": self.frames_created,
                "duplicates_skipped": self.duplicates_skipped,
                "resumed_from": self.resumed_from, **finish}


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    phase: Phase
    items: int
    frames_written: int
    duplicates: int | None = None
    """While parsing: frames already stored (skipped)."""
    pending_index: int | None = None
    """Frames of the mind still waiting for their vectors (the written ones are indexed
    once it is 0)."""

    def as_dict(self) -> dict[str, Any]:
        return _without_none(asdict(self))


Progress = Callable[[ProgressEvent], None]


@dataclass(frozen=True, slots=True)
class SyncOutcome:
    """One auto-sync source of a maintenance ``sync``: re-harvested, skipped or failed."""

    source: str
    status: str
    summary: HarvestSummary | None = None
    reason: str | None = None
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        if self.summary is not None:
            return dict(self.summary.as_dict())
        return _without_none({"source": self.source, "status": self.status,
                              "reason": self.reason, "error": self.error})
