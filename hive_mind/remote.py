"""Client mode: ``RemoteHiveMind`` has the methods of
:class:`~hive_mind.facade.HiveMind` and calls a running ``hive-mind serve`` over its REST API.

``HiveMind.open()`` returns one when ``settings.url`` (``HIVE_MIND_URL`` / ``--url``) is set.
The bearer token is ``settings.security.api_token``. Error responses become the same exception
classes the facade raises (by their stable ``code``: ``not_found`` → ``NotFoundError``, …); a server
that cannot be reached is :class:`~hive_mind.api.codes.ServerUnavailableError`; a write whose
request was sent but whose answer never came (the server died, the connection dropped, a
timeout) is :class:`WriteOutcomeUnknownError`: it may have been applied. ``save`` and
``set_awareness`` always send an idempotency key (the caller's, or a fresh one) and name it in
that error, so repeating the write with that key is exactly-once.

Files: ``harvest``/``ingest`` upload a path that exists on this machine (a directory is zipped
first); anything else (URLs, raw text, paths only the server has) is sent as is.
"""

from __future__ import annotations

import logging
import tempfile
import uuid
import zipfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

from hive_mind.api.codes import (
    UPSTREAM_ERROR,
    RemoteError,
    ServerUnavailableError,
    UnauthorizedError,
    exception_for,
)
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
from mind.bounds import bounded_float
from mind.errors import ConfigurationError, ValidationError
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

DEFAULT_TIMEOUT = 600.0  # harvests with wait=True answer when indexing is done
# a pooled connection is dropped before serve's 5 s keep-alive closes it from its end: reusing
# one the server is closing loses the answer to a request already sent (outcome unknown)
KEEPALIVE_SECONDS = 2.0
POOL_LIMITS = httpx.Limits(keepalive_expiry=KEEPALIVE_SECONDS)  # every client of our servers
# Failures before the request left this machine: nothing can have been applied.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_CHECK_FIRST = ("Check whether it took effect before repeating it (a repeated write may apply "
                "twice).")


class WriteOutcomeUnknownError(ServerUnavailableError):
    """A write was sent but no answer came back: the server may have applied it."""

    code = "outcome_unknown"


def retry_hint(key: str) -> str:
    """How to repeat a write sent with idempotency key ``key`` safely."""
    return (f"Retry with the same idempotency key to apply it exactly once: --idempotency-key "
            f"{key} (Python/HTTP/MCP: idempotency_key={key!r}).")


def _segment(value: object) -> str:
    """One URL path segment; dots are encoded too so ``..`` is never a dot segment."""
    text = quote(str(value), safe="")
    return text.replace(".", "%2E") if text.strip(".") == "" else text


def _form(values: dict[str, Any]) -> JsonObject:
    out: dict[str, Any] = {}
    for key, value in values.items():
        if value is None:
            continue
        out[key] = ("true" if value else "false") if isinstance(value, bool) else value
    return out


log = logging.getLogger(__name__)


def error_of(response: httpx.Response, prefix: str = "") -> Exception:
    """The exception of an error response (by its stable code; ``prefix`` names who said it);
    a body that is not our error JSON is a :class:`RemoteError` ``upstream_error`` (502) that
    carries none of it (a forwarding host would hand it on to its caller)."""
    try:
        error = response.json()["error"]
        code, message = str(error["code"]), str(error["message"])
        details = error.get("details")
    except (ValueError, KeyError, TypeError):  # a proxy's page, an internal page: not passed on
        log.warning("%sHTTP %d without a hive-mind error body", prefix, response.status_code)
        return RemoteError(f"{prefix}the server answered HTTP {response.status_code} without "
                           "a hive-mind error body", code=UPSTREAM_ERROR, status=502)
    return exception_for(code, prefix + message, response.status_code,
                         details if isinstance(details, dict) else None)


def _local_file(value: object) -> Path | None:
    if isinstance(value, Path):
        return value.expanduser()
    if not isinstance(value, str) or "\n" in value or len(value) > 4096 \
            or value.lower().startswith(("http://", "https://")):
        return None
    path = Path(value).expanduser()
    try:
        return path if path.exists() else None
    except OSError:
        return None


