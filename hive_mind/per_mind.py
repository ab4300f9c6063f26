"""The facades that hand each call naming one mind to another facade:
:class:`hive_mind.sharded.ShardedHiveMind` (to the mind's owner) and
:class:`hive_mind.scopes.ScopedFacade` (once the caller's token may touch it).

Each such method is written here once and declares its route: the mind it names (its
``workspace``; a workspace method's first argument) and whether it reads or writes it
(:data:`READ`, :data:`WRITE`). A subclass says what a route means in :meth:`PerMind._mind`;
mypy checks every forwarded call against :class:`hive_mind.contract.MindFacade`, so a renamed
method or argument fails the type check instead of routing nowhere.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

from hive_mind.contract import MindFacade
from hive_mind.shapes import (
    AwarenessAdded,
    AwarenessCleared,
    AwarenessShape,
    EntityView,
    Forgotten,
    FrameShape,
    HarvestReport,
    IdentitySaved,
    IdentityView,
    IngestReport,
    JsonInput,
    JsonObject,
    MindStats,
    RecallDetail,
    RecallResult,
    RelationShape,
    SavedEntity,
    SavedFrame,
    SessionState,
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

T = TypeVar("T")

READ: Final = False
WRITE: Final = True


class PerMind(ABC):
    """The calls that name one mind, each routed by :meth:`_mind`."""

    @abstractmethod
    async def _mind(self, write: bool, name: str, workspace: str | None,
                    call: Callable[[MindFacade], Awaitable[T]]) -> T:
        """``call`` on the facade that serves ``workspace``'s mind (None: the personal mind)
        for method ``name``, which reads it or (``write``) writes it."""

    # -- frames -----------------------------------------------------------------------------

    async def save(
        self, content: str, *, importance: Importance = "normal",
        source: FrameSource = "agent_inferred", workspace: str | None = None,
        session: str | None = None, metadata: JsonInput | None = None, wait: bool = False,
        created_at: str | None = None, idempotency_key: str | None = None,
        updates: int | None = None, refs: list[int] | None = None,
    ) -> SavedFrame:
        return await self._mind(WRITE, "save", workspace, lambda f: f.save(
            content, importance=importance, source=source, workspace=workspace,
            session=session, metadata=metadata, wait=wait, created_at=created_at,
            idempotency_key=idempotency_key, updates=updates, refs=refs))

    async def get_frame(self, frame_id: int, *, workspace: str | None = None) -> FrameShape:
        return await self._mind(READ, "get_frame", workspace,
            lambda f: f.get_frame(frame_id, workspace=workspace))

    async def session_state(self, session: str, *, workspace: str | None = None
                            ) -> SessionState:
        return await self._mind(READ, "session_state", workspace,
            lambda f: f.session_state(session, workspace=workspace))

    async def forget(self, frame_id: int, *, workspace: str | None = None) -> Forgotten:
        return await self._mind(WRITE, "forget", workspace,
            lambda f: f.forget(frame_id, workspace=workspace))

    # -- recall -----------------------------------------------------------------------------

    async def recall(
        self, query: str, *, limit: int = 10, scope: Scope | None = None,
        workspace: str | None = None, profile: RecallProfile = "balanced", since: str | None = None,
        until: str | None = None, catch_up: bool | None = None, lanes: RecallLanes = "hybrid",
        touch: bool = True, explain: bool = False, min_relevance: float | None = None,
    ) -> list[RecallResult]:
        detail = await self.recall_detail(
            query, limit=limit, scope=scope, workspace=workspace, profile=profile, since=since,
            until=until, catch_up=catch_up, lanes=lanes, touch=touch, explain=explain,
            min_relevance=min_relevance)
        return detail["results"]

    @abstractmethod
    async def recall_detail(
        self, query: str, *, limit: int = 10, scope: Scope | None = None,
        workspace: str | None = None, profile: RecallProfile = "balanced", since: str | None = None,
        until: str | None = None, catch_up: bool | None = None, lanes: RecallLanes = "hybrid",
        touch: bool = True, explain: bool = False, min_relevance: float | None = None,
    ) -> RecallDetail: ...

    async def catch_up(self, *, limit: int = 10, workspace: str | None = None
                       ) -> list[RecallResult]:
        return await self._mind(READ, "catch_up", workspace,
            lambda f: f.catch_up(limit=limit, workspace=workspace))

    # -- knowledge graph --------------------------------------------------------------------

    async def search_entities(self, query: str, *, entity_type: str | None = None,
                              limit: int = 20, workspace: str | None = None
                              ) -> list[EntityView]:
        return await self._mind(READ, "search_entities", workspace, lambda f: f.search_entities(
            query, entity_type=entity_type, limit=limit, workspace=workspace))

    async def save_entity(self, entity_type: str, name: str, *,
                          properties: JsonInput | None = None,
                          workspace: str | None = None) -> SavedEntity:
        return await self._mind(WRITE, "save_entity", workspace, lambda f: f.save_entity(
            entity_type, name, properties=properties, workspace=workspace))

    async def create_relation(self, source_id: int, target_id: int, relation_type: str, *,
                              confidence: float = 1.0, properties: JsonInput | None = None,
                              workspace: str | None = None) -> RelationShape:
        return await self._mind(WRITE, "create_relation", workspace, lambda f: f.create_relation(
            source_id, target_id, relation_type, confidence=confidence, properties=properties,
            workspace=workspace))

    # -- identity and awareness -------------------------------------------------------------

    async def get_identity(self, *, workspace: str | None = None) -> IdentityView:
        return await self._mind(READ, "get_identity", workspace,
            lambda f: f.get_identity(workspace=workspace))

    async def set_identity(
        self, *, workspace: str | None = None, name: str | None = None,
        role: str | None = None, department: str | None = None,
        personality: str | None = None, capabilities: str | None = None,
        system_prompt: str | None = None,
    ) -> IdentitySaved:
        return await self._mind(WRITE, "set_identity", workspace, lambda f: f.set_identity(
            workspace=workspace, name=name, role=role, department=department,
            personality=personality, capabilities=capabilities, system_prompt=system_prompt))

    async def get_awareness(self, *, category: str | None = None,
                            workspace: str | None = None) -> list[AwarenessShape]:
        return await self._mind(READ, "get_awareness", workspace, lambda f: f.get_awareness(
            category=category, workspace=workspace))

    async def set_awareness(self, category: str, content: str, *, priority: int = 0,
                            ttl_minutes: int | None = None, workspace: str | None = None,
                            idempotency_key: str | None = None) -> AwarenessAdded:
        return await self._mind(WRITE, "set_awareness", workspace, lambda f: f.set_awareness(
            category, content, priority=priority, ttl_minutes=ttl_minutes,
            workspace=workspace, idempotency_key=idempotency_key))

    async def clear_awareness(self, *, item_id: int | None = None, category: str | None = None,
                              workspace: str | None = None) -> AwarenessCleared:
        return await self._mind(WRITE, "clear_awareness", workspace, lambda f: f.clear_awareness(
            item_id=item_id, category=category, workspace=workspace))

    async def get_workspace(self, workspace: str) -> WorkspaceView:
        return await self._mind(READ, "get_workspace", workspace,
            lambda f: f.get_workspace(workspace))

    async def update_workspace(self, workspace: str, *, name: str | None = None,
                               group: str | None = None, icon: str | None = None,
                               model: str | None = None) -> WorkspaceMeta:
        return await self._mind(WRITE, "update_workspace", workspace, lambda f: f.update_workspace(
            workspace, name=name, group=group, icon=icon, model=model))

    async def stats(self, *, workspace: str | None = None) -> MindStats:
        return await self._mind(READ, "stats", workspace, lambda f: f.stats(workspace=workspace))

    async def cleanup_frames(self, mode: str, *, workspace: str | None = None,
                             max_temp_age_days: int = 30, max_deprecated_age_days: int = 90
                             ) -> JsonObject:
        return await self._mind(WRITE, "cleanup_frames", workspace, lambda f: f.cleanup_frames(
            mode, workspace=workspace, max_temp_age_days=max_temp_age_days,
            max_deprecated_age_days=max_deprecated_age_days))

    async def cleanup_entities(self, mode: str, *, workspace: str | None = None
                               ) -> JsonObject:
        return await self._mind(WRITE, "cleanup_entities", workspace, lambda f: f.cleanup_entities(
            mode, workspace=workspace))

    async def harvest(self, source: str, path: str | Path, *, workspace: str | None = None,
                      progress: Progress | None = None, auto_sync: bool | None = None,
                      sync_interval_hours: int | None = None, wait: bool = True,
                      label: str | None = None) -> HarvestReport:
        return await self._mind(WRITE, "harvest", workspace, lambda f: f.harvest(
            source, path, workspace=workspace, progress=progress, auto_sync=auto_sync,
            sync_interval_hours=sync_interval_hours, wait=wait, label=label))

    async def harvest_sources(self, *, workspace: str | None = None) -> list[JsonObject]:
        return await self._mind(READ, "harvest_sources", workspace,
            lambda f: f.harvest_sources(workspace=workspace))

    async def list_sessions(self, *, workspace: str | None = None, page: int = 1,
                            limit: int = 50) -> JsonObject:
        return await self._mind(READ, "list_sessions", workspace,
            lambda f: f.list_sessions(workspace=workspace, page=page, limit=limit))

    async def session_frames(self, session: str, *, workspace: str | None = None,
                             before: int | None = None, limit: int = 50) -> JsonObject:
        return await self._mind(READ, "session_frames", workspace,
            lambda f: f.session_frames(session, workspace=workspace, before=before, limit=limit))

    async def entity_graph(self, entity_id: int, *, workspace: str | None = None,
                           limit: int = 100) -> JsonObject:
        return await self._mind(READ, "entity_graph", workspace,
            lambda f: f.entity_graph(entity_id, workspace=workspace, limit=limit))

    async def harvest_runs(self, *, workspace: str | None = None, limit: int = 50
                           ) -> list[JsonObject]:
        return await self._mind(READ, "harvest_runs", workspace,
            lambda f: f.harvest_runs(workspace=workspace, limit=limit))

    async def ingest(self, content: str, *, type_hint: str = "auto", importance: str = "normal",
                     tags: list[str] | None = None, workspace: str | None = None,
                     wait: bool = True) -> IngestReport:
        return await self._mind(WRITE, "ingest", workspace, lambda f: f.ingest(
            content, type_hint=type_hint, importance=importance, tags=tags,
            workspace=workspace, wait=wait))

    async def export_mind(self, *, workspace: str | None = None,
                          fmt: ExportFormat = "universal") -> Export:
        return await self._mind(READ, "export_mind", workspace,
            lambda f: f.export_mind(workspace=workspace, fmt=fmt))

    async def export_page(self, *, workspace: str | None = None, part: ExportPart = "frames",
                          cursor: str | None = None, limit: int = 100) -> JsonObject:
        return await self._mind(READ, "export_page", workspace, lambda f: f.export_page(
            workspace=workspace, part=part, cursor=cursor, limit=limit))
