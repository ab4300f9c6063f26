from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mind.errors import ConfigurationError, StorageError
from mind.frames.store import FrameStore
from mind.storage import connection
from mind.storage.db import Database
from mind.storage.migrate import migrate


async def test_pragmas_and_extensions(db: Database) -> None:
    assert (await db.fetchval("PRAGMA journal_mode")).lower() == "wal"
    assert await db.fetchval("PRAGMA foreign_keys") == 1
    assert await db.fetchval("PRAGMA synchronous") == 1  # NORMAL
    assert await db.fetchval("PRAGMA busy_timeout") == connection.BUSY_TIMEOUT_MS
    assert str(await db.fetchval("SELECT vec_version()")).startswith("v0.1")


def test_driver_can_load_extensions() -> None:
    conn = connection.driver().connect(":memory:")
    try:
        assert hasattr(conn, "enable_load_extension")
    finally:
        conn.close()
    assert connection.driver().sqlite_version_info >= connection.MIN_SQLITE  # FTS5 secure-delete


def test_missing_driver_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    connection.driver.cache_clear()
    monkeypatch.setattr(connection, "_usable", lambda module: False)
    try:
        with pytest.raises(ConfigurationError, match=r"pysqlite3-binary\s+or sqlean\.py"):
            connection.driver()
    finally:
        connection.driver.cache_clear()


def test_missing_fts5_is_a_clear_error() -> None:
    class NoFts:
        def execute(self, sql: str) -> None:
            raise RuntimeError("no such module: fts5")

    with pytest.raises(ConfigurationError, match="FTS5"):
        connection._check_fts5(NoFts())


def test_missing_vec_is_a_clear_error() -> None:
    class NoExt:
        def enable_load_extension(self, flag: bool) -> None:
            raise RuntimeError("not authorized")

    with pytest.raises(ConfigurationError, match="sqlite-vec"):
        connection._load_vec(NoExt())


async def test_unopenable_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot open"):
        await Database.open(tmp_path / "missing-dir" / "x.mind")


async def test_reader_is_read_only(tmp_path: Path) -> None:
    path = tmp_path / "m.mind"
    writer = await Database.open(path)
    await migrate(writer)
    reader = await Database.open(path, readonly=True)
    try:
        with pytest.raises(StorageError):
            await reader.execute("INSERT INTO sessions(gop_id) VALUES ('x')")
    finally:
        await reader.close()
        await writer.close()


async def test_two_readers_beside_a_writer_in_wal(tmp_path: Path) -> None:
    """Readers see only committed data and never block (or get blocked by) the writer."""
    path = tmp_path / "m.mind"
    writer = await Database.open(path)
    await migrate(writer)
    readers = [await Database.open(path, readonly=True) for _ in range(2)]
    frames = FrameStore(writer)
    try:
        await frames.create_i_frame("g", "committed before")
        async with writer.transaction():
            await writer.execute(
                "INSERT INTO memory_frames(frame_type, gop_id, t, content, created_at, recorded_at,"
                " last_accessed, content_hash) VALUES ('I','g',99,'uncommitted','x','x','x','h')"
            )
            # the write lock is held: readers still answer, and see only committed rows
            counts = await asyncio.gather(
                *(r.fetchval("SELECT COUNT(*) FROM memory_frames") for r in readers)
            )
            assert counts == [1, 1]
        counts = await asyncio.gather(
            *(r.fetchval("SELECT COUNT(*) FROM memory_frames") for r in readers)
        )
        assert counts == [2, 2]

        stop = asyncio.Event()

        async def read_loop(reader: Database) -> int:
            seen = 0
            while not stop.is_set():
                n = await reader.fetchval("SELECT COUNT(*) FROM memory_frames")
                assert n >= seen  # monotone: never a torn or rolled-back view
                seen = n
                await asyncio.sleep(0)
            return int(seen)

        tasks = [asyncio.create_task(read_loop(r)) for r in readers]
        for i in range(50):
            await frames.create_i_frame("g", f"concurrent note {i}")
        stop.set()
        results = await asyncio.gather(*tasks)
        assert all(n <= 52 for n in results)
        assert await readers[0].fetchval("SELECT COUNT(*) FROM memory_frames") == 52
    finally:
        for r in readers:
            await r.close()
        await writer.close()


async def test_a_file_that_is_not_a_database_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "personal.mind"
    path.write_bytes(b"this is not a SQLite database" * 100)
    with pytest.raises(StorageError, match="is not a readable mind file") as caught:
        await connection.connect(path)
    message = str(caught.value)  # named by its mind, never by the server's path (#45)
    assert "the personal mind file" in message and str(tmp_path) not in message
    assert "FTS5" not in message
