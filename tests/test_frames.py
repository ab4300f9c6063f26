from __future__ import annotations

import asyncio

import pytest

from mind.errors import InvalidIdError, InvalidTimestampError, NotFoundError, ValidationError
from mind.frames.content_hash import hash_frame_content
from mind.frames.model import NewFrame
from mind.frames.store import FrameStore
from mind.storage.db import Database
from vocabulary.limits import MAX_FRAME_CHARS


@pytest.fixture
def frames(db: Database) -> FrameStore:
    return FrameStore(db)


async def fts_ids(db: Database, term: str) -> list[int]:
    rows = await db.fetchall(
        "SELECT rowid FROM memory_frames_fts WHERE memory_frames_fts MATCH ? ORDER BY rowid",
        (f'"{term}"',),
    )
    return [r[0] for r in rows]


async def test_i_frame_gets_per_session_t_and_outbox_row(frames: FrameStore, db: Database) -> None:
    a = await frames.create_i_frame("g1", "first thought")
    b = await frames.create_i_frame("g1", "second thought")
    c = await frames.create_i_frame("g2", "other session")
    assert (a.frame.t, b.frame.t, c.frame.t) == (0, 1, 0)
    assert a.created and b.created and c.created
    pending = await db.fetchall("SELECT frame_id, reason FROM pending_index ORDER BY frame_id")
    assert [tuple(r) for r in pending] == [
        (a.frame.id, "new"),
        (b.frame.id, "new"),
        (c.frame.id, "new"),
    ]
    stored = await frames.get(a.frame.id)
    assert stored is not None and stored.content == "first thought"
    assert stored.created_at.endswith("Z") and "T" in stored.created_at
    assert stored.recorded_at == stored.created_at


async def test_dedup_is_global_by_index_and_strips_hm_prefix(frames: FrameStore) -> None:
    first = await frames.create_i_frame("g1", "The deploy runs at noon.")
    # far more than a 500-frame scan window would see
    await frames.insert_many([NewFrame("g1", f"filler {i}") for i in range(700)])
    dup = await frames.create_i_frame(
        "g2", "[hm session:abc src:hook event:turn]   The deploy runs at noon.  "
    )
    assert not dup.created
    assert dup.frame.id == first.frame.id
    assert dup.frame.access_count == 1  # post-touch value is returned
    stored = await frames.get(first.frame.id)
    assert stored is not None and stored.access_count == 1


async def test_duplicate_with_higher_importance_upgrades(frames: FrameStore) -> None:
    first = await frames.create_i_frame("g", "Budget is 10k", importance="normal")
    again = await frames.create_i_frame("g", "Budget is 10k", importance="critical")
    assert again.upgraded and again.frame.importance == "critical"
    lower = await frames.create_i_frame("g", "Budget is 10k", importance="temporary")
    assert not lower.upgraded and lower.frame.importance == "critical"
    stored = await frames.get(first.frame.id)
    assert stored is not None and stored.importance == "critical" and stored.access_count == 2


async def test_dedup_within_one_batch(frames: FrameStore) -> None:
    res = await frames.insert_many(
        [NewFrame("g", "same"), NewFrame("g", "same", importance="important"), NewFrame("g", "x")]
    )
    assert [r.created for r in res] == [True, False, True]
    assert res[0].frame.id == res[1].frame.id
    assert await frames.count() == 2
    stored = await frames.get(res[0].frame.id)
    assert stored is not None and stored.importance == "important"


async def test_a_save_dedups_against_saved_frames_not_imported_ones(
    frames: FrameStore, db: Database
) -> None:
    imported = await frames.insert_many(
        [NewFrame("harvest:chat:1", "Lunch is at noon.", external_id="chat:1:m1", dedup=False)])
    saved = await frames.create_i_frame("g", "Lunch is at noon.")
    assert saved.created and saved.frame.id != imported[0].frame.id
    again = await frames.create_i_frame("g2", "Lunch is at noon.")
    assert not again.created and again.frame.id == saved.frame.id
    # the content-hash index holds only frames without an external id; the lookup uses it
    plan = await db.fetchall(
        "EXPLAIN QUERY PLAN SELECT content_hash, MAX(id) FROM memory_frames WHERE content_hash "
        "IN (?) AND external_id IS NULL GROUP BY content_hash", (saved.frame.content_hash,))
    assert "idx_frames_hash" in plan[0][3]


