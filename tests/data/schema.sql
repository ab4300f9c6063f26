-- index idx_awareness_priority on awareness
CREATE INDEX idx_awareness_priority ON awareness(priority DESC, id);
-- index idx_entities_name on knowledge_entities
CREATE INDEX idx_entities_name ON knowledge_entities(name);
-- index idx_entities_norm on knowledge_entities
CREATE INDEX idx_entities_norm ON knowledge_entities(normalized_name, entity_type);
-- index idx_entities_type on knowledge_entities
CREATE INDEX idx_entities_type ON knowledge_entities(entity_type);
-- index idx_frame_refs_target on frame_references
CREATE INDEX idx_frame_refs_target ON frame_references(ref_frame_id);
-- index idx_frames_base on memory_frames
CREATE INDEX idx_frames_base ON memory_frames(base_frame_id);
-- index idx_frames_created on memory_frames
CREATE INDEX idx_frames_created ON memory_frames(created_at);
-- index idx_frames_external on memory_frames
CREATE UNIQUE INDEX idx_frames_external ON memory_frames(external_id)
  WHERE external_id IS NOT NULL;
-- index idx_frames_gop_t on memory_frames
CREATE UNIQUE INDEX idx_frames_gop_t ON memory_frames(gop_id, t);
-- index idx_frames_hash on memory_frames
CREATE INDEX idx_frames_hash ON memory_frames(content_hash) WHERE external_id IS NULL;
-- index idx_frames_importance_recorded on memory_frames
CREATE INDEX idx_frames_importance_recorded ON memory_frames(importance, recorded_at);
-- index idx_frames_type_gop on memory_frames
CREATE INDEX idx_frames_type_gop ON memory_frames(frame_type, gop_id);
-- index idx_harvest_runs_source on harvest_runs
CREATE INDEX idx_harvest_runs_source ON harvest_runs(source, source_path);
-- index idx_kg_entity_frames_frame on kg_entity_frames
CREATE INDEX idx_kg_entity_frames_frame ON kg_entity_frames(frame_id);
-- index idx_pending_enqueued on pending_index
CREATE INDEX idx_pending_enqueued ON pending_index(enqueued_at);
-- index idx_pending_handed on pending_index
CREATE INDEX idx_pending_handed ON pending_index(frame_id) WHERE reason = 'handed';
-- index idx_relation_sources_frame on relation_sources
CREATE INDEX idx_relation_sources_frame ON relation_sources(frame_id);
-- index idx_relations_active on knowledge_relations
CREATE UNIQUE INDEX idx_relations_active ON knowledge_relations(source_id, target_id, relation_type)
  WHERE valid_to IS NULL;
-- index idx_relations_source on knowledge_relations
CREATE INDEX idx_relations_source ON knowledge_relations(source_id, relation_type);
-- index idx_relations_target on knowledge_relations
CREATE INDEX idx_relations_target ON knowledge_relations(target_id, relation_type);
-- index idx_sessions_project on sessions
CREATE INDEX idx_sessions_project ON sessions(project_id, started_at);
-- index idx_sessions_status on sessions
CREATE INDEX idx_sessions_status ON sessions(status, started_at);
-- index idx_supersessions_frame on frame_supersessions
CREATE INDEX idx_supersessions_frame ON frame_supersessions(frame_id);
-- table applied_ops on applied_ops
CREATE TABLE applied_ops (
  op_id      TEXT PRIMARY KEY,
  applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
, result TEXT) WITHOUT ROWID;
-- table awareness on awareness
CREATE TABLE awareness (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  category   TEXT NOT NULL CHECK (category IN ('task', 'action', 'pending', 'flag')),
  content    TEXT NOT NULL,
  priority   INTEGER NOT NULL DEFAULT 0,
  metadata   TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  expires_at TEXT
);
-- table frame_references on frame_references
CREATE TABLE frame_references (
  frame_id      INTEGER NOT NULL REFERENCES memory_frames(id) ON DELETE CASCADE,
  ref_frame_id  INTEGER NOT NULL REFERENCES memory_frames(id) ON DELETE CASCADE,
  position      INTEGER NOT NULL,
  PRIMARY KEY (frame_id, ref_frame_id)
) WITHOUT ROWID;
-- table frame_supersessions on frame_supersessions
CREATE TABLE frame_supersessions (
  superseded_id INTEGER NOT NULL REFERENCES memory_frames(id) ON DELETE CASCADE,
  frame_id      INTEGER NOT NULL REFERENCES memory_frames(id) ON DELETE CASCADE,
  cue           TEXT NOT NULL,
  similarity    REAL NOT NULL,
  valid_to      TEXT NOT NULL,
  recorded_at   TEXT NOT NULL,
  PRIMARY KEY (superseded_id, frame_id)
) WITHOUT ROWID;
-- table frame_updates on frame_updates
CREATE TABLE frame_updates (
  frame_id INTEGER PRIMARY KEY REFERENCES memory_frames(id) ON DELETE CASCADE,
  cue      TEXT NOT NULL CHECK (cue IN ('decision', 'change'))
);
-- table harvest_runs on harvest_runs
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
  started_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  updated_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  finished_at    TEXT
) WITHOUT ROWID;
-- table harvest_sources on harvest_sources
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
  created_at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
