"""The vector index's scans (mind.retrieval.vector_scan): sign bits at any dimension, the
quantized estimate equal to its formula, top-row selection with ties, exact blocks equal to a
plain product, and the quantized pass's recall against exact search (issue #14)."""

from __future__ import annotations

import numpy as np
import pytest

from mind.retrieval import vector_scan as scan


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.parametrize("dim", [16, 64, 96, 384, 1000])
def test_sign_codes_hold_one_bit_per_dimension_and_pad_with_zeros(dim: int) -> None:
    x = _unit(np.random.default_rng(dim), 5, dim)
    codes = scan.sign_codes(x)
    assert codes.shape == (scan.words(dim), 5) and codes.dtype == np.uint64
    bits = np.unpackbits(np.ascontiguousarray(codes.T).view(np.uint8), axis=1)
    assert np.array_equal(bits[:, :dim].astype(bool), x > 0)
    assert not bits[:, dim:].any()
    assert np.array_equal(scan.ones(codes), (x > 0).sum(axis=1))


@pytest.mark.parametrize("dim", [16, 96, 384])
def test_quantized_scores_are_the_4_bit_query_times_the_sign_bits(dim: int) -> None:
    rng = np.random.default_rng(3)
    x, q = _unit(rng, 300, dim), _unit(rng, 1, dim)[0]
    codes = scan.sign_codes(x)
    planes = scan.QueryPlanes(q)
    got = scan.quantized_scores(codes, scan.ones(codes), planes, 0, 300)
    lo, hi = float(q.min()), float(q.max())
    delta = (hi - lo) / 15
    levels = np.rint((q - lo) / delta)
    bits = (x > 0).astype(np.int64)
    want = scan.SCALE * (bits @ levels) + planes.offset * bits.sum(axis=1)
    assert np.array_equal(got, want.astype(np.int64))
    # and it ranks like q · sign(x): the estimate is close to the float one
    assert np.corrcoef(got, np.sign(x) @ q)[0, 1] > 0.99
    assert got.min() > planes.floor(dim)


def test_best_rows_keeps_the_top_count_and_every_tie_of_the_last() -> None:
    scores = np.array([5, 1, 9, 5, 7, 5, -3, 9], dtype=np.int32)
    assert list(scan.best_rows(scores, 1)) == [2, 7]  # a tie for first: both
    assert list(scan.best_rows(scores, 3)) == [2, 4, 7]
    assert list(scan.best_rows(scores, 4)) == [0, 2, 3, 4, 5, 7]  # three rows tie at 5
    assert list(scan.best_rows(scores, 20)) == list(range(8))


def test_exact_blocks_equal_one_product_and_respect_the_mask(monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    monkeypatch.setattr(scan, "BLOCK_ROWS", 100)  # many blocks, one partly masked
    rng = np.random.default_rng(5)
    x, queries = _unit(rng, 1050, 32), _unit(rng, 3, 32)
    keep = rng.random(1050) > 0.3
    keep[200:300] = False  # a block with no live row
    for (rows, sims), q in zip(scan.exact(x, keep, queries, 7), queries, strict=True):
        full = np.where(keep, x @ q, -np.inf)
        want = np.argsort(-full)[:7]
        assert sorted(rows.tolist()) == sorted(want.tolist())
        assert np.allclose(np.sort(sims), np.sort(full[want]))


@pytest.mark.parametrize("kind", ["random", "clustered"])
def test_the_quantized_pass_keeps_recall_at_10_of_exact(kind: str) -> None:
    """20,000 × 96 unit vectors, candidates = 5 % of the rows: recall@10 against exact search
    stays high even for uniformly random vectors, where no coarse pass has structure to use
    (the fraction needed shrinks as rows grow: 2 % at 1,000,000 × 384, docs/benchmarks.md)."""
    rng = np.random.default_rng(11)
    n, dim = 20_000, 96
    x = _unit(rng, n, dim)
    if kind == "clustered":
        centers = _unit(rng, 50, dim)
        x = x * 0.3 + centers[rng.integers(0, 50, n)]
        x /= np.linalg.norm(x, axis=1, keepdims=True)
    queries = _unit(rng, 30, dim)
    if kind == "clustered":  # a query about something the mind holds: near a stored vector
        queries = x[rng.integers(0, n, 30)] + 0.5 * queries
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    codes = scan.sign_codes(x)
    keep = np.ones(n, dtype=bool)
    recalls = []
    for q in queries:
        rows, sims = scan.quantized(x, codes, scan.ones(codes), keep, q, 10, n // 20)
        exact = set(np.argsort(-(x @ q))[:10].tolist())
        recalls.append(len(exact & set(rows.tolist())) / 10)
        assert np.allclose(sims, x[rows] @ q)  # re-scored exactly
    assert np.mean(recalls) >= 0.95, np.mean(recalls)


def test_the_quantized_pass_never_returns_a_masked_row() -> None:
    rng = np.random.default_rng(2)
    x = _unit(rng, 3000, 64)
    keep = np.zeros(3000, dtype=bool)
    keep[::7] = True
    codes = scan.sign_codes(x)
    q = _unit(rng, 1, 64)[0]
    rows, _ = scan.quantized(x, codes, scan.ones(codes), keep, q, 10, 2500)
    assert len(rows) == 10 and keep[rows].all()
    rows, _ = scan.quantized(x, codes, scan.ones(codes), keep, q, 1000, 50)
    assert len(rows) == keep.sum()  # fewer live rows than asked: all of them
