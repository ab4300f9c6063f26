"""What the caller of the current request may touch, and the facade every surface serves it.

The auth layer (HTTP, MCP over HTTP) binds the caller's :class:`~hive_mind.tokens.Scope` to the
request (:func:`bound`); outside a request — the nightly maintenance, a local CLI or MCP over
stdio — it is :data:`~hive_mind.tokens.ADMIN`. Two checks read it:

- :func:`guarded` wraps the facade the routes and MCP tools call: a call naming one mind
  (``workspace=``, a workspace id, a recall's scope) is refused unless the scope names that
  mind; a write, unless the token may write; a call over the deployment (jobs, maintenance of
  every mind, status, moves between shards, defaults) is the admin's.
  :class:`ScopedFacade` spells out each method of :class:`~hive_mind.contract.HostFacade`
  (the one-mind ones by their route in :class:`~hive_mind.per_mind.PerMind`): a new facade
  method fails the type check until it is placed there.
- :func:`within` narrows the facade's "minds this host serves" (``HiveMind.owns``): a
  scope-wide recall and the workspace list cover only the scope's minds — on every shard, since
  a forwarded call carries the caller's own token and each host resolves it itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from hive_mind.contract import HostFacade, MindFacade, Summary
from hive_mind.per_mind import WRITE, PerMind
from hive_mind.settings import Settings
from hive_mind.shapes import (
    Dropped,
    HarvestReport,
    IngestReport,
    JobsReport,
    JsonObject,
    MaintenanceRun,
    RecallDetail,
    Retried,
    StatusReport,
    WorkspaceDefault,
    WorkspaceDeleted,
    WorkspaceList,
    WorkspaceMeta,
)
from hive_mind.tokens import ADMIN, ForbiddenError, Scope
from vocabulary.enums import RecallLanes, RecallProfile
from vocabulary.enums import Scope as RecallScope
from vocabulary.ids import PERSONAL_MIND, workspace_mind_id

if TYPE_CHECKING:
    from workers.harvest_summary import Progress
    from workers.protocol import Runtime

T = TypeVar("T")

_scope: ContextVar[Scope] = ContextVar("hive_mind_scope", default=ADMIN)

def current() -> Scope:
    return _scope.get()


@contextmanager
def bound(scope: Scope) -> Iterator[None]:
    """The current request's caller has ``scope`` inside this block."""
    token = _scope.set(scope)
    try:
        yield
    finally:
        _scope.reset(token)


def within(serves: Callable[[str], bool]) -> Callable[[str], bool]:
    """``serves`` narrowed to the minds the current caller's scope names."""
    def owns(mind_id: str) -> bool:
        return serves(mind_id) and current().allows(mind_id)

    return owns


def _mind(workspace: object) -> str:
    if workspace is None or workspace == "" or workspace == PERSONAL_MIND:
        return PERSONAL_MIND
    if not isinstance(workspace, str):
        raise ForbiddenError("this token may not name that workspace")
    try:
        return workspace_mind_id(workspace)
    except ValueError:
        return f"workspace:{workspace}"  # refused below unless named (never a path here)


def check(scope: Scope, mind_id: str, write: bool, what: str) -> None:
    """Refuse (ForbiddenError) ``what`` on ``mind_id`` unless ``scope`` allows it."""
    if not scope.allows(mind_id):
        raise ForbiddenError(f"this token may not {what} {mind_id}")
    if write and scope.read_only:
        raise ForbiddenError(f"this token is read-only: it may not {what} {mind_id}")


def admin_only(name: str) -> ForbiddenError:
    """The refusal of a deployment-wide call (``name``) to a scoped token."""
    return ForbiddenError(f"{name.replace('_', ' ')} takes the admin token (this token is "
                          "scoped to workspaces)")