-- table identity on identity
CREATE TABLE identity (
  id            INTEGER PRIMARY KEY CHECK (id = 1),
  name          TEXT NOT NULL,
  role          TEXT NOT NULL DEFAULT '',
  department    TEXT NOT NULL DEFAULT '',
  personality   TEXT NOT NULL DEFAULT '',
  capabilities  TEXT NOT NULL DEFAULT '',
  system_prompt TEXT NOT NULL DEFAULT '',
  created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
-- table kg_entity_frames on kg_entity_frames
CREATE TABLE kg_entity_frames (
  entity_id INTEGER NOT NULL REFERENCES knowledge_entities(id) ON DELETE CASCADE,
  frame_id  INTEGER NOT NULL REFERENCES memory_frames(id) ON DELETE CASCADE,
  PRIMARY KEY (entity_id, frame_id)
) WITHOUT ROWID;
-- table knowledge_entities on knowledge_entities
CREATE TABLE knowledge_entities (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  entity_type     TEXT NOT NULL,
  name            TEXT NOT NULL,
  normalized_name TEXT NOT NULL,
  properties      TEXT NOT NULL DEFAULT '{}',
  valid_from      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  valid_to        TEXT,
  recorded_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
-- table knowledge_relations on knowledge_relations
CREATE TABLE knowledge_relations (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  source_id     INTEGER NOT NULL REFERENCES knowledge_entities(id) ON DELETE CASCADE,
  target_id     INTEGER NOT NULL REFERENCES knowledge_entities(id) ON DELETE CASCADE,
  relation_type TEXT NOT NULL,
  confidence    REAL NOT NULL DEFAULT 1.0,
  properties    TEXT NOT NULL DEFAULT '{}',
  valid_from    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  valid_to      TEXT,
  recorded_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
, asserted INTEGER NOT NULL DEFAULT 1);
-- table memory_frame_chunks on memory_frame_chunks
CREATE TABLE memory_frame_chunks (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  frame_id   INTEGER NOT NULL REFERENCES memory_frames(id) ON DELETE CASCADE,
  chunk_idx  INTEGER NOT NULL,
  content    TEXT NOT NULL,
  char_start INTEGER NOT NULL,
  char_end   INTEGER NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  UNIQUE (frame_id, chunk_idx)
);
-- table memory_frames on memory_frames
CREATE TABLE memory_frames (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  frame_type    TEXT NOT NULL CHECK (frame_type IN ('I', 'P', 'B')),
  gop_id        TEXT NOT NULL REFERENCES sessions(gop_id),
  t             INTEGER NOT NULL,
  base_frame_id INTEGER REFERENCES memory_frames(id) ON DELETE SET NULL,
  content       TEXT NOT NULL,
  importance    TEXT NOT NULL DEFAULT 'normal' CHECK (importance IN ('critical', 'important', 'normal', 'temporary', 'deprecated')),
  source        TEXT NOT NULL DEFAULT 'user_stated' CHECK (source IN ('user_stated', 'tool_verified', 'agent_inferred', 'import', 'system', 'personal', 'workspace', 'team_sync')),
  access_count  INTEGER NOT NULL DEFAULT 0,
  created_at    TEXT NOT NULL,
  recorded_at   TEXT NOT NULL,
  last_accessed TEXT NOT NULL,
  content_hash  TEXT NOT NULL,
  metadata      TEXT NOT NULL DEFAULT '{}',
  external_id   TEXT
, search_context TEXT NOT NULL DEFAULT '');
-- table memory_frames_fts on memory_frames_fts
CREATE VIRTUAL TABLE memory_frames_fts USING fts5(
  content,
  search_context,
  content='memory_frames',
  content_rowid='id',
  tokenize='porter unicode61 remove_diacritics 2'
);
-- table memory_frames_fts_config on memory_frames_fts_config
CREATE TABLE 'memory_frames_fts_config'(k PRIMARY KEY, v) WITHOUT ROWID;
-- table memory_frames_fts_data on memory_frames_fts_data
CREATE TABLE 'memory_frames_fts_data'(id INTEGER PRIMARY KEY, block BLOB);
-- table memory_frames_fts_docsize on memory_frames_fts_docsize
CREATE TABLE 'memory_frames_fts_docsize'(id INTEGER PRIMARY KEY, sz BLOB);
-- table memory_frames_fts_idx on memory_frames_fts_idx
CREATE TABLE 'memory_frames_fts_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;
-- table meta on meta
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
-- table pending_index on pending_index
CREATE TABLE pending_index (
  frame_id    INTEGER PRIMARY KEY REFERENCES memory_frames(id) ON DELETE CASCADE,
  reason      TEXT NOT NULL DEFAULT 'new',
  enqueued_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  attempts    INTEGER NOT NULL DEFAULT 0,
  last_error  TEXT
);
-- table relation_sources on relation_sources
CREATE TABLE relation_sources (
  relation_id INTEGER NOT NULL REFERENCES knowledge_relations(id) ON DELETE CASCADE,
  frame_id    INTEGER NOT NULL REFERENCES memory_frames(id) ON DELETE CASCADE,
  PRIMARY KEY (relation_id, frame_id)
) WITHOUT ROWID;
-- table schema_migrations on schema_migrations
CREATE TABLE schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
-- table sessions on sessions
CREATE TABLE sessions (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  gop_id     TEXT NOT NULL UNIQUE,
  project_id TEXT,
  status     TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'closed', 'archived')),
  started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  ended_at   TEXT,
  summary    TEXT
);
-- table text_log on text_log
CREATE TABLE text_log (
  seq      INTEGER PRIMARY KEY AUTOINCREMENT,
  frame_id INTEGER NOT NULL
);
-- table vector_log on vector_log
CREATE TABLE vector_log (
  seq     INTEGER PRIMARY KEY AUTOINCREMENT,
  kind    TEXT NOT NULL CHECK (kind IN ('frame', 'chunk', 'reset')),
  item_id INTEGER NOT NULL
);
-- trigger memory_frames_content_changed on memory_frames
CREATE TRIGGER memory_frames_content_changed AFTER UPDATE OF content ON memory_frames
WHEN new.content_hash IS NOT old.content_hash BEGIN
  DELETE FROM memory_frame_chunks WHERE frame_id = new.id;
  INSERT OR REPLACE INTO pending_index(frame_id, reason, enqueued_at, attempts)
    VALUES (new.id, 'content_changed', (strftime('%Y-%m-%dT%H:%M:%fZ','now')), 0);
