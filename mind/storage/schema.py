"""The mind file's schema, as an ordered list of migrations.

Each migration runs in its own ``BEGIN IMMEDIATE`` transaction and is recorded in
``schema_migrations``; a file that is newer than this code is refused. Vector tables are not
here: their dimension is the embedding model's, so :mod:`mind.retrieval.vectors` creates them when
the
model fingerprint is first recorded.

FTS rows of *new* frames are written by the frame store's batch writer in the same transaction
(an executemany of the values), not by an AFTER INSERT trigger: a trigger makes FTS5 flush
its pending terms at every row's statement savepoint, which measured 2.4× slower for bulk
imports (bench/components/bulk_write.py prints both). Updates and deletes are kept in sync by
triggers that pass the old values; ``mind.retrieval.reconcile`` checks the index with FTS5's
integrity-check.
"""

from __future__ import annotations

from dataclasses import dataclass

from mind.constants import OUTBOX_HANDED
from mind.storage.search_context import ROW_CONTEXT
from mind.timeutil import SQL_NOW
from vocabulary.enums import (
    AWARENESS_CATEGORIES,
    FRAME_SOURCES,
    FRAME_TYPES,
    IMPORTANCES,
    SESSION_STATUSES,
)


def _in(values: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


# a relation cognify made, by its properties (rows written before migration 9)
_DERIVED = ("CASE WHEN json_valid(properties) THEN json_extract(properties, '$.source') END "
            "IN ('cognify', 'semantic')")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


CORE = f"""
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE identity (
  id            INTEGER PRIMARY KEY CHECK (id = 1),
  name          TEXT NOT NULL,
  role          TEXT NOT NULL DEFAULT '',
  department    TEXT NOT NULL DEFAULT '',
  personality   TEXT NOT NULL DEFAULT '',
  capabilities  TEXT NOT NULL DEFAULT '',
  system_prompt TEXT NOT NULL DEFAULT '',
  created_at    TEXT NOT NULL DEFAULT {SQL_NOW},
  updated_at    TEXT NOT NULL DEFAULT {SQL_NOW}
);

CREATE TABLE awareness (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  category   TEXT NOT NULL CHECK (category IN {_in(AWARENESS_CATEGORIES)}),
  content    TEXT NOT NULL,
  priority   INTEGER NOT NULL DEFAULT 0,
  metadata   TEXT NOT NULL DEFAULT '{{}}',
  created_at TEXT NOT NULL DEFAULT {SQL_NOW},
  expires_at TEXT
);
CREATE INDEX idx_awareness_priority ON awareness(priority DESC, id);

CREATE TABLE sessions (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  gop_id     TEXT NOT NULL UNIQUE,
  project_id TEXT,
  status     TEXT NOT NULL DEFAULT 'active' CHECK (status IN {_in(SESSION_STATUSES)}),
  started_at TEXT NOT NULL DEFAULT {SQL_NOW},
  ended_at   TEXT,
  summary    TEXT
);
CREATE INDEX idx_sessions_project ON sessions(project_id, started_at);
CREATE INDEX idx_sessions_status ON sessions(status, started_at);

CREATE TABLE memory_frames (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  frame_type    TEXT NOT NULL CHECK (frame_type IN {_in(FRAME_TYPES)}),
  gop_id        TEXT NOT NULL REFERENCES sessions(gop_id),
  t             INTEGER NOT NULL,
  base_frame_id INTEGER REFERENCES memory_frames(id) ON DELETE SET NULL,
  content       TEXT NOT NULL,
  importance    TEXT NOT NULL DEFAULT 'normal' CHECK (importance IN {_in(IMPORTANCES)}),
  source        TEXT NOT NULL DEFAULT 'user_stated' CHECK (source IN {_in(FRAME_SOURCES)}),
  access_count  INTEGER NOT NULL DEFAULT 0,
  created_at    TEXT NOT NULL,
  recorded_at   TEXT NOT NULL,
  last_accessed TEXT NOT NULL,
  content_hash  TEXT NOT NULL,
  metadata      TEXT NOT NULL DEFAULT '{{}}',
  external_id   TEXT
);
CREATE UNIQUE INDEX idx_frames_gop_t ON memory_frames(gop_id, t);
CREATE INDEX idx_frames_type_gop ON memory_frames(frame_type, gop_id);
CREATE INDEX idx_frames_base ON memory_frames(base_frame_id);
CREATE INDEX idx_frames_hash ON memory_frames(content_hash);
CREATE INDEX idx_frames_created ON memory_frames(created_at);
CREATE INDEX idx_frames_importance_recorded ON memory_frames(importance, recorded_at);
CREATE UNIQUE INDEX idx_frames_external ON memory_frames(external_id)
  WHERE external_id IS NOT NULL;

CREATE TABLE frame_references (
  frame_id      INTEGER NOT NULL REFERENCES memory_frames(id) ON DELETE CASCADE,
  ref_frame_id  INTEGER NOT NULL REFERENCES memory_frames(id) ON DELETE CASCADE,
  position      INTEGER NOT NULL,
  PRIMARY KEY (frame_id, ref_frame_id)
) WITHOUT ROWID;
CREATE INDEX idx_frame_refs_target ON frame_references(ref_frame_id);

CREATE VIRTUAL TABLE memory_frames_fts USING fts5(
  content,
  content='memory_frames',
  content_rowid='id',
  tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memory_frames_fts_ad AFTER DELETE ON memory_frames BEGIN
  INSERT INTO memory_frames_fts(memory_frames_fts, rowid, content)
    VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER memory_frames_fts_au AFTER UPDATE OF content ON memory_frames BEGIN
  INSERT INTO memory_frames_fts(memory_frames_fts, rowid, content)
    VALUES ('delete', old.id, old.content);
  INSERT INTO memory_frames_fts(rowid, content) VALUES (new.id, new.content);
END;

CREATE TABLE pending_index (
  frame_id    INTEGER PRIMARY KEY REFERENCES memory_frames(id) ON DELETE CASCADE,
  reason      TEXT NOT NULL DEFAULT 'new',
  enqueued_at TEXT NOT NULL DEFAULT {SQL_NOW},
  attempts    INTEGER NOT NULL DEFAULT 0,
  last_error  TEXT
);
CREATE INDEX idx_pending_enqueued ON pending_index(enqueued_at);
"""

KNOWLEDGE = f"""
CREATE TABLE knowledge_entities (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  entity_type     TEXT NOT NULL,
  name            TEXT NOT NULL,
  normalized_name TEXT NOT NULL,
  properties      TEXT NOT NULL DEFAULT '{{}}',
  valid_from      TEXT NOT NULL DEFAULT {SQL_NOW},
  valid_to        TEXT,
  recorded_at     TEXT NOT NULL DEFAULT {SQL_NOW}
);
CREATE INDEX idx_entities_type ON knowledge_entities(entity_type);
CREATE INDEX idx_entities_name ON knowledge_entities(name);
CREATE INDEX idx_entities_norm ON knowledge_entities(normalized_name, entity_type);

CREATE TABLE knowledge_relations (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  source_id     INTEGER NOT NULL REFERENCES knowledge_entities(id) ON DELETE CASCADE,
  target_id     INTEGER NOT NULL REFERENCES knowledge_entities(id) ON DELETE CASCADE,
  relation_type TEXT NOT NULL,
  confidence    REAL NOT NULL DEFAULT 1.0,
  properties    TEXT NOT NULL DEFAULT '{{}}',
  valid_from    TEXT NOT NULL DEFAULT {SQL_NOW},
  valid_to      TEXT,
  recorded_at   TEXT NOT NULL DEFAULT {SQL_NOW}
);
CREATE INDEX idx_relations_source ON knowledge_relations(source_id, relation_type);
CREATE INDEX idx_relations_target ON knowledge_relations(target_id, relation_type);
CREATE UNIQUE INDEX idx_relations_active ON knowledge_relations(source_id, target_id, relation_type)
  WHERE valid_to IS NULL;

CREATE TABLE kg_entity_frames (
  entity_id INTEGER NOT NULL REFERENCES knowledge_entities(id) ON DELETE CASCADE,
  frame_id  INTEGER NOT NULL REFERENCES memory_frames(id) ON DELETE CASCADE,
  PRIMARY KEY (entity_id, frame_id)
) WITHOUT ROWID;
CREATE INDEX idx_kg_entity_frames_frame ON kg_entity_frames(frame_id);
"""

INDEXING = f"""
CREATE TABLE memory_frame_chunks (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  frame_id   INTEGER NOT NULL REFERENCES memory_frames(id) ON DELETE CASCADE,
  chunk_idx  INTEGER NOT NULL,
  content    TEXT NOT NULL,
  char_start INTEGER NOT NULL,
  char_end   INTEGER NOT NULL,
  created_at TEXT NOT NULL DEFAULT {SQL_NOW},
  UNIQUE (frame_id, chunk_idx)
);

CREATE TRIGGER memory_frames_content_changed AFTER UPDATE OF content ON memory_frames
WHEN new.content_hash IS NOT old.content_hash BEGIN
  DELETE FROM memory_frame_chunks WHERE frame_id = new.id;
  INSERT OR REPLACE INTO pending_index(frame_id, reason, enqueued_at, attempts)
    VALUES (new.id, 'content_changed', {SQL_NOW}, 0);
END;

CREATE TABLE applied_ops (
  op_id      TEXT PRIMARY KEY,
  applied_at TEXT NOT NULL DEFAULT {SQL_NOW}
) WITHOUT ROWID;

CREATE TABLE harvest_sources (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  source              TEXT NOT NULL UNIQUE,
  display_name        TEXT NOT NULL DEFAULT '',
  source_path         TEXT,
  last_synced_at      TEXT,
  items_imported      INTEGER NOT NULL DEFAULT 0,
  frames_created      INTEGER NOT NULL DEFAULT 0,
  auto_sync           INTEGER NOT NULL DEFAULT 0,
  sync_interval_hours INTEGER NOT NULL DEFAULT 24,
  last_content_hash   TEXT,
  created_at          TEXT NOT NULL DEFAULT {SQL_NOW}
);

CREATE TABLE embedding_usage (
  user_id    TEXT NOT NULL,
  year_month TEXT NOT NULL,
  count      INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL DEFAULT {SQL_NOW},
  UNIQUE (user_id, year_month)
);
"""

CONCEPTS = f"""
CREATE TABLE concept_mastery (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  concept       TEXT NOT NULL UNIQUE,
  mastery_level INTEGER NOT NULL DEFAULT 1 CHECK (mastery_level BETWEEN 1 AND 5),
  last_tested   TEXT,
  times_correct INTEGER NOT NULL DEFAULT 0,
  times_wrong   INTEGER NOT NULL DEFAULT 0,
  notes         TEXT NOT NULL DEFAULT '',
  created_at    TEXT NOT NULL DEFAULT {SQL_NOW},
  updated_at    TEXT NOT NULL DEFAULT {SQL_NOW}
);
"""

VECTOR_LOG = """
CREATE TABLE vector_log (
  seq     INTEGER PRIMARY KEY AUTOINCREMENT,
  kind    TEXT NOT NULL CHECK (kind IN ('frame', 'chunk', 'reset')),
  item_id INTEGER NOT NULL
);
"""

FRAME_LINKS = """
CREATE TABLE frame_links (
  frame_id   INTEGER NOT NULL REFERENCES memory_frames(id) ON DELETE CASCADE,
  related_id INTEGER NOT NULL REFERENCES memory_frames(id) ON DELETE CASCADE,
  score      REAL NOT NULL,
  PRIMARY KEY (frame_id, related_id)
) WITHOUT ROWID;
CREATE INDEX idx_frame_links_related ON frame_links(related_id);
"""

HARVEST_RUNS = f"""
CREATE TABLE harvest_runs (
  run_id         TEXT PRIMARY KEY,
  source         TEXT NOT NULL,
  source_path    TEXT NOT NULL DEFAULT '',
  content_hash   TEXT NOT NULL DEFAULT '',
  status         TEXT NOT NULL DEFAULT 'running'
                 CHECK (status IN ('running', 'completed', 'failed')),
  items_done     INTEGER NOT NULL DEFAULT 0,
  frames_created INTEGER NOT NULL DEFAULT 0,
  cursor         TEXT,
  error          TEXT,
  started_at     TEXT NOT NULL DEFAULT {SQL_NOW},
  updated_at     TEXT NOT NULL DEFAULT {SQL_NOW},
  finished_at    TEXT
) WITHOUT ROWID;
CREATE INDEX idx_harvest_runs_source ON harvest_runs(source, source_path);
"""

# The FTS index gets a second column (mind.storage.search_context): the source date in words and
# the
# previous turn. Back-filled before the new index exists (no trigger sees a half-made row), then
# the index is rebuilt from the frames.
SEARCH_CONTEXT = f"""
ALTER TABLE memory_frames ADD COLUMN search_context TEXT NOT NULL DEFAULT '';
DROP TRIGGER memory_frames_fts_ad;
DROP TRIGGER memory_frames_fts_au;
DROP TABLE memory_frames_fts;
UPDATE memory_frames SET search_context = {ROW_CONTEXT};
CREATE VIRTUAL TABLE memory_frames_fts USING fts5(
  content,
  search_context,
  content='memory_frames',
  content_rowid='id',
  tokenize='porter unicode61 remove_diacritics 2'
);
INSERT INTO memory_frames_fts(memory_frames_fts) VALUES ('rebuild');
CREATE TRIGGER memory_frames_fts_ad AFTER DELETE ON memory_frames BEGIN
  INSERT INTO memory_frames_fts(memory_frames_fts, rowid, content, search_context)
    VALUES ('delete', old.id, old.content, old.search_context);
END;
CREATE TRIGGER memory_frames_fts_au AFTER UPDATE OF content, search_context ON memory_frames
BEGIN
  INSERT INTO memory_frames_fts(memory_frames_fts, rowid, content, search_context)
    VALUES ('delete', old.id, old.content, old.search_context);
  INSERT INTO memory_frames_fts(rowid, content, search_context)
    VALUES (new.id, new.content, new.search_context);
END;
CREATE TRIGGER memory_frames_context_ad AFTER DELETE ON memory_frames BEGIN
  UPDATE memory_frames SET search_context = {ROW_CONTEXT}
    WHERE gop_id = old.gop_id AND t = old.t + 1;
END;
CREATE TRIGGER memory_frames_context_au AFTER UPDATE OF content ON memory_frames BEGIN
  UPDATE memory_frames SET search_context = {ROW_CONTEXT}
    WHERE gop_id = new.gop_id AND t = new.t + 1;
END;
"""

# Relations cognify derives record the frames that support them, so forgetting a frame takes
# what only it supported (issue #12, item 5). ``asserted`` = 1 for a relation a user created (or
# re-created); cognify's own relations are ``asserted`` = 0 and are deleted by the trigger when
# their last supporting frame goes, by any path (forget, compaction, frame wipes).
# Back-fill: a relation whose properties say cognify made it ('cognify' co-occurrence or
# 'semantic') is supported by every frame that mentions both its ends (cognify only relates
# entities it bridged to the same frame); such a relation with no frame left is what an earlier
# forget left behind, and is deleted. Relations a user created keep asserted = 1 and no
# sources. The FTS index removes deleted entries from its segments at once ('secure-delete'),
# so a forgotten frame's words do not linger in old segments until a merge.
RELATION_SOURCES = f"""
ALTER TABLE knowledge_relations ADD COLUMN asserted INTEGER NOT NULL DEFAULT 1;
CREATE TABLE relation_sources (
  relation_id INTEGER NOT NULL REFERENCES knowledge_relations(id) ON DELETE CASCADE,
  frame_id    INTEGER NOT NULL REFERENCES memory_frames(id) ON DELETE CASCADE,
  PRIMARY KEY (relation_id, frame_id)
) WITHOUT ROWID;
CREATE INDEX idx_relation_sources_frame ON relation_sources(frame_id);
UPDATE knowledge_relations SET asserted = 0 WHERE {_DERIVED};
INSERT OR IGNORE INTO relation_sources(relation_id, frame_id)
  SELECT r.id, a.frame_id FROM knowledge_relations r
  JOIN kg_entity_frames a ON a.entity_id = r.source_id
  JOIN kg_entity_frames b ON b.entity_id = r.target_id AND b.frame_id = a.frame_id
  WHERE r.asserted = 0;
DELETE FROM knowledge_relations WHERE asserted = 0
  AND id NOT IN (SELECT relation_id FROM relation_sources);
CREATE TRIGGER relation_sources_ad AFTER DELETE ON relation_sources
WHEN NOT EXISTS (SELECT 1 FROM relation_sources WHERE relation_id = old.relation_id) BEGIN
  DELETE FROM knowledge_relations WHERE id = old.relation_id AND asserted = 0;
END;
INSERT INTO memory_frames_fts(memory_frames_fts, rank) VALUES ('secure-delete', 1);
"""

# A harvest source's source_path is what auto-sync reads again. Before this version a client's
# label (inline data, uploads) was stored there too, so a row cannot tell a path its user named
# from a label an API client chose: every older path moves to display_name and auto-sync of
# those sources waits until their user imports them again by path (fail closed).
HARVEST_LABELS = """
UPDATE harvest_sources SET display_name = source_path, source_path = NULL
  WHERE source_path IS NOT NULL;
"""

# Idempotency keys (mind/storage/idempotency.py): a keyed write's applied-op row keeps its result,
# so a
# client's retry gets the same answer (the same frame id) instead of a second write.
APPLIED_RESULTS = """
ALTER TABLE applied_ops ADD COLUMN result TEXT;
"""

# Edits and deletions of frames, for in-memory keyword indexes (mind.retrieval.keyword_index):
# new frames need no entry (ids only grow), so a bulk import writes nothing here.
TEXT_LOG = """
CREATE TABLE text_log (
  seq      INTEGER PRIMARY KEY AUTOINCREMENT,
  frame_id INTEGER NOT NULL
);
CREATE TRIGGER text_log_au AFTER UPDATE OF content, search_context ON memory_frames BEGIN
  INSERT INTO text_log(frame_id) VALUES (new.id);
END;
CREATE TRIGGER text_log_ad AFTER DELETE ON memory_frames BEGIN
  INSERT INTO text_log(frame_id) VALUES (old.id);
END;
"""

# Update statements (mind.knowledge.supersession): a turn that decides or changes something, and
# the earlier turns it replaces. Both ends cascade: forgetting the newer turn makes the older one
# current again. ``valid_to`` of the older statement is the newer one's source time.
SUPERSESSIONS = """
CREATE TABLE frame_updates (
  frame_id INTEGER PRIMARY KEY REFERENCES memory_frames(id) ON DELETE CASCADE,
  cue      TEXT NOT NULL CHECK (cue IN ('decision', 'change'))
);
CREATE TABLE frame_supersessions (
  superseded_id INTEGER NOT NULL REFERENCES memory_frames(id) ON DELETE CASCADE,
  frame_id      INTEGER NOT NULL REFERENCES memory_frames(id) ON DELETE CASCADE,
  cue           TEXT NOT NULL,
  similarity    REAL NOT NULL,
  valid_to      TEXT NOT NULL,
  recorded_at   TEXT NOT NULL,
  PRIMARY KEY (superseded_id, frame_id)
) WITHOUT ROWID;
CREATE INDEX idx_supersessions_frame ON frame_supersessions(frame_id);
"""

# Related-frame links: recall never read them, and as a recall signal they lowered every eval
# (mind.cognify_apply's docstring has the figures); the nearest-frame search that wrote them now
# only feeds supersession.
DROP_FRAME_LINKS = """
DROP INDEX idx_frame_links_related;
DROP TABLE frame_links;
"""

# Per-file tables nothing uses: concept mastery had no reader or writer, and the monthly
# embedding count is per user, not per mind: it lives in the data dir's usage file or in Redis
# (mind.embeddings.quota). No version wrote a row to either table.
DROP_UNUSED = """
DROP TABLE concept_mastery;
DROP TABLE embedding_usage;
"""

# The content-hash index serves one lookup: an I-frame saved with dedup on (and no external id)
# finds an earlier frame with its content (mind.frames.store). It holds only the frames such a
# save may match, those without an external id: imported frames (each with its external id) no
# longer pay a random insert into it, about a fifth of a bulk write's SQL time
# (bench/components/bulk_write.py).
HASH_INDEX_SAVED = """
DROP INDEX idx_frames_hash;
CREATE INDEX idx_frames_hash ON memory_frames(content_hash) WHERE external_id IS NULL;
"""

# Frames a one-shot process (a CLI save) handed to another process writing the mind, which
# indexes them (actors/handoff.py): that process looks for them by this index, whatever the size
# of its own outbox.
HANDED_FRAMES = f"""
CREATE INDEX idx_pending_handed ON pending_index(frame_id) WHERE reason = '{OUTBOX_HANDED}';
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "core: identity, awareness, sessions, frames, fts, outbox", CORE),
    Migration(2, "knowledge graph: entities, relations, entity-frame bridge", KNOWLEDGE),
    Migration(3, "indexing: chunks, stale-index trigger, applied ops, harvest, usage", INDEXING),
    Migration(4, "concept mastery tracking", CONCEPTS),
    Migration(5, "vector change log for in-memory vector indexes", VECTOR_LOG),
    Migration(6, "related-frame links computed by cognify", FRAME_LINKS),
    Migration(7, "harvest runs: resumable imports", HARVEST_RUNS),
    Migration(8, "keyword context: source date in words and the previous turn", SEARCH_CONTEXT),
    Migration(9, "relation provenance: the frames that support derived relations",
              RELATION_SOURCES),
    Migration(10, "harvest sources: labels are display only, older paths not re-read",
              HARVEST_LABELS),
    Migration(11, "idempotency keys: a keyed write's applied op keeps its result",
              APPLIED_RESULTS),
    Migration(12, "text change log for in-memory keyword indexes", TEXT_LOG),
    Migration(13, "update statements and the earlier statements they supersede", SUPERSESSIONS),
    Migration(14, "related-frame links dropped: recall never used them", DROP_FRAME_LINKS),
    Migration(15, "concept mastery and per-file embedding usage dropped: never used",
              DROP_UNUSED),
    Migration(16, "content-hash index over the frames saved without an external id",
              HASH_INDEX_SAVED),
    Migration(17, "outbox: frames handed to another process to index", HANDED_FRAMES),
)

LATEST_VERSION = MIGRATIONS[-1].version
