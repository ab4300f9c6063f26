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
from typing import Any, Final

from actors.placement import ShardMap
from hive_mind.api.codes import ServerUnavailableError
from hive_mind.forwarding import forwarded, may_forward, stamp
from hive_mind.move_orders import authorize, confirm_arrival, departure_url
from hive_mind.remote import RemoteHiveMind, WriteOutcomeUnknownError
from hive_mind.settings import Settings
from hive_mind.workspaces import candidate_ids, moved_metadata, slugify
from hive_mind.workspaces import mind_id as workspace_mind
from mind.errors import ConflictError, NotFoundError, ValidationError
from mind.storage.fencing import Fence, FencedError
from vocabulary.ids import PERSONAL_MIND

log = logging.getLogger(__name__)

FORWARD_CONNECT_SECONDS: Final = 2.0  # a shard that does not accept a connection is down
FORWARD_TIMEOUT_SECONDS: Final = 600.0  # harvests with wait=True answer when indexed
RETRY_AFTER_SECONDS: Final = 5

# calls that name their mind with ``workspace=`` (absent: the personal mind)
BY_WORKSPACE: Final = (
    "save", "get_frame", "forget", "session_state", "catch_up", "search_entities", "save_entity",
    "create_relation", "get_identity", "set_identity", "get_awareness", "set_awareness",
    "clear_awareness", "stats", "cleanup_frames", "cleanup_entities", "harvest",
    "harvest_sources", "ingest", "export_mind", "export_page",
)
# calls whose first argument is the workspace id
BY_FIRST_ARGUMENT: Final = ("get_workspace", "update_workspace", "delete_workspace")


class ShardUnavailableError(ServerUnavailableError):
    """The shard owning the mind does not answer: retry after ``Retry-After`` seconds."""

    code = "shard_unavailable"
    status = 503
    retry_after = 5


