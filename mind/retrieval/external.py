"""An optional external knowledge source for recall (a wiki, a document search).

Anything with a ``name`` and an ``async search(query, limit)`` returning
:class:`ExternalDocument` objects is an :class:`ExternalSource`. :class:`HttpExternalSource`
speaks this small JSON protocol:

Request — ``POST {base_url}/search`` with ``Content-Type: application/json`` and, when an API
key is configured, ``Authorization: Bearer <key>``::

    {"query": "vendor contract status", "limit": 10}

Response — ``200`` (any 2xx) with::

    {"results": [{"id": "doc-1", "title": "Vendor contract", "content": "…",
                  "score": 0.82, "type": "policy", "url": "https://…", "metadata": {…}}]}

``id`` (string or integer), ``title``, ``content``, ``type`` (strings) and ``score`` (a number
in [0, 1], higher = more relevant, on the same normalized scale as memory scores) are required;
``url`` (string or null) and ``metadata`` (object) are optional. Connection failures, timeouts,
non-2xx answers, malformed JSON and out-of-range scores are raised as
:class:`ExternalSourceError` naming the source (its URL masked, :func:`mind.redact.mask_url`)
and the reason; no httpx exception escapes.

Bounds. The source is operator configuration (``HIVE_MIND_EXTERNAL_URL``), so it is not held to
URL ingest's public-address guard — but what it answers is bounded like any input: the whole
request takes at most ``timeout`` seconds (not per read), the answer at most
:data:`MAX_RESPONSE_BYTES` (read as a stream, never buffered beyond that), redirects are not
followed, results beyond ``limit`` are ignored, ``content`` is cut at
:data:`MAX_CONTENT_CHARS`, ``title``, ``id`` and ``type`` at :data:`MAX_TITLE_CHARS` (with
``…``), and a ``url`` longer than :data:`MAX_URL_CHARS` or ``metadata`` larger than
:data:`~vocabulary.limits.MAX_JSON_BYTES` makes the answer unusable.
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from mind.bounds import bounded_json
from mind.errors import HiveMindError, ValidationError
from mind.redact import mask_text, mask_url
from vocabulary.limits import MAX_JSON_BYTES

if TYPE_CHECKING:  # imported by the first search: a recall without a source never loads it
    import httpx

EXCERPT_CHARS = 200
MAX_RESPONSE_BYTES = 4 * 1024 * 1024
MAX_CONTENT_CHARS = 20_000
MAX_TITLE_CHARS = 500
MAX_URL_CHARS = 4_096


class ExternalSourceError(HiveMindError):
    """The external knowledge source failed or answered something unusable."""

    code = "external_source"
    status = 502


@dataclass(frozen=True, slots=True)
class ExternalDocument:
    document_id: str
    title: str
    content: str
    score: float
    document_type: str = "document"
    url: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        score = self.score
        if isinstance(score, bool) or not isinstance(score, int | float) or math.isnan(score):
            raise ValidationError(f"document {self.document_id!r}: score must be a number")
        if not 0.0 <= score <= 1.0:
            raise ValidationError(f"document {self.document_id!r}: score {score} is outside [0, 1]")


class ExternalSource(Protocol):
    """A searchable knowledge source outside the minds."""

    name: str

    async def search(self, query: str, limit: int) -> list[ExternalDocument]: ...


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[:EXCERPT_CHARS] + "…"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _text(item: dict[str, Any], key: str, index: int, limit: int = MAX_TITLE_CHARS) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise ValueError(f"results[{index}].{key} must be a string")
    return _cut(value, limit)


def parse_documents(payload: Any, limit: int) -> list[ExternalDocument]:
    """Validate a decoded response body; raise ``ValueError`` describing the first problem."""
    if not isinstance(payload, dict) or not isinstance(payload.get("results"), list):
        raise ValueError('expected an object with a "results" list')
    documents: list[ExternalDocument] = []
    for index, item in enumerate(payload["results"][:limit]):
        if not isinstance(item, dict):
            raise ValueError(f"results[{index}] must be an object")
        raw_id = item.get("id")
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or raw_id == "":
            raise ValueError(f"results[{index}].id must be a non-empty string or integer")
        url = item.get("url")
        if url is not None and not isinstance(url, str):
            raise ValueError(f"results[{index}].url must be a string or null")
        if url is not None and len(url) > MAX_URL_CHARS:
            raise ValueError(f"results[{index}].url is longer than {MAX_URL_CHARS} characters")
        metadata = item.get("metadata")
        metadata = {} if metadata is None else metadata
        if not isinstance(metadata, dict):
            raise ValueError(f"results[{index}].metadata must be an object")
        try:
            bounded_json(metadata, f"results[{index}].metadata", MAX_JSON_BYTES)
            documents.append(
                ExternalDocument(
                    document_id=_cut(str(raw_id), MAX_TITLE_CHARS),
                    title=_text(item, "title", index),
                    content=_text(item, "content", index, MAX_CONTENT_CHARS),
                    score=item.get("score"),  # type: ignore[arg-type]  # validated by the class
                    document_type=_text(item, "type", index),
                    url=url,
                    metadata=metadata,
                )
            )
        except ValidationError as exc:
            raise ValueError(f"results[{index}]: {exc}") from None
    return documents


class HttpExternalSource:
    """An :class:`ExternalSource` over HTTP (protocol in the module docstring)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        timeout: float = 10.0,
        name: str = "external",
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValidationError(f"external source URL must be http(s): {mask_url(base_url)!r}")
        if timeout <= 0:
            raise ValidationError("timeout must be positive")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key or None
        self.timeout = float(timeout)
        self.name = name
        self._client: httpx.AsyncClient | None = None

    def _error(self, reason: str) -> ExternalSourceError:
        return ExternalSourceError(
            f"external source {self.name!r} ({mask_url(self.base_url)}): {mask_text(reason)}")

    async def search(self, query: str, limit: int) -> list[ExternalDocument]:
        if not isinstance(query, str):
            raise ValidationError("query must be text")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValidationError("limit must be a positive integer")
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout),
                                             follow_redirects=False)
        headers = {"Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        try:
            async with asyncio.timeout(self.timeout):  # the whole exchange, not each read
                status, body = await self._post(self._client, query, limit, headers)
        except (TimeoutError, httpx.TimeoutException):
            raise self._error(f"no answer within {self.timeout:g} s (timeout)") from None
        except httpx.ConnectError as exc:
            raise self._error(f"cannot connect: {exc}") from None
        except httpx.HTTPError as exc:
            raise self._error(f"request failed: {type(exc).__name__}: {exc}") from None
        if body is None:
            raise self._error(f"answer larger than {MAX_RESPONSE_BYTES:,} bytes")
        text = body.decode("utf-8", "replace")
        if not 200 <= status < 300:
            raise self._error(f"HTTP {status}: {_excerpt(text)}")
        try:
            payload = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise self._error(f"malformed JSON in the answer: {_excerpt(text)}") from None
        try:
            return parse_documents(payload, limit)
        except ValueError as exc:
            raise self._error(f"unexpected answer: {exc}") from None

    async def _post(self, client: httpx.AsyncClient, query: str, limit: int,
                    headers: dict[str, str]) -> tuple[int, bytes | None]:
        """The status and the body, or ``None`` for a body beyond :data:`MAX_RESPONSE_BYTES`."""
        request = client.build_request("POST", f"{self.base_url}/search", headers=headers,
                                       json={"query": query, "limit": limit})
        response = await client.send(request, stream=True)
        try:
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_RESPONSE_BYTES:
                    return response.status_code, None
            return response.status_code, bytes(body)
        finally:
            await response.aclose()

    async def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    async def __aenter__(self) -> HttpExternalSource:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
