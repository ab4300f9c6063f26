"""The JSON shapes the facade answers with, as types: what the CLI, the MCP tools and the HTTP
routes receive from :class:`hive_mind.contract.MindFacade` (and what ``/openapi.json`` shows).

They are ``TypedDict``: the values stay plain dicts and lists (the JSON on the wire is the same
as ever), and mypy checks every reader and writer of a key. A key marked ``NotRequired`` is
present only in some answers (the docstring of the field's class says when). ``JsonObject`` is
a JSON object whose keys vary (a report, a free-form ``metadata``); ``JsonInput`` one a caller
gives (checked to be JSON).
"""

from __future__ import annotations

from typing import NotRequired

from pydantic import JsonValue

from workers.harvest_summary import HarvestReport
from workers.jobs_shapes import Dropped, JobsReport, Retried

__all__ = ["Dropped", "HarvestReport", "JobsReport", "Retried"]  # and the shapes defined here
from typing_extensions import TypedDict

JsonObject = dict[str, object]
JsonInput = dict[str, JsonValue]  # a caller's JSON object (metadata, properties)


# -- frames -----------------------------------------------------------------------------------

class FrameShape(TypedDict):
    """A stored memory (``GET /v1/memories/{id}``)."""

    id: int
    frame_type: str
    gop_id: str
    t: int
    content: str
    importance: str
    source: str
    created_at: str
    recorded_at: str
    metadata: JsonObject


class LinkedFrame(FrameShape):
    """A frame with its links: a P-frame's ``base_frame_id`` (the I-frame it updates), a
    B-frame's ``base_frame_id`` (its first reference) and ``references``; an I-frame has
    neither key."""

    base_frame_id: NotRequired[int | None]
    references: NotRequired[list[int]]


class SavedFrame(LinkedFrame):
    """A save's answer: the frame, ``created`` (false: identical content was stored already),
    the mind's name and ``replayed`` (a repeat of an idempotency key's first save)."""

    created: bool
    workspace: str
    replayed: bool


class SessionState(TypedDict):
    """A session's current state (``GET /v1/sessions/{id}/state``): its latest I-frame (null
    when it holds none) and the P-frames after it, in order."""

    session: str
    workspace: str
    i_frame: LinkedFrame | None
    p_frames: list[LinkedFrame]


class Forgotten(TypedDict):
    id: int
    deleted: bool
    entities_erased: int
    relations_erased: int


# -- recall -----------------------------------------------------------------------------------

RecallHit = TypedDict("RecallHit", {
    "id": int | str,  # a frame id, or an external document's id
    "frame_type": str | None,
    "gop_id": str | None,
    "t": int | None,
    "content": str,
    "importance": str | None,
    "source": str,
    "created_at": str | None,
    "recorded_at": str | None,
    "metadata": JsonObject,
    "score": float,
    "absolute_relevance": float | None,
    "rrf": float | None,
    "relevance": float | None,
    "final": float | None,
    "from": str,
})


class Explained(TypedDict, total=False):
    explain: JsonObject | None


class RecallResult(RecallHit, Explained):
    """One recall result: a frame, or a document of the external source (its frame fields
    null, no lane scores); ``from`` names the mind (``personal``, ``workspace:<id>``) or the
    source; ``explain`` (when asked, :func:`hive_mind.results.explain_dict`) says why it
    ranked there; ``conflict``: the conflict notes it takes part in."""

    conflict: str | None


RecallConflict = TypedDict("RecallConflict", {"note": str, "from": list[str]})


class ExternalReport(TypedDict):
    name: str
    queried: bool
    error: str | None


class Routing(TypedDict):
    searched: int
    workspaces: int


class RecallDetail(TypedDict):
    """``POST /v1/recall``'s answer (:func:`hive_mind.results.recall_response`); a sharded
    deployment adds ``unreachable`` (shard → error) when a shard did not answer."""

    results: list[RecallResult]
    count: int
    conflicts: list[RecallConflict]
    external: ExternalReport | None
    routing: Routing | None
    unreachable: NotRequired[dict[str, str]]


class RecallResults(TypedDict):
    """``GET /v1/catch-up``'s answer."""

    results: list[RecallResult]
    count: int


# -- knowledge graph --------------------------------------------------------------------------

class OutgoingRelation(TypedDict):
    target_id: int
    type: str
    confidence: float


class IncomingRelation(TypedDict):
    source_id: int
    type: str
    confidence: float


class EntityRelations(TypedDict):
    outgoing: list[OutgoingRelation]
    incoming: list[IncomingRelation]


class EntityVersion(TypedDict):
    frame_id: int
    content: str
    valid_from: str
    valid_to: str | None
    superseded_by: list[int]
    current: bool


class EntityView(TypedDict):
    """An entity found by a search, with its active relations and its statements' history."""

    id: int
    type: str
    name: str
    properties: JsonObject
    valid_from: str
    valid_to: str | None
    relations: EntityRelations
    history: list[EntityVersion]


class EntityList(TypedDict):
    """``GET /v1/entities``'s answer."""

    entities: list[EntityView]
    count: int


