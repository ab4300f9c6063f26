"""The MCP tools of hive-mind (docs/mcp.md): memory, knowledge graph, identity, awareness, etc.

Every tool returns one text block: pretty JSON (2-space indent) for data, a plain sentence for
the "nothing found" cases. Failures are tool results with ``isError`` set and one line
``<code>: <message>`` (``HiveMindError.code``; ``invalid`` for bad arguments), never a
traceback. Unknown workspaces are refused (call
``create_workspace`` first), never auto-created from a caller's string; ``recall_memory``,
``ingest_source`` and ``harvest_import`` honor ``workspace``; scores are normalized to [0, 1].
"""

from __future__ import annotations

import functools
import json
import logging
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import anyio
import pydantic
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from hive_mind.contract import MindFacade
from hive_mind.export import MAX_PAGE
from hive_mind.limits import (
    AgeDays,
    AwarenessText,
    Content,
    EntityName,
    EntityQuery,
    FrameRefs,
    GroupName,
    Icon,
    IdempotencyKey,
    PathText,
    ProfileText,
    Query,
    RowId,
    SessionId,
    ShortName,
    SystemPrompt,
    Tags,
    Timestamp,
    TtlMinutes,
    TypeName,
)
from hive_mind.server_reads import ingest as client_ingest
from hive_mind.server_reads import refuse
from hive_mind.shapes import JsonInput
from hive_mind.workspaces import unknown_workspace
from mind.errors import HiveMindError, ValidationError
from mind.harvest.errors import safe_reason
from vocabulary.enums import (
    AgentImportance,
    AgentSource,
    AwarenessCategory,
    ConversationChoice,
    EntityCleanupMode,
    EntityType,
    ExportPart,
    FrameCleanupMode,
    IngestImportance,
    IngestType,
    RecallProfile,
    Scope,
    ToolScope,
)

log = logging.getLogger(__name__)

GetFacade = Callable[[], Awaitable[MindFacade]]
Tool = Callable[..., Awaitable[str]]

Workspace = Annotated[str | None, Field(
    description="Workspace id (from list_workspaces / create_workspace). Omit for the personal "
                "mind. Unknown ids are an error, never created implicitly.")]
Key = Annotated[IdempotencyKey | None, Field(
    description="Any unique string (e.g. a UUID) naming this write: repeating the call with the "
                "same key returns the first result and writes nothing twice (replayed=true); "
                "the same key with different arguments is a conflict.")]

TOOL_NAMES = (
    "save_memory", "recall_memory", "search_entities", "save_entity", "create_relation",
    "get_identity", "set_identity", "get_awareness", "set_awareness", "clear_awareness",
    "list_workspaces", "create_workspace", "harvest_import", "harvest_sources", "ingest_source",
    "cleanup_frames", "cleanup_entities", "forget_memory", "export_memories", "session_state",
)
_RECALL_FIELDS = ("id", "content", "importance", "source", "score", "absolute_relevance",
                  "created_at", "from", "conflict")
_JSON_INPUT: pydantic.TypeAdapter[JsonInput] = pydantic.TypeAdapter(JsonInput)


def dumps(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def json_input(value: dict[str, object] | None) -> JsonInput | None:
    """A tool's JSON object argument as the facade takes it (checked to be JSON)."""
    return None if value is None else _JSON_INPUT.validate_python(value)


def error_result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def error_text(exc: HiveMindError) -> str:
    message = " ".join(str(exc).split()) or type(exc).__name__
    if unknown_workspace(exc) is not None:
        message += (". Workspaces are never created implicitly: call create_workspace first "
                    "(list_workspaces shows the existing ids).")
    return f"{exc.code}: {message}"


def validation_text(exc: pydantic.ValidationError, tool: str | None = None) -> str:
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"{where}: {err['msg']}" if where else str(err["msg"]))
    head = f"invalid arguments for {tool}: " if tool else "invalid: "
    return head + "; ".join(parts)


