"""QueryMemo: one embedding of a query however many minds a recall searches.

A scope-wide recall runs a hybrid search in each chosen mind, and each search embeds its query;
across dozens of minds that was the same ~10 ms forward pass dozens of times. The memo wraps the
runtime's embedder for one recall: the first ``embed_batch`` of some texts runs, every later one
of the same texts awaits the same result (a failure is shared the same way)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np

from mind.embeddings.base import Embedder


class QueryMemo:
    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self._done: dict[tuple[str, ...], asyncio.Future[np.ndarray]] = {}

    @property
    def provider(self) -> str:
        return self._inner.provider

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dimensions(self) -> int:
        return self._inner.dimensions

    @property
    def degraded(self) -> bool:
        return self._inner.degraded

    async def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        key = tuple(texts)
        future = self._done.get(key)
        if future is None:
            future = asyncio.ensure_future(self._inner.embed_batch(list(texts)))
            future.add_done_callback(lambda f: f.cancelled() or f.exception())  # read once
            self._done[key] = future
        return (await asyncio.shield(future)).copy()  # a caller may not change another's