class ScopedFacade(PerMind):
    """The facade as a scoped token's caller sees it (see the module docstring): each call
    naming one mind is checked by the route :class:`~hive_mind.per_mind.PerMind` declares for
    it; the calls over the whole deployment are the admin's."""

    def __init__(self, facade: HostFacade, scope: Scope) -> None:
        self.inner = facade
        self._scope = scope

    async def _mind(self, write: bool, name: str, workspace: str | None,
                    call: Callable[[MindFacade], Awaitable[T]]) -> T:
        check(self._scope, _mind(workspace), write, name.replace("_", " "))
        return await call(self.inner)

    # -- what any caller may read or wait for -----------------------------------------------

    @property
    def settings(self) -> Settings:
        return self.inner.settings

    @property
    def mode(self) -> str:
        return self.inner.mode

    @property
    def runtime(self) -> Runtime | None:
        return self.inner.runtime

    @property
    def stores_minds(self) -> bool:
        return self.inner.stores_minds

    async def readiness(self) -> dict[str, bool]:
        return await self.inner.readiness()

    async def wait_idle(self, timeout: float | None = None) -> bool:
        return await self.inner.wait_idle(timeout)

    async def list_workspaces(self) -> WorkspaceList:  # narrowed by :func:`within`
        return await self.inner.list_workspaces()

    async def __aenter__(self) -> ScopedFacade:
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Nothing to close: the facade is the process's."""

    # -- one mind, checked ------------------------------------------------------------------

    async def recall_detail(
        self, query: str, *, limit: int = 10, scope: RecallScope | None = None,
        workspace: str | None = None, profile: RecallProfile = "balanced", since: str | None = None,
        until: str | None = None, catch_up: bool | None = None, lanes: RecallLanes = "hybrid",
        touch: bool = True, explain: bool = False, min_relevance: float | None = None,
    ) -> RecallDetail:
        """One mind: checked. Scope ``all``: narrowed to the scope's minds by ``within``."""
        if scope != "all":
            kind = scope or ("workspace" if workspace else "personal")
            check(self._scope, _mind(None if kind == "personal" else workspace), False,
                  "recall from")
        return await self.inner.recall_detail(
            query, limit=limit, scope=scope, workspace=workspace, profile=profile, since=since,
            until=until, catch_up=catch_up, lanes=lanes, touch=touch, explain=explain,
            min_relevance=min_relevance)

    async def create_workspace(self, name: str, *, group: str = "general",
                               icon: str | None = None, model: str | None = None,
                               workspace_id: str | None = None) -> WorkspaceMeta:
        if workspace_id is None:
            raise ForbiddenError("a scoped token creates only a workspace it names: give its id")
        check(self._scope, _mind(workspace_id), True, "create")
        return await self.inner.create_workspace(name, group=group, icon=icon, model=model,
                                                 workspace_id=workspace_id)

    async def maintenance(self, kind: str, *, workspace: str | None = None,
                          all_minds: bool = False) -> MaintenanceRun:
        if all_minds:
            raise ForbiddenError("maintenance of every mind takes the admin token")
        return await self._mind(WRITE, "maintenance", workspace, lambda f: f.maintenance(
            kind, workspace=workspace))

    async def run_harvest(
        self, source: str, path: str | Path, *, workspace: str | None = None,
        progress: Progress | None = None, auto_sync: bool | None = None,
        sync_interval_hours: int | None = None, wait: bool = True, importance: str = "normal",
        tags: list[str] | None = None, label: str | None = None, rereadable: bool | None = None,
    ) -> Summary[HarvestReport]:
        check(self._scope, _mind(workspace), True, "run harvest")
        return await self.inner.run_harvest(
            source, path, workspace=workspace, progress=progress, auto_sync=auto_sync,
            sync_interval_hours=sync_interval_hours, wait=wait, importance=importance,
            tags=tags, label=label, rereadable=rereadable)

    async def run_ingest(self, content: str, *, type_hint: str = "auto",
                         importance: str = "normal", tags: list[str] | None = None,
                         workspace: str | None = None, wait: bool = True,
                         label: str | None = None) -> Summary[IngestReport]:
        check(self._scope, _mind(workspace), True, "run ingest")
        return await self.inner.run_ingest(
            content, type_hint=type_hint, importance=importance, tags=tags,
            workspace=workspace, wait=wait, label=label)

    # -- the whole deployment: the admin's --------------------------------------------------

    async def close(self) -> None:
        raise admin_only("close")

    def warming_up(self) -> list[str]:
        raise admin_only("warming_up")

    def start_warm_up(self) -> asyncio.Future[None]:
        raise admin_only("start_warm_up")

    async def delete_workspace(self, workspace: str) -> WorkspaceDeleted:
        raise admin_only("delete_workspace")

    async def set_default_workspace(self, workspace: str | None) -> WorkspaceDefault:
        raise admin_only("set_default_workspace")

    async def jobs(self) -> JobsReport:
        raise admin_only("jobs")

    async def retry_jobs(self, dead_letter_id: str | None = None, *,
                         all_failed: bool = False) -> Retried:
        raise admin_only("retry_jobs")

    async def drop_jobs(self, dead_letter_id: str | None = None, *,
                        all_failed: bool = False) -> Dropped:
        raise admin_only("drop_jobs")

    async def nightly_maintenance(self, *, spread: bool = False,
                                  on_progress: Callable[[int, int], None] | None = None
                                  ) -> JsonObject:
        raise admin_only("nightly_maintenance")

    async def status(self, *, probe: bool = True) -> StatusReport:
        raise admin_only("status")


def guarded(facade: HostFacade) -> HostFacade:
    """``facade`` as the current caller may use it: itself for the admin."""
    scope = current()
    return facade if scope.admin else ScopedFacade(facade, scope)
