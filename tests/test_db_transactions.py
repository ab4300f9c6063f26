"""Database.transaction on a real mind file: BEGIN IMMEDIATE, SAVEPOINT and RELEASE ride on the
next statement's round trip, and the SQL SQLite runs — its order, what commits, what rolls back
— is what the eager statements gave."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mind.errors import StorageError
from mind.storage.connection import driver
from mind.storage.db import Database

INSERT = "INSERT INTO meta(key, value) VALUES (?, 'x')"


class Boom(Exception):
    pass


@contextmanager
def trips(db: Database) -> Iterator[list[int]]:
    """Counts the round trips to the connection's thread inside the block."""
    count = [0]
    conn: Any = db._conn
    original = conn._execute

    async def counted(fn: Any, *args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return await original(fn, *args, **kwargs)

    conn._execute = counted
    try:
        yield count
    finally:
        conn._execute = original


async def traced(db: Database) -> list[str]:
    """Every statement SQLite runs on this connection from now on (its trace callback)."""
    seen: list[str] = []
    await db.run(lambda sync: sync._conn.set_trace_callback(seen.append))
    return seen


async def keys(db: Database) -> set[str]:
    return {r[0] for r in await db.fetchall("SELECT key FROM meta WHERE key LIKE 't-%'")}


async def test_nested_transaction_takes_two_trips_and_runs_the_same_sql(db: Database) -> None:
    seen = await traced(db)
    with trips(db) as count:
        async with db.transaction(), db.transaction():
            await db.execute(INSERT, ("t-a",))
    assert count[0] == 2  # BEGIN + SAVEPOINT + INSERT, then RELEASE + COMMIT (was five)
    assert [s if not s.startswith("INSERT INTO meta") else "INSERT" for s in seen] == [
        "BEGIN IMMEDIATE", "SAVEPOINT sp1", "INSERT", "RELEASE sp1", "COMMIT"]
    assert await keys(db) == {"t-a"}


async def test_a_transaction_running_nothing_never_begins(db: Database) -> None:
    seen = await traced(db)
    with trips(db) as count:
        async with db.transaction(), db.transaction(), db.transaction():
            pass
    assert count[0] == 0 and seen == []
    async with db.transaction():  # and leaves nothing held for the next one
        await db.execute(INSERT, ("t-b",))
    assert seen[0] == "BEGIN IMMEDIATE" and "SAVEPOINT" not in " ".join(seen)


async def test_a_failing_savepoint_rolls_back_alone(db: Database) -> None:
    async with db.transaction():
        await db.execute(INSERT, ("t-kept",))
        for name in ("t-first", "t-second"):  # two ops of a group commit, the second fails
            try:
                async with db.transaction():
                    await db.execute(INSERT, (name,))
                    async with db.transaction():  # released (held) before the failure
                        await db.execute(INSERT, (name + "-inner",))
                    if name == "t-second":
                        raise Boom
            except Boom:
                pass
        await db.execute(INSERT, ("t-after",))
    assert await keys(db) == {"t-kept", "t-first", "t-first-inner", "t-after"}


async def test_a_failure_before_any_statement_rolls_back_nothing(db: Database) -> None:
    seen = await traced(db)
    async with db.transaction():
        await db.execute(INSERT, ("t-c",))
        with pytest.raises(Boom):
            async with db.transaction():
                raise Boom
    assert not any(s.startswith(("ROLLBACK", "SAVEPOINT")) for s in seen)
    assert await keys(db) == {"t-c"}


async def test_an_outer_failure_commits_nothing_and_leaves_nothing_held(db: Database) -> None:
    with pytest.raises(Boom):
        async with db.transaction():
            async with db.transaction():
                await db.execute(INSERT, ("t-gone",))
            raise Boom  # a RELEASE was held: the rollback drops it
    assert not db.in_transaction
    seen = await traced(db)
    async with db.transaction():
        await db.execute(INSERT, ("t-next",))
    assert seen[0] == "BEGIN IMMEDIATE" and not any("RELEASE" in s for s in seen)
    assert await keys(db) == {"t-next"}


async def test_a_busy_write_lock_fails_the_first_statement_and_rolls_back(
        db: Database, tmp_path: Path) -> None:
    await db.execute("PRAGMA busy_timeout=50")
    # the same SQLite library as the mind's: two copies in one process do not see each
    # other's locks
    other = driver().connect(str(tmp_path / "test.mind"), isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another writer holds the lock
        with pytest.raises(StorageError, match=r"busy|locked"):
            async with db.transaction():
                await db.execute(INSERT, ("t-blocked",))
        assert not db.in_transaction
        other.execute("ROLLBACK")
    finally:
        other.close()
    async with db.transaction():
        await db.execute(INSERT, ("t-later",))
    assert await keys(db) == {"t-later"}


def committed_keys(path: str) -> set[str]:
    """The test keys another connection sees: what is committed."""
    conn = driver().connect(path)
    try:
        return {r[0] for r in conn.execute("SELECT key FROM meta WHERE key LIKE 't-%'")}
    finally:
        conn.close()


async def test_after_commit_runs_once_the_commit_is_visible_and_never_after_a_rollback(
        db: Database) -> None:
    seen: list[tuple[str, set[str]]] = []
    async with db.transaction():
        await db.execute(INSERT, ("t-kept",))
        db.after_commit(lambda: seen.append(("outer", committed_keys(db.path))))
        with pytest.raises(Boom):
            async with db.transaction():
                await db.execute(INSERT, ("t-undone",))
                db.after_commit(lambda: seen.append(("undone", set())))
                raise Boom
        async with db.transaction():
            await db.execute(INSERT, ("t-inner",))
            db.after_commit(lambda: seen.append(("inner", committed_keys(db.path))))
        assert seen == []  # nothing before the commit
    assert seen == [("outer", {"t-kept", "t-inner"}), ("inner", {"t-kept", "t-inner"})]
    seen.clear()
    with pytest.raises(Boom):
        async with db.transaction():
            await db.execute(INSERT, ("t-lost",))
            db.after_commit(lambda: seen.append(("lost", set())))
            raise Boom
    with pytest.raises(Boom):
        async with db.transaction():  # nothing ran: nothing began, the callback goes too
            db.after_commit(lambda: seen.append(("empty", set())))
            raise Boom
    async with db.transaction():
        await db.execute(INSERT, ("t-next",))
    assert seen == [] and "t-lost" not in committed_keys(db.path)
    db.after_commit(lambda: seen.append(("now", set())))  # outside a transaction: at once
    assert seen == [("now", set())]


async def test_a_failing_after_commit_callback_leaves_the_commit_and_the_others(
        db: Database, caplog: pytest.LogCaptureFixture) -> None:
    ran: list[str] = []

    def fail() -> None:
        raise RuntimeError("index gone")

    async with db.transaction():
        await db.execute(INSERT, ("t-stays",))
        db.after_commit(fail)
        db.after_commit(lambda: ran.append("second"))
    assert ran == ["second"] and "t-stays" in committed_keys(db.path)
    assert "after-commit callback failed" in caplog.text
