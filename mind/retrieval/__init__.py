"""Retrieval: finding the right memory for a query.

Owns hybrid search (FTS5 keyword lane + vector lane, fused and re-scored), scoring profiles,
query parsing (terms, time expressions, speakers), the in-memory
vector index and stored vectors, chunking, indexing (writing vectors and chunks), reconcile
(repairing index coverage), catch-up and combined recall across minds and an external source.
Imports ``mind.storage``, ``mind.frames``, ``mind.knowledge`` (graph proximity) and the
vocabulary.
"""
