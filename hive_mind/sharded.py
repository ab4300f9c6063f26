"""The facade of a sharded deployment (issue #17): every request to any host, each mind served
by the one host that owns it.

``HiveMind.open`` returns a :class:`ShardedHiveMind` when ``HIVE_MIND_SHARDS`` is set: on a
shard host (``HIVE_MIND_HOST_ID=shard-<n>``) it wraps that host's own facade, on a gateway
(``serve --gateway``) it has none. A call naming one mind (``workspace``; none is the personal
mind) goes to the mind's owner by the shard map (:mod:`actors.placement`): the local facade
when this host owns it, else the owner's REST API with the caller's credentials
(:mod:`hive_mind.forwarding`). Writes take the same path as reads: the owner acknowledges a
write once its single writer committed it, so a forwarded acknowledgement is the owner's; a
write for a shard that is down is refused, never queued for later behind the caller's back.

Calls over every mind fan out to every shard and merge: scope-wide recall (the results of all
shards by score, each shard's order kept), the workspace list, jobs, nightly maintenance and
``maintenance --all``. A shard that cannot be reached fails its calls at once with
:class:`ShardUnavailableError` (503 + ``Retry-After``): a connect timeout of
``FORWARD_CONNECT_SECONDS``, never a hang, and never another shard's files. A fan-out names the
shards it could not reach and answers with the others.

Decisions where the issue is silent: the default workspace is not kept in a sharded deployment
(there is no one volume for it; callers name the workspace); a new workspace's id is chosen as
unsharded (``slug``, ``slug-2``, …) by asking each candidate's owner in turn.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final, Generic, TypeVar

from actors.placement import ShardMap
from hive_mind.api.codes import ServerUnavailableError
from hive_mind.contract import HostFacade, MindFacade, Summary
from hive_mind.forwarding import forwarded, may_forward, stamp
from hive_mind.move_orders import departure_url
from hive_mind.per_mind import PerMind
from hive_mind.remote import RemoteHiveMind, WriteOutcomeUnknownError
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
    WorkspaceRow,
)
from hive_mind.sharded_merge import merge_jobs, merge_recalls, unreached
from hive_mind.sharded_moves import MindMoves
from hive_mind.workspaces import candidate_ids, slugify
from hive_mind.workspaces import mind_id as workspace_mind
from mind.errors import ConflictError, NotFoundError, ValidationError
from mind.storage.fencing import FencedError
from vocabulary.enums import RecallLanes, RecallProfile, Scope
from vocabulary.ids import PERSONAL_MIND

if TYPE_CHECKING:
    from actors.moves import Departure
    from workers.harvest_summary import Progress
    from workers.protocol import Runtime

__all__ = ["ShardUnavailableError", "ShardedHiveMind", "merge_jobs", "merge_recalls"]

log = logging.getLogger(__name__)

FORWARD_CONNECT_SECONDS: Final = 2.0  # a shard that does not accept a connection is down
FORWARD_TIMEOUT_SECONDS: Final = 600.0  # harvests with wait=True answer when indexed
RETRY_AFTER_SECONDS: Final = 5

T = TypeVar("T")
E = TypeVar("E")
R = TypeVar("R")


class ShardUnavailableError(ServerUnavailableError):
    """The shard owning the mind does not answer: retry after ``Retry-After`` seconds."""

    code = "shard_unavailable"
    status = 503
    retry_after = 5


class _Summary(Generic[R]):
    """What ``run_harvest`` / ``run_ingest`` return for a forwarded call: the owner's summary."""

    def __init__(self, data: R) -> None:
        self._data = data

    def as_dict(self) -> R:
        return self._data


def mind_of(workspace: str | None) -> str:
    """The mind id a call names (validated: a bad slug never reaches a shard)."""
    if workspace is None or workspace == "" or workspace == PERSONAL_MIND:
        return PERSONAL_MIND
    return workspace_mind(workspace)


