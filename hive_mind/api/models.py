"""Request bodies of the HTTP API. Enumerations are ``Literal`` types, so a bad value is a
422 ``invalid`` with the allowed values named; unknown fields are refused; integers and text
carry the engine's limits (:mod:`hive_mind.limits`), so an out-of-range value is a 422, never a
500. Workspace ids are validated by the facade (400 ``invalid_id``), never here, so the code is
the same everywhere."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from hive_mind.limits import (
    AgeDays,
    AwarenessText,
    Content,
    EntityName,
    FileName,
    FrameRefs,
    GroupName,
    Icon,
    IdempotencyKey,
    IntervalHours,
    PathText,
    Priority,
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
from vocabulary.enums import (
    AwarenessCategory,
    EntityCleanupMode,
    EntityType,
    FrameCleanupMode,
    FrameSource,
    HarvestChoice,
    Importance,
    IngestType,
    RecallLanes,
    RecallProfile,
    Scope,
)

WORKSPACE = Field(default=None, description="workspace id; empty = the personal mind")


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SaveRequest(Body):
    content: Content = Field(description="the memory text")
    importance: Importance = "normal"
    source: FrameSource = "agent_inferred"
    workspace: str | None = WORKSPACE
    session: SessionId | None = Field(default=None,
                                      description="session (GOP) id to group frames")
    metadata: dict[str, Any] | None = None
    wait: bool = Field(default=False, description=(
        "answer only once the frame is indexed; without it a recall finds the frame by its "
        "words at once and by meaning once indexed"))
    created_at: Timestamp | None = Field(
        default=None, description="when it happened: ISO-8601 with a zone, 1900 to now + 1 day "
        "(default now); recall's since/until filter on it")
    idempotency_key: IdempotencyKey | None = Field(
        default=None, description="names this write (or the Idempotency-Key header): a retry "
        "with the same key returns the first frame (`replayed` true) and writes nothing; the "
        "same key with a different request is a 409 conflict. Remembered 7 days, per mind")
    updates: RowId | None = Field(default=None, description=(
        "save a P-frame: an update of this I-frame, in its session; recall ranks the update as "
        "current and the I-frame as outdated"))
    refs: FrameRefs | None = Field(default=None, description=(
        "save a B-frame: a cross-reference to these frames of the same mind"))


class RecallRequest(Body):
    query: Query
    limit: int = Field(default=10, ge=1, le=100)
    scope: Scope | None = None
    workspace: str | None = WORKSPACE
    profile: RecallProfile = "balanced"
    since: Timestamp | None = Field(default=None,
                                   description="ISO-8601 lower bound of created_at")
    until: Timestamp | None = Field(default=None,
                                   description="ISO-8601 upper bound of created_at")
    catch_up: bool | None = None
    lanes: RecallLanes = Field(default="hybrid",
                               description="hybrid, or one lane alone (debugging)")
    touch: bool = Field(default=True, description="false: leave the hits' access counts alone")
    explain: bool = Field(default=False, description="add each result's `explain` object: lane "
                          "ranks, fused score and every re-score factor")
    min_relevance: float | None = Field(
        default=None, ge=0.0, le=1.0, allow_inf_nan=False,
        description="drop results whose absolute_relevance is below this (0-1)")


class EntityRequest(Body):
    entity_type: EntityType = Field(validation_alias=AliasChoices("entity_type", "type"))
    name: EntityName
    properties: dict[str, Any] | None = None
    workspace: str | None = WORKSPACE


class RelationRequest(Body):
    source_id: RowId
    target_id: RowId
    relation_type: TypeName
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    properties: dict[str, Any] | None = None
    workspace: str | None = WORKSPACE


class IdentityRequest(Body):
    name: ShortName | None = None
    role: ShortName | None = None
    department: ShortName | None = None
    personality: ProfileText | None = None
    capabilities: ProfileText | None = None
    system_prompt: SystemPrompt | None = None
    workspace: str | None = WORKSPACE


class AwarenessRequest(Body):
    category: AwarenessCategory
    content: AwarenessText
    priority: Priority = 0
    ttl_minutes: TtlMinutes | None = None
    workspace: str | None = WORKSPACE
    idempotency_key: IdempotencyKey | None = Field(
        default=None, description="names this write (or the Idempotency-Key header): a retry "
        "with the same key returns the first item (`replayed` true) and adds nothing; the same "
        "key with a different request is a 409 conflict. Remembered 7 days, per mind")


class WorkspaceCreate(Body):
    name: ShortName
    group: GroupName = "general"
    icon: Icon | None = None
    model: ShortName | None = None
    id: str | None = Field(default=None, description="the slug to use (default: from the name)")


class WorkspaceUpdate(Body):
    name: ShortName | None = None
    group: GroupName | None = None
    icon: Icon | None = None
    model: ShortName | None = None


class DefaultWorkspace(Body):
    workspace: str | None = Field(description="workspace id, or null for none")


class MaintenanceRequest(Body):
    workspace: str | None = WORKSPACE
    all: bool = Field(default=False, description="every mind (personal and all workspaces)")


class CleanupFramesRequest(Body):
    mode: FrameCleanupMode
    workspace: str | None = WORKSPACE
    max_temp_age_days: AgeDays = 30
    max_deprecated_age_days: AgeDays = 90


class CleanupEntitiesRequest(Body):
    mode: EntityCleanupMode
    workspace: str | None = WORKSPACE


class HarvestRequest(Body):
    source: HarvestChoice = Field(description=(
        "the export's format, or auto: detected from the content (the summary's source is the "
        "one chosen, detected says why); auto never changes which paths are read"))
    path: PathText | None = Field(default=None,
                             description="a path on the server's disk (or a URL for 'url')")
    data: str | None = Field(default=None, description="the export itself, inline")
    filename: FileName | None = Field(default=None,
                                 description="name of the inline data (its extension counts)")
    label: str | None = Field(default=None, max_length=4096,
                              description="display name of the import (never read as a path)")
    workspace: str | None = WORKSPACE
    auto_sync: bool | None = None
    sync_interval_hours: IntervalHours | None = None
    wait: bool = True


class IngestRequest(Body):
    content: str = Field(min_length=1, description="a path on the server, a URL or raw text")
    type_hint: IngestType = "auto"
    importance: Importance = "normal"
    tags: Tags | None = None
    workspace: str | None = WORKSPACE
    wait: bool = True


class ErrorDetail(BaseModel):
    code: str = Field(description="stable machine-readable code, e.g. not_found, invalid_id")
    message: str
    details: dict[str, Any] | None = Field(
        default=None, description="what some errors carry beside the message: quota_exceeded's "
                                  "tier, quota, current, requested and upgrade_url")


class ErrorBody(BaseModel):
    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": text}
    for status, text in ((400, "invalid input"), (401, "missing or wrong bearer token"),
                         (404, "not found"), (409, "conflict"), (413, "request too large"),
                         (422, "request does not match the schema"), (500, "internal error"))
}
# the routes that embed (a save's or an import's indexing, a recall's query) under a gated tier
QUOTA_RESPONSES: dict[int | str, dict[str, Any]] = {
    429: {"model": ErrorBody, "description": "quota_exceeded: this month's embedding quota of "
                                             "the configured tier is used up"}}
