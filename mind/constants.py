"""Names shared across the engine: tables, meta keys, enumerations and limits."""

from __future__ import annotations

from typing import Final, Literal

FrameType = Literal["I", "P", "B"]
Importance = Literal["critical", "important", "normal", "temporary", "deprecated"]
FrameSource = Literal[
    "user_stated",
    "tool_verified",
    "agent_inferred",
    "import",
    "system",
    "personal",
    "workspace",
    "team_sync",
]
SessionStatus = Literal["active", "closed", "archived"]
AwarenessCategory = Literal["task", "action", "pending", "flag"]

FRAME_TYPES: Final = ("I", "P", "B")
IMPORTANCES: Final = ("critical", "important", "normal", "temporary", "deprecated")
FRAME_SOURCES: Final = (
    "user_stated",
    "tool_verified",
    "agent_inferred",
    "import",
    "system",
    "personal",
    "workspace",
    "team_sync",
)
SESSION_STATUSES: Final = ("active", "closed", "archived")
AWARENESS_CATEGORIES: Final = ("task", "action", "pending", "flag")

# Higher rank wins when a duplicate save upgrades an existing frame.
IMPORTANCE_RANK: Final = {
    "deprecated": 0,
    "temporary": 1,
    "normal": 2,
    "important": 3,
    "critical": 4,
}
IMPORTANCE_MULTIPLIER: Final = {
    "critical": 2.0,
    "important": 1.5,
    "normal": 1.0,
    "temporary": 0.7,
    "deprecated": 0.3,
}

AWARENESS_MAX_ITEMS: Final = 10

# Tables
T_META: Final = "meta"
T_MIGRATIONS: Final = "schema_migrations"
T_FRAMES: Final = "memory_frames"
T_FRAMES_FTS: Final = "memory_frames_fts"
T_FRAMES_VEC: Final = "memory_frames_vec"
T_CHUNKS: Final = "memory_frame_chunks"
T_CHUNKS_VEC: Final = "memory_frame_chunks_vec"
T_OUTBOX: Final = "pending_index"

# Meta keys
META_SCHEMA_VERSION: Final = "schema_version"
META_FIRST_RUN: Final = "first_run_at"
META_HASH_SEMANTICS: Final = "content_hash_semantics"
META_EMBED_PROVIDER: Final = "embedding_provider"
META_EMBED_MODEL: Final = "embedding_model"
META_EMBED_DIM: Final = "embedding_dim"
HASH_SEMANTICS: Final = "hm-stripped"

# Compaction defaults (original engine)
COMPACT_TEMP_DAYS: Final = 30
COMPACT_DEPRECATED_DAYS: Final = 90
COMPACT_PFRAME_THRESHOLD: Final = 10
COMPACT_PFRAME_KEEP: Final = 5
COMPACT_MERGE_SEPARATOR: Final = "\n---\n"

# SQLite host-parameter chunking for IN (...) lists
SQL_IN_CHUNK: Final = 500

# session of the saves that name none: one per day, "save:<YYYY-MM-DD>" (hive_mind.facade);
# not a conversation, so it lends no graph proximity to its frames (mind.graph)
DAILY_SAVE_SESSION_PREFIX: Final = "save:"

# -- limits of caller input (docs/security.md, "Limits"; checked by mind.bounds) -------------
# Integers: every id is an SQLite INTEGER; durations stay inside the calendar datetime can do.
INT64_MAX: Final = 2**63 - 1  # largest frame / entity / relation / awareness item id
MAX_TTL_MINUTES: Final = 3653 * 24 * 60  # awareness ttl: 10 years
MAX_AGE_DAYS: Final = 36_525  # compaction ages (max_temp_age_days, …): 100 years
MAX_SYNC_INTERVAL_HOURS: Final = 3653 * 24  # harvest auto-sync interval: 10 years
AWARENESS_PRIORITY_MAX: Final = 10  # priority 0-10 at every public surface (spec d)
# Text, in characters (str length). Names refuse control and bidi characters (mind.bounds).
MAX_QUERY_CHARS: Final = 10_000  # recall query
MAX_ENTITY_NAME_CHARS: Final = 500  # = queue_schemas MAX_NAME_CHARS; entity search query too
MAX_TYPE_CHARS: Final = 100  # entity and relation types (= queue_schemas MAX_LABEL_CHARS)
MAX_SHORT_NAME_CHARS: Final = 200  # identity name/role/department, workspace name and model
MAX_GROUP_CHARS: Final = 100  # workspace group
MAX_ICON_CHARS: Final = 32  # workspace icon (an emoji sequence)
MAX_PROFILE_TEXT_CHARS: Final = 16_384  # identity personality, capabilities
MAX_SYSTEM_PROMPT_CHARS: Final = 65_536  # identity system_prompt
MAX_AWARENESS_CHARS: Final = 4_096  # awareness item content
MAX_JSON_BYTES: Final = 65_536  # metadata / properties of one frame, entity, relation, item
MAX_TAGS: Final = 32  # ingest tags: how many
MAX_TAG_CHARS: Final = 100  # ingest tags: each