class RemoteHiveMind:
    def __init__(self, settings: Settings, *, timeout: float = DEFAULT_TIMEOUT,
                 transport: httpx.AsyncBaseTransport | None = None,
                 connect_timeout: float = 10.0,
                 on_request: Callable[[httpx.Request], Awaitable[None]] | None = None) -> None:
        if not settings.url:
            raise ConfigurationError("client mode needs a server URL (HIVE_MIND_URL or --url)")
        self.settings = settings
        self.url = settings.url.rstrip("/")
        headers = {"User-Agent": "hive-mind-client"}
        token = settings.api_secret()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        hooks = {"request": [on_request]} if on_request is not None else None
        self._http = httpx.AsyncClient(base_url=self.url, headers=headers, transport=transport,
                                       timeout=httpx.Timeout(timeout, connect=connect_timeout),
                                       limits=POOL_LIMITS,
                                       event_hooks=hooks)

    mode = "client"

    # -- plumbing ---------------------------------------------------------------------------

    async def _call(self, method: str, path: str, *, json: Any = None,
                    params: dict[str, Any] | None = None, files: Any = None,
                    data: dict[str, Any] | None = None, retry: str = _CHECK_FIRST) -> Any:
        """One request; ``retry`` tells the caller of a write how to repeat it safely when its
        outcome is unknown."""
        query = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            response = await self._http.request(method, path, json=json, params=query or None,
                                                files=files, data=data)
        except httpx.HTTPError as exc:
            reason = f"{type(exc).__name__}: {exc}".rstrip(": ")
            if method != "GET" and not isinstance(exc, _NOT_SENT):
                raise WriteOutcomeUnknownError(
                    f"no answer from hive-mind at {self.url} to {method} {path} after it was "
                    f"sent ({reason}): the write may have been applied. {retry}") from exc
            raise ServerUnavailableError(
                f"cannot reach hive-mind at {self.url}: {reason}") from exc
        if response.status_code >= 400:
            raise self._error(response)
        try:
            return response.json()
        except ValueError as exc:
            raise ServerUnavailableError(
                f"{self.url}{path} answered {response.status_code} without JSON") from exc

    def _error(self, response: httpx.Response) -> Exception:
        exc = error_of(response)
        if response.status_code == 401 and isinstance(exc, UnauthorizedError):
            hint = ("the token in HIVE_MIND_API_TOKEN is not one this server accepts"
                    if self.settings.security.api_token else
                    "set HIVE_MIND_API_TOKEN to the server's API token")
            return UnauthorizedError(f"{exc} (hive-mind at {self.url}): {hint}")
        return exc

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> RemoteHiveMind:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def wait_idle(self, timeout: float | None = None) -> bool:
        """Nothing to wait for here: pass ``wait=True`` to the writes that should block."""
        return True

    # -- frames and recall ------------------------------------------------------------------

    async def save(self, content: str, *, importance: Importance = "normal",
                   source: FrameSource = "agent_inferred", workspace: str | None = None,
                   session: str | None = None, metadata: JsonInput | None = None,
                   wait: bool = False, created_at: str | None = None,
                   idempotency_key: str | None = None, updates: int | None = None,
                   refs: list[int] | None = None) -> SavedFrame:
        body: dict[str, object] = {
            "content": content, "importance": importance, "source": source,
            "workspace": workspace, "session": session, "metadata": metadata, "wait": wait,
            "created_at": created_at}
        if updates is not None or refs is not None:  # a plain save sends what it always did
            body.update(updates=updates, refs=refs)
        saved: SavedFrame = await self._keyed_post("/v1/memories", body, idempotency_key)
        return saved

    async def _keyed_post(self, path: str, body: dict[str, object], key: str | None
                          ) -> Any:
        """POST a write with an idempotency key: the caller's, else a fresh one, named in the
        error if the answer is lost so the caller can repeat the write exactly once."""
        key = uuid.uuid4().hex if key is None else key
        return await self._call("POST", path, json={**body, "idempotency_key": key},
                                retry=retry_hint(key))

    async def get_frame(self, frame_id: int, *, workspace: str | None = None
                        ) -> FrameShape:
        result: FrameShape = await self._call(
            "GET", f"/v1/memories/{_segment(frame_id)}", params={"workspace": workspace})
        return result

    async def set_importance(self, frame_id: int, importance: Importance, *,
                             workspace: str | None = None) -> FrameShape:
        result: FrameShape = await self._call(
            "PATCH", f"/v1/memories/{_segment(frame_id)}", params={"workspace": workspace},
            json={"importance": importance})
        return result

    async def session_state(self, session: str, *, workspace: str | None = None
                            ) -> SessionState:
        result: SessionState = await self._call(
            "GET", f"/v1/sessions/{_segment(session)}/state", params={"workspace": workspace})
        return result

    async def forget(self, frame_id: int, *, workspace: str | None = None) -> Forgotten:
        result: Forgotten = await self._call(
            "DELETE", f"/v1/memories/{_segment(frame_id)}", params={"workspace": workspace})
        return result

    async def recall(self, query: str, *, limit: int = 10, scope: Scope | None = None,
                     workspace: str | None = None, profile: RecallProfile = "balanced",
                     since: str | None = None, until: str | None = None,
                     catch_up: bool | None = None, lanes: RecallLanes = "hybrid",
                     touch: bool = True, explain: bool = False,
                     min_relevance: float | None = None) -> list[RecallResult]:
        detail = await self.recall_detail(
            query, limit=limit, scope=scope, workspace=workspace, profile=profile, since=since,
            until=until, catch_up=catch_up, lanes=lanes, touch=touch, explain=explain,
            min_relevance=min_relevance)
        return detail["results"]

    async def recall_detail(self, query: str, *, limit: int = 10, scope: Scope | None = None,
                            workspace: str | None = None, profile: RecallProfile = "balanced",
                            since: str | None = None, until: str | None = None,
                            catch_up: bool | None = None, lanes: RecallLanes = "hybrid",
                            touch: bool = True, explain: bool = False,
                            min_relevance: float | None = None) -> RecallDetail:
        if min_relevance is not None:  # checked here too: JSON has no NaN to send
            bounded_float(min_relevance, "min_relevance", 0.0, 1.0)
        body = {"query": query, "limit": limit, "scope": scope, "workspace": workspace,
                "profile": profile, "since": since, "until": until, "catch_up": catch_up,
                "lanes": lanes, "touch": touch, "explain": explain,
                "min_relevance": min_relevance}
        detail: RecallDetail = await self._call("POST", "/v1/recall", json=body)
        return detail

    async def catch_up(self, *, limit: int = 10, workspace: str | None = None
                       ) -> list[RecallResult]:
        out = await self._call("GET", "/v1/catch-up",
                               params={"limit": limit, "workspace": workspace})
        results: list[RecallResult] = out["results"]
        return results

    # -- knowledge graph --------------------------------------------------------------------

    async def search_entities(self, query: str, *, entity_type: str | None = None,
                              limit: int = 20, workspace: str | None = None
                              ) -> list[EntityView]:
        out = await self._call("GET", "/v1/entities", params={
            "query": query, "type": entity_type, "limit": limit, "workspace": workspace})
        entities: list[EntityView] = out["entities"]
        return entities

    async def save_entity(self, entity_type: str, name: str, *,
                          properties: JsonInput | None = None,
                          workspace: str | None = None) -> SavedEntity:
        result: SavedEntity = await self._call("POST", "/v1/entities", json={
            "entity_type": entity_type, "name": name, "properties": properties,
            "workspace": workspace})
        return result

    async def create_relation(self, source_id: int, target_id: int, relation_type: str, *,
                              confidence: float = 1.0, properties: JsonInput | None = None,
                              workspace: str | None = None) -> RelationShape:
        result: RelationShape = await self._call("POST", "/v1/relations", json={
            "source_id": source_id, "target_id": target_id, "relation_type": relation_type,
            "confidence": confidence, "properties": properties, "workspace": workspace})
        return result

    # -- identity and awareness -------------------------------------------------------------

    async def get_identity(self, *, workspace: str | None = None) -> IdentityView:
        result: IdentityView = await self._call("GET", "/v1/identity",
                                                  params={"workspace": workspace})
        return result

    async def set_identity(
        self, *, workspace: str | None = None, name: str | None = None,
        role: str | None = None, department: str | None = None,
        personality: str | None = None, capabilities: str | None = None,
        system_prompt: str | None = None, **unknown: object,
    ) -> IdentitySaved:
        """The given fields; a keyword that is no identity field goes too (the server refuses
        it, as the local facade does)."""
        fields = {"name": name, "role": role, "department": department,
                  "personality": personality, "capabilities": capabilities,
                  "system_prompt": system_prompt, **unknown}
        result: IdentitySaved = await self._call("PUT", "/v1/identity", json={
            **{k: v for k, v in fields.items() if v is not None}, "workspace": workspace})
        return result

    async def get_awareness(self, *, category: str | None = None,
                            workspace: str | None = None) -> list[AwarenessShape]:
        out = await self._call("GET", "/v1/awareness",
                               params={"category": category, "workspace": workspace})
        items: list[AwarenessShape] = out["items"]
        return items

    async def set_awareness(self, category: str, content: str, *, priority: int = 0,
                            ttl_minutes: int | None = None, workspace: str | None = None,
                            idempotency_key: str | None = None) -> AwarenessAdded:
        added: AwarenessAdded = await self._keyed_post("/v1/awareness", {
            "category": category, "content": content, "priority": priority,
            "ttl_minutes": ttl_minutes, "workspace": workspace}, idempotency_key)
        return added

    async def clear_awareness(self, *, item_id: int | None = None, category: str | None = None,
                              workspace: str | None = None) -> AwarenessCleared:
        result: AwarenessCleared = await self._call("DELETE", "/v1/awareness", params={
            "id": item_id, "category": category, "workspace": workspace})
        return result

    # -- workspaces -------------------------------------------------------------------------

    async def list_workspaces(self) -> WorkspaceList:
        result: WorkspaceList = await self._call("GET", "/v1/workspaces")
        return result

    async def create_workspace(self, name: str, *, group: str = "general",
                               icon: str | None = None, model: str | None = None,
                               workspace_id: str | None = None) -> WorkspaceMeta:
        result: WorkspaceMeta = await self._call("POST", "/v1/workspaces", json={
            "name": name, "group": group, "icon": icon, "model": model, "id": workspace_id})
        return result

    async def get_workspace(self, workspace: str) -> WorkspaceView:
        result: WorkspaceView = await self._call("GET", f"/v1/workspaces/{_segment(workspace)}")
        return result

    async def update_workspace(self, workspace: str, *, name: str | None = None,
                               group: str | None = None, icon: str | None = None,
                               model: str | None = None) -> WorkspaceMeta:
        fields = {"name": name, "group": group, "icon": icon, "model": model}
        result: WorkspaceMeta = await self._call(
            "PATCH", f"/v1/workspaces/{_segment(workspace)}",
            json={k: v for k, v in fields.items() if v is not None})
        return result

    async def delete_workspace(self, workspace: str) -> WorkspaceDeleted:
        result: WorkspaceDeleted = await self._call(
            "DELETE", f"/v1/workspaces/{_segment(workspace)}")
        return result

    async def set_default_workspace(self, workspace: str | None) -> WorkspaceDefault:
        result: WorkspaceDefault = await self._call("PUT", "/v1/workspaces/default",
                                                  json={"workspace": workspace})
        return result

    async def stats(self, *, workspace: str | None = None) -> MindStats:
        result: MindStats = await self._call("GET", "/v1/stats",
                                                  params={"workspace": workspace})
        return result

    # -- export -----------------------------------------------------------------------------

    async def export_mind(self, *, workspace: str | None = None,
                          fmt: ExportFormat = "universal") -> Export:
        """The server's ``GET /v1/export``, read as it arrives."""
        from hive_mind.export import FRAMES_HEADER, Export

        params = {k: v for k, v in (("workspace", workspace), ("format", fmt)) if v is not None}
        try:
            response = await self._http.send(
                self._http.build_request("GET", "/v1/export", params=params), stream=True)
        except httpx.HTTPError as exc:
            raise ServerUnavailableError(f"cannot reach hive-mind at {self.url}: "
                                         f"{type(exc).__name__}: {exc}") from exc
        if response.status_code >= 400:
            await response.aread()
            await response.aclose()
            raise self._error(response)
        progress = [0]
        ident = "personal" if not workspace else f"workspace:{workspace}"

        async def chunks() -> AsyncIterator[bytes]:
            try:
                async for chunk in response.aiter_raw():
                    yield chunk
            except httpx.HTTPError as exc:
                raise ServerUnavailableError(f"the export from {self.url} broke off: "
                                             f"{type(exc).__name__}: {exc}") from exc
            finally:
                await response.aclose()

        frames = response.headers.get(FRAMES_HEADER, "")
        return Export(ident, fmt, int(frames) if frames.isdigit() else 0, chunks(), progress)

    async def export_page(self, *, workspace: str | None = None, part: ExportPart = "frames",
                          cursor: str | None = None, limit: int = 100) -> JsonObject:
        result: JsonObject = await self._call("GET", "/v1/export/page", params={
            "workspace": workspace, "part": part, "cursor": cursor, "limit": limit})
        return result

    # -- maintenance ------------------------------------------------------------------------

    async def maintenance(self, kind: str, *, workspace: str | None = None,
                          all_minds: bool = False) -> MaintenanceRun:
        result: MaintenanceRun = await self._call(
            "POST", f"/v1/maintenance/{_segment(kind)}",
            json={"workspace": workspace, "all": all_minds})
        return result

    async def cleanup_frames(self, mode: str, *, workspace: str | None = None,
                             max_temp_age_days: int = 30, max_deprecated_age_days: int = 90
                             ) -> JsonObject:
        result: JsonObject = await self._call("POST", "/v1/cleanup/frames", json={
            "mode": mode, "workspace": workspace, "max_temp_age_days": max_temp_age_days,
            "max_deprecated_age_days": max_deprecated_age_days})
        return result

    async def cleanup_entities(self, mode: str, *, workspace: str | None = None
                               ) -> JsonObject:
        result: JsonObject = await self._call("POST", "/v1/cleanup/entities",
                                                  json={"mode": mode, "workspace": workspace})
        return result

    # -- harvest and ingest -----------------------------------------------------------------

    async def _upload(self, path: str, local: Path, fields: dict[str, Any]) -> Any:
        with tempfile.TemporaryDirectory(prefix="hive-mind-client-") as tmp:
            if local.is_dir():  # directories (claude-code projects) travel as a zip
                archive = Path(tmp) / f"{local.name or 'upload'}.zip"
                with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
                    for item in sorted(local.rglob("*")):
                        if item.is_file():
                            zf.write(item, item.relative_to(local).as_posix())
                local = archive
            with local.open("rb") as handle:
                result = await self._call(
                    "POST", path, data=_form(fields),
                    files={"file": (local.name, handle, "application/octet-stream")})
        return result

    async def harvest(self, source: str, path: str | Path, *, workspace: str | None = None,
                      progress: Progress | None = None, auto_sync: bool | None = None,
                      sync_interval_hours: int | None = None, wait: bool = True,
                      label: str | None = None) -> HarvestReport:
        """Import an export: a file or directory on this machine is uploaded (recorded under
        its local path unless ``label`` says otherwise); anything else (a URL, a path on the
        server) is passed to the server as is. ``progress`` is not reported in client mode."""
        fields = {"source": source, "workspace": workspace, "auto_sync": auto_sync,
                  "sync_interval_hours": sync_interval_hours, "wait": wait, "label": label}
        local = None if source == "url" else _local_file(path)
        if local is not None:
            fields["label"] = label or str(local.resolve())
            uploaded: HarvestReport = await self._upload("/v1/harvest/upload", local, fields)
            return uploaded
        result: HarvestReport = await self._call("POST", "/v1/harvest",
                                                  json={**fields, "path": str(path)})
        return result

    async def harvest_sources(self, *, workspace: str | None = None) -> list[JsonObject]:
        out = await self._call("GET", "/v1/harvest/sources", params={"workspace": workspace})
        sources: list[JsonObject] = out["sources"]
        return sources

    async def list_sessions(self, *, workspace: str | None = None, page: int = 1,
                            limit: int = 50) -> JsonObject:
        result: JsonObject = await self._call("GET", "/v1/sessions", params={
            "workspace": workspace, "page": page, "limit": limit})
        return result

    async def session_frames(self, session: str, *, workspace: str | None = None,
                             before: int | None = None, limit: int = 50) -> JsonObject:
        result: JsonObject = await self._call("GET", "/v1/sessions/frames", params={
            "session": session, "workspace": workspace, "before": before, "limit": limit})
        return result

    async def entity_graph(self, entity_id: int, *, workspace: str | None = None,
                           limit: int = 100) -> JsonObject:
        result: JsonObject = await self._call(
            "GET", f"/v1/entities/{_segment(entity_id)}/graph",
            params={"workspace": workspace, "limit": limit})
        return result

    async def harvest_runs(self, *, workspace: str | None = None, limit: int = 50
                           ) -> list[JsonObject]:
        out = await self._call("GET", "/v1/harvest/runs",
                               params={"workspace": workspace, "limit": limit})
        runs: list[JsonObject] = out["runs"]
        return runs

    async def ingest(self, content: str, *, type_hint: str = "auto", importance: str = "normal",
                     tags: list[str] | None = None, workspace: str | None = None,
                     wait: bool = True) -> IngestReport:
        """Ingest a file on this machine (uploaded), a URL or raw text."""
        fields = {"type_hint": type_hint, "importance": importance, "tags": tags,
                  "workspace": workspace, "wait": wait}
        local = _local_file(content.strip()) if isinstance(content, str) else None
        if local is not None and local.is_file():
            uploaded: IngestReport = await self._upload("/v1/ingest/upload", local, fields)
            return uploaded
        result: IngestReport = await self._call("POST", "/v1/ingest",
                                                  json={**fields, "content": content})
        return result

    # -- jobs -------------------------------------------------------------------------------

    async def jobs(self) -> JobsReport:
        result: JobsReport = await self._call("GET", "/v1/jobs")
        return result

    @staticmethod
    def _dead_letters(dead_letter_id: str | None, all_failed: bool, one: str, every: str
                      ) -> tuple[str, dict[str, str] | None]:
        """The path (and query) naming one dead letter or every one."""
        if (dead_letter_id is None) == (not all_failed):
            raise ValidationError("give one dead letter id or all_failed=True, not both")
        if dead_letter_id is not None:
            return one.format(_segment(dead_letter_id)), None
        return every, {"all": "true"}

    async def retry_jobs(self, dead_letter_id: str | None = None, *,
                         all_failed: bool = False) -> Retried:
        path, params = self._dead_letters(dead_letter_id, all_failed, "/v1/jobs/{}/retry",
                                          "/v1/jobs/retry")
        result: Retried = await self._call("POST", path, params=params)
        return result

    async def drop_jobs(self, dead_letter_id: str | None = None, *,
                        all_failed: bool = False) -> Dropped:
        path, params = self._dead_letters(dead_letter_id, all_failed, "/v1/jobs/{}",
                                          "/v1/jobs")
        result: Dropped = await self._call("DELETE", path, params=params)
        return result

    async def nightly_maintenance(self, *, spread: bool = False,
                                  on_progress: Callable[[int, int], None] | None = None
                                  ) -> JsonObject:
        """The server runs it (its own schedule's spread and progress: ``status``)."""
        result: JsonObject = await self._call("POST", "/v1/jobs/nightly")
        return result

    # -- status -----------------------------------------------------------------------------

    async def status(self, *, probe: bool = True) -> StatusReport:
        result: StatusReport = await self._call("GET", "/v1/status",
                                                    params={"probe": probe})
        return result