class ShardedHiveMind(PerMind, MindMoves):
    """Each call is routed by the mind it names (:class:`hive_mind.per_mind.PerMind`: the
    owner of that workspace's mind answers; none: the personal mind's) or fans out to every
    shard (``_fan_out``) and merges."""

    mode = "sharded"

    def __init__(self, settings: Settings, shards: ShardMap, local: HostFacade | None = None
                 ) -> None:
        self.settings = settings
        self.shards = shards
        self.local = local  # this host's own facade (None on a gateway)
        self.shard_id = settings.cluster.host_id if local is not None else None
        self.remotes: dict[str, RemoteHiveMind] = {}  # by URL, made on first use

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def runtime(self) -> Runtime | None:
        """The local facade's runtime (None on a gateway: it holds no mind)."""
        return None if self.local is None else self.local.runtime

    @property
    def stores_minds(self) -> bool:
        return self.local is not None

    async def readiness(self) -> dict[str, bool]:
        return {} if self.local is None else dict(await self.local.readiness())

    def start_warm_up(self) -> asyncio.Future[None]:
        if self.local is not None:
            return self.local.start_warm_up()
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)  # a gateway holds no mind: nothing to load
        return done

    def warming_up(self) -> list[str]:
        return [] if self.local is None else list(self.local.warming_up())

    async def wait_idle(self, timeout: float | None = None) -> bool:
        return True if self.local is None else await self.local.wait_idle(timeout)

    async def close(self) -> None:
        await asyncio.gather(*(r.close() for r in self.remotes.values()),
                             return_exceptions=True)
        if self.local is not None:
            await self.local.close()

    async def __aenter__(self) -> ShardedHiveMind:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- routing ----------------------------------------------------------------------------

    def _route(self, workspace: str | None) -> tuple[str, str | None]:
        """(shard, URL) serving ``workspace``'s mind: its owner by the map — unless this host
        owns it by the map but moved it (``cluster rebalance``), then where it went."""
        mind = mind_of(workspace)
        shard = self.shards.owner(mind)
        if shard == self.shard_id:
            gone = self._departed(mind)
            if gone is not None:
                return gone.to, departure_url(self.shards, gone)
        return shard, None

    def _departed(self, mind: str) -> Departure | None:
        from workers.runtime import HostedRuntime

        runtime = None if self.local is None else self.local.runtime
        return runtime.departed(mind) if isinstance(runtime, HostedRuntime) else None

    def _target(self, shard: str, url: str | None = None) -> MindFacade:
        """The facade serving ``shard`` from here: the local one, else a remote client; a
        request that travelled far enough is answered locally or refused."""
        if shard == self.shard_id and self.local is not None:
            return self.local
        if not may_forward():
            raise FencedError(
                f"this host ({self.shard_id or 'gateway'}) does not own the mind: its shard map "
                f"gives it to {shard} (the hosts' shard maps differ; retry once they agree)")
        url = url or self.shards.shards.get(shard)
        if url is None:
            raise ShardUnavailableError(f"{shard} is not in this host's shard map")
        if url not in self.remotes:
            self.remotes[url] = self._client(url)
        return self.remotes[url]

    def _client(self, url: str) -> RemoteHiveMind:
        return RemoteHiveMind(self.settings.replace(url=url),
                              timeout=FORWARD_TIMEOUT_SECONDS,
                              connect_timeout=FORWARD_CONNECT_SECONDS, on_request=stamp)

    async def _on(self, shard: str, call: Callable[[MindFacade], Awaitable[T]],
                  url: str | None = None) -> T:
        target = self._target(shard, url)
        try:
            return await call(target)
        except WriteOutcomeUnknownError:
            raise
        except ServerUnavailableError as exc:
            if target is self.local or isinstance(exc, ShardUnavailableError):
                raise
            raise ShardUnavailableError(
                f"{shard} ({url or self.shards.shards[shard]}), which owns this mind, is "
                f"unavailable: {exc}; retry in a few seconds") from exc

    async def _one(self, workspace: str | None, call: Callable[[MindFacade], Awaitable[T]]
                   ) -> T:
        """``call`` on the facade serving ``workspace``'s mind (None: the personal mind)."""
        shard, url = self._route(workspace)
        return await self._on(shard, call, url)

    async def _mind(self, write: bool, name: str, workspace: str | None,
                    call: Callable[[MindFacade], Awaitable[T]]) -> T:
        return await self._one(workspace, call)

    def _fan_shards(self) -> list[str]:
        """The shards a call over every mind asks: all, or only this one for a forwarded
        call (the host that fanned out asks the others itself)."""
        if forwarded():
            return [] if self.shard_id is None else [self.shard_id]
        return sorted(self.shards.shards)

    async def _fan_out(self, call: Callable[[MindFacade], Awaitable[T]]
                       ) -> tuple[dict[str, T], dict[str, str]]:
        """``call`` on every shard at once: (answers by shard, errors by shard). A shard that
        cannot be reached is an error entry; any other error is raised."""
        shards = self._fan_shards()
        answers = await asyncio.gather(*(self._on(s, call) for s in shards),
                                       return_exceptions=True)
        ok: dict[str, T] = {}
        down: dict[str, str] = {}
        for shard, answer in zip(shards, answers, strict=True):
            if isinstance(answer, ShardUnavailableError):
                down[shard] = str(answer)
            elif isinstance(answer, BaseException):
                raise answer
            else:
                ok[shard] = answer
        return ok, down

    # -- recall -----------------------------------------------------------------------------

    async def recall_detail(
        self, query: str, *, limit: int = 10, scope: Scope | None = None,
        workspace: str | None = None, profile: RecallProfile = "balanced", since: str | None = None,
        until: str | None = None, catch_up: bool | None = None, lanes: RecallLanes = "hybrid",
        touch: bool = True, explain: bool = False, min_relevance: float | None = None,
    ) -> RecallDetail:
        """One mind: its owner answers. Scope ``all``: every shard searches its own minds and
        the answers merge by score (ties keep shard order; each shard's order is kept)."""
        def call(f: MindFacade) -> Awaitable[RecallDetail]:
            return f.recall_detail(
                query, limit=limit, scope=scope, workspace=workspace, profile=profile,
                since=since, until=until, catch_up=catch_up, lanes=lanes, touch=touch,
                explain=explain, min_relevance=min_relevance)

        if scope != "all":
            return await self._one(workspace, call)
        answers, down = await self._fan_out(call)
        if not answers:
            raise ShardUnavailableError(f"no shard answered: {'; '.join(down.values())}")
        return merge_recalls(answers, limit, down)

    # -- workspaces -------------------------------------------------------------------------

    async def list_workspaces(self) -> WorkspaceList:
        answers, down = await self._fan_out(lambda f: f.list_workspaces())
        rows: list[WorkspaceRow] = sorted(
            (ws for a in answers.values() for ws in a.get("workspaces", [])),
            key=lambda ws: str(ws.get("id", "")))
        personal = next((a["personal"] for a in answers.values() if a.get("personal")), None)
        listed: WorkspaceList = {"personal": personal, "workspaces": rows,
                                 "default_workspace": None}
        if down:
            listed["unreachable"] = down
        return listed

    async def create_workspace(self, name: str, *, group: str = "general",
                               icon: str | None = None, model: str | None = None,
                               workspace_id: str | None = None) -> WorkspaceMeta:
        """On the owner of its id; without an id, ``slugify(name)``, then ``-2``, ``-3``…
        each asked of its own owner until one is free (as one host numbers them)."""
        def on(ident: str) -> Awaitable[WorkspaceMeta]:
            return self._one(ident, lambda f: f.create_workspace(
                name, group=group, icon=icon, model=model, workspace_id=ident))

        if workspace_id is not None:
            return await on(workspace_id)
        for candidate in itertools.islice(candidate_ids(slugify(name)), 1000):
            try:
                return await on(candidate)
            except ConflictError:
                continue
        raise ConflictError(f'no free workspace id for "{name}"')

    async def delete_workspace(self, workspace: str) -> WorkspaceDeleted:  # by its owner
        return await self._one(workspace, lambda f: f.delete_workspace(workspace))

    async def set_default_workspace(self, workspace: str | None) -> WorkspaceDefault:
        raise ValidationError("a sharded deployment keeps no default workspace: name the "
                              "workspace in each request")

    # -- maintenance ------------------------------------------------------------------------

    async def maintenance(self, kind: str, *, workspace: str | None = None,
                          all_minds: bool = False) -> MaintenanceRun:
        if not all_minds:
            return await self._one(workspace, lambda f: f.maintenance(kind, workspace=workspace))
        answers, down = await self._fan_out(lambda f: f.maintenance(kind, all_minds=True))
        minds: dict[str, JsonObject] = {}
        for answer in answers.values():
            minds.update(answer.get("minds", {}))
        run: MaintenanceRun = {"action": kind, "minds": minds}
        if down:
            run["unreachable"] = down
        return run

    # -- harvest and ingest -----------------------------------------------------------------

    async def run_harvest(
        self, source: str, path: str | Path, *, workspace: str | None = None,
        progress: Progress | None = None, auto_sync: bool | None = None,
        sync_interval_hours: int | None = None, wait: bool = True, importance: str = "normal",
        tags: list[str] | None = None, label: str | None = None, rereadable: bool | None = None,
    ) -> Summary[HarvestReport]:
        """Here: the typed run. On another shard: its ``harvest`` (the client sends no
        ``progress``, and the owner decides what it may read again)."""
        shard, url = self._route(workspace)
        if shard == self.shard_id and self.local is not None:
            return await self.local.run_harvest(
                source, path, workspace=workspace, progress=progress, auto_sync=auto_sync,
                sync_interval_hours=sync_interval_hours, wait=wait, importance=importance,
                tags=tags, label=label, rereadable=rereadable)
        return _Summary(await self._on(shard, lambda f: f.harvest(
            source, path, workspace=workspace, auto_sync=auto_sync,
            sync_interval_hours=sync_interval_hours, wait=wait, label=label), url))

    async def run_ingest(self, content: str, *, type_hint: str = "auto",
                         importance: str = "normal", tags: list[str] | None = None,
                         workspace: str | None = None, wait: bool = True,
                         label: str | None = None) -> Summary[IngestReport]:
        shard, url = self._route(workspace)
        if shard == self.shard_id and self.local is not None:
            return await self.local.run_ingest(
                content, type_hint=type_hint, importance=importance, tags=tags,
                workspace=workspace, wait=wait, label=label)
        return _Summary(await self._on(shard, lambda f: f.ingest(
            content, type_hint=type_hint, importance=importance, tags=tags,
            workspace=workspace, wait=wait), url))

    # -- jobs, maintenance, status ----------------------------------------------------------

    async def jobs(self) -> JobsReport:
        answers, down = await self._fan_out(lambda f: f.jobs())
        report = merge_jobs(answers)
        if down:
            report["unreachable"] = down
        return report

    async def retry_jobs(self, dead_letter_id: str | None = None, *,
                         all_failed: bool = False) -> Retried:
        done, down = await self._dead_letters(lambda f: f.retry_jobs(
            dead_letter_id, all_failed=all_failed), lambda a: a["retried"], dead_letter_id)
        retried: Retried = {"retried": done}  # no count: the shards' own are per shard
        if down:
            retried["unreachable"] = down
        return retried

    async def drop_jobs(self, dead_letter_id: str | None = None, *,
                        all_failed: bool = False) -> Dropped:
        done, down = await self._dead_letters(lambda f: f.drop_jobs(
            dead_letter_id, all_failed=all_failed), lambda a: a["dropped"], dead_letter_id)
        dropped: Dropped = {"dropped": done}
        if down:
            dropped["unreachable"] = down
        return dropped

    async def _dead_letters(self, call: Callable[[MindFacade], Awaitable[T]],
                            listed: Callable[[T], list[E]], dead_letter_id: str | None
                            ) -> tuple[list[E], dict[str, str]]:
        """Dead letters live with each host (its file) or in the deployment's one Redis: the
        shards are asked one after another — never two at once on a shared list — and one id
        stops at the shard that knows it (the others say not found)."""
        done: list[E] = []
        down: dict[str, str] = {}
        missing: NotFoundError | None = None
        for shard in self._fan_shards():
            try:
                answer = await self._on(shard, call)
            except ShardUnavailableError as exc:
                down[shard] = str(exc)
                continue
            except NotFoundError as exc:
                missing = exc
                continue
            done.extend(listed(answer))
            if dead_letter_id is not None:
                break
        else:
            if dead_letter_id is not None and missing is not None and not down:
                raise missing
        return done, down

    async def nightly_maintenance(self, *, spread: bool = False,
                                  on_progress: Callable[[int, int], None] | None = None
                                  ) -> JsonObject:
        answers, down = await self._fan_out(lambda f: f.nightly_maintenance(spread=spread))
        return {"shards": answers, **unreached(down)}

    async def status(self, *, probe: bool = True) -> StatusReport:
        """This host's own status (a gateway's: its role only) and, unless another host
        asked, the cluster's shards (:func:`hive_mind.cluster.cluster_status`)."""
        from hive_mind.cluster import cluster_status

        own: StatusReport = ({"mode": "gateway"} if self.local is None
                             else await self.local.status(probe=probe))
        own["shard"] = self.shard_id
        if not forwarded():
            own["cluster"] = await cluster_status(self.settings, self.shards)
        return own