END;
-- trigger memory_frames_context_ad on memory_frames
CREATE TRIGGER memory_frames_context_ad AFTER DELETE ON memory_frames BEGIN
  UPDATE memory_frames SET search_context = (coalesce((CASE strftime('%w', memory_frames.created_at) WHEN '0' THEN 'Sunday' WHEN '1' THEN 'Monday' WHEN '2' THEN 'Tuesday' WHEN '3' THEN 'Wednesday' WHEN '4' THEN 'Thursday' WHEN '5' THEN 'Friday' WHEN '6' THEN 'Saturday' ELSE '' END) || ' ' || CAST(strftime('%d', memory_frames.created_at) AS INTEGER) || ' ' || (CASE strftime('%m', memory_frames.created_at) WHEN '01' THEN 'January' WHEN '02' THEN 'February' WHEN '03' THEN 'March' WHEN '04' THEN 'April' WHEN '05' THEN 'May' WHEN '06' THEN 'June' WHEN '07' THEN 'July' WHEN '08' THEN 'August' WHEN '09' THEN 'September' WHEN '10' THEN 'October' WHEN '11' THEN 'November' WHEN '12' THEN 'December' ELSE '' END) || ' ' || strftime('%Y', memory_frames.created_at), '') || CASE WHEN substr(memory_frames.gop_id, 1, 5) = 'save:' THEN '' ELSE coalesce(char(10) || (SELECT substr(p.content, 1, 300) FROM memory_frames p WHERE p.gop_id = memory_frames.gop_id AND p.t = memory_frames.t - 1), '') END)
    WHERE gop_id = old.gop_id AND t = old.t + 1;
