"""Harvest adapters: pure, streaming parsers of chat exports and documents.

See :mod:`mind.harvest.types` for the item model and :mod:`mind.harvest.registry` for the
source names."""