def _guard(name: str, fn: Tool, *,
           writes: bool = False) -> Callable[..., Awaitable[str | CallToolResult]]:
    """Turn expected failures into one-line error results (the signature is kept for the SDK);
    an unexpected failure of a ``writes`` tool says the write may have been applied."""

    @functools.wraps(fn)
    async def wrapper(**kwargs: object) -> str | CallToolResult:
        try:
            # Shielded: a client that disconnects mid-call must not cut a write in half (the
            # SDK cancels in-flight requests at end of input); calls are short, and a long
            # harvest is resumable anyway.
            with anyio.CancelScope(shield=True):
                answer = await fn(**kwargs)
            return answer
        except HiveMindError as exc:
            log.info("tool %s refused: %s", name, exc)
            return error_result(error_text(exc))
        except pydantic.ValidationError as exc:
            return error_result("invalid: " + validation_text(exc).removeprefix("invalid: "))
        except Exception:
            log.exception("tool %s failed", name)
            maybe = ("; it may have been applied before the failure: repeat it with the same "
                     "idempotency_key (save_memory), or check before repeating it") if writes \
                else ""
            return error_result(f"internal: {name} failed unexpectedly{maybe}; see the server "
                                "log")

    return wrapper


def check_workspace(mind: MindFacade, workspace: str | None) -> None:
    """Refuse an unsafe or unknown workspace id now, where this process holds the minds (the
    facade does it again on use)."""
    from hive_mind.facade import HiveMind

    if workspace and isinstance(mind, HiveMind):
        mind.mind_id(workspace)


def _default_workspace(mind: MindFacade) -> str | None:
    """The default workspace of the data dir this process holds (a client's: none)."""
    from hive_mind.facade import HiveMind
    from hive_mind.scopes import ScopedFacade

    local = mind.inner if isinstance(mind, ScopedFacade) else mind
    return local.workspaces.default() if isinstance(local, HiveMind) else None


def _today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


def _pick(row: Mapping[str, object], keys: tuple[str, ...]) -> dict[str, object]:
    return {k: row.get(k) for k in keys}


READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DESTROY = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)


