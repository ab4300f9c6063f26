from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import pytest

from mind.embeddings.testing import TestEmbedder
from mind.priority_executor import current_priority
from workers.batcher import EmbeddingBatcher


class Recording(TestEmbedder):
    def __init__(self, fail_on: str | None = None, delay: float = 0.0) -> None:
        super().__init__(dimensions=32)
        self.calls: list[list[str]] = []
        self.priorities: list[str] = []  # the work priority each call ran at
        self.fail_on = fail_on
        self.delay = delay
        self.running = 0
        self.max_running = 0

    async def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        self.priorities.append(current_priority())
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
        finally:
            self.running -= 1
        if self.fail_on is not None and self.fail_on in texts:
            raise RuntimeError("provider down")
        return await super().embed_batch(texts)


async def test_texts_from_many_callers_share_one_call() -> None:
    emb = Recording()
    batcher = EmbeddingBatcher(emb, max_items=100, max_wait=0.05)
    jobs = [[f"job {j} text {i}" for i in range(5)] for j in range(10)]
    results = await asyncio.gather(*(batcher.embed(t) for t in jobs))
    assert len(emb.calls) == 1 and len(emb.calls[0]) == 50
    for texts, matrix in zip(jobs, results, strict=True):
        assert np.allclose(matrix, emb.encode(texts))  # order kept per caller
    await batcher.close()


async def test_max_items_and_tokens_split_batches() -> None:
    emb = Recording()
    batcher = EmbeddingBatcher(emb, max_items=8, max_wait=0.05)
    await batcher.embed([f"t{i}" for i in range(20)])
    assert [len(c) for c in emb.calls] == [8, 8, 4]
    emb.calls.clear()
    by_tokens = EmbeddingBatcher(emb, max_items=1000, max_tokens=100, max_wait=0.05)
    await by_tokens.embed(["x" * 200] * 1 + ["y" * 200, "z" * 200])  # ~51 tokens each
    assert [len(c) for c in emb.calls] == [2, 1]
    await batcher.close()
    await by_tokens.close()


async def test_texts_arriving_while_batches_encode_form_one_next_batch() -> None:
    """While the embedder is busy, texts trickling in (further apart than max_wait) wait in
    the queue and go together in the next batch, instead of each forming a small batch that
    then waits for a free slot."""
    emb = Recording(delay=0.3)
    batcher = EmbeddingBatcher(emb, max_items=100, max_wait=0.01, max_in_flight=1)
    busy = asyncio.create_task(batcher.embed(["first"], priority="bulk"))
    await asyncio.sleep(0.02)  # "first" is encoding
    late = []
    for i in range(5):
        late.append(asyncio.create_task(batcher.embed([f"late {i}"], priority="bulk")))
        await asyncio.sleep(0.03)  # three times max_wait between arrivals
    await asyncio.gather(busy, *late)
    assert emb.calls == [["first"], [f"late {i}" for i in range(5)]]
    await batcher.close()


async def test_duplicates_are_embedded_once() -> None:
    emb = Recording()
    batcher = EmbeddingBatcher(emb, max_wait=0.02)
    out = await batcher.embed(["ok", "thanks", "ok", "ok"])
    assert emb.calls == [["ok", "thanks"]]
    assert np.allclose(out[0], out[2]) and out.shape == (4, 32)
    assert batcher.stats.as_dict()["unique_texts"] == 2
    await batcher.close()


async def test_a_failed_batch_fails_only_its_callers() -> None:
    emb = Recording(fail_on="poison")
    batcher = EmbeddingBatcher(emb, max_items=2, max_wait=0.0)
    good, bad = await asyncio.gather(
        batcher.embed(["fine", "also fine"]), batcher.embed(["poison", "x"]), return_exceptions=True
    )
    assert isinstance(good, np.ndarray) and good.shape == (2, 32)
    assert isinstance(bad, RuntimeError)
    again = await batcher.embed(["after the failure"])
    assert again.shape == (1, 32)
    await batcher.close()


async def test_next_batch_fills_while_one_encodes() -> None:
    emb = Recording(delay=0.1)
    batcher = EmbeddingBatcher(emb, max_items=4, max_wait=0.0, max_in_flight=2)
    await asyncio.gather(*(batcher.embed([f"{j}-{i}" for i in range(4)], priority="bulk")
                           for j in range(4)))
    assert len(emb.calls) == 4
    assert emb.max_running == 2  # a batch was collected and sent while another encoded
    assert emb.priorities == ["bulk"] * 4
    await batcher.close()


async def test_interactive_texts_do_not_wait_for_the_bulk_batches() -> None:
    """A save's text arriving while bulk batches hold every in-flight slot is embedded at
    once, alone and at interactive priority, and is done long before the bulk work."""
    emb = Recording(delay=0.5)
    batcher = EmbeddingBatcher(emb, max_items=4, max_wait=0.0, max_in_flight=1)
    bulk = asyncio.gather(*(batcher.embed([f"import {j}-{i}" for i in range(4)],
                                          priority="bulk") for j in range(3)))
    await asyncio.sleep(0.05)  # the first bulk batch is encoding, two more are queued
    loop = asyncio.get_running_loop()
    started = loop.time()
    vector = await batcher.embed(["the user's save"])
    took = loop.time() - started
    assert took < 1.0 and not bulk.done()  # the bulk work needs 1.5 s, one batch at a time
    assert emb.calls[1] == ["the user's save"] and emb.priorities[1] == "interactive"
    assert np.allclose(vector, emb.encode(["the user's save"]))
    await bulk
    assert emb.priorities.count("bulk") == 3 and emb.max_running == 2
    await batcher.close()


async def test_interactive_texts_arriving_while_the_encoder_is_full_join_one_call() -> None:
    """Many interactive jobs at once (no bulk work): two calls encode, and the jobs' texts that
    arrive meanwhile go as one call, not a call each; the bulk slots stay free."""
    emb = Recording(delay=0.2)
    batcher = EmbeddingBatcher(emb, max_items=100, max_wait=0.0, max_in_flight=1,
                               max_interactive_in_flight=2)
    jobs = [asyncio.create_task(batcher.embed([f"job 0 turn {i}" for i in range(3)]))]
    await asyncio.sleep(0.02)
    jobs.append(asyncio.create_task(batcher.embed(["job 1 turn 0"])))
    await asyncio.sleep(0.02)  # two interactive calls encode
    for j in range(2, 6):
        jobs.append(asyncio.create_task(batcher.embed([f"job {j} turn {i}" for i in range(3)])))
        await asyncio.sleep(0.01)
    bulk = await asyncio.wait_for(batcher.embed(["an import's turn"], priority="bulk"), 0.35)
    assert bulk.shape == (1, 32)  # not behind the interactive calls
    await asyncio.gather(*jobs)
    interactive = [c for c, p in zip(emb.calls, emb.priorities, strict=True)
                   if p == "interactive"]
    assert [len(c) for c in interactive] == [3, 1, 12]
    await batcher.close()


@pytest.mark.parametrize("texts", [[], ["single"]])
async def test_edge_sizes(texts: list[str]) -> None:
    batcher = EmbeddingBatcher(Recording())
    out = await batcher.embed(texts)
    assert out.shape[0] == len(texts)
    await batcher.close()