class _Summary:
    """What ``run_harvest`` / ``run_ingest`` return for a forwarded call: the owner's summary."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def as_dict(self) -> dict[str, Any]:
        return self._data


def mind_of(workspace: str | None) -> str:
    """The mind id a call names (validated: a bad slug never reaches a shard)."""
    if workspace is None or workspace == "" or workspace == PERSONAL_MIND:
        return PERSONAL_MIND
    return workspace_mind(workspace)


class ShardedHiveMind:
    mode = "sharded"

    def __init__(self, settings: Settings, shards: ShardMap, local: Any = None) -> None:
        self.settings = settings
        self.shards = shards
        self.local = local  # this host's own facade (None on a gateway)
        self.shard_id = settings.host_id if local is not None else None
        self.remotes: dict[str, RemoteHiveMind] = {}  # by URL, made on first use

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def runtime(self) -> Any:
        """The local facade's runtime (None on a gateway: it holds no mind)."""
        return None if self.local is None else self.local.runtime

    @property
    def stores_minds(self) -> bool:
        return self.local is not None

    async def readiness(self) -> dict[str, bool]:
        return {} if self.local is None else dict(await self.local.readiness())

    def start_warm_up(self) -> asyncio.Future[None]:
        if self.local is not None:
            started: asyncio.Future[None] = self.local.start_warm_up()
            return started
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)  # a gateway holds no mind: nothing to load
        return done

    def warming_up(self) -> list[str]:
        return [] if self.local is None else list(self.local.warming_up())

    async def wait_idle(self, timeout: float | None = None) -> bool:
        return True if self.local is None else bool(await self.local.wait_idle(timeout))

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

    def _departed(self, mind: str) -> Any:
        return None if self.local is None else self.local.runtime.departed(mind)

    def _target(self, shard: str, url: str | None = None) -> Any:
        """The facade serving ``shard`` from here: the local one, else a remote client; a
        request that travelled far enough is answered locally or refused."""
        if shard == self.shard_id:
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
        return RemoteHiveMind(self.settings.model_copy(update={"url": url}),
                              timeout=FORWARD_TIMEOUT_SECONDS,
                              connect_timeout=FORWARD_CONNECT_SECONDS, on_request=stamp)

    async def _on(self, shard: str, call: Callable[[Any], Awaitable[Any]],
                  url: str | None = None) -> Any:
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

    async def _by_workspace(self, name: str, workspace: str | None, /, *args: Any,
                            **kwargs: Any) -> Any:
        """``name(*args, **kwargs)`` on the facade serving ``workspace``'s mind."""
        shard, url = self._route(workspace)
        return await self._on(shard, lambda f: getattr(f, name)(*args, **kwargs), url)

    def _fan_shards(self) -> list[str]:
        """The shards a call over every mind asks: all, or only this one for a forwarded
        call (the host that fanned out asks the others itself)."""
        if forwarded():
            return [] if self.shard_id is None else [self.shard_id]
        return sorted(self.shards.shards)

    async def _fan_out(self, call: Callable[[Any], Awaitable[Any]]
                       ) -> tuple[dict[str, Any], dict[str, str]]:
        """``call`` on every shard at once: (answers by shard, errors by shard). A shard that
        cannot be reached is an error entry; any other error is raised."""
        shards = self._fan_shards()
        answers = await asyncio.gather(*(self._on(s, call) for s in shards),
                                       return_exceptions=True)
        ok: dict[str, Any] = {}
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

    async def recall(self, query: str, **options: Any) -> list[dict[str, Any]]:
        detail = await self.recall_detail(query, **options)
        results: list[dict[str, Any]] = detail["results"]
        return results

    async def recall_detail(self, query: str, *, limit: int = 10, scope: str | None = None,
                            workspace: str | None = None, **options: Any) -> dict[str, Any]:
        """One mind: its owner answers. Scope ``all``: every shard searches its own minds and
        the answers merge by score (ties keep shard order; each shard's order is kept)."""
        if scope != "all":
            return dict(await self._by_workspace(
                "recall_detail", workspace, query, limit=limit, scope=scope,
                workspace=workspace, **options))
        answers, down = await self._fan_out(lambda f: f.recall_detail(
            query, limit=limit, scope=scope, workspace=workspace, **options))
        if not answers:
            raise ShardUnavailableError(f"no shard answered: {'; '.join(down.values())}")
        return merge_recalls(answers, limit, down)

    # -- one mind ---------------------------------------------------------------------------

    async def run_harvest(self, source: str, path: Any, *, workspace: str | None = None,
                          rereadable: bool = False, **options: Any) -> Any:
        return await self._summary(
            workspace, lambda f: f.run_harvest(source, path, workspace=workspace,
                                               rereadable=rereadable, **options),
            lambda r: r.harvest(source, path, workspace=workspace,
                                **{k: v for k, v in options.items() if k != "progress"}))

    async def run_ingest(self, content: str, *, workspace: str | None = None,
                         label: str | None = None, **options: Any) -> Any:
        return await self._summary(
            workspace, lambda f: f.run_ingest(content, workspace=workspace, label=label,
                                              **options),
            lambda r: r.ingest(content, workspace=workspace, **options))

    async def _summary(self, workspace: str | None, here: Callable[[Any], Awaitable[Any]],
                       there: Callable[[Any], Awaitable[dict[str, Any]]]) -> Any:
        """A run that answers a summary object: ``here`` on the local facade, else ``there``
        (its dict) on the owner's client, wrapped like one."""
        shard, url = self._route(workspace)
        if shard == self.shard_id:
            return await here(self.local)
        return _Summary(await self._on(shard, there, url))

    async def maintenance(self, kind: str, *, workspace: str | None = None,
                          all_minds: bool = False) -> dict[str, Any]:
        if not all_minds:
            return dict(await self._by_workspace("maintenance", workspace, kind,
                                                 workspace=workspace))
        answers, down = await self._fan_out(lambda f: f.maintenance(kind, all_minds=True))
        minds: dict[str, Any] = {}
        for answer in answers.values():
            minds.update(answer.get("minds", {}))
        return {"action": kind, "minds": minds, **_unreached(down)}

    # -- workspaces -------------------------------------------------------------------------

    async def list_workspaces(self) -> dict[str, Any]:
        answers, down = await self._fan_out(lambda f: f.list_workspaces())
        rows = sorted((ws for a in answers.values() for ws in a.get("workspaces", [])),
                      key=lambda ws: str(ws.get("id", "")))
        personal = next((a["personal"] for a in answers.values() if a.get("personal")), None)
        return {"personal": personal, "workspaces": rows, "default_workspace": None,
                **_unreached(down)}

    async def create_workspace(self, name: str, *, workspace_id: str | None = None,
                               **fields: Any) -> dict[str, Any]:
        """On the owner of its id; without an id, ``slugify(name)``, then ``-2``, ``-3``…
        each asked of its own owner until one is free (as one host numbers them)."""
        if workspace_id is not None:
            return dict(await self._by_workspace("create_workspace", workspace_id, name,
                                                 workspace_id=workspace_id, **fields))
        for candidate in itertools.islice(candidate_ids(slugify(name)), 1000):
            try:
                return dict(await self._by_workspace("create_workspace", candidate, name,
                                                     workspace_id=candidate, **fields))
            except ConflictError:
                continue
        raise ConflictError(f'no free workspace id for "{name}"')

    async def set_default_workspace(self, workspace: str | None) -> dict[str, Any]:
        raise ValidationError("a sharded deployment keeps no default workspace: name the "
                              "workspace in each request")

    # -- jobs, maintenance, status ----------------------------------------------------------

    async def jobs(self) -> dict[str, Any]:
        answers, down = await self._fan_out(lambda f: f.jobs())
        return {**merge_jobs(answers), **_unreached(down)}

    async def retry_jobs(self, dead_letter_id: str | None = None, *,
                         all_failed: bool = False) -> dict[str, Any]:
        return await self._dead_letters("retry_jobs", "retried", dead_letter_id, all_failed)

    async def drop_jobs(self, dead_letter_id: str | None = None, *,
                        all_failed: bool = False) -> dict[str, Any]:
        return await self._dead_letters("drop_jobs", "dropped", dead_letter_id, all_failed)

    async def _dead_letters(self, name: str, key: str, dead_letter_id: str | None,
                            all_failed: bool) -> dict[str, Any]:
        """Dead letters live with each host (its file) or in the deployment's one Redis: the
        shards are asked one after another — never two at once on a shared list — and one id
        stops at the shard that knows it (the others say not found)."""
        done: list[Any] = []
        down: dict[str, str] = {}
        missing: NotFoundError | None = None
        for shard in self._fan_shards():
            try:
                answer = await self._on(shard, lambda f: getattr(f, name)(
                    dead_letter_id, all_failed=all_failed))
            except ShardUnavailableError as exc:
                down[shard] = str(exc)
                continue
            except NotFoundError as exc:
                missing = exc
                continue
            done.extend(answer.get(key) or [])
            if dead_letter_id is not None:
                break
        else:
            if dead_letter_id is not None and missing is not None and not down:
                raise missing
        return {key: done, **_unreached(down)}

    async def nightly_maintenance(self, *, spread: bool = False,
                                  on_progress: Any = None) -> dict[str, Any]:
        answers, down = await self._fan_out(lambda f: f.nightly_maintenance(spread=spread))
        return {"shards": answers, **_unreached(down)}

    async def status(self, *, probe: bool = True) -> dict[str, Any]:
        """This host's own status (a gateway's: its role only) and, unless another host
        asked, the cluster's shards (:func:`hive_mind.cluster.cluster_status`)."""
        from hive_mind.cluster import cluster_status

        own: dict[str, Any] = ({"mode": "gateway"} if self.local is None
                               else dict(await self.local.status(probe=probe)))
        own["shard"] = self.shard_id
        if not forwarded():
            own["cluster"] = await cluster_status(self.settings, self.shards)
        return own

    # -- moving minds (cluster rebalance: actors/moves.py) -----------------------------------

    def _runtime(self) -> Any:
        if self.local is None:
            raise ValidationError("a gateway holds no minds: ask a shard host")
        return self.local.runtime

    async def holdings(self) -> dict[str, Any]:
        runtime = self._runtime()
        shard = runtime.shard()
        return {"shard": shard.shard, "epoch": shard.epoch, "minds": await runtime.holdings()}

    async def expect_mind(self, mind_id: str, metadata: str | None = None
                          ) -> dict[str, Any]:
        """Step 1 of a move here, with a workspace's metadata (checked by the workspace
        rules: they are what the workspace is listed with once admitted)."""
        checked = None if metadata is None else moved_metadata(mind_id, metadata)
        self._runtime().expect_mind(mind_id, checked)
        return {"mind_id": mind_id, "expected": True}

    async def cancel_expect(self, mind_id: str) -> dict[str, Any]:
        return {"mind_id": mind_id, "cancelled": self._runtime().cancel_arrival(mind_id)}

    async def release_mind(self, mind_id: str, to: str, epoch: int, url: str | None = None,
                           expires: int | None = None, signature: str | None = None
                           ) -> dict[str, Any]:
        """Step 2 of a move away, to a URL the operator's configuration names
        (:mod:`hive_mind.move_orders`)."""
        runtime = self._runtime()
        where, authority = authorize(self.settings.cluster_secret(), self.shards, mind_id, to,
                                     epoch, url, expires, signature)
        gone = await runtime.release_mind(mind_id, Fence(to, epoch), where, authority)
        return {"mind_id": mind_id, "to": gone.to, "epoch": gone.epoch, "url": gone.url,
                "state": gone.state}

    async def cancel_release(self, mind_id: str) -> dict[str, Any]:
        """Undo a move away that did not complete: this host serves the mind again."""
        gone = await asyncio.to_thread(self._runtime().cancel_departure, mind_id)
        return {"mind_id": mind_id, "cancelled": True, "to": gone.to, "url": gone.url}

    async def snapshot_mind(self, mind_id: str, dest: Path) -> None:
        """A released mind's file copied to ``dest``."""
        await self._runtime().snapshot_mind(mind_id, dest)

    async def mind_metadata(self, mind_id: str) -> str | None:
        """A workspace's metadata file (JSON text) as the move carries it; None: personal."""
        return await asyncio.to_thread(self._runtime().mind_metadata, mind_id)

    def incoming_path(self, mind_id: str) -> Path:
        """Where an arriving copy is written first (this data dir's file system)."""
        path: Path = self._runtime().incoming_path(mind_id)
        return path

    async def admit_mind(self, mind_id: str, copy: Path) -> dict[str, Any]:
        await self._runtime().admit_mind(mind_id, copy)
        return {"mind_id": mind_id, "admitted": True}

    async def retire_mind(self, mind_id: str) -> dict[str, Any]:
        """Step 5 of a move away: once the new owner holds the mind, this copy is deleted."""
        runtime = self._runtime()
        gone = runtime.departed(mind_id)
        if gone is not None and gone.state != "retired":
            await confirm_arrival(departure_url(self.shards, gone), gone)
        await asyncio.to_thread(runtime.retire_mind, mind_id)
        return {"mind_id": mind_id, "retired": True}


