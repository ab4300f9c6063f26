"""Remote embedding providers over HTTP: Ollama, OpenAI, Voyage and a LiteLLM proxy.

All share one shell (:class:`HttpEmbedder`): an ``httpx.AsyncClient`` created on first use,
big batches split into ``batch_size`` requests, the native dimension discovered by the first
answer (``await probe()``) and enforced afterwards. Every failure — connection refused, timeout,
non-2xx, malformed JSON, wrong vector count, ragged or non-finite vectors — is raised as an
:class:`EmbeddingError` worded ``<Provider> embeddings error (<status>): <reason>: <body
excerpt>``; no raw httpx exception escapes and no provider silently falls back to the mock
(mock vectors mixed into a real index would be noise nobody sees).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any, ClassVar

import httpx
import numpy as np

from mind.embeddings.base import (
    PROBE_TEXT,
    EmbeddingError,
    cap_texts,
    coerce_matrix,
    empty_matrix,
)

log = logging.getLogger(__name__)
EXCERPT_CHARS = 300


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


def strip_v1(url: str) -> str:
    """``http://proxy:4000/v1/`` → ``http://proxy:4000`` (the path is added per request)."""
    url = url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


class HttpEmbedder:
    """Common shell of the HTTP providers; subclasses define the wire format."""

    provider: ClassVar[str] = "http"
    label: ClassVar[str] = "HTTP"
    default_model: ClassVar[str] = ""
    default_base_url: ClassVar[str] = ""
    default_timeout: ClassVar[float] = 30.0
    default_batch_size: ClassVar[int] = 64
    path: ClassVar[str] = "/v1/embeddings"
    requires_key: ClassVar[bool] = False
    degraded = False

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        batch_size: int | None = None,
        dimensions: int | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.model_id = model or self.default_model
        self.base_url = self.clean_base_url(base_url or self.default_base_url)
        self.api_key = api_key or None
        self.timeout = float(timeout if timeout is not None else self.default_timeout)
        self.batch_size = int(batch_size or self.default_batch_size)
        if self.batch_size <= 0 or self.timeout <= 0:
            raise ValueError("batch_size and timeout must be positive")
        self._dim = int(dimensions or 0)
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    @staticmethod
    def clean_base_url(url: str) -> str:
        return strip_v1(url)

    @property
    def endpoint(self) -> str:
        return self.base_url + self.path

    @property
    def dimensions(self) -> int:
        """The model's native dimension; 0 until the first answer (see :meth:`probe`)."""
        return self._dim

    async def probe(self) -> int:
        """Embed one probe text; returns (and from now on enforces) the dimension."""
        await self.embed_batch([PROBE_TEXT])
        return self._dim

    async def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return empty_matrix(self._dim)
        if self.requires_key and not self.api_key:
            raise EmbeddingError(
                f"{self.label} embeddings error: no API key configured", provider=self.provider
            )
        capped = cap_texts(texts, self.model_id)
        parts = [
            await self._post(capped[i : i + self.batch_size])
            for i in range(0, len(capped), self.batch_size)
        ]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def __aenter__(self) -> HttpEmbedder:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- wire format (overridden) -----------------------------------------------------------

    def payload(self, texts: list[str]) -> dict[str, Any]:
        return {"model": self.model_id, "input": texts}

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def extract(self, body: Any, n: int) -> Any:
        """OpenAI-style ``{"data": [{"index", "embedding"}]}``, reordered by ``index``."""
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list) or not all(
            isinstance(item, dict) and "embedding" in item for item in data
        ):
            raise ValueError('no "data": [{"embedding": …}] in the response')
        if all(isinstance(item.get("index"), int) for item in data):
            data = sorted(data, key=lambda item: item["index"])
            if [item["index"] for item in data] != list(range(len(data))):
                raise ValueError("the response's data[].index values are not 0..n-1")
        return [item["embedding"] for item in data]

    # -- transport --------------------------------------------------------------------------

    def _get_client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout), transport=self._transport
            )
        return self._client

    def _error(self, reason: str, status: int | None = None, body: str = "") -> EmbeddingError:
        head = f"{self.label} embeddings error" + (f" ({status})" if status is not None else "")
        tail = f": {excerpt(body)}" if body else ""
        return EmbeddingError(f"{head}: {reason}{tail}", provider=self.provider,
                              provider_status=status)

    async def _post(self, texts: list[str]) -> np.ndarray:
        started = time.perf_counter()
        client = self._get_client()
        try:
            response = await client.post(
                self.endpoint, json=self.payload(texts), headers=self.headers()
            )
        except httpx.TimeoutException:
            raise self._error(
                f"timed out after {self.timeout:g}s calling {self.endpoint}"
            ) from None
        except Exception as exc:
            raise self._error(
                f"cannot reach {self.endpoint}: {type(exc).__name__}: {exc}"
            ) from None
        status, text = response.status_code, response.text
        if not response.is_success:
            raise self._error(f"HTTP {status} from {self.endpoint}", status, text)
        try:
            rows = self.extract(response.json(), len(texts))
        except ValueError as exc:  # JSONDecodeError is a ValueError
            raise self._error(f"malformed response ({exc})", status, text) from None
        matrix = coerce_matrix(
            rows,
            expected_rows=len(texts),
            expected_dim=self._dim,
            provider=self.provider,
            prefix=f"{self.label} embeddings error ({status})",
            excerpt=excerpt(text, 120),
            status=status,
        )
        if not self._dim:
            self._dim = int(matrix.shape[1])
        log.debug(
            "%s embedded %d texts in %.3fs",
            self.provider,
            len(texts),
            time.perf_counter() - started,
        )
        return matrix


