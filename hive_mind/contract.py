"""The facade contract: what every hive-mind facade offers, as typed protocols.

Three classes implement it — :class:`hive_mind.facade.HiveMind` (the minds in this process),
:class:`hive_mind.remote.RemoteHiveMind` (a client of a running ``serve``) and
:class:`hive_mind.sharded.ShardedHiveMind` (each mind served by its owner) — and the CLI, the
MCP tools and the HTTP routes hold only these types, so mypy checks each call across the seam
(names, argument types, the :mod:`hive_mind.shapes` answers). ``hive_mind/conformance.py``
asserts that each class is one.

- :class:`MindFacade`: the operations (``HiveMind.open`` returns one).
- :class:`HostFacade`: what a serving process holds besides (``serve``'s routes, readiness,
  the warm-up and the typed harvest/ingest runs of the upload routes).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, Self, TypeVar, runtime_checkable

from hive_mind.settings import Settings
from hive_mind.shapes import (
    AwarenessAdded,
    AwarenessCleared,
    AwarenessShape,
    Dropped,
    EntityView,
    Forgotten,
    FrameShape,
    HarvestReport,
    IdentitySaved,
    IdentityView,
    IngestReport,
    JobsReport,
    JsonInput,
    JsonObject,
    MaintenanceRun,
    MindStats,
    RecallDetail,
    RecallResult,
    RelationShape,
    Retried,
    SavedEntity,
    SavedFrame,
    SessionState,
    StatusReport,
    WorkspaceDefault,
    WorkspaceDeleted,
    WorkspaceList,
    WorkspaceMeta,
    WorkspaceView,
)
from vocabulary.enums import (
    ExportFormat,
    ExportPart,
    FrameSource,
    Importance,
    RecallLanes,
    RecallProfile,
    Scope,
)

if TYPE_CHECKING:
    from hive_mind.export import Export
    from workers.harvest_summary import Progress
    from workers.protocol import Runtime


R_co = TypeVar("R_co", covariant=True)


class Summary(Protocol[R_co]):
    """A harvest's or an ingest's typed summary (or a forwarded one): its JSON shape."""

    def as_dict(self) -> R_co: ...


class MindFacade(Protocol):
    """Every operation on the minds (see :class:`hive_mind.facade.HiveMind` for each one's
    documentation). ``workspace=None`` is the personal mind."""

    @property
    def settings(self) -> Settings: ...

    @property
    def mode(self) -> str: ...

    async def close(self) -> None: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc: object) -> None: ...

    async def wait_idle(self, timeout: float | None = None) -> bool: ...

    # -- frames and recall --------------------------------------------------------------------

    async def save(
        self, content: str, *, importance: Importance = "normal",
        source: FrameSource = "agent_inferred", workspace: str | None = None,
        session: str | None = None, metadata: JsonInput | None = None, wait: bool = False,
        created_at: str | None = None, idempotency_key: str | None = None,
        updates: int | None = None, refs: list[int] | None = None,
    ) -> SavedFrame: ...

    async def get_frame(self, frame_id: int, *, workspace: str | None = None
                        ) -> FrameShape: ...

    async def session_state(self, session: str, *, workspace: str | None = None
                            ) -> SessionState: ...

    async def forget(self, frame_id: int, *, workspace: str | None = None) -> Forgotten: ...

    async def recall(
        self, query: str, *, limit: int = 10, scope: Scope | None = None,
        workspace: str | None = None, profile: RecallProfile = "balanced", since: str | None = None,
        until: str | None = None, catch_up: bool | None = None, lanes: RecallLanes = "hybrid",
        touch: bool = True, explain: bool = False, min_relevance: float | None = None,
    ) -> list[RecallResult]: ...

    async def recall_detail(
        self, query: str, *, limit: int = 10, scope: Scope | None = None,
        workspace: str | None = None, profile: RecallProfile = "balanced", since: str | None = None,
        until: str | None = None, catch_up: bool | None = None, lanes: RecallLanes = "hybrid",
        touch: bool = True, explain: bool = False, min_relevance: float | None = None,
    ) -> RecallDetail: ...

    async def catch_up(self, *, limit: int = 10, workspace: str | None = None
                       ) -> list[RecallResult]: ...

    # -- knowledge graph ----------------------------------------------------------------------

    async def search_entities(self, query: str, *, entity_type: str | None = None,
                              limit: int = 20, workspace: str | None = None
                              ) -> list[EntityView]: ...

    async def save_entity(self, entity_type: str, name: str, *,
                          properties: JsonInput | None = None,
                          workspace: str | None = None) -> SavedEntity: ...

    async def create_relation(self, source_id: int, target_id: int, relation_type: str, *,
                              confidence: float = 1.0, properties: JsonInput | None = None,
                              workspace: str | None = None) -> RelationShape: ...

    # -- identity and awareness ---------------------------------------------------------------

    async def get_identity(self, *, workspace: str | None = None) -> IdentityView: ...

    async def set_identity(
        self, *, workspace: str | None = None, name: str | None = None,
        role: str | None = None, department: str | None = None,
        personality: str | None = None, capabilities: str | None = None,
        system_prompt: str | None = None,
    ) -> IdentitySaved: ...

    async def get_awareness(self, *, category: str | None = None,
                            workspace: str | None = None) -> list[AwarenessShape]: ...

    async def set_awareness(self, category: str, content: str, *, priority: int = 0,
                            ttl_minutes: int | None = None, workspace: str | None = None,
                            idempotency_key: str | None = None) -> AwarenessAdded: ...

    async def clear_awareness(self, *, item_id: int | None = None, category: str | None = None,
                              workspace: str | None = None) -> AwarenessCleared: ...

    # -- workspaces ---------------------------------------------------------------------------

    async def list_workspaces(self) -> WorkspaceList: ...

    async def create_workspace(self, name: str, *, group: str = "general",
                               icon: str | None = None, model: str | None = None,
                               workspace_id: str | None = None) -> WorkspaceMeta: ...

    async def get_workspace(self, workspace: str) -> WorkspaceView: ...

    async def update_workspace(self, workspace: str, *, name: str | None = None,
                               group: str | None = None, icon: str | None = None,
                               model: str | None = None) -> WorkspaceMeta: ...

    async def delete_workspace(self, workspace: str) -> WorkspaceDeleted: ...

    async def set_default_workspace(self, workspace: str | None) -> WorkspaceDefault: ...

    async def stats(self, *, workspace: str | None = None) -> MindStats: ...

    # -- maintenance --------------------------------------------------------------------------

    async def maintenance(self, kind: str, *, workspace: str | None = None,
                          all_minds: bool = False) -> MaintenanceRun: ...

    async def cleanup_frames(self, mode: str, *, workspace: str | None = None,
                             max_temp_age_days: int = 30, max_deprecated_age_days: int = 90
                             ) -> JsonObject: ...

    async def cleanup_entities(self, mode: str, *, workspace: str | None = None
                               ) -> JsonObject: ...

    # -- harvest and ingest -------------------------------------------------------------------

    async def harvest(self, source: str, path: str | Path, *, workspace: str | None = None,
                      progress: Progress | None = None, auto_sync: bool | None = None,
                      sync_interval_hours: int | None = None, wait: bool = True,
                      label: str | None = None) -> HarvestReport: ...

    async def harvest_sources(self, *, workspace: str | None = None) -> list[JsonObject]: ...

    async def list_sessions(self, *, workspace: str | None = None, page: int = 1,
                            limit: int = 50) -> JsonObject: ...

    async def session_frames(self, session: str, *, workspace: str | None = None,
                             before: int | None = None, limit: int = 50) -> JsonObject: ...

    async def entity_graph(self, entity_id: int, *, workspace: str | None = None,
                           limit: int = 100) -> JsonObject: ...

    async def harvest_runs(self, *, workspace: str | None = None, limit: int = 50
                           ) -> list[JsonObject]: ...

    async def export_mind(self, *, workspace: str | None = None,
                          fmt: ExportFormat = "universal") -> Export: ...

    async def export_page(self, *, workspace: str | None = None, part: ExportPart = "frames",
                          cursor: str | None = None, limit: int = 100) -> JsonObject: ...

    async def ingest(self, content: str, *, type_hint: str = "auto", importance: str = "normal",
                     tags: list[str] | None = None, workspace: str | None = None,
                     wait: bool = True) -> IngestReport: ...

    # -- jobs and status ----------------------------------------------------------------------

    async def jobs(self) -> JobsReport: ...

    async def retry_jobs(self, dead_letter_id: str | None = None, *,
                         all_failed: bool = False) -> Retried: ...

    async def drop_jobs(self, dead_letter_id: str | None = None, *,
                        all_failed: bool = False) -> Dropped: ...

    async def nightly_maintenance(self, *, spread: bool = False,
                                  on_progress: Callable[[int, int], None] | None = None
                                  ) -> JsonObject: ...

    async def status(self, *, probe: bool = True) -> StatusReport: ...


@runtime_checkable
class HostFacade(MindFacade, Protocol):
    """A facade a ``serve`` or ``mcp`` process holds (local or sharded, never a client)."""

    @property
    def runtime(self) -> Runtime | None: ...

    @property
    def stores_minds(self) -> bool: ...

    async def readiness(self) -> dict[str, bool]: ...

    def warming_up(self) -> list[str]: ...

    def start_warm_up(self) -> asyncio.Future[None]: ...

    async def run_harvest(
        self, source: str, path: str | Path, *, workspace: str | None = None,
        progress: Progress | None = None, auto_sync: bool | None = None,
        sync_interval_hours: int | None = None, wait: bool = True, importance: str = "normal",
        tags: list[str] | None = None, label: str | None = None, rereadable: bool | None = None,
    ) -> Summary[HarvestReport]: ...

    async def run_ingest(self, content: str, *, type_hint: str = "auto",
                         importance: str = "normal", tags: list[str] | None = None,
                         workspace: str | None = None, wait: bool = True,
                         label: str | None = None) -> Summary[IngestReport]: ...
