"""The embedder contract and the small pure helpers every provider shares.

An :class:`Embedder` turns a batch of texts into a float32 matrix ``(n, dimensions)`` at the
model's native dimension (docs/architecture.md, "Invariants"). ``dimensions`` is ``0`` until a
provider has discovered it (``await load()`` / ``await probe()``). ``degraded`` is True only for
the byte-based mock, whose vectors must never be written into a real index.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from mind.errors import HiveMindError

if TYPE_CHECKING:  # numpy is imported where vectors are made: a save alone needs none
    import numpy as np

PROBE_TEXT = "hive-mind embedding probe"
DEFAULT_MAX_CHARS = 6000
LONG_CONTEXT_MAX_CHARS = 8000
_LONG_CONTEXT = (
    re.compile(r"[-_.]8k\b", re.IGNORECASE),
    re.compile(r"num_ctx.*8192", re.IGNORECASE),
)


class EmbeddingError(HiveMindError):
    """An embedding provider failed (unreachable, bad answer, not loadable, not configured)."""

    code = "embedding_error"
    status = 502

    def __init__(
        self, message: str, *, provider: str | None = None, provider_status: int | None = None
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.provider_status = provider_status  # the provider's HTTP status, when it answered


class Embedder(Protocol):
    """What the engine needs from an embedding provider."""

    @property
    def provider(self) -> str: ...

    @property
    def model_id(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    @property
    def degraded(self) -> bool: ...

    async def embed_batch(self, texts: Sequence[str]) -> np.ndarray: ...


def fingerprint(embedder: Embedder) -> tuple[str, str, int]:
    """The (provider, model, dimension) triple recorded in a mind's meta table."""
    return embedder.provider, embedder.model_id, int(embedder.dimensions)


INT8_MODEL_SUFFIX = "+onnx-int8"  # the model id of vectors from the onnx-int8 backend


def backend_switch_hint(stored_model: str, runtime_model: str) -> str:
    """How to read a mind whose vectors come from the same model under another in-process
    backend: configure the backend it was indexed with ("" when the models differ)."""
    stored_base = stored_model.removesuffix(INT8_MODEL_SUFFIX)
    if stored_base != runtime_model.removesuffix(INT8_MODEL_SUFFIX):
        return ""
    wanted = "onnx-int8" if stored_model.endswith(INT8_MODEL_SUFFIX) else "onnx (or torch)"
    return (f", or set HIVE_MIND_EMBEDDING_BACKEND={wanted}: the encoder this mind was "
            "indexed with")


def empty_matrix(dim: int) -> np.ndarray:
    import numpy as np

    return np.zeros((0, max(int(dim), 0)), dtype=np.float32)


def normalize_dimensions(matrix: np.ndarray, target: int) -> np.ndarray:
    """Zero-pad or truncate vectors (1-D or rows of a 2-D matrix) to ``target`` values.

    No renormalization, and the input is returned
    unchanged when it already has the target width (and is float32).
    """
    if target <= 0:
        raise ValueError(f"target dimension must be positive, got {target}")
    import numpy as np

    arr = np.asarray(matrix, dtype=np.float32)
    width = arr.shape[-1]
    if width == target:
        return arr
    out = np.zeros((*arr.shape[:-1], target), dtype=np.float32)
    keep = min(width, target)
    out[..., :keep] = arr[..., :keep]
    return out


def max_chars_for_model(name: str) -> int:
    """8000 characters for 8k-context models (``…-8k``, ``num_ctx … 8192``), else 6000."""
    if any(p.search(name) for p in _LONG_CONTEXT):
        return LONG_CONTEXT_MAX_CHARS
    return DEFAULT_MAX_CHARS


def cap_text(text: str, max_chars: int) -> str:
    """The first ``max_chars`` characters of ``text``.

    Python counts code points, so a character (a surrogate pair in UTF-16) is never cut in
    half.
    """
    return text if len(text) <= max_chars else text[:max_chars]


def cap_texts(texts: Sequence[str], model: str) -> list[str]:
    limit = max_chars_for_model(model)
    return [cap_text(t, limit) for t in texts]


def coerce_matrix(
    rows: Any,
    *,
    expected_rows: int,
    expected_dim: int,
    provider: str,
    prefix: str = "",
    excerpt: str = "",
    status: int | None = None,
) -> np.ndarray:
    """Validate decoded vectors: a rectangular numeric matrix with the right shape, all finite.

    ``expected_dim`` 0 means "not known yet" (any positive width is accepted). Failures raise
    :class:`EmbeddingError` worded ``<prefix>: <reason>: <excerpt>``.
    """

    import numpy as np

    def fail(reason: str) -> EmbeddingError:
        head = prefix or f"{provider} embeddings error"
        tail = f": {excerpt}" if excerpt else ""
        return EmbeddingError(f"{head}: {reason}{tail}", provider=provider, provider_status=status)

    if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
        raise fail("expected a list of vectors")
    if len(rows) != expected_rows:
        raise fail(f"sent {expected_rows} texts but got {len(rows)} vectors")
    widths = {len(r) for r in rows}
    if len(widths) > 1:
        raise fail(f"vectors of different lengths {sorted(widths)}")
    try:
        raw = np.asarray(rows)
    except (ValueError, TypeError) as exc:
        raise fail(f"vectors are not numeric ({exc})") from None
    if not rows:
        return empty_matrix(expected_dim)
    if raw.ndim != 2 or raw.shape[1] == 0:
        raise fail("expected non-empty vectors of numbers")
    if raw.dtype.kind not in "fiu":
        raise fail("vectors are not numeric")
    with np.errstate(over="ignore", invalid="ignore"):
        matrix = raw.astype(np.float32)
    if expected_dim and matrix.shape[1] != expected_dim:
        raise fail(f"vectors have {matrix.shape[1]} dimensions, expected {expected_dim}")
    if not np.all(np.isfinite(matrix)):
        raise fail("vectors contain NaN or infinite values")
    return matrix


async def aclose(embedder: object) -> None:
    """Close an embedder if it has an async ``close()`` (providers hold clients/executors)."""
    close = getattr(embedder, "close", None)
    if close is not None:
        await close()


async def probe_embedder(embedder: Embedder) -> int:
    """Load (if the provider loads) and embed the probe text; returns the checked dimension."""
    load = getattr(embedder, "load", None)
    if load is not None:
        await load()
    import numpy as np

    out = await embedder.embed_batch([PROBE_TEXT])
    dim = embedder.dimensions
    if dim <= 0 or out.shape != (1, dim) or not np.all(np.isfinite(out)):
        raise EmbeddingError(
            f"{embedder.provider} probe returned shape {out.shape} for dimension {dim}",
            provider=embedder.provider,
        )
    return dim


class TargetDimEmbedder:
    """Compatibility wrapper: every vector zero-padded / truncated to a fixed ``target``.

    The model id carries an ``@<target>`` suffix so a padded index never matches the native
    fingerprint of the same model (and vice versa).
    """

    def __init__(self, inner: Embedder, target: int) -> None:
        if target <= 0:
            raise ValueError(f"target dimension must be positive, got {target}")
        self.inner = inner
        self.target = int(target)

    @property
    def provider(self) -> str:
        return self.inner.provider

    @property
    def model_id(self) -> str:
        return f"{self.inner.model_id}@{self.target}"

    @property
    def dimensions(self) -> int:
        return self.target

    @property
    def degraded(self) -> bool:
        return self.inner.degraded

    async def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return empty_matrix(self.target)
        return normalize_dimensions(await self.inner.embed_batch(texts), self.target)

    async def close(self) -> None:
        await aclose(self.inner)