def register_tools(server: MCPServer, get_facade: GetFacade, *,
                   server_reads: bool = True) -> None:
    """Register the 20 hive-mind tools on ``server``; each call awaits ``get_facade()``.
    ``server_reads`` False: file paths and URLs are refused (:mod:`hive_mind.server_reads`)."""

    def tool(annotations: ToolAnnotations, description: str) -> Callable[[Tool], Tool]:
        def decorator(fn: Tool) -> Tool:
            writes = not annotations.read_only_hint
            server.add_tool(_guard(fn.__name__, fn, writes=writes), name=fn.__name__,
                            description=" ".join(description.split()),
                            annotations=annotations, structured_output=False)
            return fn
        return decorator

    # -- frames ------------------------------------------------------------------------------

    @tool(WRITE, """Save one fact, decision, preference or event to long-term memory so it can
        be recalled in later conversations. Save self-contained statements (who/what/when), one
        per call. Identical content is deduplicated. Returns JSON {id, content, importance,
        source, created_at, workspace, created, replayed} (created=false: it was already
        stored; replayed=true: this idempotency_key's save was already applied, nothing new
        written). recall_memory finds it by its words at once, by meaning a moment later (once
        indexed). After an error that says the save may have been applied, call again with the
        same idempotency_key. When the fact changes an earlier memory, pass updates=<its id>:
        the new memory is stored as its update (recall then ranks it as current, the earlier
        one as outdated; the answer adds base_frame_id and session, for session_state).
        refs=[ids] stores a cross-reference between earlier memories instead (the answer adds
        base_frame_id, references and session).""")
    async def save_memory(
        content: Annotated[Content, Field(description="The memory text, self-contained.")],
        importance: Annotated[AgentImportance, Field(
            description="critical: must never be lost; temporary: may be pruned after 30 "
                        "days.")] = "normal",
        source: Annotated[AgentSource, Field(
            description="Where the fact came from: the user said it, a tool verified it, you "
                        "inferred it, or the system.")] = "agent_inferred",
        workspace: Workspace = None,
        created_at: Annotated[Timestamp | None, Field(
            description="When it happened, if not now: ISO-8601 with a zone, e.g. "
                        "2024-05-01T12:00:00Z (recall's since/until filter on it).")] = None,
        idempotency_key: Key = None,
        updates: Annotated[RowId | None, Field(
            description="The id of the memory this one updates (it must be a statement, not "
                        "itself an update); the update joins that memory's session.")] = None,
        refs: Annotated[FrameRefs | None, Field(
            description="Ids of earlier memories this one cross-references.")] = None,
    ) -> str:
        mind = await get_facade()
        saved = await mind.save(content, importance=importance, source=source,
                                workspace=workspace or None,
                                session=None if updates is not None else f"mcp:{_today()}",
                                created_at=created_at, idempotency_key=idempotency_key,
                                updates=updates, refs=refs)
        out = _pick(saved, ("id", "content", "importance", "source", "created_at"))
        links: dict[str, object] = {
            k: saved[k] for k in ("base_frame_id", "references") if k in saved}
        if links:
            links["session"] = saved["gop_id"]
        return dumps({**out, **links, "workspace": workspace or "personal",
                      "created": saved.get("created"), "replayed": saved.get("replayed", False)})

    @tool(READ, """Search long-term memory (keyword + semantic hybrid search) before answering
        questions about the user, past work or earlier decisions. Returns a JSON list of
        {id, content, importance, source, score (0-1, higher is better: a rank score, the top
        result is always near 1), absolute_relevance (0-1: how likely it matches the query at
        all; below ~0.3 is noise), created_at, from, conflict} sorted by score, or a sentence
        when nothing matches. `from` says where a
        result came from: personal, workspace:<id>, or external:<name> (a document of the
        configured external knowledge source, asked by scope=all when memory has too little).
        `conflict` (else null) is a note when a workspace and the external source disagree
        (e.g. "approved" vs "rejected"): tell the user, do not pick a side silently. Plain
        words work best; search syntax is treated as text. explain=true adds to each result
        an `explain` object (lane ranks, fused score, every re-score factor) showing why it
        ranked there.""")
    async def recall_memory(
        query: Annotated[Query, Field(description="What to look for, in plain words.")],
        limit: Annotated[int, Field(ge=1, le=100, description="Maximum results.")] = 10,
        workspace: Workspace = None,
        scope: Annotated[ToolScope | None, Field(
            description="personal: the personal mind; current: the given workspace (or the "
                        "default workspace); all: personal plus every workspace (and the "
                        "external source, if one is configured). Default: the workspace when "
                        "one is given, else personal.")] = None,
        profile: Annotated[RecallProfile, Field(
            description="Ranking profile.")] = "balanced",
        explain: Annotated[bool, Field(
            description="Add each result's `explain` object: keyword/vector lane ranks "
                        "(1-based, null = not found by that lane), fused score, match, "
                        "re-score factors, relevance and final.")] = False,
        min_relevance: Annotated[float | None, Field(
            ge=0.0, le=1.0, allow_inf_nan=False,
            description="Drop results whose absolute_relevance (how likely they match the "
                        "query at all, 0-1) is below this; 0.5 keeps likely matches.")] = None,
    ) -> str:
        mind = await get_facade()
        if scope == "personal" and workspace:
            raise ValidationError(
                "scope 'personal' searches only the personal mind; drop workspace or use "
                "scope 'current'")
        facade_scope: Scope | None = scope
        if scope == "current":
            facade_scope = "workspace"
            workspace = workspace or _default_workspace(mind)
            if not workspace:
                raise ValidationError("scope 'current' needs a workspace (none given and no "
                                      "default workspace is set)")
        elif scope == "all" and workspace:
            check_workspace(mind, workspace)  # still refuse unknown / unsafe ids
        rows = await mind.recall(query, limit=limit, scope=facade_scope,
                                 workspace=workspace or None, profile=profile, explain=explain,
                                 min_relevance=min_relevance)
        if not rows:
            return f'No memories found for query: "{query}"'
        fields = (*_RECALL_FIELDS, "explain") if explain else _RECALL_FIELDS
        return dumps([_pick(r, fields) for r in rows])

    @tool(DESTROY, """Permanently erase one memory (by the id from save_memory or
        recall_memory) and everything derived from it: its search index entries, links and
        entity mentions; entities mentioned only there are removed too. Use when the user asks
        to forget something or a memory is wrong. Returns JSON with what was deleted.""")
    async def forget_memory(
        id: Annotated[RowId, Field(description="The memory id.")],
        workspace: Workspace = None,
    ) -> str:
        mind = await get_facade()
        return dumps(await mind.forget(id, workspace=workspace or None))

    @tool(READ, """The current state of a session (the group a memory was saved in: the
        session save_memory returns with updates): its latest statement (I-frame) and the
        updates saved after it (P-frames), in order. Returns JSON {session, workspace, i_frame,
        p_frames} (i_frame null when the session holds no statement).""")
    async def session_state(
        session: Annotated[SessionId, Field(description="The session id.")],
        workspace: Workspace = None,
    ) -> str:
        mind = await get_facade()
        return dumps(await mind.session_state(session, workspace=workspace or None))

    # -- knowledge graph ---------------------------------------------------------------------

    @tool(READ, """Find entities (people, projects, organizations, technologies, ...) in the
        knowledge graph by name, optionally of one type. Returns a JSON list of {id, type, name,
        properties, valid_from, valid_to, relations:{outgoing, incoming}} or a sentence when
        nothing matches. Entity ids are what create_relation needs.""")
    async def search_entities(
        query: Annotated[EntityQuery, Field(description="Name or part of a name.")],
        type: Annotated[EntityType | None, Field(description="Only this entity type.")] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="Maximum results.")] = 20,
        workspace: Workspace = None,
    ) -> str:
        mind = await get_facade()
        rows = await mind.search_entities(query, entity_type=type, limit=limit,
                                          workspace=workspace or None)
        if not rows:
            return f'No entities found matching "{query}"'
        return dumps(rows)

    @tool(WRITE, """Create or update an entity in the knowledge graph. An existing entity with
        the same type and name (case-insensitive) is updated: new properties are merged in.
        Returns JSON {id, type, name, properties, created, updated}.""")
    async def save_entity(
        type: Annotated[EntityType, Field(description="The entity type.")],
        name: Annotated[EntityName, Field(description="The entity's name.")],
        properties: Annotated[dict[str, object] | None, Field(
            description="Facts about the entity as key/value pairs.")] = None,
        workspace: Workspace = None,
    ) -> str:
        mind = await get_facade()
        row = await mind.save_entity(type, name, properties=json_input(properties),
                                     workspace=workspace or None)
        return dumps({"id": row["id"], "type": row.get("entity_type", type),
                      "name": row["name"], "properties": row.get("properties", {}),
                      "created": row.get("created"), "updated": row.get("updated")})

    @tool(WRITE, """Relate two entities (ids from save_entity or search_entities), e.g.
        works_on, knows, depends_on. Saving the same relation again raises its confidence
        instead of duplicating it. Returns JSON {id, source_id, target_id, type,
        confidence}.""")
    async def create_relation(
        source_id: Annotated[RowId, Field(description="The entity the relation starts at.")],
        target_id: Annotated[RowId, Field(description="The entity it points to (another "
                                                       "one: no self-relations).")],
        relation_type: Annotated[TypeName, Field(description="Relation name, e.g. works_on.")],
        confidence: Annotated[float, Field(ge=0.0, le=1.0,
                                           description="How sure you are, 0-1.")] = 1.0,
        properties: Annotated[dict[str, object] | None, Field(
            description="Extra key/value data on the relation.")] = None,
        workspace: Workspace = None,
    ) -> str:
        mind = await get_facade()
        row = await mind.create_relation(source_id, target_id, relation_type,
                                         confidence=confidence,
                                         properties=json_input(properties),
                                         workspace=workspace or None)
        return dumps({"id": row["id"], "source_id": row["source_id"],
                      "target_id": row["target_id"], "type": row.get("relation_type"),
                      "confidence": row.get("confidence")})

    # -- identity and awareness --------------------------------------------------------------

    @tool(READ, """Read who the user/agent is (name, role, department, personality,
        capabilities, system prompt). Returns JSON; {configured:false, ...} when no identity
        has been set yet.""")
    async def get_identity() -> str:
        mind = await get_facade()
        return dumps(await mind.get_identity())

    @tool(WRITE, """Create or update the identity (only the fields you pass change; the first
        call creates it, name defaults to "User"). Returns JSON {action: created|updated, name,
        role, department, updated_at}.""")
    async def set_identity(
        name: ShortName | None = None, role: ShortName | None = None,
        department: ShortName | None = None, personality: ProfileText | None = None,
        capabilities: ProfileText | None = None, system_prompt: SystemPrompt | None = None,
    ) -> str:
        mind = await get_facade()
        row = await mind.set_identity(name=name, role=role, department=department,
                                      personality=personality, capabilities=capabilities,
                                      system_prompt=system_prompt)
        return dumps(_pick(row, ("action", "name", "role", "department", "updated_at")))

    @tool(READ, """Read the short-term working state: live awareness items (current tasks,
        recent actions, pending items, context flags; at most 10, highest priority first).
        Returns a JSON list of {id, category, content, priority, expires_at, created_at} or a
        sentence when there are none.""")
    async def get_awareness(
        category: Annotated[AwarenessCategory | None, Field(
            description="Only this category.")] = None,
    ) -> str:
        mind = await get_facade()
        items = await mind.get_awareness(category=category)
        if not items:
            return "No active awareness items."
        return dumps([_pick(i, ("id", "category", "content", "priority", "expires_at",
                                "created_at")) for i in items])

    @tool(WRITE, """Add a short-term awareness item (what you are doing now, what is pending,
        a flag for the rest of the session). Keep at most 10 live: the lowest-priority item is
        dropped when full. Returns JSON {id, category, content, priority, expires_at,
        replayed}.""")
    async def set_awareness(
        category: Annotated[AwarenessCategory, Field(description="task, action, pending or flag.")],
        content: Annotated[AwarenessText, Field(description="The item text.")],
        priority: Annotated[int, Field(ge=0, le=10, description="0-10, higher first.")] = 0,
        ttl_minutes: Annotated[TtlMinutes | None, Field(
            description="Expire after this many minutes, at most 10 years (default: "
                        "never).")] = None,
        idempotency_key: Key = None,
    ) -> str:
        mind = await get_facade()
        row = await mind.set_awareness(category, content, priority=priority,
                                       ttl_minutes=ttl_minutes, idempotency_key=idempotency_key)
        return dumps(_pick(row, ("id", "category", "content", "priority", "expires_at",
                                 "replayed")))

    @tool(DESTROY, """Remove one awareness item by id, or every item of a category. Returns a
        sentence saying what was removed.""")
    async def clear_awareness(
        id: Annotated[RowId | None, Field(description="The item id.")] = None,
        category: Annotated[AwarenessCategory | None, Field(
            description="Clear every item of this category.")] = None,
    ) -> str:
        mind = await get_facade()
        if id is not None:
            await mind.clear_awareness(item_id=id)
            return f"Removed awareness item #{id}"
        if category is not None:
            await mind.clear_awareness(category=category)
            return f'Cleared all "{category}" awareness items'
        raise ValidationError("Provide either an id or category to clear.")

    # -- workspaces --------------------------------------------------------------------------

    @tool(READ, """List the personal mind's statistics and every workspace (separate memory
        spaces, e.g. per project) with its frame and entity counts. Returns JSON {personal,
        workspaces:[{id, name, group, icon, model, created, frames, entities}],
        default_workspace}.""")
    async def list_workspaces() -> str:
        mind = await get_facade()
        return dumps(await mind.list_workspaces())

    @tool(WRITE, """Create a workspace: a separate memory space (e.g. for one project or
        client). Its id is derived from the name; pass that id as `workspace` to the other
        tools. Returns JSON {id, name, group, icon, model, created}.""")
    async def create_workspace(
        name: Annotated[ShortName, Field(description="Display name, e.g. 'Acme website'.")],
        group: Annotated[GroupName, Field(description="Grouping label.")] = "general",
        icon: Icon | None = None,
        model: Annotated[ShortName | None, Field(description="Preferred model label.")] = None,
    ) -> str:
        mind = await get_facade()
        return dumps(await mind.create_workspace(name, group=group or "general", icon=icon,
                                                 model=model))

    # -- harvest and ingest ------------------------------------------------------------------

    @tool(WRITE, """Import a chat-history export (ChatGPT, Claude, Claude Code, Codex, Gemini,
        Grok, or the universal JSON list of {conversation_id, message_id, speaker, role, text,
        timestamp}) into memory. Pass the export either as `data` (JSON text) or as
        `file_path` (a file or directory on the server's disk). Re-importing the same data is
        idempotent. Source `auto` detects the format from the content. Returns a JSON summary
        (source, items, frames_created, duplicates_skipped, ...; `detected` says why `auto`
        chose its source).""")
    async def harvest_import(
        source: Annotated[ConversationChoice, Field(
            description="The export's format, or auto (detected from the content).")],
        data: Annotated[str | list[object] | dict[str, object] | None, Field(
            description="The export's JSON content.")] = None,
        file_path: Annotated[PathText | None, Field(
            description="Path of the export file (or Claude Code directory).")] = None,
        workspace: Workspace = None,
    ) -> str:
        if (data is None) == (file_path is None):
            raise ValidationError('provide either "data" (JSON string) or "file_path" (path '
                                  'to export file), not both')
        mind = await get_facade()
        ws = workspace or None
        check_workspace(mind, ws)  # refuse an unknown workspace before reading anything
        if file_path is not None:
            if not server_reads:
                raise refuse("paths on its disk")
            summary = await mind.harvest(source, Path(file_path).expanduser(), workspace=ws)
        else:
            if isinstance(data, str):
                try:
                    json.loads(data)
                except (ValueError, RecursionError) as exc:
                    raise ValidationError(f"data is not valid JSON: {safe_reason(exc)}") from None
                text = data
            else:
                text = json.dumps(data, ensure_ascii=False)
            with tempfile.TemporaryDirectory(prefix="hive-mind-mcp-") as tmp:
                path = Path(tmp) / f"{source}-export.json"
                path.write_text(text, encoding="utf-8")
                summary = await mind.harvest(source, path, workspace=ws,
                                            label=f"inline:{source}-export.json")
        if summary.get("items") == 0 and summary.get("status", "completed") == "completed":
            chosen = summary.get("source", source)
            why = f" ({summary['detected']})" if summary.get("detected") else ""
            return f"No conversations found in {chosen} export data{why}."
        return dumps(summary)

    @tool(READ, """List the harvest sources imported so far with their last sync time and
        counters. Returns a JSON list or a sentence when nothing was imported yet.""")
    async def harvest_sources(workspace: Workspace = None) -> str:
        mind = await get_facade()
        rows = await mind.harvest_sources(workspace=workspace or None)
        if not rows:
            return ("No harvest sources registered yet. Use harvest_import to import "
                    "conversation data.")
        return dumps(rows)

    @tool(READ, """Read a mind out, one page at a time: part=frames gives its memories (text,
        speaker, role, session as conversation_id, source time, importance, frame id); entities
        and relations give the knowledge graph with each one's validity (valid_from, valid_to).
        Pass the page's `next` as cursor for the page after (null: the end). Nothing is
        written anywhere; for a whole mind as a file, use `hive-mind export` or GET
        /v1/export. Returns JSON {part, records, count, next}.""")
    async def export_memories(
            workspace: Workspace = None, part: ExportPart = "frames",
            cursor: Annotated[str | None, Field(
                max_length=40, description="`next` of the page before; omit for the first")
            ] = None,
            limit: Annotated[int, Field(ge=1, le=MAX_PAGE,
                                        description="records per page")] = 100) -> str:
        mind = await get_facade()
        return dumps(await mind.export_page(workspace=workspace or None, part=part,
                                            cursor=cursor or None, limit=limit))

    @tool(WRITE, """Ingest a document into memory: a file path (markdown, HTML, text, PDF), a
        folder of them (each file by its type), an http(s) URL, or raw text. The type is
        detected automatically unless type_hint is given. The content is split into memories
        and indexed. Returns a JSON summary (source_type, items,
        frames_created, duplicates_skipped, ...).""")
    async def ingest_source(
        content: Annotated[str, Field(description="A file path, a URL or the text itself.")],
        type_hint: Annotated[IngestType, Field(
            description="Force the content type.")] = "auto",
        importance: Annotated[IngestImportance, Field(
            description="Importance of the created memories.")] = "normal",
        tags: Annotated[Tags | None, Field(description="Labels to attach.")] = None,
        workspace: Workspace = None,
    ) -> str:
        mind = await get_facade()
        return dumps(await client_ingest(mind, content, type_hint, server_reads=server_reads,
                                         importance=importance, tags=tags or [],
                                         workspace=workspace or None))

    # -- maintenance -------------------------------------------------------------------------

    @tool(DESTROY, """Maintain stored memories. compact: prune old temporary (default 30 days)
        and deprecated (90 days) memories and merge updates; reconcile: repair search indexes;
        wipe_imports: delete every imported memory; wipe_all: delete EVERY memory and session of
        the mind (irreversible; only on explicit user request). Returns JSON counts.""")
    async def cleanup_frames(
        mode: Annotated[FrameCleanupMode,
                        Field(description="What to do.")],
        workspace: Workspace = None,
        max_temp_age_days: Annotated[AgeDays, Field(description="compact only.")] = 30,
        max_deprecated_age_days: Annotated[AgeDays, Field(description="compact only.")] = 90,
    ) -> str:
        mind = await get_facade()
        result = await mind.cleanup_frames(mode, workspace=workspace or None,
                                           max_temp_age_days=max_temp_age_days,
                                           max_deprecated_age_days=max_deprecated_age_days)
        if mode == "wipe_imports" and not result.get("frames_deleted"):
            return "No imported frames found."
        return dumps(result)

    @tool(DESTROY, """Maintain the knowledge graph. audit: report noise, duplicates and orphans
        (read-only); remove_noise: retire junk entities; dedup: merge duplicate entities;
        retire_orphans: retire entities with no relation and no memory; wipe_all: retire every
        entity and relation (only on explicit user request). Returns JSON counts.""")
    async def cleanup_entities(
        mode: Annotated[EntityCleanupMode,
                        Field(description="What to do.")],
        workspace: Workspace = None,
    ) -> str:
        mind = await get_facade()
        return dumps(await mind.cleanup_entities(mode, workspace=workspace or None))
