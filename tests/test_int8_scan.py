"""The vector index's int8 pass (mind.retrieval.int8_scan): the embedded model is the one
``onnx.helper`` builds, ONNX Runtime's product equals the integer product, codes round-trip
within half a step and clip what lies beyond the scales, and the pass keeps recall@10 of exact
search with exact similarities, never returning a masked row (issue #14)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mind.retrieval import int8_scan as int8
from mind.retrieval.vector_scan import serial


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _codes(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = int8.scales(x)
    codes = np.zeros(x.shape, dtype=np.uint8)
    int8.encode(x, scale, codes)
    return codes, scale


def onnx_helper_model() -> Any:
    """The scan's model built with ``onnx.helper``: what :data:`int8.MODEL` must hold."""
    from onnx import TensorProto, helper

    a = helper.make_tensor_value_info("A", TensorProto.UINT8, [None, None])
    b = helper.make_tensor_value_info("B", TensorProto.INT8, [None, None])
    y = helper.make_tensor_value_info("Y", TensorProto.INT32, [None, None])
    node = helper.make_node("MatMulInteger", ["A", "B"], ["Y"])
    graph = helper.make_graph([node], "int8_scan", [a, b], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="hive-mind")
    model.ir_version = 8
    return model


def test_the_embedded_model_is_the_one_onnx_helper_builds() -> None:
    assert onnx_helper_model().SerializeToString() == int8.MODEL


@pytest.mark.parametrize("dim", [16, 384, 1000])
def test_scores_equal_the_integer_product(dim: int) -> None:
    rng = np.random.default_rng(dim)
    x, q = _unit(rng, 777, dim), _unit(rng, 1, dim)[0]
    codes, scale = _codes(x)
    q8, step = int8.query_codes(q, scale)
    assert q8.dtype == np.int8 and q8.shape == (dim, 1)
    assert np.abs(q8).max() == int8.QUERY_LEVELS
    got = int8.scores(codes, q8)[:, 0]
    assert np.array_equal(got, codes.astype(np.int64) @ q8[:, 0].astype(np.int64))
    # and it ranks as x · q does: the offset adds the same constant to every row, and the
    # step brings the product without it to the units of x · q
    assert np.corrcoef(got, x @ q)[0, 1] > 0.999
    plain = (codes.astype(np.int64) - int8.OFFSET) @ q8[:, 0].astype(np.int64)
    assert np.abs(plain * step - x @ q).max() < 0.02


def test_codes_round_trip_within_half_a_step_and_clip_beyond_the_scales() -> None:
    rng = np.random.default_rng(4)
    x = _unit(rng, 500, 64)
    codes, scale = _codes(x)
    assert codes.min() >= int8.OFFSET - int8.LEVELS and codes.max() <= int8.OFFSET + int8.LEVELS
    decoded = (codes.astype(np.float32) - int8.OFFSET) * scale
    assert np.all(np.abs(decoded - x) <= scale / 2 + 1e-7)
    later = np.full((1, 64), 10.0, dtype=np.float32)  # far beyond every dimension's scale
    out = np.zeros((1, 64), dtype=np.uint8)
    int8.encode(later, scale, out)
    assert np.all(out == int8.OFFSET + int8.LEVELS)


@pytest.mark.parametrize("kind", ["random", "clustered"])
def test_the_int8_pass_keeps_recall_at_10_of_exact(kind: str) -> None:
    """20,000 × 96 unit vectors: uniformly random ones, where no coarse pass has structure to
    use, and clustered ones with queries near a stored vector."""
    rng = np.random.default_rng(11)
    n, dim = 20_000, 96
    x = _unit(rng, n, dim)
    queries = _unit(rng, 30, dim)
    if kind == "clustered":
        centers = _unit(rng, 50, dim)
        x = x * 0.3 + centers[rng.integers(0, 50, n)]
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        queries = x[rng.integers(0, n, 30)] + 0.5 * queries
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    codes, scale = _codes(x)
    keep = np.ones(n, dtype=bool)
    recalls = []
    for q in queries:
        rows, sims = int8.quantized(x, codes, scale, keep, q, 10, serial)
        exact = set(np.argsort(-(x @ q))[:10].tolist())
        recalls.append(len(exact & set(rows.tolist())) / 10)
        assert np.allclose(sims, x[rows] @ q)  # re-scored exactly
    assert np.mean(recalls) >= 0.99, np.mean(recalls)


