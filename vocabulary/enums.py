"""The enumerations, each written once as a ``Literal`` type; its tuple of values is derived
from it (``get_args``), and a narrower surface's subset is a ``Literal`` nested in the wider
one where the order allows, so pydantic (HTTP, MCP), Typer (CLI), the engine's checks and the
schema's CHECK constraints all read the same values. The tuples keep the order of the
``Literal``: the schema's constraint text is built from them, so reordering one changes the
text of newly created minds' tables.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

FrameType = Literal["I", "P", "B"]

IngestImportance = Literal["critical", "important", "normal"]  # ingest and ingest_source
AgentImportance = Literal[IngestImportance, "temporary"]  # MCP save_memory
Importance = Literal[AgentImportance, "deprecated"]

# Frame sources, in the order of the schema's CHECK constraint (mind/storage/schema.py); what an
# agent
# may claim over MCP save_memory is a subset (tests/test_vocabulary.py).
FrameSource = Literal["user_stated", "tool_verified", "agent_inferred", "import", "system",
                      "personal", "workspace", "team_sync"]
AgentSource = Literal["user_stated", "tool_verified", "agent_inferred", "system"]

SessionStatus = Literal["active", "closed", "archived"]
AwarenessCategory = Literal["task", "action", "pending", "flag"]
EntityType = Literal["person", "project", "concept", "organization", "technology", "tool",
                     "location", "event"]

Scope = Literal["personal", "workspace", "current", "all"]
ToolScope = Literal["current", "personal", "all"]  # MCP recall_memory: a subset
RecallProfile = Literal["balanced", "recent", "important", "connected"]
RecallLanes = Literal["hybrid", "keyword", "vector"]

HarvestSource = Literal["chatgpt", "claude", "claude-code", "gemini", "markdown", "plaintext",
                        "pdf", "url", "universal", "codex", "grok"]  # mind/harvest/registry.py
ConversationSource = Literal["chatgpt", "claude", "claude-code", "gemini", "universal", "codex",
                             "grok"]
# The MCP tools this server registers (hive_mind/mcp_tools.py TOOL_NAMES): harvest recognises
# their calls in agent transcripts and never imports their content (mind/harvest/own_tools.py).
McpTool = Literal["save_memory", "recall_memory", "search_entities", "save_entity",
                  "create_relation", "get_identity", "set_identity", "get_awareness",
                  "set_awareness", "clear_awareness", "list_workspaces", "create_workspace",
                  "harvest_import", "harvest_sources", "ingest_source", "cleanup_frames",
                  "cleanup_entities", "forget_memory", "export_memories", "session_state"]
DocumentSource = Literal["markdown", "plaintext", "pdf", "url"]  # the rest: ingest's types
IngestType = Literal["auto", DocumentSource]
HarvestChoice = Literal["auto", HarvestSource]  # auto: detected from the content
ConversationChoice = Literal["auto", ConversationSource]  # MCP harvest_import's source

FrameWipe = Literal["wipe_imports", "wipe_all"]
FrameCleanupMode = Literal["compact", "reconcile", FrameWipe]
EntityCleanupMode = Literal["audit", "remove_noise", "dedup", "retire_orphans", "wipe_all"]
MaintenanceKind = Literal["compact", "reconcile", "reembed", "dedupe", "sync"]
ExportFormat = Literal["universal", "json"]  # hive-mind export (mind/export.py)
ExportPart = Literal["frames", "entities", "relations"]  # a page of the MCP export tool
# who waits for a cognify job (workers/fairness.py): a user or agent (saves, one ingested
# document, queries) or nobody in particular (harvest imports, re-embeds, outbox re-sends)
JobPriority = Literal["interactive", "bulk"]
# embedding tiers: the providers and monthly quota of each (mind/embeddings/quota.py TIERS)
EmbeddingTier = Literal["free", "pro", "team", "enterprise"]
# embedding providers (mind/embeddings/registry.py; auto: the probing chain) and what runs the
# in-process model
EmbeddingProviderName = Literal["auto", "inprocess", "ollama", "openai", "voyage", "litellm",
                                "test", "mock"]
EmbeddingBackend = Literal["torch", "onnx", "onnx-int8"]

FRAME_TYPES: Final[tuple[FrameType, ...]] = get_args(FrameType)
INGEST_IMPORTANCES: Final[tuple[IngestImportance, ...]] = get_args(IngestImportance)
AGENT_IMPORTANCES: Final[tuple[AgentImportance, ...]] = get_args(AgentImportance)
IMPORTANCES: Final[tuple[Importance, ...]] = get_args(Importance)
AGENT_SOURCES: Final[tuple[AgentSource, ...]] = get_args(AgentSource)
FRAME_SOURCES: Final[tuple[FrameSource, ...]] = get_args(FrameSource)
SESSION_STATUSES: Final[tuple[SessionStatus, ...]] = get_args(SessionStatus)
AWARENESS_CATEGORIES: Final[tuple[AwarenessCategory, ...]] = get_args(AwarenessCategory)
ENTITY_TYPES: Final[tuple[EntityType, ...]] = get_args(EntityType)
TOOL_SCOPES: Final[tuple[ToolScope, ...]] = get_args(ToolScope)
SCOPES: Final[tuple[Scope, ...]] = get_args(Scope)
RECALL_PROFILES: Final[tuple[RecallProfile, ...]] = get_args(RecallProfile)
RECALL_LANES: Final[tuple[RecallLanes, ...]] = get_args(RecallLanes)
CONVERSATION_SOURCES: Final[tuple[ConversationSource, ...]] = get_args(ConversationSource)
DOCUMENT_SOURCES: Final[tuple[DocumentSource, ...]] = get_args(DocumentSource)
HARVEST_SOURCES: Final[tuple[HarvestSource, ...]] = get_args(HarvestSource)
MCP_TOOLS: Final[tuple[McpTool, ...]] = get_args(McpTool)
INGEST_TYPES: Final[tuple[IngestType, ...]] = get_args(IngestType)
HARVEST_CHOICES: Final[tuple[HarvestChoice, ...]] = get_args(HarvestChoice)
CONVERSATION_CHOICES: Final[tuple[ConversationChoice, ...]] = get_args(ConversationChoice)
FRAME_WIPES: Final[tuple[FrameWipe, ...]] = get_args(FrameWipe)
FRAME_CLEANUP_MODES: Final[tuple[FrameCleanupMode, ...]] = get_args(FrameCleanupMode)
ENTITY_CLEANUP_MODES: Final[tuple[EntityCleanupMode, ...]] = get_args(EntityCleanupMode)
MAINTENANCE_KINDS: Final[tuple[MaintenanceKind, ...]] = get_args(MaintenanceKind)
JOB_PRIORITIES: Final[tuple[JobPriority, ...]] = get_args(JobPriority)
EXPORT_FORMATS: Final[tuple[ExportFormat, ...]] = get_args(ExportFormat)
EXPORT_PARTS: Final[tuple[ExportPart, ...]] = get_args(ExportPart)
EMBEDDING_TIERS: Final[tuple[EmbeddingTier, ...]] = get_args(EmbeddingTier)
EMBEDDING_PROVIDERS: Final[tuple[EmbeddingProviderName, ...]] = get_args(EmbeddingProviderName)
EMBEDDING_BACKENDS: Final[tuple[EmbeddingBackend, ...]] = get_args(EmbeddingBackend)
