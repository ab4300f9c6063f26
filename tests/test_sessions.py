from __future__ import annotations

import asyncio
import re

import pytest

from mind.errors import InvalidIdError, NotFoundError, ValidationError
from mind.frames.sessions import Session, SessionStore, new_gop_id, validate_id
from mind.storage.db import Database

GOP_RE = re.compile(r"^session:\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z:[0-9a-z]{6}$")


@pytest.fixture
def store(db: Database) -> SessionStore:
    return SessionStore(db)


async def test_create(store: SessionStore) -> None:
    session = await store.create()
    assert isinstance(session, Session)
    assert GOP_RE.match(session.gop_id)
    assert session.status == "active" and session.project_id is None
    assert session.ended_at is None and session.summary is None
    assert session.gop_id.split(":", 1)[1].startswith(session.started_at)
    other = await store.create("proj")
    assert other.project_id == "proj" and other.gop_id != session.gop_id
    assert await store.get_by_gop_id(session.gop_id) == session
    assert await store.get_by_gop_id("nope") is None
    assert session.to_dict()["gop_id"] == session.gop_id


def test_new_gop_id_shape() -> None:
    ids = {new_gop_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(GOP_RE.match(i) for i in ids)


async def test_close(store: SessionStore) -> None:
    session = await store.create()
    closed = await store.close(session.gop_id, "did things")
    assert closed.status == "closed" and closed.summary == "did things"
    assert closed.ended_at is not None and closed.ended_at >= session.started_at
    again = await store.close(session.gop_id)
    assert again.summary == "did things" and again.ended_at == closed.ended_at
    with pytest.raises(NotFoundError, match="Session nope not found"):
        await store.close("nope")


async def test_close_without_summary(store: SessionStore) -> None:
    session = await store.create()
    assert (await store.close(session.gop_id)).summary is None


async def test_archive(store: SessionStore) -> None:
    session = await store.create()
    archived = await store.archive(session.gop_id)
    assert archived.status == "archived" and archived.ended_at is None
    still = await store.close(session.gop_id, "late summary")
    assert still.status == "archived" and still.summary == "late summary"
    with pytest.raises(NotFoundError):
        await store.archive("nope")


async def test_ensure_is_idempotent(store: SessionStore, db: Database) -> None:
    first = await store.ensure("harvest:chatgpt", project_id="p", summary="import")
    assert (first.gop_id, first.project_id, first.summary) == ("harvest:chatgpt", "p", "import")
    assert first.status == "active"
    second = await store.ensure("harvest:chatgpt", project_id="other", summary="changed")
    assert second == first
    await store.close("harvest:chatgpt")
    assert (await store.ensure("harvest:chatgpt")).status == "closed"
    assert await db.fetchval("SELECT COUNT(*) FROM sessions") == 1


@pytest.mark.parametrize(
    "bad",
    ["", "   ", "x" * 201, "a\x00b", "line\nbreak", "tab\there", "del\x7f", 42, None],
)
async def test_ensure_validates_gop_id(store: SessionStore, db: Database, bad: object) -> None:
    with pytest.raises(ValidationError):
        await store.ensure(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidIdError):
        validate_id(bad)
    assert await db.fetchval("SELECT COUNT(*) FROM sessions") == 0


async def test_ensure_accepts_edge_ids(store: SessionStore) -> None:
    for gop in ["x" * 200, "mcp:2026-01-01", "ingest:url:2026-01-01", "Zürich 会話 🐝"]:
        assert (await store.ensure(gop)).gop_id == gop


async def test_project_id_validated(store: SessionStore) -> None:
    with pytest.raises(ValidationError):
        await store.create("")
    with pytest.raises(ValidationError):
        await store.ensure_active("a\x00")
    with pytest.raises(ValidationError):
        await store.ensure("g", summary=5)  # type: ignore[arg-type]


async def test_ensure_many(store: SessionStore, db: Database) -> None:
    await store.ensure("conv:1")
    created = await store.ensure_many(["conv:1", "conv:2", "conv:3", "conv:2"], project_id="h")
    assert created == 2
    assert await store.ensure_many(["conv:1", "conv:2", "conv:3"]) == 0
    assert await store.ensure_many([]) == 0
    assert (await store.get_by_gop_id("conv:3")).project_id == "h"  # type: ignore[union-attr]
    assert (await store.get_by_gop_id("conv:1")).project_id is None  # type: ignore[union-attr]
    assert await db.fetchval("SELECT COUNT(*) FROM sessions") == 3


async def test_ensure_many_validates_before_writing(store: SessionStore, db: Database) -> None:
    with pytest.raises(ValidationError):
        await store.ensure_many(["ok:1", "bad\x00"])
    assert await db.fetchval("SELECT COUNT(*) FROM sessions") == 0


async def test_ensure_many_bulk(store: SessionStore, db: Database) -> None:
    gops = (f"conv:{i}" for i in range(5000))
    assert await store.ensure_many(gops) == 5000
    assert await db.fetchval("SELECT COUNT(*) FROM sessions") == 5000


async def test_ensure_active(store: SessionStore) -> None:
    first = await store.ensure_active()
    assert await store.ensure_active() == first
    mine = await store.ensure_active("p1")
    assert mine.project_id == "p1" and mine.gop_id != first.gop_id
    assert await store.ensure_active("p1") == mine
    # without a project: the newest active session of any project
    assert await store.ensure_active() == mine
    await store.close(mine.gop_id)
    assert await store.ensure_active() == first
    replacement = await store.ensure_active("p1")
    assert replacement.gop_id != mine.gop_id and replacement.status == "active"


async def test_ensure_active_picks_newest(store: SessionStore, db: Database) -> None:
    await db.executemany(
        "INSERT INTO sessions (gop_id, project_id, started_at) VALUES (?, 'p', ?)",
        [
            ("old", "2026-01-01T00:00:00.000Z"),
            ("new-a", "2026-02-01T00:00:00.000Z"),
            ("new-b", "2026-02-01T00:00:00.000Z"),
        ],
    )
    assert (await store.ensure_active("p")).gop_id == "new-b"  # started_at DESC, id DESC


async def test_reads(store: SessionStore, db: Database) -> None:
    await db.executemany(
        "INSERT INTO sessions (gop_id, project_id, status, started_at) VALUES (?, ?, ?, ?)",
        [
            ("a", "p", "active", "2026-01-01T00:00:00.000Z"),
            ("b", "p", "closed", "2026-01-02T00:00:00.000Z"),
            ("c", "q", "active", "2026-01-03T00:00:00.000Z"),
            ("d", "p", "archived", "2026-01-04T00:00:00.000Z"),
            ("e", None, "active", "2026-01-05T00:00:00.000Z"),
        ],
    )
    assert [s.gop_id for s in await store.get_by_project("p")] == ["d", "b", "a"]
    assert await store.get_by_project("none") == []
    assert [s.gop_id for s in await store.get_active()] == ["e", "c", "a"]
    assert [s.gop_id for s in await store.get_active("p")] == ["a"]
    assert [s.gop_id for s in await store.list()] == ["e", "d", "c", "b", "a"]
    assert [s.gop_id for s in await store.list(limit=2)] == ["e", "d"]
    assert [s.gop_id for s in await store.list(status="closed")] == ["b"]
    assert [s.gop_id for s in await store.list(limit=1, status="active")] == ["e"]
    with pytest.raises(ValidationError):
        await store.list(status="open")
    with pytest.raises(ValidationError):
        await store.list(limit=0)


async def test_ensure_active_concurrent_one_connection(store: SessionStore, db: Database) -> None:
    sessions = await asyncio.gather(*(store.ensure_active() for _ in range(20)))
    assert len({s.gop_id for s in sessions}) == 1
    assert await db.fetchval("SELECT COUNT(*) FROM sessions WHERE status = 'active'") == 1


async def test_ensure_active_concurrent_per_project(store: SessionStore, db: Database) -> None:
    calls = [store.ensure_active(f"p{i % 4}") for i in range(20)]
    sessions = await asyncio.gather(*calls)
    assert len({s.gop_id for s in sessions}) == 4
    assert await db.fetchval("SELECT COUNT(*) FROM sessions") == 4


async def test_ensure_active_concurrent_two_connections(db: Database) -> None:
    other = await Database.open(db.path)
    try:
        stores = [SessionStore(db), SessionStore(other)]
        calls = [store.ensure_active() for store in stores for _ in range(20)]
        sessions = await asyncio.gather(*calls)
        assert len({s.gop_id for s in sessions}) == 1
        assert await db.fetchval("SELECT COUNT(*) FROM sessions WHERE status = 'active'") == 1
        assert await other.fetchval("SELECT COUNT(*) FROM sessions") == 1
    finally:
        await other.close()


async def test_ensure_concurrent_same_name(db: Database) -> None:
    other = await Database.open(db.path)
    try:
        stores = [SessionStore(db), SessionStore(other)]
        calls = [store.ensure("mcp:2026-01-01") for store in stores for _ in range(10)]
        sessions = await asyncio.gather(*calls)
        assert len({s.id for s in sessions}) == 1
        assert await db.fetchval("SELECT COUNT(*) FROM sessions") == 1
    finally:
        await other.close()
