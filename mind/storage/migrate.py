"""Apply the ordered migrations of :mod:`mind.storage.schema` to a mind file."""

from __future__ import annotations

import logging

from mind.constants import HASH_SEMANTICS, META_FIRST_RUN, META_HASH_SEMANTICS, META_SCHEMA_VERSION
from mind.errors import MigrationError
from mind.storage.db import Database
from mind.storage.schema import LATEST_VERSION, MIGRATIONS
from mind.storage.shown import shown
from mind.storage.sqlutil import split_statements
from mind.timeutil import SQL_NOW, now_iso

log = logging.getLogger(__name__)

_LEDGER = f"""CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at TEXT NOT NULL DEFAULT {SQL_NOW}
)"""


async def current_version(db: Database) -> int:
    exists = await db.fetchval(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_migrations'"
    )
    if not exists:
        return 0
    return int(await db.fetchval("SELECT MAX(version) FROM schema_migrations", default=0))


async def needs_migration(db: Database) -> bool:
    """The file is older than this code's schema (a reader must wait for the writer)."""
    return await current_version(db) < LATEST_VERSION


async def migrate(db: Database, *, target: int | None = None) -> list[int]:
    """Bring the file up to ``target`` (default: latest). Returns the versions applied."""
    goal = LATEST_VERSION if target is None else target
    version = await current_version(db)
    if goal <= version <= LATEST_VERSION:  # up to date: no write lock to take (another
        return []  # process may be importing into the file; a read does not wait for it)
    async with db.transaction():
        await db.execute(_LEDGER)
    version = await current_version(db)
    if version > LATEST_VERSION:
        raise MigrationError(
            f"{shown(db.path)} has schema version {version}, newer than this hive-mind "
            f"(knows up to {LATEST_VERSION}); upgrade hive-mind to open it"
        )
    applied: list[int] = []
    for migration in MIGRATIONS:
        if migration.version <= version or migration.version > goal:
            continue
        try:
            async with db.transaction():
                # another process may have applied it since we looked (BEGIN IMMEDIATE holds
                # the write lock now): check again inside the transaction
                if await current_version(db) >= migration.version:
                    continue
                for statement in split_statements(migration.sql):
                    await db.execute(statement)
                await db.execute(
                    "INSERT INTO schema_migrations(version, name) VALUES (?, ?)",
                    (migration.version, migration.name),
                )
                await db.execute(
                    "INSERT INTO meta(key, value) VALUES (?, ?) "
                    "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (META_SCHEMA_VERSION, str(migration.version)),
                )
                if migration.version == 1:
                    await db.executemany(
                        "INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)",
                        [(META_FIRST_RUN, now_iso()), (META_HASH_SEMANTICS, HASH_SEMANTICS)],
                    )
        except MigrationError:
            raise
        except Exception as exc:
            raise MigrationError(
                f"migration {migration.version} ({migration.name}) failed on "
                f"{shown(db.path)}: {exc}"
            ) from exc
        log.info("mind %s: applied migration %d (%s)", db.path, migration.version, migration.name)
        applied.append(migration.version)
    return applied
