"""``HiveMind``: the one facade the CLI, the MCP server, the HTTP API and Python callers use.

Open it on a data dir (embedded: actors + in-process cognify; distributed: actors here,
embeddings on Redis workers) with :meth:`HiveMind.open`, or as a client of a running
``serve`` with ``url=`` (:class:`hive_mind.remote.RemoteHiveMind`, same methods). Every
operation is an async method; mind selection is ``workspace=None`` (the personal mind) or a
workspace id, validated before it touches the filesystem and refused when unknown (never
auto-created from a caller's string).

Writes go through each mind's single-writer actor as ops; reads use reader connections.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pydantic

from actors.actor import Replayed
from actors.results import AwarenessCleared as AwarenessClearedResult
from actors.results import (
    AwarenessRemoved,
    EntitySaved,
    FramesSaved,
    IdentitySet,
    Reconciled,
    expect,
)
from hive_mind import browse, warmup
from hive_mind.contract import HostFacade, MindFacade
from hive_mind.results import (
    awareness_cleared,
    awareness_removed,
    awareness_shape,
    entity_dict,
    frame_dict,
    identity_saved,
    linked_frame,
    recall_response,
    relation_shape,
    saved_entity,
    workspace_meta,
    write_dict,
)
from hive_mind.scopes import within
from hive_mind.settings import Settings, load_settings
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
    WorkspaceRow,
    WorkspaceView,
)
from hive_mind.touches import TouchBuffer
from hive_mind.warmup import WarmUp
from hive_mind.workspaces import WorkspaceManager, mind_id
from mind.awareness import AwarenessItem
from mind.bounds import (
    bounded_float,
    bounded_int,
    bounded_json,
    bounded_text,
    frame_refs,
    row_id,
    source_time,
    tags_input,
)
from mind.constants import DAILY_SAVE_SESSION_PREFIX
from mind.embeddings.base import fingerprint
from mind.errors import ConflictError, HiveMindError, NotFoundError, ValidationError
from mind.foreground import answering
from mind.frames.forget import Erasure
from mind.frames.model import Frame
from mind.ids import validate_id
from mind.knowledge.graph import Relation
from mind.mind import Mind
from mind.storage.idempotency import REMOVED, keyed_op_id, validate_key
from mind.storage.private_files import make_private_dir
from mind.timeutil import format_ts
from queue_schemas import ops
from vocabulary.enums import (
    ENTITY_TYPES,
    FRAME_CLEANUP_MODES,
    IMPORTANCES,
    MAINTENANCE_KINDS,
    SCOPES,
    ExportFormat,
    ExportPart,
    FrameSource,
    FrameType,
    Importance,
    RecallLanes,
    RecallProfile,
    Scope,
)
from vocabulary.ids import PERSONAL_MIND
from vocabulary.limits import (
    AWARENESS_PRIORITY_MAX,
    MAX_AGE_DAYS,
    MAX_FRAME_CHARS,
    MAX_JSON_BYTES,
    MAX_NAME_CHARS,
    MAX_QUERY_CHARS,
    MAX_SYNC_INTERVAL_HOURS,
    MAX_TTL_MINUTES,
)

if TYPE_CHECKING:  # the runtime, harvest, ingest and the search (numpy, the in-memory
    # indexes) are imported where they are used: a one-shot command (or a client over --url)
    # does not load what it does not run (#14), a save no search
    from hive_mind.export import Export
    from hive_mind.harvest import IngestSummary
    from hive_mind.remote import RemoteHiveMind
    from hive_mind.sharded import ShardedHiveMind
    from mind.embeddings.memo import QueryMemo
    from mind.retrieval.search import HybridSearch
    from workers.harvest_summary import HarvestSummary, Progress
    from workers.protocol import Runtime

log = logging.getLogger(__name__)


OpT = TypeVar("OpT", bound=ops.OpEnvelope)


def build_op(factory: Callable[[str], OpT], mind_id: str) -> OpT:
    """``factory(mind_id)``: a typed write-op (:mod:`queue_schemas.ops`). A wrong argument
    (name, type, a missing field) is a :class:`ValidationError` naming the op and the field,
    raised here, before the op reaches a mind's actor."""
    try:
        return factory(mind_id)
    except pydantic.ValidationError as exc:
        where = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'op'}: {err['msg']}"
            for err in exc.errors(include_url=False)[:5])
        raise ValidationError(f"invalid {exc.title}: {where}") from None


def _stored(result: object) -> dict[str, Any]:
    """A replayed write's first answer, as the idempotency record stored it (a JSON object)."""
    if not isinstance(result, dict):
        raise HiveMindError(f"a replayed write answered a {type(result).__name__}")
    return result


def _stamp_time(ns: int) -> str | None:
    """A file's modification time (ns) in the house format, None for none."""
    return format_ts(datetime.fromtimestamp(ns / 1e9, UTC)) if ns > 0 else None


def _today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


