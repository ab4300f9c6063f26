"""The vector index's 4-bit blocks (mind.retrieval.int4_blocks): the model written as protobuf
bytes is the one ``onnx.helper`` builds, codes round-trip within half a step of their group's
scale, and ONNX Runtime's ``MatMulNBits`` estimates ``x · q`` as the decoded rows do (issue
#14)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mind.retrieval import int4_blocks as int4
from mind.retrieval.vector_scan import BLOCK_ROWS


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def onnx_helper_model(dim: int, rows: int = BLOCK_ROWS) -> Any:
    """:func:`int4.model_bytes`' model built with ``onnx.helper``."""
    from onnx import TensorProto, helper, numpy_helper

    node = helper.make_node("MatMulNBits", ["A", "B", "scales"], ["Y"], domain="com.microsoft",
                            K=dim, N=rows, accuracy_level=int4.ACCURACY, bits=4,
                            block_size=int4.GROUP)
    graph = helper.make_graph(
        [node], "int4_blocks",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [1, dim])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, rows])],
        initializer=[numpy_helper.from_array(np.zeros((1, 1, 1), np.uint8), "B"),
                     numpy_helper.from_array(np.zeros(1, np.float32), "scales")])
    model = helper.make_model(graph, producer_name="hive-mind", opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("dim", [16, 100, 384, 1536])
def test_the_model_bytes_are_the_ones_onnx_helper_builds(dim: int) -> None:
    assert int4.model_bytes(dim) == onnx_helper_model(dim).SerializeToString()


@pytest.mark.parametrize("dim", [16, 100, 384])
def test_codes_round_trip_within_half_a_step_of_their_group(dim: int) -> None:
    rng = np.random.default_rng(dim)
    x = _unit(rng, 1000, dim)
    x[3] = 0.0  # a row of zeros: scale 1, codes at the zero point
    codes, scales = int4.encode(x)
    groups = int4.groups(dim)
    assert codes.shape == (1000, groups, int4.GROUP // 2) and scales.shape == (1000 * groups,)
    decoded = int4.decode(codes, scales, dim)
    step = np.repeat(scales.reshape(1000, groups), int4.GROUP, axis=1)[:, :dim]
    assert np.all(np.abs(decoded - x) <= step / 2 + 1e-6)
    assert np.all(decoded[3] == 0.0)
    # each group's largest |x| is coded at ±7 steps exactly (the whole range used)
    top = np.abs(x[0, :min(dim, int4.GROUP)])
    assert np.isclose(np.abs(decoded[0, :len(top)]).max(), top.max(), rtol=1e-6)


@pytest.mark.parametrize("dim", [100, 384])
def test_a_block_estimates_the_product_of_its_decoded_rows(dim: int) -> None:
    """ONNX Runtime multiplies in int8 (the query quantized per group), so the estimate is the
    decoded rows' product up to the query's rounding; it ranks rows as ``x · q`` does."""
    rng = np.random.default_rng(7)
    x = _unit(rng, int4.BLOCK_ROWS, dim)
    block = int4.Block(x)
    assert block.nbytes == 2 * (int4.BLOCK_ROWS * int4.groups(dim) * (int4.GROUP // 2 + 4))
    for q in _unit(rng, 3, dim):
        got = block.scores(q[None, :])
        assert got.shape == (int4.BLOCK_ROWS,) and got.dtype == np.float32
        decoded = int4.decode(*int4.encode(x), dim) @ q
        assert np.abs(got - decoded).max() < 0.01
        assert np.corrcoef(got, x @ q)[0, 1] > 0.98
        best = set(np.argsort(-(x @ q))[:10].tolist())
        assert best <= set(np.argsort(-got)[:80].tolist())  # found among 8 × k estimates


def test_a_block_is_a_full_block() -> None:
    with pytest.raises(ValueError, match="rows"):
        int4.Block(np.zeros((10, 16), dtype=np.float32))
