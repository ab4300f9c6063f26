from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from mind.errors import EmbeddingDimMismatchError, EmbeddingFingerprintError, VectorError
from mind.frames.model import NewFrame
from mind.frames.store import FrameStore
from mind.retrieval.vectors import ChunkSpan, VectorStore
from mind.storage.db import Database


@pytest.fixture
def vectors(db: Database) -> VectorStore:
    return VectorStore(db)


def unit(dim: int, hot: int) -> list[float]:
    v = [0.0] * dim
    v[hot] = 1.0
    return v


async def knn(db: Database, table: str, query: list[float], k: int = 3) -> list[int]:
    rows = await db.fetchall(
        f"SELECT rowid FROM {table} WHERE embedding MATCH ? AND k = ? ORDER BY distance",
        (np.asarray(query, dtype="<f4").tobytes(), k),
    )
    return [r[0] for r in rows]


async def test_fingerprint_recorded_then_matched(vectors: VectorStore) -> None:
    assert await vectors.fingerprint() is None
    assert not await vectors.tables_exist()
    assert await vectors.ensure_fingerprint("inprocess", "all-MiniLM-L6-v2", 384) == "recorded"
    assert await vectors.tables_exist()
    assert await vectors.ensure_fingerprint("inprocess", "all-MiniLM-L6-v2", 384) == "match"
    fp = await vectors.fingerprint()
    assert fp is not None and (fp.provider, fp.model, fp.dim) == (
        "inprocess",
        "all-MiniLM-L6-v2",
        384,
    )


async def test_dimension_mismatch_names_both_dims_and_the_fix(vectors: VectorStore) -> None:
    await vectors.ensure_fingerprint("inprocess", "all-MiniLM-L6-v2", 384)
    with pytest.raises(EmbeddingDimMismatchError) as err:
        await vectors.ensure_fingerprint("ollama", "nomic-embed-text", 768)
    assert "384" in str(err.value) and "768" in str(err.value)
    assert "hive-mind maintenance reembed" in str(err.value)
    assert err.value.stored["dim"] == 384 and err.value.runtime["dim"] == 768


async def test_same_dim_other_model_is_refused_not_mixed(vectors: VectorStore) -> None:  # f.15
    await vectors.ensure_fingerprint("inprocess", "all-MiniLM-L6-v2", 384)
    with pytest.raises(EmbeddingFingerprintError) as err:
        await vectors.ensure_fingerprint("mock", "deterministic-mock", 384)
    assert not isinstance(err.value, EmbeddingDimMismatchError)


async def test_upsert_is_delete_plus_insert(vectors: VectorStore, db: Database) -> None:
    frames = FrameStore(db)
    f = (await frames.create_i_frame("g", "vector me")).frame
    await vectors.ensure_fingerprint("test", "t", 8)
    assert await vectors.upsert_frame_vectors([(f.id, unit(8, 0))]) == 1
    assert await vectors.upsert_frame_vectors([(f.id, unit(8, 5))]) == 1
    assert await db.fetchval("SELECT COUNT(*) FROM memory_frames_vec") == 1
    blob = await db.fetchval("SELECT embedding FROM memory_frames_vec WHERE rowid = ?", (f.id,))
    stored = np.frombuffer(blob, dtype="<f4")
    assert stored[5] == 1.0 and stored[0] == 0.0
    assert await knn(db, "memory_frames_vec", unit(8, 5), 1) == [f.id]
    # vectors for frames that no longer exist are skipped, not stored as orphans
    assert await vectors.upsert_frame_vectors([(987654, unit(8, 1))]) == 0


@pytest.mark.parametrize(
    "bad",
    [[1.0] * 7, [1.0] * 9, [math.nan] + [0.0] * 7, [math.inf] + [0.0] * 7, [[1.0] * 8]],
)
async def test_vector_validation(vectors: VectorStore, db: Database, bad: list[float]) -> None:
    f = (await FrameStore(db).create_i_frame("g", "x")).frame
    await vectors.ensure_fingerprint("test", "t", 8)
    with pytest.raises(VectorError):
        await vectors.upsert_frame_vectors([(f.id, bad)])
    assert await db.fetchval("SELECT COUNT(*) FROM memory_frames_vec") == 0


async def test_upsert_before_fingerprint_is_a_clear_error(vectors: VectorStore) -> None:
    with pytest.raises(VectorError, match="fingerprint"):
        await vectors.upsert_frame_vectors([(1, unit(8, 0))])