async def test_external_ids_make_reimport_idempotent(frames: FrameStore) -> None:
    items = [NewFrame("conv-1", "ok", external_id=f"chatgpt:m{i}", dedup=False) for i in range(3)]
    first = await frames.insert_many(items)
    assert all(r.created for r in first)
    assert len({r.frame.id for r in first}) == 3  # identical text, distinct messages
    again = await frames.insert_many(items)
    assert [r.created for r in again] == [False, False, False]
    assert [r.frame.id for r in again] == [r.frame.id for r in first]
    assert await frames.count() == 3


async def test_created_at_override_is_strict_and_normalized(frames: FrameStore) -> None:
    res = await frames.create_i_frame("g", "imported", created_at="2021-03-04T05:06:07+02:00")
    assert res.frame.created_at == "2021-03-04T03:06:07.000Z"
    assert res.frame.recorded_at > res.frame.created_at
    for bad in ("2021-03-04", "2021-03-04 05:06:07", "yesterday", "2021-13-04T05:06:07Z"):
        with pytest.raises(InvalidTimestampError):
            await frames.create_i_frame("g", f"bad {bad}", created_at=bad)


async def test_p_and_b_frames_and_state(frames: FrameStore) -> None:
    i1 = (await frames.create_i_frame("g", "state v1")).frame
    p1 = await frames.create_p_frame("g", "delta a")
    assert p1.base_frame_id == i1.id
    p2 = await frames.create_p_frame("g", "delta b", base_frame_id=i1.id)
    i2 = (await frames.create_i_frame("g", "state v2")).frame
    p3 = await frames.create_p_frame("g", "delta c")
    assert p3.base_frame_id == i2.id
    latest = await frames.get_latest_i_frame("g")
    assert latest is not None and latest.id == i2.id
    iframe, pframes = await frames.reconstruct_state("g")
    assert iframe is not None and iframe.id == i2.id and [p.id for p in pframes] == [p3.id]
    assert [f.id for f in await frames.get_gop_frames("g")] == [i1.id, p1.id, p2.id, i2.id, p3.id]
    b = await frames.create_b_frame("g", "links v1 and v2", i2.id, [i1.id, i2.id])
    assert b.content == "links v1 and v2"
    assert await frames.get_b_frame_references(b.id) == [i1.id, i2.id]
    with pytest.raises(ValidationError):
        await frames.create_p_frame("empty-session", "no base anywhere")
    with pytest.raises(NotFoundError):
        await frames.create_p_frame("g", "bad base", base_frame_id=99999)
    with pytest.raises(NotFoundError):
        await frames.create_b_frame("g", "bad ref", i2.id, [424242])


async def test_p_frame_attaches_to_i_frame_earlier_in_batch(frames: FrameStore) -> None:
    res = await frames.insert_many(
        [
            NewFrame("s", "root"),
            NewFrame("s", "d1", frame_type="P"),
            NewFrame("s", "d2", frame_type="P"),
        ]
    )
    assert [r.frame.base_frame_id for r in res] == [None, res[0].frame.id, res[0].frame.id]
    assert [r.frame.t for r in res] == [0, 1, 2]


@pytest.mark.parametrize(
    "content",
    ["", "   \n", "bin\x00ary", "x" * (MAX_FRAME_CHARS + 1), "bad \ud800 surrogate"],
)
async def test_bad_content_is_rejected_and_nothing_written(
    frames: FrameStore, content: str
) -> None:
    with pytest.raises(ValidationError):
        await frames.insert_many([NewFrame("g", "good one"), NewFrame("g", content)])
    assert await frames.count() == 0


@pytest.mark.parametrize("gop", ["", "a\x00b", "x" * 201, "tab\tid"])
async def test_bad_session_ids_rejected(frames: FrameStore, gop: str) -> None:
    with pytest.raises(InvalidIdError):
        await frames.create_i_frame(gop, "content")


async def test_enum_fields_validated(frames: FrameStore) -> None:
    with pytest.raises(ValidationError):
        await frames.create_i_frame("g", "x", importance="urgent")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        await frames.create_i_frame("g", "x", source="twitter")  # type: ignore[arg-type]
    ok = await frames.create_i_frame("g", "team note", source="team_sync")  # the CHECK agrees with the type
    assert ok.frame.source == "team_sync"


