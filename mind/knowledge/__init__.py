"""The knowledge graph: entities and relations extracted from frames.

Owns the bitemporal entity/relation store and its graph walks, bulk writes for cognify,
extraction (names, types, relation patterns), name normalization and duplicate merging.
Imports ``mind.storage``, ``mind.frames`` and the vocabulary.
"""
