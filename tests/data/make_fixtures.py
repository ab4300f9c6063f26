"""Regenerate the committed fixture files (run by hand; tests only read them).

``mind_v1.mind`` is a mind file as schema version 1 wrote it, with a few frames, so the
migration test upgrades a real older file rather than one the current code just made.
``schema.sql`` is the exact schema of a fully migrated mind.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mind.storage.db import Database
from mind.storage.migrate import migrate

HERE = Path(__file__).parent


async def schema_dump(db: Database) -> str:
    rows = await db.fetchall(
        "SELECT type, name, tbl_name, sql FROM sqlite_master "
        "WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name"
    )
    return "\n".join(f"-- {r[0]} {r[1]} on {r[2]}\n{r[3]};" for r in rows) + "\n"


async def main() -> None:
    v1 = HERE / "mind_v1.mind"
    for suffix in ("", "-wal", "-shm"):
        Path(str(v1) + suffix).unlink(missing_ok=True)
    db = await Database.open(v1)
    await migrate(db, target=1)
    async with db.transaction():
        await db.execute("INSERT INTO sessions(gop_id, project_id) VALUES ('session:old', 'proj')")
        for t, text in enumerate(["Alice owns the billing service.", "It moved to Postgres."]):
            await db.execute(
                "INSERT INTO memory_frames(frame_type, gop_id, t, content, created_at, recorded_at,"
                " last_accessed, content_hash) VALUES ('I', 'session:old', ?, ?, "
                "'2025-01-02T03:04:05.000Z', '2025-01-02T03:04:05.000Z', "
                "'2025-01-02T03:04:05.000Z', 'x')",
                (t, text),
            )
        await db.execute(
            "INSERT INTO memory_frames_fts(rowid, content) SELECT id, content FROM memory_frames"
        )
        await db.execute("INSERT INTO identity(id, name, role) VALUES (1, 'Old Bot', 'helper')")
    await db.fetchall("PRAGMA wal_checkpoint(TRUNCATE)")
    await db.fetchall("PRAGMA journal_mode=DELETE")
    await db.close()

    fresh = HERE / "_fresh.mind"
    fresh.unlink(missing_ok=True)
    db = await Database.open(fresh)
    await migrate(db)
    (HERE / "schema.sql").write_text(await schema_dump(db))
    await db.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(fresh) + suffix).unlink(missing_ok=True)


if __name__ == "__main__":
    asyncio.run(main())