async def test_update_keeps_fts_consistent_and_requeues(frames: FrameStore, db: Database) -> None:
    f = (await frames.create_i_frame("g", "the zebra crossing")).frame
    await db.execute("DELETE FROM pending_index")
    updated = await frames.update(f.id, content="the giraffe crossing", importance="important")
    assert updated.content_hash == hash_frame_content("the giraffe crossing")
    assert updated.importance == "important"
    assert await fts_ids(db, "zebra") == []
    assert await fts_ids(db, "giraffe") == [f.id]
    reason = await db.fetchval("SELECT reason FROM pending_index WHERE frame_id = ?", (f.id,))
    assert reason == "content_changed"
    await db.execute("DELETE FROM pending_index")
    await frames.update(f.id, importance="critical")  # no content change → no re-index
    assert await db.fetchval("SELECT COUNT(*) FROM pending_index") == 0
    with pytest.raises(NotFoundError):
        await frames.update(9999, content="x")


async def test_delete_cascades_everything(frames: FrameStore, db: Database) -> None:
    i1 = (await frames.create_i_frame("g", "alpha base")).frame
    p1 = await frames.create_p_frame("g", "beta delta")
    other = (await frames.create_i_frame("g", "gamma other")).frame
    b = await frames.create_b_frame("g", "bridge", other.id, [i1.id, other.id])
    await db.execute(
        "INSERT INTO knowledge_entities(entity_type, name, normalized_name) VALUES ('x','A','a')"
    )
    await db.execute("INSERT INTO kg_entity_frames(entity_id, frame_id) VALUES (1, ?)", (i1.id,))
    await db.execute(
        "INSERT INTO memory_frame_chunks(frame_id, chunk_idx, content, char_start, char_end) "
        "VALUES (?, 0, 'alpha', 0, 5)",
        (i1.id,),
    )
    assert await frames.delete(i1.id)
    assert not await frames.delete(i1.id)
    assert await frames.get(i1.id) is None
    assert await fts_ids(db, "alpha") == []
    p_after = await frames.get(p1.id)
    assert p_after is not None and p_after.base_frame_id is None
    assert await frames.get_b_frame_references(b.id) == [other.id]
    for table, col in (
        ("kg_entity_frames", "frame_id"),
        ("memory_frame_chunks", "frame_id"),
        ("pending_index", "frame_id"),
    ):
        assert await db.fetchval(f"SELECT COUNT(*) FROM {table} WHERE {col} = ?", (i1.id,)) == 0


async def test_recent_frames(frames: FrameStore) -> None:
    await frames.create_i_frame("g", "may first", created_at="2024-05-01T00:00:00Z")
    await frames.create_i_frame("g", "may first late", created_at="2024-05-01T23:59:59.999Z")
    await frames.create_i_frame("g", "may second", created_at="2024-05-02T00:00:00Z")
    await frames.create_i_frame("g", "april", created_at="2024-04-30T23:59:59Z")
    recent = await frames.get_recent(2)
    assert [f.content for f in recent] == ["april", "may second"]


async def test_stats_and_touch(frames: FrameStore) -> None:
    a = (await frames.create_i_frame("g", "a", importance="critical")).frame
    await frames.create_p_frame("g", "b")
    await frames.touch([a.id, a.id])
    stats = await frames.get_stats()
    assert stats == {
        "total": 2,
        "by_type": {"I": 1, "P": 1},
        "by_importance": {"critical": 1, "normal": 1},
    }
    stored = await frames.get(a.id)
    assert stored is not None and stored.access_count == 2


async def test_metadata_round_trip(frames: FrameStore) -> None:
    meta = {"source": "chatgpt", "speaker": "Zoë", "nested": {"n": 1}}
    f = (await frames.create_i_frame("g", "hello", metadata=meta)).frame
    stored = await frames.get(f.id)
    assert stored is not None and stored.metadata == meta
    updated = await frames.update(f.id, metadata={"k": "v"})
    assert updated.metadata == {"k": "v"}


async def test_concurrent_writers_on_one_connection_keep_t_gap_free(frames: FrameStore) -> None:
    async def writer(n: int) -> None:
        for i in range(20):
            await frames.create_i_frame("shared", f"writer {n} note {i}")

    await asyncio.gather(*(writer(n) for n in range(5)))
    ts = [f.t for f in await frames.get_gop_frames("shared")]
    assert ts == list(range(100))


async def test_bulk_inserted_frames_are_searchable_and_fts_consistent(
    frames: FrameStore, db: Database
) -> None:
    from mind.retrieval.reconcile import fts_consistent

    await frames.create_i_frame("g", "existing zebra")
    res = await frames.insert_many([NewFrame(f"s{i % 3}", f"note {i} about zebra") for i in range(50)])
    assert len(await fts_ids(db, "zebra")) == 51
    assert res[-1].frame.id in await fts_ids(db, "zebra")
    assert await fts_consistent(db)
