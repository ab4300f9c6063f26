"""Full blocks of the vector index as 4-bit codes, scored by ONNX Runtime's ``MatMulNBits``.

The quantized pass (:mod:`mind.retrieval.int8_scan`) reads every row on every query, so at
1,000,000 rows it is bound by memory, not arithmetic: 384 MB of int8 codes a query, a block's
product 0.33 ms when its codes are the only ones touched and 0.82 ms inside the full scan
(2-core AMD EPYC with AVX-512 VNNI). Half the bytes halve the scan: each full block of rows
(:data:`~mind.retrieval.vector_scan.BLOCK_ROWS`, rows that never change once written) is kept
as 4 bits a dimension, in groups of :data:`GROUP` dimensions that share one float scale
(``|x|``'s largest in the group over 7, symmetric around the zero point 8), 204 bytes a
384-dimension row. ``MatMulNBits`` (``com.microsoft``, the operator LLM runtimes use for 4-bit
weights) takes such a block as a constant, packs it once when the session is made, and at
accuracy level 4 multiplies in int8 (the query quantized per group): 1,000,000 rows in
11.4 ms against 20-24 ms for the int8 blocks, same machine, same pool of two threads
(``bench/components/vector_scale.py``). Its estimate of ``x · q`` is coarser, yet re-scoring the
same best 4 × k rows exactly (:data:`~mind.retrieval.int8_scan.CANDIDATES_PER_ROW`) keeps
recall@10 1.000 of exact on random and clustered vectors (2 × k: 0.95-0.99).

The estimate is in the units of ``x · q`` (the scales are applied), so it is compared as is
with the int8 product of the rows after the last full block, once that is multiplied by the
query's step (:func:`mind.retrieval.int8_scan.quantized`).

The model is written here as protobuf bytes (:func:`model_bytes`: ``K`` and ``N`` are
attributes, so it depends on the dimension), not with ``onnx.helper``, which a search would
otherwise import (0.6 s); a test checks the bytes against ``onnx.helper``'s.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from mind.retrieval.vector_scan import BLOCK_ROWS

GROUP = 128  # dimensions sharing one scale (32: 20.8 ms for 1,000,000 rows, 64: 15.6, 128: 11.4)
LEVELS = 7  # a dimension's code: rint(x / scale) in [-8, 7], stored + ZERO
ZERO = 8  # MatMulNBits' default zero point for 4 bits
ACCURACY = 4  # int8 arithmetic (VNNI where the CPU has it)
ENCODE_ROWS = 8_192


def groups(dim: int) -> int:
    return -(-dim // GROUP)


def encode(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, groups, GROUP // 2)`` uint8 codes (two dimensions a byte, the first in the low
    nibble; dimensions past ``dim`` are 0) and ``(rows * groups,)`` float32 scales."""
    n, dim = vectors.shape
    g = groups(dim)
    codes = np.empty((n, g, GROUP // 2), dtype=np.uint8)
    scales = np.empty((n, g), dtype=np.float32)
    part = np.zeros((min(n, ENCODE_ROWS), g * GROUP), dtype=np.float32)
    for start in range(0, n, ENCODE_ROWS):
        stop = min(n, start + ENCODE_ROWS)
        x = part[:stop - start]
        x[:, :dim] = vectors[start:stop]
        grouped = x.reshape(len(x), g, GROUP)
        scale = np.abs(grouped).max(axis=2)
        scale /= LEVELS
        scale[scale <= 0] = 1.0
        levels = grouped / scale[:, :, None]
        np.rint(levels, out=levels)
        np.clip(levels, -LEVELS - 1, LEVELS, out=levels)
        levels += ZERO
        pairs = levels.astype(np.uint8).reshape(len(x), g, GROUP // 2, 2)
        codes[start:stop] = pairs[..., 0] | (pairs[..., 1] << 4)
        scales[start:stop] = scale
    return codes, scales.reshape(-1)


def decode(codes: np.ndarray, scales: np.ndarray, dim: int) -> np.ndarray:
    """The vectors the codes stand for (what the product multiplies; for tests)."""
    n, g, _ = codes.shape
    levels = np.stack([codes & 0x0F, codes >> 4], axis=-1).reshape(n, g, GROUP)
    out: np.ndarray = (levels.astype(np.float32) - ZERO) * scales.reshape(n, g)[:, :, None]
    return out.reshape(n, g * GROUP)[:, :dim]


# -- the model, as protobuf bytes --------------------------------------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes | str | int) -> bytes:
    """One protobuf field: an int as a varint, bytes or str length-delimited."""
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _value_info(name: str, elem_type: int, dims: tuple[int, ...]) -> bytes:
    shape = b"".join(_field(1, _field(1, d)) for d in dims)
    return _field(1, name) + _field(2, _field(1, _field(1, elem_type) + _field(2, shape)))


def _placeholder(name: str, elem_type: int, ndim: int) -> bytes:
    """A one-element zero initializer with ``ndim`` dimensions: each session replaces it with
    its block's values (``add_initializer``), so the model stays a few hundred bytes."""
    size = 1 if elem_type == _UINT8 else 4
    return (_field(1, 1) * ndim + _field(2, elem_type) + _field(8, name)
            + _field(9, bytes(size)))


_FLOAT, _UINT8 = 1, 2


@cache
def model_bytes(dim: int, rows: int = BLOCK_ROWS) -> bytes:
    """``Y = MatMulNBits(A, B, scales)``: A float32 ``(1, dim)``, B the block's codes, Y float32
    ``(1, rows)``; opset 17 + ``com.microsoft`` 1, IR 8 (what ``onnx.helper`` builds, a test
    checks)."""
    attributes = [("K", dim), ("N", rows), ("accuracy_level", ACCURACY), ("bits", 4),
                  ("block_size", GROUP)]
    node = (_field(1, "A") + _field(1, "B") + _field(1, "scales") + _field(2, "Y")
            + _field(4, "MatMulNBits")
            + b"".join(_field(5, _field(1, name) + _field(3, value) + _field(20, 2))
                       for name, value in sorted(attributes))
            + _field(7, "com.microsoft"))
    graph = (_field(1, node) + _field(2, "int4_blocks")
             + _field(5, _placeholder("B", _UINT8, 3))
             + _field(5, _placeholder("scales", _FLOAT, 1))
             + _field(11, _value_info("A", _FLOAT, (1, dim)))
             + _field(12, _value_info("Y", _FLOAT, (1, rows))))
    opsets = _field(8, _field(1, "") + _field(2, 17)) + _field(8, _field(1, "com.microsoft")
                                                            + _field(2, 1))
    return _field(1, 8) + _field(2, "hive-mind") + _field(7, graph) + opsets


def session_options() -> Any:
    """One thread a session: the scan pool spreads the blocks over the cores."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return options


class Block:
    """One full block of rows as a ``MatMulNBits`` session holding its 4-bit codes."""

    def __init__(self, vectors: np.ndarray) -> None:
        import onnxruntime as ort

        rows, dim = vectors.shape
        if rows != BLOCK_ROWS:
            raise ValueError(f"a block has {BLOCK_ROWS} rows, not {rows}")
        self._codes, self._scales = encode(vectors)
        # the session reads both through these values (not copied): they live as long as it
        self._values = (ort.OrtValue.ortvalue_from_numpy(self._codes),
                        ort.OrtValue.ortvalue_from_numpy(self._scales))
        self._options = session_options()
        self._options.add_initializer("B", self._values[0])
        self._options.add_initializer("scales", self._values[1])
        self._session = ort.InferenceSession(model_bytes(dim), self._options,
                                             providers=["CPUExecutionProvider"])

    @property
    def nbytes(self) -> int:
        return int(self._codes.nbytes + self._scales.nbytes) * 2  # ours and the packed copy

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Estimates of ``x · query`` for the block's rows (``query``: float32, ``(1, dim)``)."""
        out: np.ndarray = self._session.run(None, {"A": query})[0][0]
        return out
