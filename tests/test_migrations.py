from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from mind.errors import MigrationError
from mind.frames.store import FrameStore
from mind.identity import IdentityLayer
from mind.storage.db import Database
from mind.storage.migrate import current_version, migrate
from mind.storage.schema import LATEST_VERSION, MIGRATIONS
from tests.data.make_fixtures import schema_dump

DATA = Path(__file__).parent / "data"


async def test_fresh_file_gets_every_migration_and_meta(tmp_path: Path) -> None:
    db = await Database.open(tmp_path / "m.mind")
    try:
        assert await migrate(db) == [m.version for m in MIGRATIONS]
        assert await migrate(db) == []  # idempotent
        assert await current_version(db) == LATEST_VERSION
        meta = {r[0]: r[1] for r in await db.fetchall("SELECT key, value FROM meta")}
        assert meta["schema_version"] == str(LATEST_VERSION)
        assert meta["content_hash_semantics"] == "hm-stripped"
        assert meta["first_run_at"].endswith("Z")
        ledger = await db.fetchall("SELECT version, name FROM schema_migrations ORDER BY version")
        assert [r[0] for r in ledger] == [m.version for m in MIGRATIONS]
    finally:
        await db.close()


async def test_exact_schema_after_migration(db: Database) -> None:
    assert await schema_dump(db) == (DATA / "schema.sql").read_text()


async def test_older_file_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.mind"
    shutil.copy(DATA / "mind_v1.mind", path)
    db = await Database.open(path)
    try:
        assert await current_version(db) == 1
        assert await migrate(db) == list(range(2, LATEST_VERSION + 1))
        assert await schema_dump(db) == (DATA / "schema.sql").read_text()
        frames = FrameStore(db)
        old = await frames.get_gop_frames("session:old")
        assert [f.content for f in old] == [
            "Alice owns the billing service.",
            "It moved to Postgres.",
        ]
        # v8 back-filled the keyword context and rebuilt the index from it: the second turn is
        # found by the first one's words and by its date in words
        contexts = [r[0] for r in await db.fetchall(
            "SELECT search_context FROM memory_frames ORDER BY t")]
        assert contexts == ["Thursday 2 January 2025",
                            "Thursday 2 January 2025\nAlice owns the billing service."]
        hits = await db.fetchall(
            "SELECT rowid FROM memory_frames_fts WHERE memory_frames_fts MATCH 'alice' "
            "ORDER BY rowid")
        assert [r[0] for r in hits] == [old[0].id, old[1].id]
        await db.execute("INSERT INTO memory_frames_fts(memory_frames_fts, rank) "
                         "VALUES ('integrity-check', 1)")
        assert (await IdentityLayer(db).get()).name == "Old Bot"
        # the upgraded file works with the new layers: the stale-index trigger of v3 fires
        await db.execute("DELETE FROM pending_index")
        await frames.update(old[0].id, content="Bob owns the billing service.")
        assert await db.fetchval("SELECT reason FROM pending_index") == "content_changed"
        new = await frames.create_p_frame("session:old", "and then to Aurora")
        assert new.t == 2 and new.base_frame_id == old[1].id
    finally:
        await db.close()


async def test_partial_upgrade_target(tmp_path: Path) -> None:
    db = await Database.open(tmp_path / "m.mind")
    try:
        assert await migrate(db, target=2) == [1, 2]
        assert (
            await db.fetchval("SELECT 1 FROM sqlite_master WHERE name='memory_frame_chunks'")
            is None
        )
        assert await migrate(db) == list(range(3, LATEST_VERSION + 1))
    finally:
        await db.close()


async def test_file_from_newer_version_is_refused(tmp_path: Path) -> None:
    db = await Database.open(tmp_path / "m.mind")
    try:
        await migrate(db)
        await db.execute(
            "INSERT INTO schema_migrations(version, name) VALUES (?, 'future')",
            (LATEST_VERSION + 1,),
        )
        with pytest.raises(MigrationError, match="newer"):
            await migrate(db)
    finally:
        await db.close()


async def test_failed_migration_rolls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mind.storage import migrate as migrate_mod
    from mind.storage.schema import Migration

    broken = (
        *MIGRATIONS,
        Migration(LATEST_VERSION + 1, "broken", "CREATE TABLE ok_table(x); SELEKT nonsense;"),
    )
    monkeypatch.setattr(migrate_mod, "MIGRATIONS", broken)
    monkeypatch.setattr(migrate_mod, "LATEST_VERSION", LATEST_VERSION + 1)
    db = await Database.open(tmp_path / "m.mind")
    try:
        with pytest.raises(MigrationError, match="broken"):
            await migrate(db)
        assert await current_version(db) == LATEST_VERSION
        assert await db.fetchval("SELECT 1 FROM sqlite_master WHERE name='ok_table'") is None
    finally:
        await db.close()


async def test_concurrent_first_opens_migrate_once(tmp_path: Path) -> None:
    """Several connections (as several processes do) migrating one new file at once: each
    migration is applied exactly once, nobody fails with "table … already exists"."""
    path = tmp_path / "race.mind"
    dbs = [await Database.open(path) for _ in range(4)]
    try:
        applied = await asyncio.gather(*(migrate(db) for db in dbs))
        assert sorted(v for run in applied for v in run) == list(range(1, LATEST_VERSION + 1))
        assert await current_version(dbs[0]) == LATEST_VERSION
    finally:
        for db in dbs:
            await db.close()
