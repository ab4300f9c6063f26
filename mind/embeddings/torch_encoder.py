"""The PyTorch encoder of the in-process provider (backend ``torch``): sentence-transformers.

``num_threads`` is applied with ``torch.set_num_threads`` on each lane's thread: torch's OpenMP
thread count is per thread, so each lane applies it to itself (and leaves the rest of the
process alone). The shared fast tokenizer is safe across lanes because a warm-up encode fixes its
truncation/padding settings before the lanes run concurrently (it only mutates itself when those
change; see huggingface/tokenizers#537).
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from mind.embeddings.base import EmbeddingError
from mind.embeddings.model_source import offline_hint

BORROW_RETRIES = 3
PROVIDER = "inprocess"


class TorchEncoder:
    """One loaded SentenceTransformer shared by the lanes."""

    backend = "torch"

    def __init__(self, source: str, *, local_only: bool, device: str, batch_size: int,
                 normalize: bool, lane_threads: int, cache_dir: str | None,
                 model_name: str) -> None:
        self.source = source
        self.local_only = local_only
        self.device = device
        self.batch_size = batch_size
        self.normalize = normalize
        self.lane_threads = lane_threads
        self.cache_dir = cache_dir
        self.model_name = model_name
        self._model: Any = None
        self.dimensions = 0

    def prepare_thread(self) -> None:
        """On each lane's thread: OpenMP wait policy (before torch loads its runtime), then
        this thread's torch thread count."""
        # OpenMP threads that spin at barriers burn the cores the writer, the event loop and
        # (distributed) the host need; sleeping waiters measured 41-46 % → 85-87 % of raw
        # encode throughput end to end on 2 cores with one 2-thread encoder (bench/
        # product/ingest.py). Read once, when torch loads; an explicit value wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            import torch
        except ImportError:  # pragma: no cover - a declared dependency; load() reports it
            return
        # Always set it on this thread: even at the same count, an explicit call here measured
        # ~6 % faster encodes than the inherited default (bench/product/ingest.py).
        torch.set_num_threads(self.lane_threads)

    def load(self) -> int:
        if self._model is not None:
            return self.dimensions
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise EmbeddingError(
                f"sentence-transformers is not importable: {exc}", provider=PROVIDER
            ) from None
        quiet_progress_bars()
        try:
            model = SentenceTransformer(self.source, device=self.device,
                                        cache_folder=self.cache_dir,
                                        local_files_only=self.local_only)
        except Exception as exc:
            raise EmbeddingError(
                f"in-process model {self.model_name!r} could not be loaded"
                f"{offline_hint(self.source)}: {exc}",
                provider=PROVIDER,
            ) from None
        getter = getattr(model, "get_embedding_dimension", None) or getattr(
            model, "get_sentence_embedding_dimension", None
        )
        # the warm-up encode also fixes the tokenizer's truncation/padding state before any
        # two lanes tokenize at once (module docstring)
        probe = np.asarray(model.encode(["warm up"], show_progress_bar=False))
        dim = int(getter() or 0) if getter is not None else 0
        self._model, self.dimensions = model, dim if dim > 0 else int(probe.shape[-1])
        return self.dimensions

    def encode(self, texts: list[str]) -> np.ndarray:
        model = self._model
        if model is None:
            raise EmbeddingError("the in-process embedder is closed", provider=PROVIDER)
        for attempt in range(BORROW_RETRIES + 1):
            try:
                out = model.encode(texts, batch_size=self.batch_size,
                                   normalize_embeddings=self.normalize, convert_to_numpy=True,
                                   show_progress_bar=False)
                break
            except RuntimeError as exc:
                # another lane reconfigured the shared fast tokenizer at this instant (only
                # possible if something changed its settings after the warm-up): try again
                if "Already borrowed" in str(exc) and attempt < BORROW_RETRIES:
                    time.sleep(0.005 * (attempt + 1))
                    continue
                raise
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dimensions)

    def close(self) -> None:
        self._model = None


def quiet_progress_bars() -> None:
    """No "Loading weights" bar on stderr: a library's model load is not the user's progress
    (it cluttered every CLI command, ``--json`` included, and the MCP server's log)."""
    try:
        from transformers.utils import logging as transformers_logging
    except ImportError:  # pragma: no cover - sentence-transformers depends on transformers
        return
    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