def merge_jobs(answers: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Every shard's jobs report as one: each mind's row from the shard that holds it, dead
    letters once each. Hosts on one Redis each see the same queues, so their totals are that
    queue's (the largest report), not a sum; hosts with their own queues add up."""
    shared = all(a.get("mode") == "distributed" for a in answers.values())
    minds: dict[str, dict[str, Any]] = {}
    failures: dict[str, dict[str, Any]] = {}
    for shard in sorted(answers):
        for row in answers[shard].get("minds", []):
            if row.get("pending_index") is not None or row["id"] not in minds:
                minds[row["id"]] = row
        for letter in answers[shard].get("failures", []):
            failures.setdefault(str(letter.get("id")), letter)
    totals = {key: [int(a.get(key) or 0) for a in answers.values()]
              for key in ("queued", "running", "dead_letters")}
    return {"mode": "sharded", "shared_queue": shared,
            **{key: (max(v, default=0) if shared else sum(v)) for key, v in totals.items()},
            "minds": [minds[m] for m in sorted(minds)],
            "running_jobs": [job for s in sorted(answers)
                             for job in answers[s].get("running_jobs", [])],
            "failures": list(failures.values()),
            "note": "per shard: " + "; ".join(f"{s}: {answers[s].get('mode')}"
                                               for s in sorted(answers))}


def _unreached(down: dict[str, str]) -> dict[str, Any]:
    return {"unreachable": down} if down else {}


def merge_recalls(answers: dict[str, dict[str, Any]], limit: int,
                  down: dict[str, str]) -> dict[str, Any]:
    """Scope-wide answers of several shards as one (scores are each shard's cross-mind scale,
    :func:`mind.retrieval.combined.rescore_across`): by score, stable in shard order."""
    shards = sorted(answers)
    results, seen = [], set()
    for result in sorted((r for s in shards for r in answers[s]["results"]),
                         key=lambda r: -float(r.get("score") or 0.0)):
        key = (result.get("from"), result.get("id"))
        if key not in seen:
            seen.add(key)
            results.append(result)
    results = results[:limit]
    routing = [answers[s].get("routing") for s in shards]
    routed = None
    if any(routing):  # a shard that searched all its workspaces reports none: count none
        routed = {key: sum(r[key] for r in routing if r) for key in ("searched", "workspaces")}
    return {"results": results, "count": len(results),
            "conflicts": [c for s in shards for c in answers[s].get("conflicts", [])],
            "external": next((answers[s]["external"] for s in shards
                              if answers[s].get("external")), None),
            "routing": routed, **_unreached(down)}


def _route(name: str) -> Callable[..., Awaitable[Any]]:
    async def call(self: ShardedHiveMind, *args: Any, **kwargs: Any) -> Any:
        return await self._by_workspace(name, kwargs.get("workspace"), *args, **kwargs)

    call.__name__ = name
    return call


def _route_first(name: str) -> Callable[..., Awaitable[Any]]:
    async def call(self: ShardedHiveMind, workspace: str, *args: Any, **kwargs: Any) -> Any:
        return await self._by_workspace(name, workspace, workspace, *args, **kwargs)

    call.__name__ = name
    return call


for _name in BY_WORKSPACE:
    setattr(ShardedHiveMind, _name, _route(_name))
for _name in BY_FIRST_ARGUMENT:
    setattr(ShardedHiveMind, _name, _route_first(_name))
