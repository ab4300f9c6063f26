"""The embedding micro-batcher: one ``embed_batch`` call for texts from many jobs and minds.

Callers ``await batcher.embed(texts)``; a collector task gathers queued texts until
``max_items`` or ``max_tokens`` (estimated at 4 characters per token) or ``max_wait`` after the
first one, de-duplicates identical texts (chat exports repeat "ok", "thanks"), and sends the
batch to the embedder — which encodes off the event loop. At most ``max_in_flight`` batches are
with the embedder at once, and the next batch is formed only when one of them returns, from
everything queued meanwhile: during a bulk import the batches are then as large as the limits
allow. Forming it first and waiting for a free slot with it left the texts that arrived during
the wait to trail in small batches: 105 texts a batch on average in a 4,000-frame ingest (136
now, with the embedded runner's 8 jobs at once), and an
``embed_batch`` of 105 texts costs ~25 % more CPU per text than one of 512 (the lanes split it
into few, unevenly filled forward batches; bench/ingest.py, docs/benchmarks.md). A failed batch
fails only its callers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from mind.embeddings.base import Embedder

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Item:
    text: str
    future: asyncio.Future[np.ndarray]


@dataclass
class BatcherStats:
    batches: int = 0
    items: int = 0
    unique: int = 0
    seconds: float = 0.0
    sizes: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, float]:
        return {
            "batches": self.batches,
            "items": self.items,
            "unique_texts": self.unique,
            "mean_batch": self.items / self.batches if self.batches else 0.0,
            "encode_seconds": round(self.seconds, 3),
        }


class EmbeddingBatcher:
    def __init__(
        self,
        embedder: Embedder,
        *,
        max_items: int = 512,
        max_tokens: int = 32_768,
        max_wait: float = 0.02,
        max_in_flight: int = 2,
    ) -> None:
        self.embedder = embedder
        self.max_items = max_items
        self.max_tokens = max_tokens
        self.max_wait = max_wait
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._slots = asyncio.Semaphore(max_in_flight)
        self._task: asyncio.Task[None] | None = None
        self._inflight: set[asyncio.Task[None]] = set()
        self.stats = BatcherStats()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._collect(), name="embedding-batcher")

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts`` (in order), computed together with other callers' texts."""
        if not texts:
            return np.zeros((0, max(self.embedder.dimensions, 0)), dtype=np.float32)
        self.start()
        loop = asyncio.get_running_loop()
        futures = []
        for text in texts:
            fut: asyncio.Future[np.ndarray] = loop.create_future()
            futures.append(fut)
            self._queue.put_nowait(_Item(text, fut))
        rows = await asyncio.gather(*futures)
        return np.stack(rows).astype(np.float32, copy=False)

    async def _collect(self) -> None:
        while True:
            first = await self._queue.get()
            deadline = time.monotonic() + self.max_wait
            # a batch is formed once the embedder can take it: texts that arrive while the
            # in-flight batches encode join the next one instead of trailing in small batches
            await self._slots.acquire()
            batch = [first]
            tokens = _tokens(first.text)
            while len(batch) < self.max_items and tokens < self.max_tokens:
                try:
                    item = self._queue.get_nowait()
                except asyncio.QueueEmpty:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    try:
                        item = await asyncio.wait_for(self._queue.get(), remaining)
                    except TimeoutError:
                        break
                batch.append(item)
                tokens += _tokens(item.text)
            task = asyncio.create_task(self._run(batch))
            self._inflight.add(task)
            task.add_done_callback(self._inflight.discard)

    async def _run(self, batch: list[_Item]) -> None:
        try:
            unique = list(dict.fromkeys(item.text for item in batch))
            started = time.perf_counter()
            matrix = await self.embedder.embed_batch(unique)
            took = time.perf_counter() - started
            self.stats.seconds += took
            log.debug("embedded %d texts (%d unique) in %.3fs; %d waiting", len(batch),
                      len(unique), took, self._queue.qsize())
            self.stats.batches += 1
            self.stats.items += len(batch)
            self.stats.unique += len(unique)
            row = {text: i for i, text in enumerate(unique)}
            for item in batch:
                if not item.future.done():
                    item.future.set_result(matrix[row[item.text]])
        except Exception as exc:
            log.exception("embedding batch of %d texts failed", len(batch))
            for item in batch:
                if not item.future.done():
                    item.future.set_exception(exc)
        finally:
            self._slots.release()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._inflight:
            await asyncio.gather(*self._inflight, return_exceptions=True)


def _tokens(text: str) -> int:
    return len(text) // 4 + 1
