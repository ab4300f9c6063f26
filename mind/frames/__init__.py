"""Frames and sessions: the memories themselves.

Owns I/P/B memory frames (the model, the store, read queries, content hashes), sessions (GOPs),
the indexing outbox, compaction and forget. Imports ``mind.storage`` and the
vocabulary; retrieval and the knowledge graph read frames through here.
"""
