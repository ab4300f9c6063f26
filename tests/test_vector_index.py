"""The in-memory vector index (mind.retrieval.vector_index): append-only rows so a search can
read outside the lock, exact results against brute force after many updates, and masked rows
compacted (issue #14, "vector search without per-query copies, concurrent searches not
serialized")."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from mind.frames.model import NewFrame
from mind.frames.store import FrameStore
from mind.retrieval import vector_index
from mind.retrieval.vector_index import VectorIndex, _Matrix
from mind.retrieval.vectors import VectorStore, upsert_frame_vectors_sync
from mind.storage.db import Database

DIM = 16


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_a_snapshot_is_not_changed_by_later_updates_or_removals() -> None:
    rng = np.random.default_rng(1)
    m = _Matrix(DIM)
    first, second, newer = _unit(rng, 3)
    m.put(1, 1, first)
    m.put(2, 2, second)
    snap = m.snapshot()
    seen_vectors, seen_owners = snap.vectors.copy(), snap.owners.copy()
    m.put(1, 1, newer)  # an update: a new row, the old one masked
    m.remove(2)
    assert list(snap.keep) == [True, True]  # the snapshot still sees both rows live
    for _ in range(5000):  # growth reallocates; the snapshot keeps the old arrays
        m.put(100 + _, 100 + _, newer)
    assert np.array_equal(snap.vectors, seen_vectors) and np.array_equal(snap.owners, seen_owners)
    assert list(snap.keep) == [True, True]
    now = m.snapshot()
    assert list(now.keep[:3]) == [False, False, True]  # 1 moved to a new row, 2 removed
    assert list(now.owners[:3]) == [1, 2, 1]  # a removed row keeps its owner
    assert np.allclose(now.vectors[2], newer) and now.live == 1 + 5000


def test_an_index_of_no_file_holds_the_vectors_given_to_it(db: Database) -> None:
    rng = np.random.default_rng(3)
    x, queries = _unit(rng, 500), _unit(rng, 6)
    index = VectorIndex(None, DIM)
    index.add(np.arange(1, 301), x[:300])
    index.add(np.arange(301, 501), x[300:])
    assert index.size == 500
    for q, hits in zip(queries, index.search_many_blocking(queries, 5), strict=True):
        best = np.argsort(-(x @ q))[:5] + 1
        assert [f for f, _ in hits] == best.tolist()
    window = index.search_many_blocking(queries[:1], 3, window=100)[0]
    assert all(f > 400 for f, _ in window)
    with pytest.raises(vector_index.VectorError, match="shape"):
        index.add(np.arange(2), x[:3])
    with pytest.raises(vector_index.VectorError, match="reads its vectors from the mind file"):
        VectorIndex(db.path, DIM).add(np.arange(1, 3), x[:2])


async def test_search_stays_exact_through_updates_and_compacts(db: Database,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    saved = await FrameStore(db).insert_many([NewFrame("g", f"frame {i}") for i in range(300)])
    ids = [r.frame.id for r in saved]
    store = VectorStore(db)
    await store.ensure_fingerprint("test", "unit", DIM)
    truth = dict(zip(ids, _unit(rng, len(ids)), strict=True))
    await store.upsert_frame_vectors(list(truth.items()))
    index = VectorIndex(db.path, DIM)
    monkeypatch.setattr(vector_index, "MIN_DEAD_ROWS_TO_COMPACT", 50)
    try:
        for round_ in range(4):  # every round re-embeds every frame: updates, not inserts
            query = _unit(rng, 1)[0]
            got = await index.search(query, 10)
            sims = {fid: float(vec @ query) for fid, vec in truth.items()}
            want = sorted(sims.items(), key=lambda kv: -kv[1])[:10]
            assert [f for f, _ in got] == [f for f, _ in want], round_
            assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
            truth = dict(zip(ids, _unit(rng, len(ids)), strict=True))
            await store.upsert_frame_vectors(list(truth.items()))
        await index.refresh()
        assert index.size == len(ids)
        assert index._frames.dead() <= len(ids)  # masked rows were compacted by a reload
    finally:
        index.close()


async def _mind_with_vectors(db: Database, n: int, rng: np.random.Generator
                             ) -> tuple[VectorStore, dict[int, np.ndarray]]:
    saved = await FrameStore(db).insert_many([NewFrame(f"s{i // 50}", f"frame {i}")
                                              for i in range(n)])
    store = VectorStore(db)
    await store.ensure_fingerprint("test", "unit", DIM)
    truth = dict(zip([r.frame.id for r in saved], _unit(rng, n), strict=True))
    await store.upsert_frame_vectors(list(truth.items()))
    return store, truth


def _brute(truth: dict[int, np.ndarray], query: np.ndarray, k: int,
           allowed: set[int] | None = None) -> list[int]:
    sims = {f: float(v @ query) for f, v in truth.items() if allowed is None or f in allowed}
    return [f for f, _ in sorted(sims.items(), key=lambda kv: -kv[1])[:k]]


@pytest.mark.parametrize("quantize_min_rows", [10**9, 0])
async def test_filters_rank_only_the_allowed_frames(db: Database, quantize_min_rows: int) -> None:
    """A filter keeping few frames (scored on their rows alone) and one keeping most (masked
    inside the scan of every row), exact and through the quantized pass."""
    rng = np.random.default_rng(3)
    _, truth = await _mind_with_vectors(db, 2000, rng)
    index = VectorIndex(db.path, DIM, quantize_min_rows=quantize_min_rows)
    ids = sorted(truth)
    try:
        for allowed in (set(ids[100:130]), set(ids[::3]) | set(ids[1::3])):
            for query in _unit(rng, 5):
                got = await index.search(query, 10, sorted(allowed))
                assert {f for f, _ in got} <= allowed
                want = _brute(truth, query, 10, allowed)
                # the int8 pass re-scores 64 candidates a block exactly: the same top 10
                assert [f for f, _ in got] == want
                for f, sim in got:
                    assert sim == pytest.approx(float(truth[f] @ query), abs=1e-5)
        assert await index.search(_unit(rng, 1)[0], 10, []) == []
    finally:
        index.close()


def _count_calls(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """A list that grows by one at each call of ``int8_scan.<name>`` (which still runs)."""
    calls: list[int] = []
    real = getattr(vector_index.int8_scan, name)

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(vector_index.int8_scan, name, counted)
    return calls


async def test_a_large_mind_goes_through_the_quantized_pass_and_keeps_recall(
        db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(9)
    _, truth = await _mind_with_vectors(db, 3000, rng)
    monkeypatch.setattr(vector_index, "QUANTIZE_MIN_ROWS", 1000)
    calls = _count_calls(monkeypatch, "quantized")
    index = VectorIndex(db.path, DIM)
    try:
        found = 0
        for query in _unit(rng, 20):
            got = await index.search(query, 10)
            found += len({f for f, _ in got} & set(_brute(truth, query, 10)))
        assert calls and found / 200 >= 0.99
        # rows written after the codes were built are coded too: each new frame is found
        # first for a query equal to its own vector, and updates move a frame's codes along
        saved = await FrameStore(db).insert_many([NewFrame("late", f"late {i}")
                                                  for i in range(50)])
        late = dict(zip([r.frame.id for r in saved], _unit(rng, 50), strict=True))
        moved = dict(zip(list(truth)[:50], _unit(rng, 50), strict=True))
        store = VectorStore(db)
        await store.upsert_frame_vectors(list(late.items()) + list(moved.items()))
        before = len(calls)
        for fid, vec in (late | moved).items():
            got = await index.search(vec, 3)
            assert got[0][0] == fid and got[0][1] == pytest.approx(1.0, abs=1e-5)
        assert len(calls) - before == 100 and index._frames.codes is not None
    finally:
        index.close()


def test_codes_are_built_once_a_matrix_is_large_enough_and_follow_growth() -> None:
    rng = np.random.default_rng(3)
    m = _Matrix(DIM)
    m.put_many(np.arange(1, 11), np.arange(1, 11), _unit(rng, 10))
    assert m.codes is None and m.snapshot().codes is None
    m.quantize()
    assert m.codes is not None and m.scale is not None
    first = m.codes[:10].copy()
    m.quantize()  # once only: the scales stay those of the first rows
    assert np.array_equal(m.codes[:10], first)
    m.put_many(np.arange(11, 5011), np.arange(11, 5011), _unit(rng, 5000))  # growth
    snap = m.snapshot()
    assert snap.codes is not None and snap.codes.shape == (5010, DIM)
    inverse = (1.0 / m.scale).astype(np.float32)  # as encode computes it: same rounding
    want = np.clip(np.rint(snap.vectors * inverse), -127, 127) + 128  # every row, clipped
    assert np.array_equal(snap.codes, want.astype(np.uint8))
    assert np.array_equal(snap.codes[:10], first)


@pytest.mark.parametrize("quantize_min_rows", [0, 10**9])
async def test_many_queries_rank_as_exact_and_a_window_searches_only_the_newest_rows(
        db: Database, monkeypatch: pytest.MonkeyPatch, quantize_min_rows: int) -> None:
    """search_many (a cognify batch's links) ranks as exact search does, through the int8
    codes for all its queries at once where the matrix has them (candidates re-scored
    exactly), and ``window`` ranks only the most recently written rows: an older frame that is
    a query's best match overall is not returned, the best of the newest rows are."""
    rng = np.random.default_rng(12)
    _, truth = await _mind_with_vectors(db, 600, rng)
    ids = sorted(truth)
    queries = _unit(rng, 8)
    batched = _count_calls(monkeypatch, "quantized_many")
    index = VectorIndex(db.path, DIM, quantize_min_rows=quantize_min_rows)
    try:
        whole = await index.search_many(queries, 5)
        recent = await index.search_many(queries, 5, window=200)
        newest = set(ids[-200:])
        for q, got_whole, got_recent in zip(queries, whole, recent, strict=True):
            assert [f for f, _ in got_whole] == _brute(truth, q, 5)
            assert [f for f, _ in got_recent] == _brute(truth, q, 5, newest)
            for f, sim in got_recent:
                assert sim == pytest.approx(float(truth[f] @ q), abs=1e-5)
        assert any(set(f for f, _ in w) - newest for w in whole)  # the window made a difference
        assert bool(batched) == (quantize_min_rows == 0)  # 600 rows: codes only when told
        with pytest.raises(ValueError):
            index.search_many_blocking(queries, 5, np.array(ids[:3]), 200)
    finally:
        index.close()


@pytest.mark.parametrize("quantize_min_rows", [10**9, 0])
async def test_a_floor_keeps_just_the_matches_that_reach_it(db: Database,
                                                            quantize_min_rows: int) -> None:
    """``floor`` (the link search's threshold) returns, per query, exactly the exact top k
    that reach it (fewer, or none, when few frames are that alike), by the exact scan's
    shortcut and through the quantized pass alike; its similarities are the exact ones."""
    rng = np.random.default_rng(21)
    _, truth = await _mind_with_vectors(db, 900, rng)
    queries = np.concatenate([_unit(rng, 6), np.stack([truth[f] for f in sorted(truth)[:6]])])
    index = VectorIndex(db.path, DIM, quantize_min_rows=quantize_min_rows)
    try:
        floor = 0.6
        got = await index.search_many(queries, 6, window=500, floor=floor)
        newest = set(sorted(truth)[-500:])
        counts = []
        for q, hits in zip(queries, got, strict=True):
            want = [f for f in _brute(truth, q, 6, newest) if float(truth[f] @ q) >= floor]
            assert [f for f, _ in hits] == want
            assert all(sim == pytest.approx(float(truth[f] @ q), abs=1e-5) for f, sim in hits)
            counts.append(len(hits))
        assert min(counts) < 6 and max(counts) > 0  # the floor cut some lists, not all
    finally:
        index.close()


async def test_committed_vectors_handed_over_are_taken_without_reading_them_back(
        db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer's hand-off (after its commit) is what the next refresh uses for those frames;
    a frame changed again later without one is read from vec0; a hand-off before the first
    load, or of a write that never committed, changes nothing."""
    rng = np.random.default_rng(30)
    store, truth = await _mind_with_vectors(db, 300, rng)
    ids = sorted(truth)
    index = VectorIndex(db.path, DIM)
    index.handoff(1, [(ids[5], _unit(rng, 1)[0].tobytes())])  # before the first load: ignored
    try:
        await index.refresh()
        reads: list[int] = []
        real = index._reload_one

        def counted(conn: object, kind: str, item_id: int) -> None:
            reads.append(item_id)
            real(conn, kind, item_id)

        monkeypatch.setattr(index, "_reload_one", counted)
        new = dict(zip(ids[:40], _unit(rng, 40), strict=True))
        async with db.transaction():
            written = await db.run(
                lambda s: upsert_frame_vectors_sync(s, list(new.items()), DIM))
            db.after_commit(lambda: index.handoff(written.first_seq, written.rows))
        with pytest.raises(RuntimeError):
            async with db.transaction():  # rolled back: its hand-off never happens
                lost = await db.run(
                    lambda s: upsert_frame_vectors_sync(s, [(ids[50], _unit(rng, 1)[0])], DIM))
                db.after_commit(lambda: index.handoff(lost.first_seq, lost.rows))
                raise RuntimeError("rolled back")
        later = _unit(rng, 1)[0]
        await store.upsert_frame_vectors([(ids[0], later)])  # no hand-off
        truth.update(new)
        truth[ids[0]] = later
        queries = np.stack([truth[f] for f in ids[:40:4]])
        got = await index.search_many(queries, 5)
        assert reads == [ids[0]]  # only the frame whose latest change was not handed over
        for q, hits in zip(queries, got, strict=True):
            assert [f for f, _ in hits] == _brute(truth, q, 5)
            assert all(sim == pytest.approx(float(truth[f] @ q), abs=1e-5) for f, sim in hits)
        assert index._handed == {}  # taken: nothing kept past the refresh
    finally:
        index.close()


async def test_concurrent_searches_return_what_serial_ones_do(db: Database) -> None:
    rng = np.random.default_rng(4)
    await _mind_with_vectors(db, 3000, rng)
    queries = _unit(rng, 24)
    for quantize_min_rows in (10**9, 0):
        index = VectorIndex(db.path, DIM, quantize_min_rows=quantize_min_rows)
        try:
            serial = [await index.search(q, 10) for q in queries]
            together = await asyncio.gather(*(index.search(q, 10) for q in queries))
            assert list(together) == serial
        finally:
            index.close()


async def test_searches_stay_consistent_while_vectors_are_written(db: Database) -> None:
    """A writer replaces vectors while searches run in threads: every result's similarity is
    that of a vector the frame had at some point, never a half-written or foreign row, and
    the final search is exact."""
    rng = np.random.default_rng(6)
    store, truth = await _mind_with_vectors(db, 1500, rng)
    history = {f: [v] for f, v in truth.items()}
    index = VectorIndex(db.path, DIM)
    queries = _unit(rng, 8)
    done = False

    async def searcher() -> list[tuple[int, list[tuple[int, float]]]]:
        seen = []
        while not done:
            i = len(seen) % len(queries)
            seen.append((i, await index.search(queries[i], 10)))
        return seen

    try:
        tasks = [asyncio.create_task(searcher()) for _ in range(3)]
        ids = sorted(truth)
        for round_ in range(10):
            chosen = ids[round_ * 100:(round_ + 1) * 100]
            fresh = dict(zip(chosen, _unit(rng, len(chosen)), strict=True))
            await store.upsert_frame_vectors(list(fresh.items()))
            for f, v in fresh.items():
                history[f].append(v)
                truth[f] = v
            await asyncio.sleep(0.01)
        done = True
        results = [r for t in tasks for r in await t]
        assert len(results) > 10
        for i, hits in results:
            assert len(hits) == 10
            for f, sim in hits:
                assert any(abs(sim - float(v @ queries[i])) < 1e-5 for v in history[f]), (i, f)
        for query in queries:
            assert [f for f, _ in await index.search(query, 10)] == _brute(truth, query, 10)
    finally:
        index.close()


async def test_codes_for_batches_come_before_the_quantized_pass_for_one_query(
        db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """From BATCH_CODES_MIN_ROWS on, the int8 codes exist and a batch of queries scans them,
    while one query stays exact until QUANTIZE_MIN_ROWS."""
    rng = np.random.default_rng(21)
    _, truth = await _mind_with_vectors(db, 600, rng)
    monkeypatch.setattr(vector_index, "BATCH_CODES_MIN_ROWS", 500)
    one, many = (_count_calls(monkeypatch, name) for name in ("quantized", "quantized_many"))
    index = VectorIndex(db.path, DIM)
    try:
        query = _unit(rng, 1)[0]
        assert [f for f, _ in await index.search(query, 5)] == _brute(truth, query, 5)
        assert (one, many) == ([], []) and index._frames.codes is not None
        queries = _unit(rng, 6)
        for q, got in zip(queries, await index.search_many(queries, 5), strict=True):
            assert [f for f, _ in got] == _brute(truth, q, 5)
        assert (len(one), len(many)) == (0, 1)
    finally:
        index.close()


@pytest.mark.slow
async def test_a_block_that_fills_while_serving_is_packed_beside_the_searches(
        db: Database) -> None:
    """A load packs every full block before its first search (a server's warm-up); a block
    that fills later is packed on a thread of its own while searches score its rows by their
    int8 codes, then through the packed block."""
    from mind.retrieval.vector_scan import BLOCK_ROWS

    rng = np.random.default_rng(21)
    store, truth = await _mind_with_vectors(db, BLOCK_ROWS + 100, rng)
    index = VectorIndex(db.path, DIM)
    try:
        await index.warm()
        assert index.status()["blocks_4bit"] == 1 and index.status()["scan"] == "quantized"
        queries = _unit(rng, 10)

        async def recall_of_searches() -> float:
            found = 0
            for query in queries:
                got = await index.search(query, 10)
                found += len({f for f, _ in got} & set(_brute(truth, query, 10)))
            return found / (10 * len(queries))

        half = BLOCK_ROWS // 2  # below a full reload's threshold: rows appended, codes kept
        for _ in range(2):
            saved = await FrameStore(db).insert_many([NewFrame("more", f"more {i}")
                                                      for i in range(half)])
            more = dict(zip([r.frame.id for r in saved], _unit(rng, half), strict=True))
            await store.upsert_frame_vectors(list(more.items()))
            truth |= more
            assert await recall_of_searches() >= 0.99  # the second block may be packing
        deadline = time.monotonic() + 60
        while index.status()["blocks_4bit"] < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)  # the second block packs in the background
        assert index.status()["blocks_4bit"] == 2
        assert await recall_of_searches() >= 0.99
    finally:
        index.close()