async def test_update_and_delete_drop_vectors_and_chunks(
    vectors: VectorStore, db: Database
) -> None:
    frames = FrameStore(db)
    f = (await frames.create_i_frame("g", "original text")).frame
    keep = (await frames.create_i_frame("g", "unrelated")).frame
    await vectors.ensure_fingerprint("test", "t", 8)
    await vectors.upsert_frame_vectors([(f.id, unit(8, 1)), (keep.id, unit(8, 2))])
    spans = [ChunkSpan(0, "original", 0, 8), ChunkSpan(1, "text", 9, 13)]
    assert await vectors.replace_chunks(f.id, spans, [unit(8, 3), unit(8, 4)]) == 2
    assert (await vectors.counts())["chunk_vectors"] == 2
    await frames.update(f.id, content="rewritten text")  # no stale vector or chunk
    assert await db.fetchval("SELECT COUNT(*) FROM memory_frames_vec WHERE rowid = ?", (f.id,)) == 0
    assert await vectors.counts() == {"frame_vectors": 1, "chunks": 0, "chunk_vectors": 0}
    await vectors.upsert_frame_vectors([(f.id, unit(8, 1))])
    await vectors.replace_chunks(f.id, spans, [unit(8, 3), unit(8, 4)])
    await frames.delete(f.id)
    assert await vectors.counts() == {"frame_vectors": 1, "chunks": 0, "chunk_vectors": 0}
    assert await knn(db, "memory_frames_vec", unit(8, 3), 5) == [keep.id]


async def test_replace_chunks_replaces(vectors: VectorStore, db: Database) -> None:
    f = (await FrameStore(db).create_i_frame("g", "long text")).frame
    await vectors.ensure_fingerprint("test", "t", 8)
    await vectors.replace_chunks(
        f.id, [ChunkSpan(i, f"c{i}", i, i + 1) for i in range(3)], [unit(8, i) for i in range(3)]
    )
    await vectors.replace_chunks(f.id, [ChunkSpan(0, "only", 0, 4)], [unit(8, 7)])
    assert await vectors.counts() == {"frame_vectors": 0, "chunks": 1, "chunk_vectors": 1}
    with pytest.raises(VectorError):
        await vectors.replace_chunks(f.id, [ChunkSpan(0, "a", 0, 1)], [])


async def test_reset_rebuilds_tables_and_queues_everything(
    vectors: VectorStore, db: Database
) -> None:
    frames = FrameStore(db)
    ids = [(await frames.create_i_frame("g", f"frame {i}")).frame.id for i in range(3)]
    await db.execute("DELETE FROM pending_index")
    await vectors.ensure_fingerprint("test", "t", 8)
    await vectors.upsert_frame_vectors([(i, unit(8, 0)) for i in ids])
    assert await vectors.reset("inprocess", "all-MiniLM-L6-v2", 384) == 3
    fp = await vectors.fingerprint()
    assert fp is not None and fp.dim == 384
    assert await vectors.counts() == {"frame_vectors": 0, "chunks": 0, "chunk_vectors": 0}
    reasons = await db.fetchall("SELECT DISTINCT reason FROM pending_index")
    assert [r[0] for r in reasons] == ["reembed"]
    # what a re-embed stopped now would leave: the next one to the same model finishes it
    assert await vectors.unfinished("inprocess", "all-MiniLM-L6-v2", 384) == 3
    assert await vectors.unfinished("inprocess", "all-MiniLM-L6-v2", 768) == 0
    assert await vectors.unfinished("test", "t", 8) == 0
    await vectors.upsert_frame_vectors([(ids[0], [0.1] * 384)])
    assert (await vectors.counts())["frame_vectors"] == 1


async def _statement_steps(db: Database, work: Any) -> int:
    """SQLite VM steps (progress-handler calls) that ``work()`` runs on ``db``'s connection."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    await db.run(lambda sync: sync._conn.set_progress_handler(count, 1))
    try:
        await work()
    finally:
        await db.run(lambda sync: sync._conn.set_progress_handler(None, 1))
    return steps


async def test_vector_replace_does_not_scan_the_table(
        vectors: VectorStore, db: Database) -> None:
    """vec0 answers ``rowid IN (...)`` by visiting every row: a cognify batch's upsert then
    grew with the mind. Replacing a few vectors must cost the same VM steps in a mind ten times
    larger."""
    await vectors.ensure_fingerprint("test", "t", 8)
    frames = FrameStore(db)
    rng = np.random.default_rng(3)
    steps: list[int] = []
    ids: list[int] = []
    for size in (150, 1_500):
        saved = await frames.insert_many(
            [NewFrame("g", f"frame {len(ids) + i}") for i in range(size - len(ids))])
        new = [r.frame.id for r in saved]
        ids += new
        await vectors.upsert_frame_vectors([(i, rng.standard_normal(8)) for i in new])
        probe = ids[:8]
        replace = await _statement_steps(db, lambda p=probe: vectors.upsert_frame_vectors(
            [(i, rng.standard_normal(8)) for i in p]))
        steps.append(replace)
        assert await db.fetchval("SELECT COUNT(*) FROM memory_frames_vec") == size
    small, large = steps
    assert large < 2 * small, steps