def test_the_int8_pass_never_returns_a_masked_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(int8, "blocks", lambda n: iter([(0, 1000), (1000, 2000), (2000, n)]))
    rng = np.random.default_rng(2)
    x = _unit(rng, 3000, 64)
    keep = np.zeros(3000, dtype=bool)
    keep[::7] = True
    keep[1000:2000] = False  # a block with no live row
    codes, scale = _codes(x)
    q = _unit(rng, 1, 64)[0]
    rows, _ = int8.quantized(x, codes, scale, keep, q, 10)
    assert len(rows) == 10 and keep[rows].all()
    want = np.flatnonzero(keep)[np.argsort(-(x[keep] @ q))[:10]]
    assert sorted(rows.tolist()) == sorted(want.tolist())
    rows, _ = int8.quantized(x, codes, scale, keep, q, 1000)
    assert sorted(rows.tolist()) == np.flatnonzero(keep).tolist()  # fewer live rows: all
    rows, sims = int8.quantized(x, codes, scale, np.zeros(3000, dtype=bool), q, 10)
    assert rows.size == 0 and sims.size == 0


def test_only_the_best_estimates_of_all_blocks_are_rescored(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each run of blocks keeps its best 4 × k, and only the best 4 × k of those are re-scored
    (not every run's), with recall@100 of exact kept."""
    monkeypatch.setattr(int8, "blocks", lambda n: iter([(a, min(n, a + 4000))
                                                        for a in range(0, n, 4000)]))
    rescored: list[int] = []
    real = int8.gathered

    def counting(vectors: np.ndarray, rows: np.ndarray, *rest: object) -> object:
        rescored.append(len(rows))
        return real(vectors, rows, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(int8, "gathered", counting)
    rng = np.random.default_rng(5)
    x = _unit(rng, 20_000, 96)
    codes, scale = _codes(x)
    keep = np.ones(len(x), dtype=bool)
    recalls = []
    for q in _unit(rng, 10, 96):
        rows, _ = int8.quantized(x, codes, scale, keep, q, 100, serial)
        exact = set(np.argsort(-(x @ q))[:100].tolist())
        recalls.append(len(exact & set(rows.tolist())) / 100)
    assert rescored == [int8.CANDIDATES_PER_ROW * 100] * 10  # five blocks, one run's worth
    assert np.mean(recalls) >= 0.99, np.mean(recalls)


def test_runs_of_blocks_select_the_same_rows_as_single_blocks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan task scores ``RUN_BLOCKS`` consecutive blocks and then selects their candidates
    once: whatever the run's length, the rows found and their similarities are those of one
    selection per block, with masked rows (a whole block of them too) never returned."""
    monkeypatch.setattr(int8, "blocks", lambda n: iter([(a, min(n, a + 1500))
                                                        for a in range(0, n, 1500)]))
    rng = np.random.default_rng(13)
    x = _unit(rng, 10_000, 48)
    codes, scale = _codes(x)
    keep = rng.random(len(x)) > 0.2
    keep[3000:4500] = False
    queries = _unit(rng, 6, 48)
    found = {}
    monkeypatch.setattr(int8, "MIN_TASKS", 1)
    for run_blocks in (1, 2, 3, 4, 7, 100):
        monkeypatch.setattr(int8, "RUN_BLOCKS", run_blocks)
        found[run_blocks] = [int8.quantized(x, codes, scale, keep, q, 10) for q in queries]
    for run_blocks, hits in found.items():
        for (rows, sims), (first_rows, first_sims), q in zip(hits, found[1], queries,
                                                              strict=True):
            assert keep[rows].all(), run_blocks
            assert sorted(rows.tolist()) == sorted(first_rows.tolist()), run_blocks
            assert np.allclose(np.sort(sims), np.sort(first_sims))
            assert np.allclose(sims, x[rows] @ q)


@pytest.mark.parametrize(("spans", "tasks"), [(1, 1), (4, 4), (8, 4), (16, 4), (31, 8)])
def test_a_scan_gives_the_pool_enough_tasks(monkeypatch: pytest.MonkeyPatch, spans: int,
                                            tasks: int) -> None:
    """Runs of up to RUN_BLOCKS blocks, but never so long that the pool gets fewer than
    MIN_TASKS tasks (a 100,000-row matrix's four blocks stay four tasks)."""
    monkeypatch.setattr(int8, "blocks", lambda n: iter([(a, min(n, a + 100))
                                                        for a in range(0, n, 100)]))
    counted: list[int] = []

    def runner(work: list[Any]) -> list[object]:
        counted.append(len(work))
        return [task() for task in work]

    rng = np.random.default_rng(3)
    x = _unit(rng, spans * 100, 16)
    codes, scale = _codes(x)
    int8.quantized(x, codes, scale, np.ones(len(x), dtype=bool), _unit(rng, 1, 16)[0], 5, runner)
    assert counted == [tasks]


@pytest.mark.parametrize("kind", ["random", "clustered"])
def test_many_queries_at_once_keep_recall_of_exact_and_skip_masked_rows(
        monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """A cognify batch's links: 64 queries in one pass over blocks of the int8 codes (one of
    them without a live row, one partly masked), each query's best candidates re-scored: the
    top k of each query as exact search finds it, with exact similarities, no masked row."""
    monkeypatch.setattr(int8, "blocks", lambda n: iter([(a, min(n, a + 3000))
                                                        for a in range(0, n, 3000)]))
    rng = np.random.default_rng(8)
    n, dim = 12_000, 96
    x = _unit(rng, n, dim)
    queries = _unit(rng, 64, dim)
    if kind == "clustered":  # turns of conversations: close neighbours, many near ties
        centers = _unit(rng, 40, dim)
        x = x * 0.4 + centers[np.repeat(rng.integers(0, 40, n // 20), 20)]
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        queries = x[rng.integers(0, n, 64)] + 0.3 * queries
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    keep = rng.random(n) > 0.2
    keep[3000:6000] = False
    codes, scale = _codes(x)
    for take in (6, 24):
        hits = int8.quantized_many(x, codes, scale, keep, queries, take)
        assert len(hits) == len(queries)
        recalls = []
        for (rows, sims), q in zip(hits, queries, strict=True):
            assert len(rows) == take == len(set(rows.tolist())) and keep[rows].all()
            assert np.allclose(sims, x[rows] @ q, atol=1e-6)  # re-scored exactly
            assert np.all(np.diff(sims) <= 0)  # best first
            exact = np.flatnonzero(keep)[np.argsort(-(x[keep] @ q))[:take]]
            recalls.append(len(set(exact.tolist()) & set(rows.tolist())) / take)
        assert np.mean(recalls) >= 0.99, (take, np.mean(recalls))


def test_many_queries_with_fewer_live_rows_than_asked_get_every_live_row() -> None:
    rng = np.random.default_rng(6)
    x = _unit(rng, 500, 32)
    codes, scale = _codes(x)
    keep = np.zeros(500, dtype=bool)
    keep[[3, 99, 400]] = True
    queries = _unit(rng, 5, 32)
    hits = int8.quantized_many(x, codes, scale, keep, queries, 6)
    for (rows, sims), q in zip(hits, queries, strict=True):
        assert sorted(rows.tolist()) == [3, 99, 400]
        assert np.allclose(sims, x[rows] @ q, atol=1e-6)
    assert all(len(r) == 0 for r, _ in int8.quantized_many(
        x, codes, scale, np.zeros(500, dtype=bool), queries, 6))


def test_4_bit_blocks_give_the_same_rows_as_the_repacking_product() -> None:
    """Two full blocks as 4-bit sessions, the partial third through the int8 product: their
    estimates are compared on one scale, so the rows found are those of the int8 codes alone
    (and of exact search)."""
    rng = np.random.default_rng(9)
    n, dim = int8.BLOCK_ROWS * 2 + 5_000, 32
    x = _unit(rng, n, dim)
    codes, scale = _codes(x)
    keep = rng.random(n) > 0.1
    packed = int8.pack(x, n, ())
    assert len(packed) == 2  # the last, partial block goes through the repacking product
    for q in _unit(rng, 5, dim):
        plain = int8.quantized(x, codes, scale, keep, q, 10, serial)
        fast = int8.quantized(x, codes, scale, keep, q, 10, serial, packed)
        assert sorted(fast[0].tolist()) == sorted(plain[0].tolist())
        assert np.allclose(np.sort(fast[1]), np.sort(plain[1]))
        assert keep[fast[0]].all()
        exact = np.flatnonzero(keep)[np.argsort(-(x[keep] @ q))[:10]]
        assert sorted(fast[0].tolist()) == sorted(exact.tolist())
    again = int8.pack(x, n, packed)  # nothing filled since: the same sessions, none built
    assert len(again) == 2 and all(a is b for a, b in zip(again, packed, strict=True))


def test_the_index_matrix_packs_each_block_once_it_is_full() -> None:
    from mind.retrieval.vector_index import _Matrix

    rng = np.random.default_rng(12)
    matrix = _Matrix(16)
    first = int8.BLOCK_ROWS + 100
    matrix.put_many(np.arange(first), np.arange(first), _unit(rng, first, 16))
    matrix.quantize()
    assert len(matrix.packed) == 1
    block = matrix.packed[0]
    more = int8.BLOCK_ROWS
    matrix.put_many(np.arange(first, first + more), np.arange(first, first + more),
                    _unit(rng, more, 16))  # grows the arrays: the packed block keeps its rows
    matrix.quantize()
    assert len(matrix.packed) == 2 and matrix.packed[0] is block
    assert matrix.snapshot().packed == matrix.packed
    assert matrix.snapshot(window=1000).packed == ()  # rows of a window start elsewhere
    q = _unit(rng, 1, 16)[0]
    snap = matrix.snapshot()
    keep = snap.keep
    fast = int8.quantized(snap.vectors, snap.codes, snap.scale, keep, q, 10, serial, snap.packed)
    exact = np.argsort(-(snap.vectors @ q))[:10]
    assert sorted(fast[0].tolist()) == sorted(exact.tolist())
