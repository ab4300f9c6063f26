from __future__ import annotations

from mind.frames.store import FrameStore
from mind.retrieval.reconcile import fts_consistent, reconcile_indexes
from mind.retrieval.vectors import VectorStore
from mind.storage.db import Database


async def test_fts_drift_is_detected_and_rebuilt(db: Database) -> None:
    frames = FrameStore(db)
    f = (await frames.create_i_frame("g", "needle in the haystack")).frame
    # simulate a crash-era bug: the FTS row vanished behind the triggers' back
    await db.execute(
        "INSERT INTO memory_frames_fts(memory_frames_fts, rowid, content) VALUES ('delete', ?, ?)",
        (f.id, f.content),
    )
    assert not await fts_consistent(db)
    result = await reconcile_indexes(db)
    assert result.fts_rebuilt
    assert await fts_consistent(db)
    rows = await db.fetchall(
        "SELECT rowid FROM memory_frames_fts WHERE memory_frames_fts MATCH 'needle'"
    )
    assert [r[0] for r in rows] == [f.id]
    assert not (await reconcile_indexes(db)).fts_rebuilt  # idempotent


async def test_orphans_removed_and_unindexed_requeued(db: Database) -> None:
    frames = FrameStore(db)
    vectors = VectorStore(db)
    await vectors.ensure_fingerprint("test", "t", 4)
    a = (await frames.create_i_frame("g", "a" * 50)).frame
    b = (await frames.create_i_frame("g", "b")).frame
    await vectors.upsert_frame_vectors([(a.id, [1.0, 0, 0, 0]), (b.id, [0, 1.0, 0, 0])])
    await db.execute("DELETE FROM pending_index")
    # orphans left by an old engine: vector rows with no frame
    await db.execute(
        "INSERT INTO memory_frames_vec(rowid, embedding) VALUES (777, ?)", (b"\x00" * 16,)
    )
    await db.execute(
        "INSERT INTO memory_frame_chunks_vec(rowid, embedding) VALUES (888, ?)", (b"\x00" * 16,)
    )
    await db.execute("DELETE FROM memory_frames_vec WHERE rowid = ?", (b.id,))  # b lost its vector
    result = await reconcile_indexes(db, chunk_min_chars=20)
    assert (result.orphan_vectors, result.orphan_chunk_vectors) == (1, 1)
    pending = sorted(r[0] for r in await db.fetchall("SELECT frame_id FROM pending_index"))
    assert pending == sorted([a.id, b.id])  # a: long but no chunks; b: no vector
    assert result.requeued == 2
    assert (await reconcile_indexes(db, chunk_min_chars=20)).requeued == 0
