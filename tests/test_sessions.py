from __future__ import annotations

import re
from dataclasses import asdict

import pytest

from mind.errors import NotFoundError, ValidationError
from mind.frames.sessions import Session, SessionStore, new_gop_id
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
    assert asdict(session)["gop_id"] == session.gop_id


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


async def test_project_id_validated(store: SessionStore) -> None:
    with pytest.raises(ValidationError):
        await store.create("")
    with pytest.raises(ValidationError):
        await store.create("a\x00")


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
    assert [s.gop_id for s in await store.list()] == ["e", "d", "c", "b", "a"]
    assert [s.gop_id for s in await store.list(limit=2)] == ["e", "d"]
    assert [s.gop_id for s in await store.list(status="closed")] == ["b"]
    assert [s.gop_id for s in await store.list(limit=1, status="active")] == ["e"]
    with pytest.raises(ValidationError):
        await store.list(status="open")
    with pytest.raises(ValidationError):
        await store.list(limit=0)