class OllamaEmbedder(HttpEmbedder):
    """``POST {base}/api/embed {model, input}`` → ``{"embeddings": [[…]]}``."""

    provider = "ollama"
    label = "Ollama"
    default_model = "nomic-embed-text"
    default_base_url = "http://localhost:11434"
    default_timeout = 30.0
    default_batch_size = 64
    path = "/api/embed"

    @staticmethod
    def clean_base_url(url: str) -> str:
        return url.rstrip("/")

    def extract(self, body: Any, n: int) -> Any:
        if not isinstance(body, dict) or "embeddings" not in body:
            raise ValueError('no "embeddings" in the response')
        return body["embeddings"]


class OpenAIEmbedder(HttpEmbedder):
    """``POST {base}/v1/embeddings`` with a Bearer key; ``data[].embedding`` sorted by index."""

    provider = "openai"
    label = "OpenAI"
    default_model = "text-embedding-3-small"
    default_base_url = "https://api.openai.com"
    default_timeout = 15.0
    default_batch_size = 256
    requires_key = True


class VoyageEmbedder(HttpEmbedder):
    """Voyage AI: OpenAI-like, plus ``input_type`` (``document`` for indexing)."""

    provider = "voyage"
    label = "Voyage"
    default_model = "voyage-3-lite"
    default_base_url = "https://api.voyageai.com"
    default_timeout = 15.0
    default_batch_size = 128
    requires_key = True

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        batch_size: int | None = None,
        dimensions: int | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        input_type: str | None = "document",
    ) -> None:
        super().__init__(
            model=model,
            base_url=base_url,
            api_key=api_key,
            timeout=timeout,
            batch_size=batch_size,
            dimensions=dimensions,
            transport=transport,
        )
        self.input_type = input_type

    def payload(self, texts: list[str]) -> dict[str, Any]:
        body = super().payload(texts)
        if self.input_type:
            body["input_type"] = self.input_type
        return body


class LiteLLMEmbedder(HttpEmbedder):
    """A LiteLLM proxy (OpenAI wire format); Authorization only when a key is configured."""

    provider = "litellm"
    label = "LiteLLM"
    default_model = "text-embedding"
    default_base_url = "http://localhost:4000"
    default_timeout = 30.0
    default_batch_size = 128