END;
-- trigger memory_frames_context_au on memory_frames
CREATE TRIGGER memory_frames_context_au AFTER UPDATE OF content ON memory_frames BEGIN
  UPDATE memory_frames SET search_context = (coalesce((CASE strftime('%w', memory_frames.created_at) WHEN '0' THEN 'Sunday' WHEN '1' THEN 'Monday' WHEN '2' THEN 'Tuesday' WHEN '3' THEN 'Wednesday' WHEN '4' THEN 'Thursday' WHEN '5' THEN 'Friday' WHEN '6' THEN 'Saturday' ELSE '' END) || ' ' || CAST(strftime('%d', memory_frames.created_at) AS INTEGER) || ' ' || (CASE strftime('%m', memory_frames.created_at) WHEN '01' THEN 'January' WHEN '02' THEN 'February' WHEN '03' THEN 'March' WHEN '04' THEN 'April' WHEN '05' THEN 'May' WHEN '06' THEN 'June' WHEN '07' THEN 'July' WHEN '08' THEN 'August' WHEN '09' THEN 'September' WHEN '10' THEN 'October' WHEN '11' THEN 'November' WHEN '12' THEN 'December' ELSE '' END) || ' ' || strftime('%Y', memory_frames.created_at), '') || CASE WHEN substr(memory_frames.gop_id, 1, 5) = 'save:' THEN '' ELSE coalesce(char(10) || (SELECT substr(p.content, 1, 300) FROM memory_frames p WHERE p.gop_id = memory_frames.gop_id AND p.t = memory_frames.t - 1), '') END)
    WHERE gop_id = new.gop_id AND t = new.t + 1;
END;
-- trigger memory_frames_fts_ad on memory_frames
CREATE TRIGGER memory_frames_fts_ad AFTER DELETE ON memory_frames BEGIN
  INSERT INTO memory_frames_fts(memory_frames_fts, rowid, content, search_context)
    VALUES ('delete', old.id, old.content, old.search_context);
END;
-- trigger memory_frames_fts_au on memory_frames
CREATE TRIGGER memory_frames_fts_au AFTER UPDATE OF content, search_context ON memory_frames
BEGIN
  INSERT INTO memory_frames_fts(memory_frames_fts, rowid, content, search_context)
    VALUES ('delete', old.id, old.content, old.search_context);
  INSERT INTO memory_frames_fts(rowid, content, search_context)
    VALUES (new.id, new.content, new.search_context);
END;
-- trigger relation_sources_ad on relation_sources
CREATE TRIGGER relation_sources_ad AFTER DELETE ON relation_sources
WHEN NOT EXISTS (SELECT 1 FROM relation_sources WHERE relation_id = old.relation_id) BEGIN
  DELETE FROM knowledge_relations WHERE id = old.relation_id AND asserted = 0;
END;
-- trigger text_log_ad on memory_frames
CREATE TRIGGER text_log_ad AFTER DELETE ON memory_frames BEGIN
  INSERT INTO text_log(frame_id) VALUES (old.id);
END;
-- trigger text_log_au on memory_frames
CREATE TRIGGER text_log_au AFTER UPDATE OF content, search_context ON memory_frames BEGIN
  INSERT INTO text_log(frame_id) VALUES (new.id);
END;
