"""The nightly maintenance fan-out on real Redis and a real host worker: per-mind compact,
reconcile and auto-sync re-harvest jobs with per-day ids (a second fire queues nothing new)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hive_mind.facade import HiveMind
from mind.embeddings.registry import EmbeddingConfig
from mind.mind import Mind
from mind.storage.db import Database
from queue_schemas.constants import host_queue
from tests.conftest import REDIS_URL
from workers.arq_worker import make_worker
from workers.distributed import host_settings, maintenance_fanout
from workers.queue import QueueConfig
from workers.runtime import RuntimeConfig

HOST = "cron1"


async def test_fanout_is_idempotent_per_day_and_the_host_runs_it(
    tmp_path: Path, redis: Any
) -> None:
    data = tmp_path / "data"
    notes = tmp_path / "notes.md"
    notes.write_text("# Garden\n\nWater the tomatoes on Tuesdays.\n")
    async with await HiveMind.open(data_dir=data, embedding_provider="test") as hm:
        await hm.create_workspace("Work")
        await hm.harvest("markdown", notes, auto_sync=True, sync_interval_hours=1)
    db = await Database.open(data / "personal.mind")  # make the source due
    await db.execute("UPDATE harvest_sources SET last_synced_at = '2020-01-01T00:00:00.000Z'")
    await db.close()
    notes.write_text("# Garden\n\nWater the tomatoes on Tuesdays.\n\n## Roses\n\nPrune in Feb.\n")

    runtime = RuntimeConfig(data_dir=data, embedding=EmbeddingConfig(provider="test"))
    queue = QueueConfig(redis_url=REDIS_URL, host_id=HOST)
    settings = host_settings(queue, runtime)
    worker = make_worker(settings, burst=True, poll_delay=0.05)
    ctx: dict[str, Any] = {"redis": redis}
    worker.ctx = ctx  # type: ignore[attr-defined]
    await settings.on_startup(ctx)  # type: ignore[attr-defined]
    try:
        first = await maintenance_fanout(ctx)
        assert first["enqueued"] == 6  # 2 minds × (compact, reconcile, harvest sync)
        assert await redis.zcard(host_queue(HOST)) == 6
        await maintenance_fanout(ctx)  # a double fire: same per-day ids, nothing new
        assert await redis.zcard(host_queue(HOST)) == 6
    finally:
        await settings.on_shutdown(ctx)  # type: ignore[attr-defined]
    await worker.main()
    await worker.close()
    assert await redis.zcard(host_queue(HOST)) == 0
    async with await Mind.open(data / "personal.mind", readonly=True) as mind:
        contents = [f.content for f in await mind.frames.get_recent(10)]
        assert any("Prune in Feb." in c for c in contents)  # the stale source was re-harvested
        run_rows = await mind.db.fetchall("SELECT status FROM harvest_runs")
        assert [r[0] for r in run_rows] == ["completed", "completed"]
    # the host recorded each job it applied: the day's claims say ok (the cron wrote enqueued)
    from workers.claims import ClaimStore
    from workers.schedule import ScheduleConfig
    from workers.scheduler import schedule_status

    day = next(d for d, _ in ClaimStore(data)._days())
    assert sorted(r["status"] for r in ClaimStore(data).records(day)) == ["ok"] * 6
    last = schedule_status(ScheduleConfig(), data,
                           minds=["personal", "workspace:work"])["last_runs"]
    assert (last["compact"]["minds"], last["compact"]["expected"], last["compact"]["ok"]) == (
        2, 2, 2)
