"""The ONNX Runtime encoder of the in-process provider (backends ``onnx`` and ``onnx-int8``).

Loads only ``tokenizers`` and ``onnxruntime`` (a recall in a fresh CLI process imports neither
torch nor sentence-transformers): the model is the cached export of :mod:`onnx_export`. Texts are
tokenized like sentence-transformers does it (truncated at the model's ``max_seq_length``, padded
to the longest text of the forward batch, batches formed from length-sorted texts), so the fp32
export gives the PyTorch vectors (cosine ≥ 0.9999, tested).

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
from pathlib import Path
from typing import Any

import numpy as np

from mind.embeddings.base import EmbeddingError
from mind.embeddings.onnx_export import ExportedModel, discard, ensure_exported

PROVIDER = "inprocess"
VARIANT_OF_BACKEND = {"onnx": "fp32", "onnx-int8": "int8"}


class OnnxEncoder:
    """The cached ONNX export of the model, run by ONNX Runtime on the CPU."""

    def __init__(self, source: str, *, local_only: bool, is_local: bool, backend: str,
                 batch_size: int, normalize: bool, lane_threads: int, cache_root: Path,
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
        tokenizer.enable_padding(pad_id=exported.pad_id, pad_token=exported.pad_token)
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.lane_threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # warnings about unused initializers are not the user's
        if self.lane_threads > 1:
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = ort.InferenceSession(str(exported.model_path), options,
                                       providers=["CPUExecutionProvider"])
        return session, tokenizer

    def encode(self, texts: list[str]) -> np.ndarray:
        session, tokenizer, exported = self._session, self._tokenizer, self._exported
        if session is None or exported is None:
            raise EmbeddingError("the in-process embedder is closed", provider=PROVIDER)
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            batch = order[start: start + self.batch_size]
            encodings = tokenizer.encode_batch([texts[i] for i in batch])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            feeds = {"input_ids": ids}
            if "attention_mask" in exported.inputs:
                feeds["attention_mask"] = np.array([e.attention_mask for e in encodings],
                                                   dtype=np.int64)
            if "token_type_ids" in exported.inputs:
                feeds["token_type_ids"] = np.array([e.type_ids for e in encodings],
                                                   dtype=np.int64)
            out[batch] = session.run(None, feeds)[0]
        if self.normalize and not exported.normalized:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out /= np.maximum(norms, 1e-12)
        return out

    def close(self) -> None:
        self._session = self._tokenizer = None
