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
into few, unevenly filled forward batches; bench/product/ingest.py). A failed batch
fails only its callers.

Texts come with the priority of their job (:mod:`workers.fairness`). Interactive texts (a save
during an import) have a queue, batches and in-flight slots of their own (never a bulk slot),
and are encoded at interactive priority (:mod:`mind.priority_executor`): they go ahead of the
bulk batches' remaining forward passes instead of waiting behind them. Their slots
(``max_interactive_in_flight``, 2) matter only when interactive work alone fills the encoder
(many saves or documents at once): without them every job's texts went to the encoder as a
call of their own (~64 texts), and with them the texts that arrive while two calls encode
join one call (~170 texts), which the encoder cuts into fuller forward passes:
bench/product/ingest.py's 4,000 saved turns 469-487 → 496-512 frames/s (embedded, one run each way,
interleaved).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mind.embeddings.base import Embedder, empty_matrix
from mind.priority_executor import work_priority
from vocabulary.enums import JobPriority
from workers import metrics

if TYPE_CHECKING:  # numpy loads with the first texts embedded: a save another process
    import numpy as np  # indexes embeds none

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
        max_interactive_in_flight: int = 2,
    ) -> None:
        self.embedder = embedder
        self.max_items = max_items
        self.max_tokens = max_tokens
        self.max_wait = max_wait
        self._queues: dict[JobPriority, asyncio.Queue[_Item]] = {
            "interactive": asyncio.Queue(), "bulk": asyncio.Queue()}
        self._slots: dict[JobPriority, asyncio.Semaphore] = {
            "bulk": asyncio.Semaphore(max_in_flight),
            "interactive": asyncio.Semaphore(max_interactive_in_flight)}
        self._tasks: list[asyncio.Task[None]] = []
        self._inflight: set[asyncio.Task[None]] = set()
        self.stats = BatcherStats()

    def start(self) -> None:
        if not self._tasks:
            self._tasks = [asyncio.create_task(self._collect(priority),
                                               name=f"embedding-batcher-{priority}")
                           for priority in self._queues]

    async def embed(self, texts: Sequence[str], *,
                    priority: JobPriority = "interactive") -> np.ndarray:
        """Vectors for ``texts`` (in order), computed together with other callers' texts of
        the same priority."""
        if not texts:
            return empty_matrix(self.embedder.dimensions)
        self.start()
        loop = asyncio.get_running_loop()
        futures = []
        queue = self._queues[priority]
        for text in texts:
            fut: asyncio.Future[np.ndarray] = loop.create_future()
            futures.append(fut)
            queue.put_nowait(_Item(text, fut))
        rows = await asyncio.gather(*futures)
        import numpy as np

        return np.stack(rows).astype(np.float32, copy=False)

    async def _collect(self, priority: JobPriority) -> None:
        queue = self._queues[priority]
        slots = self._slots[priority]
        while True:
            first = await queue.get()
            deadline = time.monotonic() + self.max_wait
            # a batch is formed once the embedder can take it: texts that arrive while the
            # in-flight batches encode join the next one instead of trailing in small batches
            await slots.acquire()
            batch = [first]
            tokens = _tokens(first.text)
            while len(batch) < self.max_items and tokens < self.max_tokens:
                try:
                    item = queue.get_nowait()
                except asyncio.QueueEmpty:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    try:
                        item = await asyncio.wait_for(queue.get(), remaining)
                    except TimeoutError:
                        break
                batch.append(item)
                tokens += _tokens(item.text)
            task = asyncio.create_task(self._run(batch, priority, slots))
            self._inflight.add(task)
            task.add_done_callback(self._inflight.discard)

    async def _run(self, batch: list[_Item], priority: JobPriority,
                   slots: asyncio.Semaphore) -> None:
        try:
            unique = list(dict.fromkeys(item.text for item in batch))
            started = time.perf_counter()
            with work_priority(priority):
                matrix = await self.embedder.embed_batch(unique)
            took = time.perf_counter() - started
            metrics.embedded(priority, len(batch), took)
            self.stats.seconds += took
            log.debug("embedded %d %s texts (%d unique) in %.3fs; %d waiting", len(batch),
                      priority, len(unique), took, self._queues[priority].qsize())
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
            slots.release()

    async def close(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._inflight:
            await asyncio.gather(*self._inflight, return_exceptions=True)


def _tokens(text: str) -> int:
    return len(text) // 4 + 1
