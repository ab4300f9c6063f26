"""Round trips of a harvest source through the real driver into a real mind file: what was
written (sessions, frames) so adapter tests can assert the counts exactly."""

from __future__ import annotations

from pathlib import Path

from mind.embeddings.registry import EmbeddingConfig
from workers.harvest import HarvestOptions, harvest
from workers.harvest_summary import HarvestSummary
from workers.runtime import EmbeddedRuntime, RuntimeConfig


def runtime(tmp_path: Path) -> EmbeddedRuntime:
    return EmbeddedRuntime(RuntimeConfig(data_dir=tmp_path / "data",
                                         embedding=EmbeddingConfig(provider="test")))


async def import_path(rt: EmbeddedRuntime, source: str, path: Path,
                      **options: object) -> HarvestSummary:
    return await harvest(rt, "personal", source, path,
                         options=HarvestOptions(**options))  # type: ignore[arg-type]


async def stored(rt: EmbeddedRuntime, source: str) -> tuple[int, int]:
    """``(sessions, frames)`` the source wrote into the personal mind (sessions holding
    frames)."""
    db = (await rt.host.reader("personal")).db
    row = await db.fetchone(
        "SELECT count(DISTINCT gop_id), count(*) FROM memory_frames WHERE external_id LIKE ?",
        (f"{source}:%",))
    assert row is not None
    return int(row[0]), int(row[1])


async def contents(rt: EmbeddedRuntime, source: str) -> list[str]:
    db = (await rt.host.reader("personal")).db
    rows = await db.fetchall(
        "SELECT content FROM memory_frames WHERE external_id LIKE ? ORDER BY id", (f"{source}:%",))
    return [str(r[0]) for r in rows]