class SavedEntity(TypedDict):
    id: int
    entity_type: str
    name: str
    normalized_name: str
    properties: JsonObject
    valid_from: str
    valid_to: str | None
    recorded_at: str
    created: bool
    updated: bool


class RelationShape(TypedDict):
    id: int
    source_id: int
    target_id: int
    relation_type: str
    confidence: float
    properties: JsonObject
    valid_from: str
    valid_to: str | None
    recorded_at: str


# -- identity and awareness -------------------------------------------------------------------

class IdentityView(TypedDict):
    """``configured`` false (and a ``message``) until an identity is set; then its fields."""

    configured: bool
    message: NotRequired[str]
    name: NotRequired[str]
    role: NotRequired[str]
    department: NotRequired[str]
    personality: NotRequired[str]
    capabilities: NotRequired[str]
    system_prompt: NotRequired[str]
    created_at: NotRequired[str]
    updated_at: NotRequired[str]


class IdentitySaved(TypedDict):
    action: str  # created | updated
    name: str
    role: str
    department: str
    personality: str
    capabilities: str
    system_prompt: str
    created_at: str
    updated_at: str


class AwarenessShape(TypedDict):
    id: int
    category: str
    content: str
    priority: int
    metadata: JsonObject
    created_at: str
    expires_at: str | None


class AwarenessList(TypedDict):
    """``GET /v1/awareness``'s answer."""

    items: list[AwarenessShape]
    count: int


class AwarenessAdded(AwarenessShape):
    replayed: bool


class AwarenessCleared(TypedDict):
    """One item removed (``removed``, ``id``) or a category cleared (``cleared``,
    ``category``)."""

    removed: NotRequired[bool]
    id: NotRequired[int]
    cleared: NotRequired[int]
    category: NotRequired[str]


# -- workspaces -------------------------------------------------------------------------------

class MindStats(TypedDict):
    frames: int
    by_type: dict[str, int]
    by_importance: dict[str, int]
    entities: int
    entity_types: dict[str, int]
    pending_index: int
    vectors: int


class WorkspaceMeta(TypedDict):
    """A workspace's metadata (its ``id``, ``name``, ``group``, ``icon``, ``model``,
    ``created``)."""

    id: str
    name: str
    group: NotRequired[str | None]
    icon: NotRequired[str | None]
    model: NotRequired[str | None]
    created: NotRequired[str]


class WorkspaceRow(WorkspaceMeta):
    """A workspace with its mind's counts, the frames still waiting for their index and
    when its file was last written."""

    frames: int
    entities: int
    pending_index: NotRequired[int]
    last_write: NotRequired[str | None]


class WorkspaceView(WorkspaceMeta, MindStats):
    """A workspace's metadata and its mind's counts."""


class WorkspaceList(TypedDict):
    """Every workspace with its counts, the personal mind's counts (null where another shard
    holds it) and the default workspace; a sharded fan-out adds ``unreachable``."""

    personal: MindStats | None
    workspaces: list[WorkspaceRow]
    default_workspace: str | None
    unreachable: NotRequired[dict[str, str]]


class WorkspaceDeleted(TypedDict):
    deleted: str


class WorkspaceDefault(TypedDict):
    default_workspace: str | None


# -- maintenance ------------------------------------------------------------------------------

class MaintenanceRun(TypedDict):
    """``minds``: each mind's report (by ``personal`` / ``workspace:<id>`` … as the kind
    answers it); ``unreachable``: the shards a sharded ``--all`` could not reach."""

    action: str
    minds: dict[str, JsonObject]
    unreachable: NotRequired[dict[str, str]]


# -- ingest -----------------------------------------------------------------------------------

class _Tagged(TypedDict, total=False):
    tags: list[str]
    files: dict[str, int]
    skipped: list[str]


class IngestReport(_Tagged):
    """What an ingest reports (:class:`hive_mind.harvest.IngestSummary`): the detected
    ``source_type``, counts, the frames still to index; ``tags`` when given; a folder's
    ``files`` read per type and what it ``skipped`` (one line per reason)."""

    source_type: str
    items_parsed: int
    frames_created: int
    duplicates_skipped: int
    pending_index: int
    status: str
    workspace: str


# -- status -----------------------------------------------------------------------------------

class StatusReport(TypedDict):
    """``hive-mind status`` / ``GET /v1/status``: the ``mode`` (embedded, distributed; a
    sharded gateway: ``gateway``, with nothing but ``shard`` and ``cluster``), the embedder
    (``probed``: loaded to report its real state), the external source (null: none), the job
    queue, this month's embedding quota, each mind's counts, the in-memory indexes, the
    nightly schedule and the effective configuration (secrets masked). A shard host adds its
    ``shard`` and, unless another host asked, the ``cluster``'s shards."""

    mode: str
    embedder: NotRequired[JsonObject]
    external: NotRequired[JsonObject | None]
    queue: NotRequired[JsonObject]
    embedding_quota: NotRequired[JsonObject | None]
    minds: NotRequired[list[JsonObject]]
    memory_indexes: NotRequired[JsonObject]
    schedule: NotRequired[JsonObject]
    config: NotRequired[JsonObject]
    shard: NotRequired[str | None]
    cluster: NotRequired[JsonObject]
