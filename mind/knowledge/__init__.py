"""The knowledge graph: entities and relations extracted from frames.

Owns the bitemporal entity/relation store and its graph walks, bulk writes for cognify,
extraction (names, types, relation patterns), name normalization, duplicate merging, and
applying a cognify result to the graph. Imports ``mind.storage``, ``mind.frames`` and the
vocabulary.
"""
