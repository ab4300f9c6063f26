"""The in-memory vector index (mind.retrieval.vector_index): append-only rows so a search can
read outside the lock, exact results against brute force after many updates, and masked rows
compacted (issue #14, "vector search without per-query copies, concurrent searches not
serialized")."""

from __future__ import annotations

import numpy as np
import pytest

from mind.frames.model import NewFrame
from mind.frames.store import FrameStore
from mind.retrieval import vector_index
from mind.retrieval.vector_index import VectorIndex, _Matrix
from mind.retrieval.vectors import VectorStore
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
    for _ in range(5000):  # growth reallocates; the snapshot keeps the old arrays
        m.put(100 + _, 100 + _, newer)
    assert np.array_equal(snap.vectors, seen_vectors) and np.array_equal(snap.owners, seen_owners)
    now = m.snapshot()
    assert list(now.owners[:3]) == [-1, -1, 1]  # 1 moved to a new row, 2 removed
    assert np.allclose(now.vectors[2], newer) and now.live == 1 + 5000


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
