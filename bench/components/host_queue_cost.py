"""A distributed host's CPU per frame through Redis and arq, with no worker beside it.

``bench/components/host_replay.py`` replays a host's writes in-process; this runs the real
``hive-mind serve`` (distributed mode, its own data dir, Redis db 13 by default) and sends it
what the ingest bench's host gets: the 20 ``save_frames`` ops of 4,000 chat turns, then, once
they are committed, an ``apply_index`` op for each cognify job the host queued (read back from
Redis; the real extraction's entities, random unit vectors), eight at a time every 0.25 s as a
worker's batch delivers them. It prints the serve process's CPU a frame for each phase
(/proc) and its CPU a second while idle (its queue polls). The difference to host_replay's
figures is what arq's job handling, the payload's decoding and validation and the process's
other tasks cost beside the writes. A shortcut figure: no encoder competes for the cores.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.components.host_queue_cost [--redis-url redis://127.0.0.1:6379/13]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from arq.connections import ArqRedis
from bench.common import ROOT, machine
from bench.product.ingest import MODEL_CACHE, chat, cpu_seconds, index_op, save_ops, wait_ready

from mind.mind import Mind
from queue_schemas import jobs
from queue_schemas.codec import deserialize
from queue_schemas.constants import COGNIFY_QUEUE
from workers.distributed import enqueue_op
from workers.queue import connect

FRAMES = 4000
DELIVERED_TOGETHER = 8
IDLE_SECONDS = 5.0


async def settled(path: Path, frames: int, pending: int) -> None:
    """Until the mind holds ``frames`` frames and at most ``pending`` await indexing."""
    while True:
        await asyncio.sleep(0.05)
        try:
            async with await Mind.open(path, readonly=True) as mind:
                written = await mind.db.fetchval("SELECT COUNT(*) FROM memory_frames")
                left = await mind.outbox.count()
        except Exception:
            continue
        if written >= frames and left <= pending:
            return


async def queued_jobs(redis: ArqRedis) -> list[jobs.CognifyJob]:
    """The cognify jobs waiting in Redis (no worker takes them here)."""
    out = []
    for job_id in await redis.zrange(COGNIFY_QUEUE, 0, -1):
        key = b"arq:job:" + (job_id if isinstance(job_id, bytes) else job_id.encode())
        payload = deserialize(await redis.get(key))["a"][0]
        job = jobs.parse_job(dict(payload))
        if isinstance(job, jobs.CognifyJob):
            out.append(job)
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--redis-url", default=os.environ.get(
        "HIVE_MIND_BENCH_REDIS_URL", "redis://127.0.0.1:6379/13"))
    args = parser.parse_args()
    print(f"_{machine()}_")
    texts = chat(random.Random(11), FRAMES)
    redis = await connect(args.redis_url)
    await redis.flushdb()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "HIVE_MIND_DATA_DIR": str(data),
               "HIVE_MIND_REDIS_URL": args.redis_url, "HIVE_MIND_HOST_ID": "bench",
               "HIVE_MIND_EMBEDDING_PROVIDER": "inprocess",
               "HIVE_MIND_EMBEDDING_BACKEND": "onnx-int8",
               "HIVE_MIND_EMBEDDING_CACHE_DIR": str(MODEL_CACHE)}
        log = data / "serve.log"
        with log.open("wb") as out:
            proc = subprocess.Popen([sys.executable, "-m", "hive_mind", "serve"], cwd=ROOT,
                                    env=env, stdout=out, stderr=out)
        try:
            await wait_ready([log], [("host bench up", "loaded on")], [proc])
            await asyncio.sleep(1.0)
            mind = data / "personal.mind"
            start = cpu_seconds(proc.pid)
            for op in save_ops(texts):
                await enqueue_op(redis, "bench", op)
            await settled(mind, FRAMES, FRAMES)
            saves = cpu_seconds(proc.pid) - start
            rng = np.random.default_rng(0)
            index = [index_op(job.items, rng, "idx-" + job.op_id)
                     for job in await queued_jobs(redis)]
            await asyncio.sleep(0.5)
            start, began = cpu_seconds(proc.pid), time.perf_counter()
            for k in range(0, len(index), DELIVERED_TOGETHER):
                for op in index[k: k + DELIVERED_TOGETHER]:
                    await enqueue_op(redis, "bench", op)
                await asyncio.sleep(0.25)
            await settled(mind, FRAMES, 0)
            applied, took = cpu_seconds(proc.pid) - start, time.perf_counter() - began
            start = cpu_seconds(proc.pid)
            await asyncio.sleep(IDLE_SECONDS)
            idle = (cpu_seconds(proc.pid) - start) / IDLE_SECONDS
            print(f"serve CPU a frame: save_frames {saves / FRAMES * 1000:.3f} ms, apply_index "
                  f"{applied / FRAMES * 1000:.3f} ms ({len(index)} ops over {took:.1f} s, idle "
                  f"polls included: ~{idle * took / FRAMES * 1000:.3f}); idle "
                  f"{idle * 1000:.1f} ms CPU a second")
        finally:
            proc.terminate()
            proc.wait(30)
            await redis.flushdb()
            await redis.aclose()


if __name__ == "__main__":
    asyncio.run(main())
