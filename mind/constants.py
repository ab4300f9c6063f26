"""Names of the engine: virtual-table names, meta keys, ranks and engine defaults.

Enumerations and limits are the shared vocabulary (:mod:`vocabulary.enums`,
:mod:`vocabulary.limits`), so ``queue_schemas`` and the front door read the same values.
"""

from __future__ import annotations

from typing import Final

from vocabulary.enums import IMPORTANCES, EmbeddingBackend

# Higher rank wins when a duplicate save upgrades an existing frame: deprecated 0 … critical 4.
IMPORTANCE_RANK: Final = {name: rank for rank, name in enumerate(reversed(IMPORTANCES))}
IMPORTANCE_MULTIPLIER: Final = {
    "critical": 2.0,
    "important": 1.5,
    "normal": 1.0,
    "temporary": 0.7,
    "deprecated": 0.3,
}

AWARENESS_MAX_ITEMS: Final = 10

# Virtual tables (FTS5, sqlite-vec) named in f-string SQL
T_FRAMES_FTS: Final = "memory_frames_fts"
T_FRAMES_VEC: Final = "memory_frames_vec"
T_CHUNKS_VEC: Final = "memory_frame_chunks_vec"

# Meta keys
META_SCHEMA_VERSION: Final = "schema_version"
META_FIRST_RUN: Final = "first_run_at"
META_HASH_SEMANTICS: Final = "content_hash_semantics"
META_EMBED_PROVIDER: Final = "embedding_provider"
META_EMBED_MODEL: Final = "embedding_model"
META_EMBED_DIM: Final = "embedding_dim"
HASH_SEMANTICS: Final = "hm-stripped"

# Compaction defaults (original engine); the age limits are in vocabulary.limits
COMPACT_PFRAME_THRESHOLD: Final = 10
COMPACT_PFRAME_KEEP: Final = 5
COMPACT_MERGE_SEPARATOR: Final = "\n---\n"

# Embedding defaults: EmbeddingConfig's (mind/embeddings/registry.py) and the settings' that
# build it (hive_mind/settings.py), one value each
# the fastest backend whose product-path quality is within 0.005 of PyTorch on SciFact and
# LoCoMo (docs/performance.md, "Retrieval quality")
DEFAULT_EMBEDDING_BACKEND: Final[EmbeddingBackend] = "onnx-int8"
DEFAULT_EMBEDDING_BATCH: Final = 32  # texts per model forward pass
DEFAULT_OLLAMA_URL: Final = "http://localhost:11434"
DEFAULT_OPENAI_URL: Final = "https://api.openai.com"
DEFAULT_VOYAGE_URL: Final = "https://api.voyageai.com"
DEFAULT_LITELLM_URL: Final = "http://localhost:4000"
DEFAULT_TEST_DIMENSIONS: Final = 64  # the deterministic test embedder's
MOCK_DIMENSIONS: Final = 1024  # the degraded mock's, unless a target dimension is set
DEFAULT_USER_ID: Final = "local"  # whose embeddings are counted when nobody is named

# the outbox reason of a frame a one-shot process (a CLI save) handed to another process writing
# the mind, for it to index (actors/handoff.py); that process claims it back to 'new'
OUTBOX_HANDED: Final = "handed"
# the outbox reason of the frames a re-embed queued (mind/retrieval/vectors.py): their vectors
# are made again with the mind's new model, their knowledge graph is kept
OUTBOX_REEMBED: Final = "reembed"

# SQLite host-parameter chunking for IN (...) lists
SQL_IN_CHUNK: Final = 500
# rows per multi-row INSERT of a bulk write (mind.storage.sqlutil.insert_rows): 64 frames of 15
# values stay under SQLite's oldest host-parameter limit (999)
ROWS_PER_INSERT: Final = 64

# session of the saves that name none: one per day, "save:<YYYY-MM-DD>" (hive_mind.facade);
# not a conversation, so it lends no graph proximity to its frames (mind.knowledge.graph)
DAILY_SAVE_SESSION_PREFIX: Final = "save:"
META_FENCE_SHARD: Final = "fence_shard"  # the shard that owns this file (issue #17)
META_FENCE_EPOCH: Final = "fence_epoch"  # ... and the epoch it claimed it at
