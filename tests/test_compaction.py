from __future__ import annotations

from mind.frames.compaction import compact
from mind.frames.model import NewFrame
from mind.frames.store import FrameStore
from mind.retrieval.vectors import ChunkSpan, VectorStore
from mind.storage.db import Database
from mind.timeutil import days_ago_iso


async def age(db: Database, frame_id: int, days: float) -> None:
    await db.execute(
        "UPDATE memory_frames SET recorded_at = ? WHERE id = ?", (days_ago_iso(days), frame_id)
    )


async def test_prunes_old_temporary_and_deprecated_by_recorded_time(db: Database) -> None:
    frames = FrameStore(db)
    old_tmp = (await frames.create_i_frame("g", "old temp", importance="temporary")).frame
    new_tmp = (await frames.create_i_frame("g", "new temp", importance="temporary")).frame
    old_dep = (await frames.create_i_frame("g", "old dep", importance="deprecated")).frame
    mid_dep = (await frames.create_i_frame("g", "mid dep", importance="deprecated")).frame
    old_normal = (await frames.create_i_frame("g", "old normal")).frame
    await age(db, old_tmp.id, 31)
    await age(db, old_dep.id, 91)
    await age(db, mid_dep.id, 60)
    await age(db, old_normal.id, 400)
    result = await compact(db)
    assert (result.temporary_pruned, result.deprecated_pruned) == (1, 1)
    left = {f.id for f in await frames.get_recent(100)}
    assert left == {new_tmp.id, mid_dep.id, old_normal.id}


async def test_historical_imports_are_never_pruned(db: Database) -> None:  # f.6
    frames = FrameStore(db)
    res = await frames.insert_many(
        [
            NewFrame(
                "conv",
                "from 2019",
                importance="temporary",
                source="import",
                created_at="2019-01-01T00:00:00Z",
                external_id="x:1",
                dedup=False,
            ),
            NewFrame(
                "conv", "hook capture", importance="temporary", created_at="2019-01-01T00:00:00Z"
            ),
        ]
    )
    # source time is old, but the mind learned them just now: nothing is old enough
    assert (await compact(db)).temporary_pruned == 0
    for r in res:
        await age(db, r.frame.id, 365)
    assert (await compact(db)).temporary_pruned == 1  # the hook capture; the import stays
    assert await frames.get(res[0].frame.id) is not None


async def test_merges_long_p_frame_runs_and_refreshes_indexes(db: Database) -> None:  # f.5
    frames = FrameStore(db)
    vectors = VectorStore(db)
    await vectors.ensure_fingerprint("test", "t", 4)
    iframe = (await frames.create_i_frame("g", "base state")).frame
    pids = [(await frames.create_p_frame("g", f"delta {i}")).id for i in range(12)]
    await vectors.upsert_frame_vectors([(fid, [1.0, 0, 0, 0]) for fid in [iframe.id, *pids]])
    await vectors.replace_chunks(pids[0], [ChunkSpan(0, "delta 0", 0, 7)], [[0, 1.0, 0, 0]])
    await db.execute("DELETE FROM pending_index")
    result = await compact(db)
    assert result.pframes_merged == 7
    merged = await frames.get(iframe.id)
    assert merged is not None
    assert merged.content == "\n---\n".join(["base state", *(f"delta {i}" for i in range(7))])
    remaining = [f.id for f in await frames.get_p_frames_since_last_i("g")]
    assert remaining == pids[7:]
    assert await db.fetchval("SELECT COUNT(*) FROM memory_frames_vec WHERE rowid = ?", (iframe.id,)) == 0  # stale vector
    assert (
        await db.fetchval("SELECT reason FROM pending_index WHERE frame_id = ?", (iframe.id,))
        == "content_changed"
    )
    counts = await vectors.counts()
    assert counts == {"frame_vectors": 5, "chunks": 0, "chunk_vectors": 0}
    hits = await db.fetchall(
        "SELECT rowid FROM memory_frames_fts WHERE memory_frames_fts MATCH '\"delta\"'"
    )
    assert sorted(r[0] for r in hits) == sorted([iframe.id, *pids[7:]])


async def test_short_runs_and_imported_runs_are_not_merged(db: Database) -> None:
    frames = FrameStore(db)
    await frames.create_i_frame("short", "base")
    for i in range(10):
        await frames.create_p_frame("short", f"d{i}")
    items = [NewFrame("conv", "first", source="import", external_id="c:0", dedup=False)]
    items += [
        NewFrame("conv", f"turn {i}", frame_type="P", source="import", external_id=f"c:{i + 1}")
        for i in range(20)
    ]
    await frames.insert_many(items)
    assert (await compact(db)).pframes_merged == 0
    assert await frames.count() == 11 + 21
