"""The keyword index's context column (mind.storage.search_context): source date in words and the previous
turn, kept true by triggers when turns are edited or forgotten."""

from __future__ import annotations

import sqlite3

import pytest

from mind.frames.model import NewFrame
from mind.frames.store import FrameStore
from mind.storage.db import Database
from mind.storage.search_context import CONTEXT_CHARS, context_sql, date_words_sql, frame_context


async def context(db: Database, frame_id: int) -> str:
    return str(await db.fetchval("SELECT search_context FROM memory_frames WHERE id = ?",
                                 (frame_id,)))


async def fts(db: Database, query: str) -> list[int]:
    rows = await db.fetchall("SELECT rowid FROM memory_frames_fts WHERE memory_frames_fts "
                             "MATCH ? ORDER BY rowid", (query,))
    return [r[0] for r in rows]


async def consistent(db: Database) -> None:
    await db.execute("INSERT INTO memory_frames_fts(memory_frames_fts, rank) "
                     "VALUES ('integrity-check', 1)")


@pytest.mark.parametrize(("ts", "words"), [
    ("2023-05-08T13:56:00.000Z", "Monday 8 May 2023"),
    ("2024-02-29T23:59:59Z", "Thursday 29 February 2024"),
    ("1999-12-31 10:00:00", "Friday 31 December 1999"),
    ("not a time", ""),
])
def test_date_words(ts: str, words: str) -> None:
    db = sqlite3.connect(":memory:")
    assert db.execute(f"SELECT {date_words_sql('?1')}", (ts,)).fetchone()[0] == words


async def test_turns_carry_the_previous_turn_and_their_date(db: Database) -> None:
    store = FrameStore(db)
    question = "Melanie: What was the poetry reading about? " + "x" * 400
    saved = await store.insert_many([
        NewFrame("harvest:chat:1", question, created_at="2023-05-08T13:56:00Z"),
        NewFrame("harvest:chat:1", "Caroline: Transgender stories, told as poems.",
                 created_at="2023-05-08T13:56:30Z"),
        NewFrame("save:2023-05-08", "loose note one", created_at="2023-05-08T10:00:00Z"),
        NewFrame("save:2023-05-08", "loose note two", created_at="2023-05-08T11:00:00Z"),
    ])
    q, answer, note1, note2 = (r.frame.id for r in saved)
    assert await context(db, q) == "Monday 8 May 2023"
    assert await context(db, answer) == "Monday 8 May 2023\n" + question[:CONTEXT_CHARS]
    # the daily bucket of loose saves is not a conversation: date words only
    assert await context(db, note2) == "Monday 8 May 2023"
    # the answer is found by the question's words and by its month, by keyword
    assert await fts(db, "poetry") == [q, answer]
    assert set(await fts(db, "may")) == {q, answer, note1, note2}
    await consistent(db)


async def test_next_turn_follows_edits_and_forgets(db: Database) -> None:
    store = FrameStore(db)
    a, b, c = (r.frame.id for r in await store.insert_many([
        NewFrame("harvest:chat:2", "Sam: Bob Smith is secretly married to Carol White.",
                 created_at="2023-06-01T09:00:00Z"),
        NewFrame("harvest:chat:2", "Alex: No way, really?", created_at="2023-06-01T09:01:00Z"),
        NewFrame("harvest:chat:2", "Sam: Yes.", created_at="2023-06-01T09:02:00Z"),
    ]))
    assert await fts(db, "secretly") == [a, b]
    await store.update(a, content="Sam: Bob Smith plays chess with Carol White.")
    assert "chess" in await context(db, b) and "secretly" not in await context(db, b)
    assert await fts(db, "secretly") == []
    assert await fts(db, "chess") == [a, b]
    assert await store.delete(a)
    # the forgotten turn leaves nothing in the index: not its own row, not its neighbour's
    assert await context(db, b) == "Thursday 1 June 2023"
    assert await fts(db, "chess") == []
    assert "really" in await context(db, c)  # later turns keep their own context
    await consistent(db)


@pytest.mark.parametrize("gop", ["harvest:chat:9", "save:2023-05-08"])
@pytest.mark.parametrize("ts", ["2023-05-08T13:56:00.000Z", "2024-02-29T23:59:59.999Z",
                                "0999-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z"])
@pytest.mark.parametrize("previous", [None, "short", "é" * 299 + "ü€x", "a\nb" * 200])
def test_the_writer_builds_the_value_sql_builds(gop: str, ts: str, previous: str | None) -> None:
    """The batch writer's context (Python, from the batch) is what the migration and the
    triggers compute in SQL (from the previous row): the same text in every case."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE memory_frames(gop_id TEXT, t INTEGER, content TEXT)")
    if previous is not None:
        db.execute("INSERT INTO memory_frames VALUES (?, 0, ?)", (gop, previous))
    sql = db.execute(f"SELECT {context_sql('?1', '?2', '?3')}", (ts, gop, 1)).fetchone()[0]
    assert frame_context(ts, gop, previous) == sql


async def test_a_batch_continues_the_sessions_last_turn(db: Database) -> None:
    """The first turn of a batch takes its context from the session's last stored turn; a turn
    that deduplicates to an existing frame is no turn of the session."""
    store = FrameStore(db)
    await store.insert_many([NewFrame("harvest:chat:3", "Ann: Where did you hike?")])
    saved = await store.insert_many([
        NewFrame("harvest:chat:3", "Ben: The Dolomites, in July.", external_id="m2"),
        NewFrame("harvest:chat:3", "Ben: The Dolomites, in July.", external_id="m2"),
        NewFrame("harvest:chat:3", "Ann: Lovely!", external_id="m3"),
    ])
    first, again, last = saved
    assert again.frame.id == first.frame.id and not again.created
    assert (await context(db, first.frame.id)).endswith("\nAnn: Where did you hike?")
    assert (await context(db, last.frame.id)).endswith("\nBen: The Dolomites, in July.")
    await consistent(db)
