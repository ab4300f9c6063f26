"""Embedding providers for hive-mind.

``Embedder`` is the contract (base.py); providers: in-process sentence-transformers
(inprocess.py), Ollama / OpenAI / Voyage / LiteLLM over HTTP (http.py), the deterministic
``test`` embedder and the degraded ``mock`` (testing.py). ``EmbeddingProviderChain`` (chain.py)
probes and picks one from ``EmbeddingConfig`` through the registry (registry.py); tiers, quotas
and the usage counter live in quota.py. Importing this package does not import torch: the
model loads on first use, and the HTTP providers (httpx) load when one is chosen: import them
from :mod:`mind.embeddings.http`. The names below are imported from their modules on first use,
so a process that imports one module of the package (a save builds the chain, and embeds
nothing when another process indexes for it) loads neither the encoders' code nor numpy.
"""

from __future__ import annotations

import importlib

_EXPORTS: dict[str, tuple[str, ...]] = {
    "base": ("PROBE_TEXT", "Embedder", "EmbeddingError", "TargetDimEmbedder", "cap_text",
             "fingerprint", "max_chars_for_model", "normalize_dimensions", "probe_embedder"),
    "chain": ("EmbeddingProviderChain",),
    "inprocess": ("InProcessEmbedder",),
    "quota": ("TIERS", "EmbeddingQuotaExceededError", "Tier", "TierError", "UsageCounter",
              "UsageStore", "check_provider_allowed"),
    "registry": ("AUTO_ORDER", "PROVIDERS", "EmbeddingConfig", "ProviderNotConfigured",
                 "register_provider"),
    "testing": ("MockEmbedder", "TestEmbedder"),
}
_HOME = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> object:
    """``mind.embeddings.<name>``: imported from its module on first use."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
