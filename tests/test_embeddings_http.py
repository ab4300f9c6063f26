"""HTTP providers against local servers speaking each provider's protocol (127.0.0.1 only).

``FakeServer`` and ``protocol`` are also used by the chain tests.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import numpy as np
import pytest

from mind.embeddings import EmbeddingError, TestEmbedder
from mind.embeddings.http import (
    HttpEmbedder,
    LiteLLMEmbedder,
    OllamaEmbedder,
    OpenAIEmbedder,
    VoyageEmbedder,
)
from tests.support import (
    DIM,
    KEY,
    EmbeddingHandler,
    FakeServer,
    Reply,
    Request,
    closed_port,
    protocol,
    wrap_rows,
)

CLASSES: dict[str, type[HttpEmbedder]] = {
    "ollama": OllamaEmbedder,
    "openai": OpenAIEmbedder,
    "voyage": VoyageEmbedder,
    "litellm": LiteLLMEmbedder,
}


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[EmbeddingHandler], Awaitable[FakeServer]]]:
    servers: list[FakeServer] = []

    async def start(handler: EmbeddingHandler) -> FakeServer:
        servers.append(await FakeServer(handler).start())
        return servers[-1]

    yield start
    for server in servers:
        await server.close()


def make(provider: str, url: str, **kwargs: Any) -> HttpEmbedder:
    kwargs.setdefault("api_key", KEY if provider in ("openai", "voyage") else None)
    return CLASSES[provider](base_url=url, **kwargs)


# -- each protocol, happy path ------------------------------------------------------------------


async def test_ollama_protocol(serve: Any) -> None:
    server = await serve(protocol("ollama"))
    async with OllamaEmbedder(base_url=server.url + "/") as emb:
        assert (emb.provider, emb.model_id, emb.dimensions, emb.degraded) == (
            "ollama",
            "nomic-embed-text",
            0,
            False,
        )
        assert emb.timeout == 30.0
        assert await emb.probe() == DIM
        out = await emb.embed_batch(["Zürich café", "hello world"])
    assert out.dtype == np.float32 and out.shape == (2, DIM)
    np.testing.assert_allclose(out, TestEmbedder(DIM).encode(["Zürich café", "hello world"]))
    last = server.requests[-1]
    assert (last.method, last.path) == ("POST", "/api/embed")
    assert last.json() == {"model": "nomic-embed-text", "input": ["Zürich café", "hello world"]}
    assert "authorization" not in last.headers
    assert last.headers["content-type"] == "application/json"


async def test_openai_protocol_sorts_by_index_and_sends_bearer(serve: Any) -> None:
    server = await serve(protocol("openai", key=KEY))
    async with OpenAIEmbedder(base_url=server.url + "/v1", api_key=KEY) as emb:
        assert (emb.model_id, emb.timeout) == ("text-embedding-3-small", 15.0)
        texts = ["alpha", "beta", "gamma"]
        out = await emb.embed_batch(texts)
    np.testing.assert_allclose(out, TestEmbedder(DIM).encode(texts))  # server sent data reversed
    last = server.requests[-1]
    assert last.path == "/v1/embeddings"
    assert last.headers["authorization"] == f"Bearer {KEY}"
    assert last.json() == {"model": "text-embedding-3-small", "input": texts}


async def test_voyage_protocol_sends_document_input_type(serve: Any) -> None:
    server = await serve(protocol("voyage", key=KEY))
    async with VoyageEmbedder(base_url=server.url, api_key=KEY) as emb:
        assert await emb.probe() == DIM
    body = server.requests[-1].json()
    assert body == {
        "model": "voyage-3-lite",
        "input": ["hive-mind embedding probe"],
        "input_type": "document",
    }
    assert server.requests[-1].headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
async def test_litellm_strips_v1_and_sends_auth_only_with_key(serve: Any, suffix: str) -> None:
    server = await serve(protocol("litellm"))
    async with LiteLLMEmbedder(base_url=server.url + suffix) as emb:
        await emb.embed_batch(["x"])
    assert server.requests[-1].path == "/v1/embeddings"
    assert "authorization" not in server.requests[-1].headers
    assert server.requests[-1].json()["model"] == "text-embedding"
    async with LiteLLMEmbedder(base_url=server.url + suffix, api_key="k") as emb:
        await emb.embed_batch(["x"])
    assert server.requests[-1].headers["authorization"] == "Bearer k"


@pytest.mark.parametrize("provider", list(CLASSES))
async def test_big_batches_are_split(serve: Any, provider: str) -> None:
    server = await serve(protocol(provider))
    texts = [f"text number {i}" for i in range(5)]
    async with make(provider, server.url, batch_size=2, model="m1") as emb:
        out = await emb.embed_batch(texts)
    assert [len(r.json()["input"]) for r in server.requests] == [2, 2, 1]
    assert {r.json()["model"] for r in server.requests} == {"m1"}
    np.testing.assert_allclose(out, TestEmbedder(DIM).encode(texts))


@pytest.mark.parametrize("provider", list(CLASSES))
async def test_empty_batch_makes_no_request(serve: Any, provider: str) -> None:
    server = await serve(protocol(provider))
    async with make(provider, server.url) as emb:
        assert (await emb.embed_batch([])).shape == (0, 0)
        await emb.probe()
        n = len(server.requests)
        empty = await emb.embed_batch([])
    assert empty.shape == (0, DIM) and empty.dtype == np.float32
    assert len(server.requests) == n


async def test_long_texts_are_capped_per_model(serve: Any) -> None:
    server = await serve(protocol("ollama"))
    async with OllamaEmbedder(base_url=server.url) as emb:
        await emb.embed_batch(["é" * 10_000])
    assert server.requests[-1].json()["input"] == ["é" * 6000]
    async with OllamaEmbedder(base_url=server.url, model="mxbai-embed-8k") as emb:
        await emb.embed_batch(["x" * 10_000])
    assert len(server.requests[-1].json()["input"][0]) == 8000


@pytest.mark.parametrize("provider", ["openai", "voyage"])
async def test_missing_key_fails_without_a_request(serve: Any, provider: str) -> None:
    server = await serve(protocol(provider, key=KEY))
    async with make(provider, server.url, api_key=None) as emb:
        with pytest.raises(EmbeddingError, match="no API key") as info:
            await emb.probe()
    assert info.value.provider == provider
    assert server.requests == []


async def test_wrong_key_is_an_embedding_error_with_status(serve: Any) -> None:
    server = await serve(protocol("openai", key=KEY))
    async with OpenAIEmbedder(base_url=server.url, api_key="wrong") as emb:
        with pytest.raises(EmbeddingError) as info:
            await emb.probe()
    assert info.value.provider_status == 401
    assert "OpenAI embeddings error (401)" in str(info.value)
    assert "Incorrect API key provided" in str(info.value)


# -- failures -----------------------------------------------------------------------------------


def _status(status: int, body: str) -> EmbeddingHandler:
    return lambda request: (status, body)


FAILURES: dict[str, tuple[Callable[[str], EmbeddingHandler], str, int | None]] = {
    "server error": (
        lambda p: _status(500, "model exploded: out of memory"),
        r"\(500\).*model exploded",
        500,
    ),
    "not found": (
        lambda p: _status(404, '{"error": "model \\"m\\" not found"}'),
        r"\(404\).*not found",
        404,
    ),
    "malformed json": (
        lambda p: _status(200, "<html>definitely not json"),
        r"\(200\).*malformed.*definitely not json",
        200,
    ),
    "wrong shape": (lambda p: _status(200, '{"unexpected": true}'), r"\(200\).*malformed", 200),
    "too few vectors": (
        lambda p: protocol(p, rows=lambda v: v[:-1]),
        r"\(200\).*sent 2 texts but got 1 vectors",
        200,
    ),
    "ragged vectors": (
        lambda p: protocol(p, rows=lambda v: [v[0], v[1][:-3]]),
        r"different lengths",
        200,
    ),
    "string numbers": (
        lambda p: protocol(p, rows=lambda v: [[str(x) for x in r] for r in v]),
        r"not numeric",
        200,
    ),
    "empty vectors": (lambda p: protocol(p, rows=lambda v: [[], []]), r"non-empty", 200),
    "non-finite": (
        lambda p: protocol(p, rows=lambda v: [v[0], [float("nan")] * len(v[1])]),
        r"NaN or infinite",
        200,
    ),
    "overflow": (
        lambda p: protocol(p, rows=lambda v: [v[0], [1e300] * len(v[1])]),
        r"NaN or infinite",
        200,
    ),
}


@pytest.mark.parametrize("case", list(FAILURES))
@pytest.mark.parametrize("provider", list(CLASSES))
async def test_failures_are_embedding_errors(serve: Any, provider: str, case: str) -> None:
    make_handler, pattern, status = FAILURES[case]
    server = await serve(make_handler(provider))
    async with make(provider, server.url) as emb:
        with pytest.raises(EmbeddingError, match=pattern) as info:
            await emb.embed_batch(["first text", "second text"])
    err = info.value
    assert err.provider == provider and err.provider_status == status
    assert str(err).startswith(f"{emb.label} embeddings error")
    assert err.code == "embedding_error"


@pytest.mark.parametrize("provider", list(CLASSES))
async def test_timeout(serve: Any, provider: str) -> None:
    async def slow(request: Request) -> Reply:
        await asyncio.sleep(5)
        return 200, {}

    server = await serve(slow)
    async with make(provider, server.url, timeout=0.2) as emb:
        with pytest.raises(EmbeddingError, match=r"timed out after 0.2s") as info:
            await emb.embed_batch(["x"])
    assert info.value.provider == provider and info.value.provider_status is None


@pytest.mark.parametrize("provider", list(CLASSES))
async def test_connection_refused(provider: str) -> None:
    async with make(provider, f"http://127.0.0.1:{closed_port()}", timeout=2) as emb:
        with pytest.raises(EmbeddingError, match="cannot reach") as info:
            await emb.probe()
    assert info.value.provider == provider
    assert not isinstance(info.value.__cause__, Exception)  # no raw httpx error chained


async def test_dimension_change_after_probe_is_refused(serve: Any) -> None:
    dims = {"value": DIM}
    handlers = {d: protocol("ollama", dim=d) for d in (DIM, 16)}
    server = await serve(lambda request: handlers[dims["value"]](request))
    async with OllamaEmbedder(base_url=server.url) as emb:
        assert await emb.probe() == DIM
        dims["value"] = 16
        with pytest.raises(EmbeddingError, match="16 dimensions, expected 32"):
            await emb.embed_batch(["x"])
    async with OllamaEmbedder(base_url=server.url, dimensions=DIM) as emb:  # known up front
        with pytest.raises(EmbeddingError, match="expected 32"):
            await emb.probe()


async def test_openai_index_must_cover_the_batch(serve: Any) -> None:
    def handler(request: Request) -> Reply:
        return 200, {"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}

    server = await serve(handler)
    async with OpenAIEmbedder(base_url=server.url, api_key=KEY) as emb:
        with pytest.raises(EmbeddingError, match="index"):
            await emb.embed_batch(["a", "b"])


async def test_voyage_input_type_is_configurable(serve: Any) -> None:
    server = await serve(lambda request: (200, wrap_rows("voyage", [[0.5, 0.5]])))
    async with VoyageEmbedder(base_url=server.url, api_key=KEY, input_type="query") as emb:
        await emb.embed_batch(["q"])
    assert server.requests[-1].json()["input_type"] == "query"
    async with VoyageEmbedder(base_url=server.url, api_key=KEY, input_type=None) as emb:
        await emb.embed_batch(["q"])
    assert "input_type" not in server.requests[-1].json()