class HiveMind:
    stores_minds = True  # this process holds mind files (a sharded gateway does not)

    def __init__(self, settings: Settings, runtime: Runtime) -> None:
        self.settings = settings
        self.runtime = runtime
        self.workspaces = WorkspaceManager(settings.data_dir)
        # sharded: the minds of this host's shard only; a scoped token: the minds it names
        self.owns = within(runtime.serves)
        self.external = settings.external_source()  # asked by scope-all recalls
        self._touches = TouchBuffer(self._write_touches)  # recalls' hits, written in batches
        self.warming = WarmUp()  # what serve loads before it says ready (hive_mind/warmup.py)

    # -- lifecycle --------------------------------------------------------------------------

    @classmethod
    async def open(cls, settings: Settings | None = None, *, one_shot: bool = False,
                   **overrides: object) -> MindFacade:
        """A facade over ``settings`` (default: environment / ``.env``). With ``url`` set this
        returns a :class:`~hive_mind.remote.RemoteHiveMind` client instead. ``one_shot``: the
        facade of a short command (the CLI's), which hands the indexing of the frames it saves
        to another process keeping the mind's writer open, if one does, and takes none from
        others (:mod:`actors.handoff`)."""
        settings = settings or load_settings(**overrides)
        if settings.url:
            from hive_mind.remote import RemoteHiveMind

            return RemoteHiveMind(settings)
        return await cls.open_host(settings, one_shot=one_shot)

    @classmethod
    async def open_host(cls, settings: Settings, *, one_shot: bool = False) -> HostFacade:
        """The facade of a process that serves minds (``serve``, ``mcp``): this data dir's,
        or a shard host's or a gateway's when ``HIVE_MIND_SHARDS`` is set (``url`` is not
        looked at: a server is never a client)."""
        shards = settings.shard_map()
        if shards is not None:  # sharded (issue #17): each mind served by its owner
            from hive_mind.sharded import ShardedHiveMind

            if settings.cluster.gateway:
                return ShardedHiveMind(settings, shards)
            local = await cls._open_local(settings, one_shot)
            return ShardedHiveMind(settings, shards, local)
        return await cls._open_local(settings, one_shot)

    @classmethod
    async def _open_local(cls, settings: Settings, one_shot: bool = False) -> HiveMind:
        make_private_dir(settings.data_dir)
        from mind.harvest import netguard  # which addresses URL ingest may fetch (SSRF guard)

        netguard.configure(allow_private=settings.security.fetch_private_addresses)
        if settings.embedded:
            from workers.runtime import EmbeddedRuntime

            return cls(settings, EmbeddedRuntime(settings.runtime_config(one_shot=one_shot)))
        from workers.host_runtime import HostRuntime

        runtime = await HostRuntime.connect(settings.runtime_config(one_shot=one_shot),
                                            settings.queue_config())
        return cls(settings, runtime)

    async def readiness(self) -> dict[str, bool]:
        """What ``/readyz`` checks beyond the facade itself: the warm-up has finished (its
        pending steps: :meth:`warming_up`), and in distributed mode Redis answers."""
        return {"warm_up": not self.warming.pending, **await self.runtime.ready_checks()}

    def warming_up(self) -> list[str]:
        """The warm-up steps still pending (empty when done, or when none was started)."""
        return self.warming.pending

    @property
    def mode(self) -> str:
        return "embedded" if self.settings.embedded else "distributed"

    async def close(self) -> None:
        await self._touches.close()
        if self.external is not None:
            await self.external.close()
        await self.runtime.close()

    async def __aenter__(self) -> HiveMind:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until background indexing caused by this process has been applied."""
        return await self.runtime.wait_idle(timeout)

    # -- minds ------------------------------------------------------------------------------

    def mind_id(self, workspace: str | None) -> str:
        """``personal`` or ``workspace:<id>`` for an existing workspace (else NotFoundError)."""
        if workspace is None or workspace == "" or workspace == PERSONAL_MIND:
            return PERSONAL_MIND
        ident = mind_id(workspace)  # validates the slug first: no path tricks
        self.runtime.check_serves(ident)  # sharded: moving here or away is retryable, not 404
        if not self.workspaces.exists(workspace):
            raise NotFoundError(f'Workspace "{workspace}" not found')
        return ident

    async def resume_pending(self, ident: str) -> None:
        """On first use of a mind in this process, re-queue what its outbox still holds
        (indexing that a crashed or killed process never finished), a piece at a time: once
        per mind per process, counting the startup sweep of ``serve``; a one-shot facade (the
        CLI's) leaves it to a long-lived process (:meth:`workers.protocol.Runtime.resume`)."""
        await self.runtime.resume(ident)

    async def _resolve(self, workspace: str | None) -> str:
        """The mind id of ``workspace`` (validated, existing), resumed on first use."""
        ident = self.mind_id(workspace)
        await self.resume_pending(ident)
        return ident

    async def reader(self, workspace: str | None) -> Mind:
        """The mind's reader for one query (another mind's opening may close it after)."""
        return await self.runtime.reader(await self._resolve(workspace))

    @asynccontextmanager
    async def reading(self, workspace: str | None) -> AsyncIterator[Mind]:
        """The mind's reader for several reads: leased, so the LRU does not close it while
        other minds open (with more minds busy than ``HIVE_MIND_MAX_OPEN_MINDS``)."""
        async with self.runtime.lease(await self._resolve(workspace)) as reader:
            yield reader

    async def submit(self, workspace: str | None,
                     op_factory: Callable[[str], ops.OpEnvelope]) -> object:
        """Build the typed write-op for the mind (:func:`build_op`: a wrong argument is refused
        before any actor sees it) and apply it; returns its result (:mod:`actors.results`)."""
        ident = self.mind_id(workspace)
        op = build_op(op_factory, ident)
        await self.resume_pending(ident)
        return await self.runtime.submit(ident, op)

    async def apply(self, workspace: str | None,
                    op_factory: Callable[[str], ops.OpEnvelope]) -> JsonObject:
        """:meth:`submit`, answered with the result's JSON shape
        (:func:`hive_mind.results.write_dict`)."""
        return write_dict(await self.submit(workspace, op_factory))

    # -- frames -----------------------------------------------------------------------------

    async def save(
        self, content: str, *, importance: Importance = "normal",
        source: FrameSource = "agent_inferred",
        workspace: str | None = None, session: str | None = None,
        metadata: JsonInput | None = None, wait: bool = False,
        created_at: str | None = None, idempotency_key: str | None = None,
        updates: int | None = None, refs: list[int] | None = None,
    ) -> SavedFrame:
        """Save one memory: an I-frame (a statement; identical content is deduplicated), or with
        ``updates`` a P-frame (an update of that I-frame, stored in its session: recall ranks it
        as current and the base as outdated), or with ``refs`` a B-frame (a cross-reference to
        those frames of the same mind). ``wait`` blocks until
        it is indexed (vector + entities), e.g. for a CLI that recalls right after; indexing
        other minds' bulk imports does not hold it up.
        ``created_at``: when it happened (strict ISO-8601 with a zone, 1900 … now + 1 day;
        default now), what recall's ``since``/``until`` filter on; ``recorded_at`` is always now.
        ``idempotency_key``: a retry with the same key returns the first save's frame
        (``replayed`` true) and writes nothing, even after a restart; the same key with other
        content, importance, source, metadata or ``created_at`` is a ``ConflictError``
        (:mod:`mind.storage.idempotency`)."""
        if not isinstance(content, str) or not content.strip():
            raise ValidationError("content must be non-empty text")
        bounded_text(content, "content", MAX_FRAME_CHARS)
        bounded_json(metadata, "metadata", MAX_JSON_BYTES)
        at = None if created_at is None else source_time(created_at)
        kind, base, references = await self._frame_links(workspace, updates, refs)
        gop = validate_id(session, "session") if session else \
            base.gop_id if kind == "P" and base else f"{DAILY_SAVE_SESSION_PREFIX}{_today()}"
        frame = ops.NewFrameOp(gop_id=gop, content=content, importance=importance,
                               source=source, metadata=metadata or {}, created_at=at,
                               frame_type=kind, base_frame_id=base.id if base else None,
                               references=references)
        request: dict[str, Any] = {"content": content, "importance": importance,
                                   "source": source, "metadata": metadata or {},
                                   "created_at": at}
        if kind != "I":  # a plain save's key keeps the request it always had
            request.update(updates=updates, refs=references)
        await self.runtime.check_quota()  # refused now rather than never indexed
        with answering():  # background builds step aside meanwhile (mind/foreground.py)
            result, replayed = await self._write(
                workspace, lambda ident: ops.SaveFrames(mind_id=ident, frames=[frame]),
                idempotency_key, "save", request)
        saved = (FramesSaved.from_json(_stored(result)) if replayed
                 else expect(result, FramesSaved)).frames[0]
        if wait:  # this frame, not the other minds' imports (workers/fairness.py)
            await self.runtime.wait_indexed(self.mind_id(workspace), [saved.id])
        async with self.reading(workspace) as reader:
            stored = await reader.frames.get(saved.id)
        if stored is None:  # forgotten since (a replay of an old save, or a racing forget)
            raise NotFoundError(f"frame {saved.id} was saved but has since been forgotten")
        return {**linked_frame(stored, references), "created": saved.created,
                "workspace": workspace or PERSONAL_MIND, "replayed": replayed}

    async def _frame_links(self, workspace: str | None, updates: int | None,
                           refs: list[int] | None) -> tuple[FrameType, Frame | None, list[int]]:
        """What a save links to: ``("I", None, [])``; ``("P", base, [])`` for an update of the
        I-frame ``updates``; ``("B", first reference, refs)`` for a cross-reference. An id
        that is no frame of this mind (another workspace's, say) is a NotFoundError."""
        if updates is not None and refs is not None:
            raise ValidationError("a save either updates a frame or references frames, not both")
        if updates is None and refs is None:
            return "I", None, []
        ids = [row_id(updates, "updates")] if updates is not None else frame_refs(refs)
        async with self.reading(workspace) as reader:
            found = await reader.frames.get_many(ids)
        if missing := [i for i in ids if i not in found]:
            where = f"workspace {workspace!r}" if workspace else "the personal mind"
            raise NotFoundError(f"frame {missing[0]} not found in {where}")
        first = found[ids[0]]
        if updates is None:
            return "B", first, ids
        if first.frame_type != "I":
            raise ValidationError(f"frame {first.id} is a {first.frame_type}-frame: an update "
                                  f"names the I-frame it updates (frame {first.base_frame_id})"
                                  if first.frame_type == "P" else
                                  f"frame {first.id} is a B-frame: an update names an I-frame")
        return "P", first, []

    async def session_state(self, session: str, *, workspace: str | None = None
                            ) -> SessionState:
        """A session's current state: its latest I-frame and the P-frames after it (an unknown
        session is a NotFoundError)."""
        gop = validate_id(session, "session")
        async with self.reading(workspace) as reader:
            if await reader.sessions.get_by_gop_id(gop) is None:
                raise NotFoundError(f"session {gop!r} not found")
            iframe, pframes = await reader.frames.reconstruct_state(gop)
        return {"session": gop, "workspace": workspace or PERSONAL_MIND,
                "i_frame": None if iframe is None else linked_frame(iframe, []),
                "p_frames": [linked_frame(p, []) for p in pframes]}

    async def _write(self, workspace: str | None, op_factory: Callable[[str], ops.OpEnvelope],
                     key: str | None, operation: str, request: Mapping[str, object]
                     ) -> tuple[object, bool]:
        """Submit a write; with an idempotency ``key`` its op id is the key's
        (:func:`mind.storage.idempotency.keyed_op_id` over ``operation`` and the caller's
        ``request``),
        so a retry gets the first result back. Returns (result, replayed)."""
        if key is None:
            return await self.submit(workspace, op_factory), False
        validate_key(key)
        result = await self.submit(workspace, lambda ident: op_factory(ident).model_copy(
            update={"op_id": keyed_op_id(ident, key, operation, request)}))
        if isinstance(result, Replayed):
            if result.result == REMOVED:  # what the key wrote was removed since
                raise ConflictError("what this idempotency key wrote was removed since (a "
                                    "forgotten memory, a removed awareness item): a new "
                                    "write needs a new key")
            return result.result, True
        return result, False

    async def get_frame(self, frame_id: int, *, workspace: str | None = None) -> FrameShape:
        row_id(frame_id, "frame id")
        frame = await (await self.reader(workspace)).frames.get(frame_id)
        if frame is None:
            raise NotFoundError(f"frame {frame_id} not found")
        return frame_dict(frame)

    async def set_importance(self, frame_id: int, importance: Importance, *,
                             workspace: str | None = None) -> FrameShape:
        """Change a frame's importance (recall weighs it; compaction ages ``temporary`` and
        ``deprecated`` frames out); its content and index stay. Returns the frame."""
        row_id(frame_id, "frame id")
        if importance not in IMPORTANCES:
            raise ValidationError(f"importance must be one of {list(IMPORTANCES)}")
        frame = expect(await self.submit(workspace, lambda ident: ops.SetImportance(
            mind_id=ident, frame_id=frame_id, importance=importance)), Frame)
        return frame_dict(frame)

    async def forget(self, frame_id: int, *, workspace: str | None = None) -> Forgotten:
        """Erase a frame and everything derived from it (vectors, chunks, supersession pairs, entity
        mentions; entities left without any frame)."""
        row_id(frame_id, "frame id")
        erased = expect(await self.submit(
            workspace, lambda ident: ops.Erase(mind_id=ident, frame_id=frame_id)), Erasure)
        if not erased.deleted:
            raise NotFoundError(f"frame {frame_id} not found")
        return {"id": frame_id, "deleted": erased.deleted,
                "entities_erased": erased.entities_erased,
                "relations_erased": erased.relations_erased}

    # -- export -----------------------------------------------------------------------------

    async def _mind_file(self, workspace: str | None) -> tuple[str, Path]:
        """The mind id of ``workspace`` and its file, opened (so migrated) here first; the
        indexing it still owes is not resumed for a read of the file."""
        from actors.host import mind_path

        ident = self.mind_id(workspace)
        await self.runtime.reader(ident)
        return ident, mind_path(self.settings.data_dir, ident)

    async def export_mind(self, *, workspace: str | None = None,
                          fmt: ExportFormat = "universal") -> Export:
        """The mind's memories (sessions, speakers, source times, importances) and, in ``json``,
        its entities and relations with their validity, as a stream of bytes read from one
        consistent snapshot (:mod:`hive_mind.export`)."""
        from hive_mind.export import open_export

        ident, path = await self._mind_file(workspace)
        return await open_export(path, ident, fmt)

    async def export_page(self, *, workspace: str | None = None, part: ExportPart = "frames",
                          cursor: str | None = None, limit: int = 100) -> JsonObject:
        """One page of the export: ``records`` of ``part`` after ``cursor``, and ``next``."""
        from hive_mind.export import read_page

        _, path = await self._mind_file(workspace)
        return await read_page(path, part, cursor, limit)

    # -- recall -----------------------------------------------------------------------------

    def _recall_minds(self, scope: str | None, workspace: str | None) -> list[str | None]:
        if scope is None:
            scope = "workspace" if workspace else "personal"
        if scope not in SCOPES:
            raise ValidationError(f"scope must be one of {list(SCOPES)}, got {scope!r}")
        if scope in ("workspace", "current"):
            if not workspace:
                raise ValidationError(f"scope {scope!r} needs a workspace")
            return [workspace]
        if scope == "personal":
            return [None]
        return [*self._personal_here(), *self._workspace_ids()]

    def _personal_here(self) -> list[None]:
        """``[None]`` (the personal mind) where a scope-wide pass includes it: unsharded, or
        on the shard that owns it."""
        return [None] if self.owns(PERSONAL_MIND) else []

    def _workspace_ids(self) -> list[str]:
        """The workspaces a scope-wide pass covers: all of them, or a shard's own."""
        return [ws for ws in self.workspaces.ids() if self.owns(mind_id(ws))]

    def start_warm_up(self) -> asyncio.Future[None]:
        """Load what requests would otherwise load on first use (the model, the minds' readers
        and in-memory indexes, routing summaries: :mod:`hive_mind.warmup`), as a task;
        :meth:`readiness` is False until it is done."""
        return warmup.start(self)

    async def _routed(self, query: str, workspaces: list[str], embedder: QueryMemo,
                      lanes: str, catching_up: bool) -> list[str]:
        """The workspaces a scope-all recall searches: all of them up to
        ``HIVE_MIND_SCOPE_MINDS``, else that many chosen by their content
        (:mod:`hive_mind.routing`) — or, for a catch-up, the most recently written."""
        from hive_mind.routing import routed_workspaces

        return await routed_workspaces(self.runtime, query, workspaces,
                                       self.settings.retrieval.scope_minds, embedder,
                                       lanes=lanes, catching_up=catching_up)

    def _searcher(self, workspace: str | None, embedder: QueryMemo
                  ) -> Callable[[], AbstractAsyncContextManager[HybridSearch]]:
        """Opens the workspace's search when a scope-wide recall gets to it, on a leased
        reader: with more minds than the LRU keeps open, each stays open for its own search
        (opening them all first closed the early ones before they were searched)."""
        return lambda: self._searching(workspace, embedder)

    @asynccontextmanager
    async def _searching(self, workspace: str | None, embedder: QueryMemo
                         ) -> AsyncIterator[HybridSearch]:
        ident = await self._resolve(workspace)
        async with self.runtime.lease(ident) as reader:
            yield await self._search_over(ident, reader, embedder)

    async def _write_touches(self, ident: str, frame_ids: list[int]) -> None:
        await self.runtime.submit(ident, ops.Touch(mind_id=ident, frame_ids=frame_ids))

    async def _search_over(self, ident: str, reader: Mind, embedder: QueryMemo
                           ) -> HybridSearch:
        from mind.retrieval.search import HybridSearch

        async def touch(ids: list[int]) -> None:
            # the recall answers without waiting for the access-count write (it waited for the
            # commit, at times a WAL checkpoint: ~10 ms of a served recall's p95 at 100,000
            # frames), and the writes of many recalls are one (hive_mind/touches.py)
            self._touches.add(ident, ids)

        return HybridSearch(reader.db, None if embedder.degraded else embedder,
                            index_of=reader.vector_index, on_hits=touch,
                            keyword_index=reader.keyword_index())

    async def recall(
        self, query: str, *, limit: int = 10, scope: Scope | None = None,
        workspace: str | None = None, profile: RecallProfile = "balanced", since: str | None = None,
        until: str | None = None, catch_up: bool | None = None, lanes: RecallLanes = "hybrid",
        touch: bool = True, explain: bool = False, min_relevance: float | None = None,
    ) -> list[RecallResult]:
        """Hybrid search over the chosen minds, merged by normalized score without
        reordering any one mind's results: the ``results`` of :meth:`recall_detail`, which
        documents every option. Each result names where it came from (``from``) and carries
        the conflict note it takes part in (``conflict``, else null)."""
        detail = await self.recall_detail(
            query, limit=limit, scope=scope, workspace=workspace, profile=profile, since=since,
            until=until, catch_up=catch_up, lanes=lanes, touch=touch, explain=explain,
            min_relevance=min_relevance)
        return detail["results"]

    async def recall_detail(
        self, query: str, *, limit: int = 10, scope: Scope | None = None,
        workspace: str | None = None, profile: RecallProfile = "balanced", since: str | None = None,
        until: str | None = None, catch_up: bool | None = None, lanes: RecallLanes = "hybrid",
        touch: bool = True, explain: bool = False, min_relevance: float | None = None,
    ) -> RecallDetail:
        """A recall through :class:`mind.retrieval.combined.CombinedRetrieval`, answered as ``POST
        /v1/recall`` answers: ``{results, count, conflicts, external}``
        (:func:`hive_mind.results.recall_response`). Scope ``all`` searches the personal mind
        and every workspace and, when ``HIVE_MIND_EXTERNAL_URL`` is set and local results are
        thin, the external source (never for catch-up or a single lane; its failure is
        ``external.error``, never an error of the recall). ``lanes`` restricts to the keyword
        or vector lane (evaluation, debugging); ``touch=False`` leaves access counts alone (a
        look that must not change later rankings); ``explain`` adds to each result an
        ``explain`` object: lane ranks, fused score and every re-score factor
        (:func:`hive_mind.results.explain_dict`); ``min_relevance`` (0-1) drops results whose
        ``absolute_relevance`` is below it (:mod:`mind.retrieval.relevance`; a briefing and
        external documents have none and stay)."""
        bounded_int(limit, "limit", 1, 100)
        if min_relevance is not None:
            bounded_float(min_relevance, "min_relevance", 0.0, 1.0)
        bounded_text(query, "query", MAX_QUERY_CHARS)
        minds = self._recall_minds(scope, workspace)
        from mind.embeddings.memo import QueryMemo
        from mind.retrieval.catchup import is_catch_up
        from mind.retrieval.combined import CombinedRetrieval, SearchOptions
        from mind.retrieval.routing import ROUTED_CANDIDATES
        from mind.retrieval.search import CANDIDATES

        with answering():  # background builds step aside meanwhile (mind/foreground.py)
            embedder = QueryMemo(await self.runtime.embedder_ready())  # one encode per recall
            routing = None
            if scope == "all":
                catching_up = catch_up or (catch_up is None and is_catch_up(query))
                workspaces = [ws for ws in minds if ws is not None]
                routed = await self._routed(query, workspaces, embedder, lanes, catching_up)
                if len(routed) < len(workspaces):
                    routing = {"searched": len(routed), "workspaces": len(workspaces)}
                minds = [*self._personal_here(), *routed]
            searchers = [("personal" if ws is None else f"workspace:{ws}",
                          self._searcher(ws, embedder)) for ws in minds]
            options = SearchOptions(profile=profile, since=since, until=until,
                                    catch_up=catch_up, lanes=lanes, touch=touch,
                                    candidates=ROUTED_CANDIDATES if routing else CANDIDATES,
                                    min_relevance=min_relevance)
            combined = await CombinedRetrieval(searchers, self.external).search(
                query, limit, options, external=scope == "all")
            combined.routing = routing
            return recall_response(combined, limit, explain=explain)

    async def catch_up(self, *, limit: int = 10, workspace: str | None = None
                       ) -> list[RecallResult]:
        """What happened lately: recent and important frames, no query needed."""
        return await self.recall("catch up", limit=limit, workspace=workspace, catch_up=True,
                                 scope="workspace" if workspace else "personal")

    # -- knowledge graph --------------------------------------------------------------------

    async def search_entities(self, query: str, *, entity_type: str | None = None,
                              limit: int = 20, workspace: str | None = None
                              ) -> list[EntityView]:
        if entity_type is not None and entity_type not in ENTITY_TYPES:
            raise ValidationError(f"type must be one of {list(ENTITY_TYPES)}")
        bounded_int(limit, "limit", 1, 200)
        bounded_text(query, "query", MAX_NAME_CHARS)
        async with self.reading(workspace) as reader:
            kg = reader.knowledge
            found = await kg.search_entities(query, limit, entity_type=entity_type)
            return [await entity_dict(kg, e) for e in found]

    async def save_entity(self, entity_type: str, name: str, *,
                          properties: JsonInput | None = None,
                          workspace: str | None = None) -> SavedEntity:
        if entity_type not in ENTITY_TYPES:
            raise ValidationError(f"type must be one of {list(ENTITY_TYPES)}")
        return saved_entity(expect(await self.submit(workspace, lambda i: ops.SaveEntity(
            mind_id=i, entity_type=entity_type, name=name, properties=properties or {})),
            EntitySaved))

    async def create_relation(self, source_id: int, target_id: int, relation_type: str, *,
                              confidence: float = 1.0, properties: JsonInput | None = None,
                              workspace: str | None = None) -> RelationShape:
        return relation_shape(expect(await self.submit(workspace, lambda i: ops.CreateRelation(
            mind_id=i, source_id=source_id, target_id=target_id, relation_type=relation_type,
            confidence=confidence, properties=properties or {})), Relation))

    # -- identity and awareness -------------------------------------------------------------

    async def get_identity(self, *, workspace: str | None = None) -> IdentityView:
        identity = await (await self.reader(workspace)).identity.find()
        if identity is None:
            return {"configured": False,
                    "message": "No identity configured yet. Use set_identity to create one."}
        return {"configured": True, "name": identity.name, "role": identity.role,
                "department": identity.department, "personality": identity.personality,
                "capabilities": identity.capabilities, "system_prompt": identity.system_prompt,
                "created_at": identity.created_at, "updated_at": identity.updated_at}

    async def set_identity(
        self, *, workspace: str | None = None, name: str | None = None,
        role: str | None = None, department: str | None = None,
        personality: str | None = None, capabilities: str | None = None,
        system_prompt: str | None = None, **unknown: object,
    ) -> IdentitySaved:
        """Create or update the identity: the fields given (not None) change. A keyword that
        is no identity field is refused with the other wrong arguments (:func:`build_op`)."""
        given = {k: v for k, v in {
            "name": name, "role": role, "department": department, "personality": personality,
            "capabilities": capabilities, "system_prompt": system_prompt, **unknown,
        }.items() if v is not None}
        if not given:
            raise ValidationError("No fields provided to update.")
        reader = await self.reader(workspace)
        if not await reader.identity.exists():
            given.setdefault("name", "User")
        return identity_saved(expect(await self.submit(workspace, lambda i: (
            ops.SetIdentity.model_validate({"mind_id": i, **given}))), IdentitySet))

    async def get_awareness(self, *, category: str | None = None,
                            workspace: str | None = None) -> list[AwarenessShape]:
        layer = (await self.reader(workspace)).awareness
        items = await (layer.get_by_category(category) if category else layer.get_all())
        return [awareness_shape(i) for i in items]

    async def set_awareness(self, category: str, content: str, *, priority: int = 0,
                            ttl_minutes: int | None = None, workspace: str | None = None,
                            idempotency_key: str | None = None) -> AwarenessAdded:
        """Add an awareness item. ``idempotency_key`` as for :meth:`save`: a repeat returns the
        first item as it was added (``replayed`` true) and adds nothing."""
        bounded_int(priority, "priority", 0, AWARENESS_PRIORITY_MAX)
        expires = None
        if ttl_minutes is not None:
            bounded_int(ttl_minutes, "ttl_minutes", 1, MAX_TTL_MINUTES, unit="(10 years)")
            moment = datetime.now(UTC) + timedelta(minutes=ttl_minutes)
            expires = format_ts(moment)
        request = {"category": category, "content": content, "priority": priority,
                   "ttl_minutes": ttl_minutes}
        result, replayed = await self._write(workspace, lambda i: ops.AddAwareness(
            mind_id=i, category=category, content=content, priority=priority,
            expires_at=expires), idempotency_key, "awareness.add", request)
        # a replay answers the item as stored with the key (its JSON shape)
        item = AwarenessItem(**_stored(result)) if replayed else expect(result, AwarenessItem)
        return {**awareness_shape(item), "replayed": replayed}

    async def clear_awareness(self, *, item_id: int | None = None, category: str | None = None,
                              workspace: str | None = None) -> AwarenessCleared:
        if item_id is not None:
            removed = expect(await self.submit(
                workspace, lambda i: ops.RemoveAwareness(mind_id=i, item_id=item_id)),
                AwarenessRemoved)
            if not removed.removed:
                raise NotFoundError(f"awareness item {item_id} not found")
            return awareness_removed(removed)
        if category is not None:
            return awareness_cleared(expect(await self.submit(
                workspace, lambda i: ops.ClearAwareness(mind_id=i, category=category)),
                AwarenessClearedResult))
        raise ValidationError("Provide either an id or category to clear.")

    # -- workspaces -------------------------------------------------------------------------

    async def list_workspaces(self) -> WorkspaceList:
        """Every workspace with its counts, from the runtime's catalog (no mind opened: a
        thousand workspaces list in well under a second)."""
        listed = [ws for ws in self.workspaces.list() if self.owns(mind_id(ws["id"]))]
        counts = await self.runtime.census([mind_id(ws["id"]) for ws in listed])
        rows: list[WorkspaceRow] = []
        for ws in listed:
            known = counts.get(mind_id(ws["id"]))
            rows.append({**workspace_meta(ws), "frames": known.frames if known else 0,
                         "entities": known.entities if known else 0,
                         "pending_index": known.pending_index if known else 0,
                         "last_write": _stamp_time(known.modified_ns) if known else None})
        personal = await self.stats() if self.owns(PERSONAL_MIND) else None  # sharded: its owner's
        return {"personal": personal, "workspaces": rows,
                "default_workspace": self.workspaces.default()}

    async def create_workspace(self, name: str, *, group: str = "general",
                               icon: str | None = None, model: str | None = None,
                               workspace_id: str | None = None) -> WorkspaceMeta:
        meta = self.workspaces.create(name, group=group, icon=icon, model=model,
                                      workspace_id=workspace_id)
        try:
            await self.runtime.reader(mind_id(meta["id"]))  # create the mind file now
        except BaseException:  # refused (a mind moving here): no metadata without its mind
            self.workspaces.delete(meta["id"])
            raise
        return workspace_meta(meta)

    async def get_workspace(self, workspace: str) -> WorkspaceView:
        self.mind_id(workspace)
        meta = workspace_meta(self.workspaces.get(workspace))
        return {**meta, **await self.stats(workspace=workspace)}

    async def update_workspace(self, workspace: str, *, name: str | None = None,
                               group: str | None = None, icon: str | None = None,
                               model: str | None = None) -> WorkspaceMeta:
        return workspace_meta(self.workspaces.update(
            workspace, name=name, group=group, icon=icon, model=model))

    async def delete_workspace(self, workspace: str) -> WorkspaceDeleted:
        ident = self.mind_id(workspace)
        await self.runtime.close_mind(ident)
        self.workspaces.delete(workspace)
        return {"deleted": workspace}

    async def set_default_workspace(self, workspace: str | None) -> WorkspaceDefault:
        self.workspaces.set_default(workspace)
        return {"default_workspace": workspace}

    async def stats(self, *, workspace: str | None = None) -> MindStats:
        async with self.reading(workspace) as reader:
            frames = await reader.frames.get_stats()
            return {
                "frames": frames.get("total", 0), "by_type": frames.get("by_type", {}),
                "by_importance": frames.get("by_importance", {}),
                "entities": await reader.knowledge.get_entity_count(),
                "entity_types": await reader.knowledge.get_entity_type_counts(),
                "pending_index": await reader.outbox.count(),
                "vectors": (await reader.vectors.counts())["frame_vectors"],
            }

    # -- maintenance ------------------------------------------------------------------------

    async def maintenance(self, kind: str, *, workspace: str | None = None,
                          all_minds: bool = False) -> MaintenanceRun:
        """Run ``compact``, ``reconcile``, ``reembed``, ``dedupe`` or ``sync`` (re-harvest stale
        auto-sync sources) on one mind or on all."""
        if kind not in MAINTENANCE_KINDS:
            raise ValidationError(f"maintenance must be one of {list(MAINTENANCE_KINDS)}")
        targets = ([*self._personal_here(), *self._workspace_ids()] if all_minds
                   else [workspace])
        out: dict[str, JsonObject] = {}
        for ws in targets:
            out[ws or PERSONAL_MIND] = await self._maintain(kind, ws)
        return {"action": kind, "minds": out}

    async def _maintain(self, kind: str, workspace: str | None) -> JsonObject:
        if kind == "compact":
            return await self.apply(workspace, lambda i: ops.Compact(mind_id=i))
        if kind == "dedupe":
            return await self.apply(workspace, lambda i: ops.Dedupe(mind_id=i))
        if kind == "reconcile":  # its commit hook queues the pending frames it found, once
            found = expect(await self.submit(
                workspace, lambda i: ops.Reconcile(mind_id=i, grace_seconds=0)), Reconciled)
            return {**write_dict(found), "requeued": len(found.requeue)}
        if kind == "sync":  # re-harvest auto-sync sources whose interval has passed
            from workers.harvest import harvest_stale

            synced = await harvest_stale(self.runtime, await self._resolve(workspace))
            return {"synced": [outcome.as_dict() for outcome in synced]}
        embedder = await self.runtime.embedder_ready()
        if embedder.degraded:
            raise ValidationError("no working embedder to re-embed with: "
                                  f"{embedder.last_error or 'check the embedding settings'}")
        provider, model, dim = fingerprint(embedder)
        return await self.apply(workspace, lambda i: ops.Reembed(
            mind_id=i, provider=provider, model=model, dim=dim))

    async def cleanup_frames(self, mode: str, *, workspace: str | None = None,
                             max_temp_age_days: int = 30, max_deprecated_age_days: int = 90
                             ) -> JsonObject:
        if mode not in FRAME_CLEANUP_MODES:
            raise ValidationError(f"mode must be one of {list(FRAME_CLEANUP_MODES)}")
        for what, days in (("max_temp_age_days", max_temp_age_days),
                           ("max_deprecated_age_days", max_deprecated_age_days)):
            bounded_int(days, what, 1, MAX_AGE_DAYS, unit="days (100 years)")
        if mode == "compact":
            result = await self.apply(workspace, lambda i: ops.Compact(
                mind_id=i, max_temp_age_days=max_temp_age_days,
                max_deprecated_age_days=max_deprecated_age_days))
            return {"action": mode, **result}
        if mode == "reconcile":
            return {"action": mode, **await self._maintain("reconcile", workspace)}
        return await self.apply(workspace, lambda i: ops.WipeFrames(mind_id=i, mode=mode))

    async def cleanup_entities(self, mode: str, *, workspace: str | None = None
                               ) -> JsonObject:
        return await self.apply(workspace, lambda i: ops.CleanupEntities(mind_id=i, mode=mode))

    # -- harvest and ingest -----------------------------------------------------------------

    async def harvest(self, source: str, path: str | Path, *, workspace: str | None = None,
                      progress: Progress | None = None, auto_sync: bool | None = None,
                      sync_interval_hours: int | None = None, wait: bool = True,
                      label: str | None = None) -> HarvestReport:
        """Import an export (chat history, documents) into a mind; see :mod:`hive_mind.harvest`.
        ``progress`` receives :class:`~workers.harvest_summary.ProgressEvent` values."""
        summary = await self.run_harvest(
            source, path, workspace=workspace, progress=progress, auto_sync=auto_sync,
            sync_interval_hours=sync_interval_hours, wait=wait, label=label)
        return summary.as_dict()

    async def run_harvest(
        self, source: str, path: str | Path, *, workspace: str | None = None,
        progress: Progress | None = None, auto_sync: bool | None = None,
        sync_interval_hours: int | None = None, wait: bool = True, importance: str = "normal",
        tags: list[str] | None = None, label: str | None = None, rereadable: bool | None = None,
    ) -> HarvestSummary:
        """:meth:`harvest` with every option (the HTTP routes': ``rereadable`` and a ``label``
        for a path the client named), answered with the typed summary."""
        if sync_interval_hours is not None:
            bounded_int(sync_interval_hours, "sync_interval_hours", 1, MAX_SYNC_INTERVAL_HOURS,
                        unit="hours (10 years)")
        from hive_mind.harvest import harvest_into

        return await harvest_into(
            self.runtime, await self._resolve(workspace), source, path, workspace=workspace,
            progress=progress, auto_sync=auto_sync, interval_hours=sync_interval_hours,
            wait=wait, importance=importance, tags=tags, label=label, rereadable=rereadable)

    async def harvest_sources(self, *, workspace: str | None = None) -> list[JsonObject]:
        from mind.harvest.store import HarvestStore

        return await HarvestStore((await self.reader(workspace)).db).sources()

    # -- browsing ---------------------------------------------------------------------------

    async def list_sessions(self, *, workspace: str | None = None, page: int = 1,
                            limit: int = 50) -> JsonObject:
        """The mind's sessions, newest first (by their newest frame), a page at a time, with
        their frame counts and time spans (:mod:`hive_mind.browse`)."""
        async with self.reading(workspace) as reader:
            return await browse.sessions_page(reader, page, limit)

    async def session_frames(self, session: str, *, workspace: str | None = None,
                             before: int | None = None, limit: int = 50) -> JsonObject:
        """A session's frames, newest first; ``next`` continues with ``before``."""
        async with self.reading(workspace) as reader:
            return await browse.session_frames(reader, session, before, limit)

    async def entity_graph(self, entity_id: int, *, workspace: str | None = None,
                           limit: int = 100) -> JsonObject:
        """An entity with its neighbours and every relation touching it, retired ones with
        their validity interval."""
        async with self.reading(workspace) as reader:
            return await browse.entity_graph(reader, entity_id, limit)

    async def harvest_runs(self, *, workspace: str | None = None, limit: int = 50
                           ) -> list[JsonObject]:
        """The latest harvest runs into the mind (source, items done, status, error)."""
        async with self.reading(workspace) as reader:
            return await browse.harvest_runs(reader, limit)

    async def ingest(self, content: str, *, type_hint: str = "auto", importance: str = "normal",
                     tags: list[str] | None = None, workspace: str | None = None,
                     wait: bool = True) -> IngestReport:
        """Ingest a file path, a URL or raw text (markdown, plaintext, pdf, url)."""
        summary = await self.run_ingest(content, type_hint=type_hint, importance=importance,
                                        tags=tags, workspace=workspace, wait=wait)
        return summary.as_dict()

    async def run_ingest(self, content: str, *, type_hint: str = "auto",
                         importance: str = "normal", tags: list[str] | None = None,
                         workspace: str | None = None, wait: bool = True,
                         label: str | None = None) -> IngestSummary:
        """:meth:`ingest` answered with the typed summary; ``label``: ``content`` is a private
        copy (a temp file: an upload, a client's text) shown under this name."""
        from hive_mind.harvest import ingest_into

        return await ingest_into(
            self.runtime, await self._resolve(workspace), content, workspace=workspace,
            type_hint=type_hint, importance=importance, tags=tags_input(tags), wait=wait,
            label=label)

    # -- jobs -------------------------------------------------------------------------------

    async def jobs(self) -> JobsReport:
        """Queued, running and failed (dead-lettered) jobs, per mind (:mod:`workers.jobs_admin`)."""
        from workers.jobs_admin import jobs_report

        return await jobs_report(self.runtime)

    async def retry_jobs(self, dead_letter_id: str | None = None, *,
                         all_failed: bool = False) -> Retried:
        """Run one dead letter again, or every one (``all_failed``)."""
        from workers.jobs_admin import retry

        return await retry(self.runtime, dead_letter_id, all_failed=all_failed)

    async def drop_jobs(self, dead_letter_id: str | None = None, *,
                        all_failed: bool = False) -> Dropped:
        """Forget one dead letter, or every one (``all_failed``)."""
        from workers.jobs_admin import drop

        return await drop(self.runtime, dead_letter_id, all_failed=all_failed)

    async def nightly_maintenance(self, *, spread: bool = False,
                                  on_progress: Callable[[int, int], None] | None = None
                                  ) -> JsonObject:
        """Today's scheduled maintenance now, in this process: the configured tasks of every
        mind not opted out, minus what a process on this data dir ran today already
        (:mod:`workers.schedule`; for a systemd timer or cron when no ``serve``/``mcp`` runs).
        ``spread`` starts the minds over ``HIVE_MIND_MAINTENANCE_SPREAD_MINUTES`` (else one
        after another); ``on_progress(minds done, minds)`` follows the run."""
        from dataclasses import replace

        from workers.scheduler import run_scheduled

        config = self.settings.schedule_config()
        run = await run_scheduled(self.runtime, config if spread else replace(
            config, spread_minutes=0), self.settings.data_dir, on_progress=on_progress)
        return run.as_dict()

    # -- status -----------------------------------------------------------------------------

    async def status(self, *, probe: bool = True) -> StatusReport:
        from hive_mind.status import collect

        return await collect(self.settings, self.runtime, probe=probe)


if TYPE_CHECKING:  # mypy holds each facade class to the contract (hive_mind/contract.py)
    def _conformance(local: HiveMind, remote: RemoteHiveMind, sharded: ShardedHiveMind
                     ) -> list[MindFacade]:
        hosts: list[HostFacade] = [local, sharded]
        return [remote, *hosts]
