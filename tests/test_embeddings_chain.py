"""The provider chain: auto probing order, stop-at-first-success, mock fallback, explicit mode."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import numpy as np
import pytest

from mind.embeddings import (
    PROVIDERS,
    EmbeddingConfig,
    EmbeddingError,
    EmbeddingProviderChain,
    TestEmbedder,
    fingerprint,
    register_provider,
)
from tests.support import KEY, EmbeddingHandler, FakeServer, closed_port, protocol

BOGUS_MODEL = "hive-mind/definitely-not-a-model"
Serve = Callable[[EmbeddingHandler], Awaitable[FakeServer]]


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    servers: list[FakeServer] = []

    async def start(handler: EmbeddingHandler) -> FakeServer:
        servers.append(await FakeServer(handler).start())
        return servers[-1]

    yield start
    for server in servers:
        await server.close()


def config(**overrides: Any) -> EmbeddingConfig:
    """Auto mode where in-process fails (unknown model, offline) and nothing listens for Ollama."""
    values: dict[str, Any] = {
        "inprocess_model": BOGUS_MODEL,
        "ollama_url": f"http://127.0.0.1:{closed_port()}",
        "timeout": 5.0,
    }
    values.update(overrides)
    return EmbeddingConfig(**values)


@pytest.mark.slow
async def test_auto_takes_ollama_after_inprocess_fails_and_stops_probing(serve: Serve) -> None:
    ollama = await serve(protocol("ollama"))
    voyage = await serve(protocol("voyage", key=KEY))
    openai = await serve(protocol("openai", key=KEY))
    cfg = config(
        ollama_url=ollama.url,
        voyage_url=voyage.url,
        voyage_api_key=KEY,
        openai_url=openai.url,
        openai_api_key=KEY,
    )
    async with EmbeddingProviderChain(cfg) as chain:
        assert fingerprint(chain) == ("ollama", "nomic-embed-text", 32)
        assert chain.degraded is False and chain.last_error is None
        out = await chain.embed_batch(["hello", "world"])
        np.testing.assert_allclose(out, TestEmbedder(32).encode(["hello", "world"]))
        status = chain.status()
    assert len(ollama.requests) == 2  # the probe, then the batch
    assert voyage.requests == [] and openai.requests == []
    assert status["provider"] == "ollama" and status["model"] == "nomic-embed-text"
    assert status["dimensions"] == 32 and status["degraded"] is False
    assert status["available_providers"] == ["ollama", "mock"]
    assert status["probed_at"] is not None
    probes = status["probes"]
    assert isinstance(probes, dict)
    assert list(probes) == ["inprocess", "ollama"]
    assert BOGUS_MODEL in probes["inprocess"] and probes["ollama"] == "ok"


async def test_auto_prefers_the_real_inprocess_model(serve: Serve) -> None:
    ollama = await serve(protocol("ollama"))
    config = EmbeddingConfig(ollama_url=ollama.url, num_threads=2, lanes=2)
    async with EmbeddingProviderChain(config) as chain:
        assert fingerprint(chain) == ("inprocess", "all-MiniLM-L6-v2+onnx-int8", 384)  # default
        assert (chain.status()["lanes"], chain.status()["threads_per_lane"]) == (2, 1)
        out = await chain.embed_batch(["a short note"])
        np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-4)
    assert ollama.requests == []


async def test_auto_skips_keyless_remotes_and_falls_through_failures(serve: Serve) -> None:
    broken = await serve(lambda request: (503, "ollama is loading"))
    voyage = await serve(protocol("voyage", key=KEY))
    openai = await serve(protocol("openai", key=KEY))
    cfg = config(
        ollama_url=broken.url, voyage_url=voyage.url, openai_url=openai.url, openai_api_key=KEY
    )
    async with EmbeddingProviderChain(cfg) as chain:
        assert chain.provider == "openai"
        probes = chain.status()["probes"]
    assert isinstance(probes, dict)
    assert "503" in probes["ollama"] and "ollama is loading" in probes["ollama"]
    assert probes["voyage"].startswith("skipped") and "no API key" in probes["voyage"]
    assert voyage.requests == [] and len(openai.requests) == 1


async def test_nothing_available_falls_back_to_the_degraded_mock() -> None:
    async with EmbeddingProviderChain(config()) as chain:
        assert fingerprint(chain) == ("mock", "deterministic-mock", 1024)
        assert chain.degraded is True
        assert chain.last_error is not None
        assert chain.last_error.startswith("No real providers available")
        assert "inprocess" in chain.last_error and "Ollama" in chain.last_error
        status = chain.status()
        assert status["degraded"] is True and status["available_providers"] == ["mock"]
        assert status["last_error"] == chain.last_error
        out = await chain.embed_batch(["AB"])
        assert out.shape == (1, 1024) and out[0, 0] == (65 - 128) / 128


async def test_explicit_provider_failure_is_an_error_not_a_fallback(serve: Serve) -> None:
    broken = await serve(lambda request: (500, "kaputt"))
    chain = EmbeddingProviderChain(EmbeddingConfig(provider="ollama", ollama_url=broken.url))
    with pytest.raises(EmbeddingError, match=r"'ollama' is unavailable.*\(500\).*kaputt") as info:
        await chain.start()
    assert info.value.provider_status == 500 and chain.active is None
    assert chain.last_error is not None and "kaputt" in chain.last_error
    with pytest.raises(EmbeddingError):
        await chain.embed_batch(["x"])  # still no silent mock
    await chain.close()
    openai = EmbeddingProviderChain(EmbeddingConfig(provider="openai"))
    with pytest.raises(EmbeddingError, match="no API key"):
        await openai.start()
    with pytest.raises(EmbeddingError, match="unknown embedding provider 'nope'"):
        await EmbeddingProviderChain(EmbeddingConfig(provider="nope")).start()


async def test_explicit_inprocess_offline_unknown_model() -> None:
    chain = EmbeddingProviderChain(EmbeddingConfig(provider="inprocess", model=BOGUS_MODEL))
    with pytest.raises(EmbeddingError, match="HF_HUB_OFFLINE"):
        await chain.start()


async def test_explicit_test_provider_with_target_dimensions() -> None:
    async with EmbeddingProviderChain(EmbeddingConfig(provider="test")) as chain:
        assert fingerprint(chain) == ("test", "hashed-bow-trigram-64", 64)
        assert chain.degraded is False
    cfg = EmbeddingConfig(provider="test", test_dimensions=48, target_dimensions=1024)
    async with EmbeddingProviderChain(cfg) as chain:
        assert fingerprint(chain) == ("test", "hashed-bow-trigram-48@1024", 1024)
        vec = await chain.embed("padded vector")
        assert vec.shape == (1024,) and not vec[48:].any()
        np.testing.assert_allclose(vec[:48], TestEmbedder(48).encode(["padded vector"])[0])
    async with EmbeddingProviderChain(
        EmbeddingConfig(provider="mock", target_dimensions=256)
    ) as chain:
        assert fingerprint(chain) == ("mock", "deterministic-mock", 256)


async def test_registered_providers_are_selectable() -> None:
    class Fixed(TestEmbedder):
        provider = "fixed"

    registry = dict(PROVIDERS, fixed=lambda c: Fixed(8))
    async with EmbeddingProviderChain(
        EmbeddingConfig(provider="fixed"), registry=registry
    ) as chain:
        assert fingerprint(chain) == ("fixed", "hashed-bow-trigram-8", 8)
    register_provider("fixed-global", lambda c: Fixed(12))
    try:
        async with EmbeddingProviderChain(EmbeddingConfig(provider="fixed-global")) as chain:
            assert chain.dimensions == 12
    finally:
        del PROVIDERS["fixed-global"]


async def test_a_provider_raising_foreign_errors_is_translated() -> None:
    class Exploding(TestEmbedder):
        async def embed_batch(self, texts: Any) -> np.ndarray:
            raise RuntimeError("segfault-ish")

    chain = EmbeddingProviderChain(
        EmbeddingConfig(provider="boom"), registry={"boom": lambda c: Exploding()}
    )
    with pytest.raises(EmbeddingError, match="boom: RuntimeError: segfault-ish"):
        await chain.start()


async def test_batch_failure_raises_and_records_last_error(serve: Serve) -> None:
    state = {"up": True}
    healthy = protocol("ollama")
    server = await serve(lambda r: healthy(r) if state["up"] else (500, "GPU fell off"))
    async with EmbeddingProviderChain(config(ollama_url=server.url)) as chain:
        assert chain.provider == "ollama"
        state["up"] = False
        with pytest.raises(EmbeddingError, match="GPU fell off"):
            await chain.embed_batch(["a", "b"])
        assert chain.last_error is not None and "GPU fell off" in chain.last_error
        assert chain.provider == "ollama"  # no switch to the mock behind the caller's back


async def test_chain_caps_texts_and_handles_empty_batches(serve: Serve) -> None:
    server = await serve(protocol("ollama"))
    async with EmbeddingProviderChain(config(ollama_url=server.url)) as chain:
        n = len(server.requests)
        assert (await chain.embed_batch([])).shape == (0, 32)
        assert len(server.requests) == n
        await chain.embed_batch(["y" * 7000])
    assert server.requests[-1].json()["input"] == ["y" * 6000]


async def test_lazy_start_and_close() -> None:
    chain = EmbeddingProviderChain(EmbeddingConfig(provider="test"))
    assert (chain.provider, chain.dimensions, chain.degraded) == ("none", 0, True)
    assert chain.status()["probed_at"] is None
    assert (await chain.embed_batch(["lazy"])).shape == (1, 64)  # starts on first use
    assert chain.provider == "test"
    await chain.close()
    with pytest.raises(EmbeddingError, match="closed"):
        await chain.embed_batch(["x"])
    await chain.close()
