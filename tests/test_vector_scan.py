"""The scans of mind.retrieval.vector_scan: sign bits at any dimension, their 4-bit estimate
equal to its formula (the routing summaries use them), and exact blocks equal to a plain
product with the mask respected (issue #14)."""

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


@pytest.mark.parametrize("count", [1, 64, 280, 1120, 5000])
def test_largest_picks_the_count_largest_values(count: int) -> None:
    """The sampled threshold and the full partition agree, for a threshold that keeps enough
    rows and for one that keeps too few (masked rows at -inf, many equal values)."""
    rng = np.random.default_rng(count)
    for values in (rng.standard_normal(32_768).astype(np.float32),
                   np.where(rng.random(32_768) < 0.9, -np.inf,
                            rng.standard_normal(32_768)).astype(np.float32),
                   np.repeat(rng.standard_normal(64), 512).astype(np.float32)):
        got = scan.largest(values, count)
        assert len(got) == count == len(set(got.tolist()))
        want = np.sort(values)[-count:]
        assert np.array_equal(np.sort(values[got]), want)


def test_largest_falls_back_when_the_sample_misleads() -> None:
    """The sample holds the only three peaks: its threshold keeps 3 rows of the 64 asked for,
    and the full partition answers."""
    values = np.zeros(32_768, dtype=np.float32)
    stride = len(values) // (8 * 64)  # the sample's stride for 64 of 32,768
    values[[0, stride, 2 * stride]] = 10.0
    values[5] = 7.0
    got = scan.largest(values, 64)
    assert len(got) == 64 and {0, stride, 2 * stride, 5} <= set(got.tolist())


@pytest.mark.parametrize("count", [1, 64, 300])
def test_column_candidates_hold_every_columns_best_and_no_masked_row(count: int) -> None:
    """Every column's ``count`` largest are among the candidates, whether its sampled
    threshold keeps enough rows or not (a column whose sample holds its only peaks), and a
    masked row (at FLOOR) never is, even in a column that is mostly masked."""
    rng = np.random.default_rng(count)
    n, m = 20_000, 8
    est = rng.integers(-(2**20), 2**20, size=(n, m), dtype=np.int32)
    stride = n // (8 * count)  # the sample's stride and rank (vector_scan._sample)
    est[:, 3] = 0
    est[np.arange(2 * count // stride + 1) * stride, 3] = 10  # the sample holds its only peaks
    est[rng.random(n) < 0.95, 5] = scan.FLOOR  # column 5: 5 % live
    picked = scan.column_candidates(est, count)
    rows, cols = np.divmod(picked, m)
    assert np.all(est[rows, cols] > scan.FLOOR)
    for c in range(m):
        mine = rows[cols == c]
        assert len(mine) >= count
        assert np.array_equal(np.sort(est[mine, c])[-count:], np.sort(est[:, c])[-count:])


def test_rescored_keeps_each_querys_exact_best_among_its_best_estimates() -> None:
    """Candidates beyond a query's ``want`` best estimates are not scored; among the rest the
    exact top ``take`` come back best first, with their exact similarities; a query with no
    candidate gets nothing."""
    rng = np.random.default_rng(9)
    x, queries = _unit(rng, 200, 16), _unit(rng, 3, 16)
    rows = np.concatenate([np.arange(0, 40), np.arange(50, 55)])
    owners = np.array([0] * 40 + [1] * 5)
    estimates = np.concatenate([np.arange(40)[::-1], np.arange(5)]).astype(np.int32)
    hits = scan.rescored(x, queries, rows, owners, estimates, want=10, take=4)
    first_ten = np.arange(0, 10)  # query 0's best estimates: rows 0-9
    best = first_ten[np.argsort(-(x[first_ten] @ queries[0]))[:4]]
    assert hits[0][0].tolist() == best.tolist()
    assert np.allclose(hits[0][1], x[best] @ queries[0])
    five = np.arange(50, 55)
    assert hits[1][0].tolist() == five[np.argsort(-(x[five] @ queries[1]))[:4]].tolist()
    assert len(hits[2][0]) == 0 and len(hits[2][1]) == 0
