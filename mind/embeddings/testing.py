"""Two deterministic embedders that need no model: the test embedder and the byte mock.

``TestEmbedder`` (provider ``test``) is a real, registered provider for tests and demos: a
signed feature-hashing of word unigrams (Unicode-aware, case-folded) plus character trigrams of
each word, L2-normalized. Texts that share words or word pieces get a high cosine similarity,
unrelated texts one near 0, so vector search behaves sensibly without a model. It is *not*
degraded: its vectors are consistent and may be indexed (under their own fingerprint).

``MockEmbedder`` (provider ``mock``, model ``deterministic-mock``) is the last-resort stub of
the ``auto`` chain: ``v[i] = (utf8[i] - 128) / 128`` for the first bytes, not
normalized, semantically meaningless, hence ``degraded = True``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from mind.constants import MOCK_DIMENSIONS
from mind.embeddings.base import empty_matrix

_WORD = re.compile(r"[^\W_]+")
TRIGRAM_WEIGHT = 0.5


@lru_cache(maxsize=65536)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, (1.0 if (value >> 63) & 1 else -1.0)


def tokens(text: str) -> list[str]:
    """Unicode letters/digits runs, case-folded ("Zürich" stays "zürich")."""
    return _WORD.findall(text.casefold())


def features(text: str) -> list[tuple[str, float]]:
    out: list[tuple[str, float]] = []
    for word in tokens(text):
        out.append(("w:" + word, 1.0))
        padded = f"#{word}#"
        out.extend(("c:" + padded[i : i + 3], TRIGRAM_WEIGHT) for i in range(len(padded) - 2))
    return out


@lru_cache(maxsize=65536)
def _word_terms(word: str, dim: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """One word's signed, weighted buckets (its own and its trigrams'), in :func:`features`
    order, so a text's vector sums them exactly as feature by feature."""
    terms = [(index, sign * weight) for feature, weight in features(word)
             for index, sign in [_bucket(feature, dim)]]
    return tuple(index for index, _ in terms), tuple(value for _, value in terms)


def _utf8(text: str) -> bytes:
    """UTF-8 like JavaScript's TextEncoder: lone surrogates become U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return fixed.encode("utf-8")


class TestEmbedder:
    """Deterministic hashed bag-of-words + trigrams embedder (provider ``test``)."""

    __test__ = False  # not a pytest test class
    provider = "test"
    degraded = False

    def __init__(self, dimensions: int = 64) -> None:
        if dimensions <= 0:
            raise ValueError(f"dimensions must be positive, got {dimensions}")
        self.dimensions = int(dimensions)
        self.model_id = f"hashed-bow-trigram-{self.dimensions}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Synchronous form of :meth:`embed_batch` (pure CPU, no I/O)."""
        matrix = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            indices: list[int] = []
            values: list[float] = []
            for word in tokens(text):
                word_indices, word_values = _word_terms(word, self.dimensions)
                indices.extend(word_indices)
                values.extend(word_values)
            matrix[row] = np.bincount(indices, values, minlength=self.dimensions)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        np.divide(matrix, norms, out=matrix, where=norms > 0)
        return matrix

    async def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return empty_matrix(self.dimensions)
        return self.encode(texts)

    async def close(self) -> None:
        return None


class MockEmbedder:
    """The byte-based mock; degraded, never to be indexed."""

    provider = "mock"
    model_id = "deterministic-mock"
    degraded = True

    def __init__(self, dimensions: int = MOCK_DIMENSIONS) -> None:
        if dimensions <= 0:
            raise ValueError(f"dimensions must be positive, got {dimensions}")
        self.dimensions = int(dimensions)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        matrix = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            raw = _utf8(text)[: self.dimensions]
            if raw:
                bytes_ = np.frombuffer(raw, dtype=np.uint8).astype(np.float32)
                matrix[row, : len(raw)] = (bytes_ - 128.0) / 128.0
        return matrix

    async def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return empty_matrix(self.dimensions)
        return self.encode(texts)

    async def close(self) -> None:
        return None
