"""The ONNX Runtime encoder of the in-process provider (backends ``onnx`` and ``onnx-int8``).

Loads only ``tokenizers`` and ``onnxruntime`` (a recall in a fresh CLI process imports neither
torch nor sentence-transformers): the model is the cached export of :mod:`onnx_export`. Texts are
tokenized like sentence-transformers does it (truncated at the model's ``max_seq_length``, padded
to the longest text of the forward batch), so the fp32 export gives the PyTorch vectors (cosine
≥ 0.9999, tested); the forward batches are formed by exact token counts (:mod:`batching`), not
by characters, which wastes far less work on padding.

One session serves every lane: ``InferenceSession.run`` is thread-safe, and with one intra-op
thread per lane it runs on the calling lane's thread, which keeps that lane's nice value. With
more threads per lane the session's pool is created from lane 0 (its threads inherit lane 0's
priority) and does not spin between operators (``allow_spinning=0``: the same reason the torch
lanes use ``OMP_WAIT_POLICY=PASSIVE``). The tokenizer is configured once at load and only read
afterwards, so sharing it is safe too; its own parallelism is turned off (the lanes are the
parallelism).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mind.embeddings.base import EmbeddingError
from mind.embeddings.batching import plan_batches
from mind.embeddings.onnx_export import ExportedModel, discard, ensure_exported

PROVIDER = "inprocess"
VARIANT_OF_BACKEND = {"onnx": "fp32", "onnx-int8": "int8"}


class OnnxEncoder:
    """The cached ONNX export of the model, run by ONNX Runtime on the CPU."""

    def __init__(self, source: str, *, local_only: bool, is_local: bool, backend: str,
                 batch_size: int, normalize: bool, lane_threads: int,
                 cache_root: Path | Sequence[Path],
                 model_name: str, model_id: str) -> None:
        if backend not in VARIANT_OF_BACKEND:
            raise ValueError(f"not an ONNX backend: {backend!r}")
        self.backend = backend
        self.source = source
        self.local_only = local_only
        self.is_local = is_local
        self.batch_size = batch_size
        self.normalize = normalize
        self.lane_threads = lane_threads
        self.cache_root = cache_root
        self.model_name = model_name
        self.model_id = model_id
        self._session: Any = None
        self._tokenizer: Any = None
        self._exported: ExportedModel | None = None
        self.dimensions = 0

    @property
    def directory(self) -> Path | None:
        """Where the loaded export lives (None before :meth:`load`)."""
        return None if self._exported is None else self._exported.directory

    def prepare_thread(self) -> None:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    def load(self) -> int:
        if self._session is not None:
            return self.dimensions
        exported = ensure_exported(self.cache_root, self.model_id, self.source,
                                   is_local=self.is_local, variant=VARIANT_OF_BACKEND[self.backend],
                                   offline=self.local_only)
        try:
            session, tokenizer = self._open(exported)
        except EmbeddingError:
            raise
        except Exception as exc:  # a damaged cache: export again, once
            discard(exported)
            exported = ensure_exported(self.cache_root, self.model_id, self.source,
                                       is_local=self.is_local,
                                       variant=VARIANT_OF_BACKEND[self.backend],
                                       offline=self.local_only)
            try:
                session, tokenizer = self._open(exported)
            except Exception:
                raise EmbeddingError(
                    f"ONNX model for {self.model_name!r} could not be loaded from "
                    f"{exported.directory}: {exc}", provider=PROVIDER) from None
        self._session, self._tokenizer, self._exported = session, tokenizer, exported
        self.dimensions = exported.dimensions
        return self.dimensions

    def _open(self, exported: ExportedModel) -> tuple[Any, Any]:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - declared dependencies
            raise EmbeddingError(f"the ONNX backend needs onnxruntime and tokenizers: {exc}",
                                 provider=PROVIDER) from None
        tokenizer = Tokenizer.from_file(str(exported.tokenizer_path))
        tokenizer.enable_truncation(exported.max_seq_length)
        tokenizer.no_padding()  # each forward batch is padded to its own longest text
        session = ort.InferenceSession(str(exported.model_path), self.session_options(ort),
                                       providers=["CPUExecutionProvider"])
        return session, tokenizer

    def session_options(self, ort: Any) -> Any:
        """The session's options: the lane's intra-op threads, one inter-op thread, warnings
        off, and no spinning between operators when a lane has more than one thread."""
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.lane_threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # warnings about unused initializers are not the user's
        if self.lane_threads > 1:
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return options

    def tokenize(self, texts: Sequence[str]) -> list[Any]:
        """Each text's token ids (truncated at the model's ``max_seq_length``, unpadded)."""
        tokenizer = self._tokenizer
        if tokenizer is None:
            raise EmbeddingError("the in-process embedder is closed", provider=PROVIDER)
        return list(tokenizer.encode_batch(list(texts)))

    def plan(self, texts: Sequence[str]) -> tuple[list[Any], list[list[int]]]:
        """The texts' encodings and their forward passes (indices, :func:`plan_batches`)."""
        encodings = self.tokenize(texts)
        return encodings, plan_batches([len(e) for e in encodings], self.batch_size)

    def encode(self, texts: list[str]) -> np.ndarray:
        encodings, batches = self.plan(texts)
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for batch in batches:
            out[batch] = self.encode_tokens([encodings[i] for i in batch])
        return out

    def encode_tokens(self, encodings: Sequence[Any]) -> np.ndarray:
        """One forward pass: ``encodings`` (from :meth:`tokenize`) padded to their longest."""
        session, exported = self._session, self._exported
        if session is None or exported is None:
            raise EmbeddingError("the in-process embedder is closed", provider=PROVIDER)
        longest = max(len(e) for e in encodings)  # len: tokens, without building the id list
        ids = np.full((len(encodings), longest), exported.pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), longest), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            ids[row, :len(encoding)] = encoding.ids
            mask[row, :len(encoding)] = 1
        feeds = {"input_ids": ids}
        if "attention_mask" in exported.inputs:
            feeds["attention_mask"] = mask
        if "token_type_ids" in exported.inputs:
            types = np.zeros_like(ids)
            for row, encoding in enumerate(encodings):
                types[row, :len(encoding)] = encoding.type_ids
            feeds["token_type_ids"] = types
        out: np.ndarray = session.run(None, feeds)[0]
        if self.normalize and not exported.normalized:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out /= np.maximum(norms, 1e-12)
        return out

    def close(self) -> None:
        self._session = self._tokenizer = None
