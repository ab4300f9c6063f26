"""Embedding configuration and the provider registry (name → factory).

Every provider — the real ones, the deterministic ``test`` embedder and the ``mock`` — is
created through :data:`PROVIDERS`, so tests and later code can :func:`register_provider` their
own. A factory raises :class:`ProviderNotConfigured` when the provider lacks what it needs (an
API key): the 'auto' chain then skips it without sending any request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mind.constants import (
    DEFAULT_EMBEDDING_BACKEND,
    DEFAULT_EMBEDDING_BATCH,
    DEFAULT_LITELLM_URL,
    DEFAULT_OLLAMA_URL,
    DEFAULT_OPENAI_URL,
    DEFAULT_TEST_DIMENSIONS,
    DEFAULT_USER_ID,
    DEFAULT_VOYAGE_URL,
    MOCK_DIMENSIONS,
)
from mind.embeddings.base import Embedder, EmbeddingError

AUTO_ORDER = ("inprocess", "ollama", "voyage", "openai")


@dataclass(slots=True)
class EmbeddingConfig:
    """Everything the chain needs; built from the settings object, never from the environment
    (:meth:`hive_mind.settings.Settings.embedding_config` sets every field; the defaults here
    are the settings' defaults, :mod:`mind.constants`).

    ``model`` applies to an explicitly chosen provider; the ``<provider>_model`` fields apply
    always (None = the provider's default). ``timeout`` None = each provider's default
    (Ollama/LiteLLM 30 s, OpenAI/Voyage 15 s). ``tier`` None = no gating (local use). API keys
    are left out of ``repr``.
    """

    provider: str = "auto"
    model: str | None = None
    device: str = "cpu"
    batch_size: int = DEFAULT_EMBEDDING_BATCH
    num_threads: int | None = None
    lanes: int | None = None  # parallel in-process encoders (see inprocess.py)
    nice: int = 0  # in-process encodes at lower CPU priority (see inprocess.py)
    backend: str = DEFAULT_EMBEDDING_BACKEND  # what runs the in-process model
    # where ONNX exports are cached: the first root holding one, else the first writable
    # (mind.embeddings.onnx_export; default: the machine-wide cache)
    onnx_cache_dir: Path | tuple[Path, ...] | None = None
    inprocess_model: str | None = None
    ollama_url: str = DEFAULT_OLLAMA_URL
    ollama_model: str | None = None
    openai_url: str = DEFAULT_OPENAI_URL
    openai_api_key: str | None = field(default=None, repr=False)
    openai_model: str | None = None
    voyage_url: str = DEFAULT_VOYAGE_URL
    voyage_api_key: str | None = field(default=None, repr=False)
    voyage_model: str | None = None
    litellm_url: str = DEFAULT_LITELLM_URL
    litellm_api_key: str | None = field(default=None, repr=False)
    litellm_model: str | None = None
    timeout: float | None = None
    http_batch_size: int | None = None
    test_dimensions: int = DEFAULT_TEST_DIMENSIONS
    target_dimensions: int | None = None
    eval_mode: bool = False
    tier: str | None = None
    user_id: str = DEFAULT_USER_ID
    upgrade_url: str | None = None

    def model_for(self, provider: str) -> str | None:
        if self.model and self.provider == provider:
            return self.model
        value = getattr(self, f"{provider}_model", None)
        return value if isinstance(value, str) and value else None

    @property
    def gated(self) -> bool:
        return self.tier is not None and not self.eval_mode


class ProviderNotConfigured(EmbeddingError):
    """A provider lacks what it needs (an API key); 'auto' skips it without any request."""


ProviderFactory = Callable[[EmbeddingConfig], Embedder]


def _needs_key(name: str, key: str | None) -> str:
    if not key:
        raise ProviderNotConfigured(f"{name}: no API key configured", provider=name)
    return key


def _inprocess(c: EmbeddingConfig) -> Embedder:
    from mind.embeddings.inprocess import InProcessEmbedder  # its code loads when chosen
    from mind.embeddings.model_source import DEFAULT_MODEL

    return InProcessEmbedder(
        c.model_for("inprocess") or DEFAULT_MODEL,
        backend=c.backend,
        onnx_cache_dir=c.onnx_cache_dir,
        device=c.device,
        batch_size=c.batch_size,
        num_threads=c.num_threads,
        lanes=c.lanes,
        nice=c.nice,
    )


def _ollama(c: EmbeddingConfig) -> Embedder:
    from mind.embeddings.http import OllamaEmbedder  # httpx loads only when chosen

    return OllamaEmbedder(
        model=c.model_for("ollama"),
        base_url=c.ollama_url,
        timeout=c.timeout,
        batch_size=c.http_batch_size,
    )


def _voyage(c: EmbeddingConfig) -> Embedder:
    from mind.embeddings.http import VoyageEmbedder  # httpx loads only when chosen

    return VoyageEmbedder(
        model=c.model_for("voyage"),
        base_url=c.voyage_url,
        timeout=c.timeout,
        api_key=_needs_key("voyage", c.voyage_api_key),
        batch_size=c.http_batch_size,
    )


def _openai(c: EmbeddingConfig) -> Embedder:
    from mind.embeddings.http import OpenAIEmbedder  # httpx loads only when chosen

    return OpenAIEmbedder(
        model=c.model_for("openai"),
        base_url=c.openai_url,
        timeout=c.timeout,
        api_key=_needs_key("openai", c.openai_api_key),
        batch_size=c.http_batch_size,
    )


def _litellm(c: EmbeddingConfig) -> Embedder:
    from mind.embeddings.http import LiteLLMEmbedder  # httpx loads only when chosen

    return LiteLLMEmbedder(
        model=c.model_for("litellm"),
        base_url=c.litellm_url,
        timeout=c.timeout,
        api_key=c.litellm_api_key,
        batch_size=c.http_batch_size,
    )


def _test(c: EmbeddingConfig) -> Embedder:
    from mind.embeddings.testing import TestEmbedder

    return TestEmbedder(c.test_dimensions)


def _mock(c: EmbeddingConfig) -> Embedder:
    from mind.embeddings.testing import MockEmbedder

    return MockEmbedder(c.target_dimensions or MOCK_DIMENSIONS)


PROVIDERS: dict[str, ProviderFactory] = {
    "inprocess": _inprocess,
    "ollama": _ollama,
    "voyage": _voyage,
    "openai": _openai,
    "litellm": _litellm,
    "test": _test,
    "mock": _mock,
}


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Make ``name`` selectable as ``EmbeddingConfig.provider`` (replaces an existing entry)."""
    PROVIDERS[name] = factory
