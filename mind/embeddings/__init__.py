"""Embedding providers for hive-mind.

``Embedder`` is the contract (base.py); providers: in-process sentence-transformers
(inprocess.py), Ollama / OpenAI / Voyage / LiteLLM over HTTP (http.py), the deterministic
``test`` embedder and the degraded ``mock`` (testing.py). ``EmbeddingProviderChain`` (chain.py)
probes and picks one from ``EmbeddingConfig`` through the registry (registry.py); tiers, quotas
and the usage counter live in quota.py. Importing this package does not import torch: the
model loads on first use, and the HTTP providers (httpx) load when one is chosen: import them
from :mod:`mind.embeddings.http`.
"""

from __future__ import annotations

from mind.embeddings.base import (
    PROBE_TEXT,
    Embedder,
    EmbeddingError,
    TargetDimEmbedder,
    cap_text,
    fingerprint,
    max_chars_for_model,
    normalize_dimensions,
    probe_embedder,
)
from mind.embeddings.chain import EmbeddingProviderChain
from mind.embeddings.inprocess import InProcessEmbedder
from mind.embeddings.quota import (
    TIERS,
    EmbeddingQuotaExceededError,
    Tier,
    TierError,
    UsageCounter,
    UsageStore,
    check_provider_allowed,
)
from mind.embeddings.registry import (
    AUTO_ORDER,
    PROVIDERS,
    EmbeddingConfig,
    ProviderNotConfigured,
    register_provider,
)
from mind.embeddings.testing import MockEmbedder, TestEmbedder

__all__ = [
    "AUTO_ORDER",
    "PROBE_TEXT",
    "PROVIDERS",
    "TIERS",
    "Embedder",
    "EmbeddingConfig",
    "EmbeddingError",
    "EmbeddingProviderChain",
    "EmbeddingQuotaExceededError",
    "InProcessEmbedder",
    "MockEmbedder",
    "ProviderNotConfigured",
    "TargetDimEmbedder",
    "TestEmbedder",
    "Tier",
    "TierError",
    "UsageCounter",
    "UsageStore",
    "cap_text",
    "check_provider_allowed",
    "fingerprint",
    "max_chars_for_model",
    "normalize_dimensions",
    "probe_embedder",
    "register_provider",
]
