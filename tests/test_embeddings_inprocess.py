"""The in-process embedder with the real all-MiniLM-L6-v2 weights (offline, loaded once)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from mind.embeddings import EmbeddingError, InProcessEmbedder, fingerprint
from mind.embeddings.model_source import bundled_model_path, hub_offline, resolve_model_source
from tests.procs import ROOT


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def model() -> Iterator[InProcessEmbedder]:
    """One real model for the whole module (loaded offline, encode thread limited to 1)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        embedder = InProcessEmbedder(num_threads=1)
        asyncio.run(embedder.load())
    yield embedder
    asyncio.run(embedder.close())


def test_default_model_comes_from_the_bundled_package() -> None:
    path = bundled_model_path()
    assert path is not None and (path / "model.safetensors").exists()
    assert resolve_model_source("all-MiniLM-L6-v2") == (str(path), True)
    assert resolve_model_source("sentence-transformers/all-MiniLM-L6-v2") == (str(path), True)
    assert resolve_model_source("org/other-model") == ("org/other-model", False)
    assert hub_offline()


async def test_loaded_model_facts(model: InProcessEmbedder) -> None:
    assert model.loaded
    assert fingerprint(model) == ("inprocess", "all-MiniLM-L6-v2", 384)
    assert model.degraded is False
    assert await model.load() == 384  # idempotent
    assert InProcessEmbedder("sentence-transformers/all-MiniLM-L6-v2").model_id == (
        "all-MiniLM-L6-v2"
    )


async def test_vectors_are_normalized_float32(model: InProcessEmbedder) -> None:
    out = await model.embed_batch(["hello world", "Zürich café ☕", ""])
    assert out.shape == (3, 384) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-4)
    again = await model.embed_batch(["hello world"])
    np.testing.assert_allclose(again[0], out[0], atol=1e-5)
    empty = await model.embed_batch([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32


async def test_paraphrase_is_closer_than_unrelated_text(model: InProcessEmbedder) -> None:
    a, b, c = await model.embed_batch(
        [
            "The cat is sleeping on the sofa.",
            "A kitten naps on the couch.",
            "Quarterly corporate tax filings are due in April.",
        ]
    )
    assert float(a @ b) > float(a @ c) + 0.3


async def test_encode_runs_off_the_event_loop(model: InProcessEmbedder) -> None:
    threads: set[str] = set()
    ticks = 0
    encoding = True

    async def ticker() -> None:
        nonlocal ticks
        while encoding:
            await asyncio.sleep(0.001)
            ticks += 1

    original = model._encode_sync

    def spy(texts: list[str]) -> np.ndarray:
        threads.add(threading.current_thread().name)
        return original(texts)

    texts = [f"message {i}: the weekly sync covers roadmap, hiring and budget" for i in range(96)]
    task = asyncio.create_task(ticker())
    model._encode_sync = spy  # type: ignore[method-assign,assignment]
    try:
        started = time.perf_counter()
        out = await model.embed_batch(texts)
        elapsed = time.perf_counter() - started
    finally:
        del model._encode_sync
        encoding = False
        await task
    assert out.shape == (96, 384)
    assert threads and all(name.startswith("hm-embed") for name in threads)
    assert threading.current_thread().name not in threads
    assert ticks >= 5, f"event loop starved: {ticks} ticks during {elapsed:.3f}s of encoding"


async def test_num_threads_applies_to_the_encode_thread(model: InProcessEmbedder) -> None:
    import torch

    assert await model._run(torch.get_num_threads) == 1


async def test_unknown_model_offline_fails_fast_with_a_clear_error() -> None:
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    embedder = InProcessEmbedder("hive-mind/definitely-not-a-model")
    started = time.perf_counter()
    with pytest.raises(EmbeddingError) as info:
        await asyncio.wait_for(embedder.load(), timeout=60)
    assert time.perf_counter() - started < 30
    message = str(info.value)
    assert "hive-mind/definitely-not-a-model" in message and "HF_HUB_OFFLINE" in message
    assert info.value.provider == "inprocess"
    assert not embedder.loaded and embedder.dimensions == 0
    with pytest.raises(EmbeddingError):
        await embedder.embed_batch(["x"])
    await embedder.close()


async def test_unloaded_empty_batch_and_close() -> None:
    embedder = InProcessEmbedder("hive-mind/never-loaded")
    assert (await embedder.embed_batch([])).shape == (0, 0)  # no I/O, dimension not known yet
    assert not embedder.loaded
    async with embedder:
        pass
    with pytest.raises(EmbeddingError, match="closed"):
        await embedder.embed_batch(["x"])
    with pytest.raises(EmbeddingError, match="closed"):
        await embedder.load()
    await embedder.close()  # idempotent


def test_lower_thread_priority_affects_only_the_calling_thread() -> None:
    import os
    import sys
    import threading

    from mind.embeddings.inprocess import lower_thread_priority

    if not sys.platform.startswith("linux"):
        pytest.skip("per-thread nice values are a Linux feature")
    seen: dict[str, int] = {}

    def worker() -> None:
        before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        lower_thread_priority(5)
        seen["delta"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) - before

        def child() -> None:  # threads started from here (torch's pool) inherit it
            seen["child"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

        t = threading.Thread(target=child)
        t.start()
        t.join()
        seen["self"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    main_before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen["delta"] == min(5, 19 - main_before)
    assert seen["child"] == seen["self"]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == main_before


# -- lanes: one loaded model, several single-thread encoders ---------------------------------


def test_split_for_lanes_deals_length_sorted_batches() -> None:
    from mind.embeddings.inprocess import split_for_lanes

    assert split_for_lanes(["a", "b", "c"], 2, 32) == [[0, 1, 2]]  # under two batches: one lane
    texts = [("word " * (i % 37 + 1)).strip() for i in range(200)]
    parts = split_for_lanes(texts, 2, 16)
    assert len(parts) == 2
    assert sorted(i for part in parts for i in part) == list(range(200))  # each text once
    assert abs(len(parts[0]) - len(parts[1])) <= 16
    lengths = [sum(len(texts[i]) for i in part) for part in parts]
    assert max(lengths) < 1.2 * min(lengths)  # similar work per lane
    assert len(split_for_lanes(texts, 8, 64)) == 4  # never more lanes than batches


def test_lane_layout_defaults() -> None:
    from mind.embeddings.inprocess import MAX_DEFAULT_LANES, lane_layout

    assert lane_layout(2, None, "cpu") == (2, 1)
    assert lane_layout(8, 2, "cpu") == (2, 4)
    assert lane_layout(16, None, "cpu") == (MAX_DEFAULT_LANES, 16 // MAX_DEFAULT_LANES)
    assert lane_layout(4, None, "cuda") == (1, 4)
    assert lane_layout(1, 3, "cpu") == (1, 1)  # never more lanes than threads
    with pytest.raises(ValueError, match="lanes"):
        InProcessEmbedder(lanes=0)


async def test_two_lanes_share_the_model_and_match_one_lane(model: InProcessEmbedder) -> None:
    import torch

    texts = [f"note {i}: " + "the release train leaves on friday " * (i % 9 + 1) for i in range(150)]
    lanes = InProcessEmbedder(num_threads=2, lanes=2)
    await lanes.load()
    seen: set[str] = set()
    original = lanes._encode_sync

    def spy(part: list[str]) -> np.ndarray:
        seen.add(threading.current_thread().name)
        return original(part)

    lanes._encode_sync = spy  # type: ignore[method-assign,assignment]
    try:
        # several callers at once: parts of different batches interleave on the lanes
        together = await asyncio.gather(*(lanes.embed_batch(texts[k::3]) for k in range(3)))
        whole = await lanes.embed_batch(texts)
    finally:
        del lanes._encode_sync
    assert {name.rsplit("_", 1)[0] for name in seen} == {"hm-embed-0", "hm-embed-1"}
    assert await lanes._run(torch.get_num_threads, lane=1) == 1
    reference = await model.embed_batch(texts)
    np.testing.assert_allclose(whole, reference, atol=1e-5)  # same rows, same order
    for k, part in enumerate(together):
        np.testing.assert_allclose(part, reference[k::3], atol=1e-5)
    await lanes.close()


async def test_a_small_call_takes_the_idle_lane() -> None:
    lanes = InProcessEmbedder(num_threads=2, lanes=2)
    await lanes.load()
    seen: list[str] = []
    original = lanes._encode_sync

    def spy(part: list[str]) -> np.ndarray:
        seen.append(threading.current_thread().name.rsplit("_", 1)[0])
        if len(part) == 1 and part[0] == "slow":
            time.sleep(0.3)  # lane 0 stays busy with this one
        return original(part)

    lanes._encode_sync = spy  # type: ignore[method-assign,assignment]
    try:
        busy = asyncio.ensure_future(lanes.embed_batch(["slow"]))
        await asyncio.sleep(0.05)
        quick = await lanes.embed_batch(["a query while lane 0 works"])
        await busy
    finally:
        del lanes._encode_sync
    assert quick.shape == (1, 384)
    assert seen == ["hm-embed-0", "hm-embed-1"]
    await lanes.close()


def test_model_load_prints_no_progress_bar(tmp_path: Path) -> None:
    """A CLI command with the real model: stdout is the JSON, stderr stays empty (no
    "Loading weights" bar from the model load, issue #14)."""
    env = {**os.environ, "HIVE_MIND_DATA_DIR": str(tmp_path / "d"), "HF_HUB_OFFLINE": "1",
           "HIVE_MIND_EMBEDDING_PROVIDER": "inprocess"}
    for key in ("HIVE_MIND_REDIS_URL", "HIVE_MIND_URL"):
        env.pop(key, None)
    run = subprocess.run([sys.executable, "-m", "hive_mind", "recall", "budget", "--json"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "[]"
    assert "Loading weights" not in run.stderr and "it/s" not in run.stderr, run.stderr[-500:]
