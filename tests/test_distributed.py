"""The distributed mode with real processes and a real Redis: a mind host and cognify workers.

Reliability acceptance of issue #4: kill -9 of a worker mid-batch and of the host during group
commits, a Redis flush while work is pending, duplicate delivery, and a payload from an
unsupported schema version. Afterwards every acknowledged frame is present and indexed exactly
once (each frame's vector was written once: `vector_log` counts the writes).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mind.errors import StorageError
from mind.mind import Mind
from queue_schemas import ops
from queue_schemas.constants import COGNIFY_QUEUE, DEAD_LETTERS_KEY
from tests.conftest import REDIS_URL
from tests.procs import ROOT, eventually, kill9, spawn, stop
from workers.distributed import enqueue_op

HOST = "t1"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "HIVE_MIND_DATA_DIR": str(tmp_path / "data"),
        "HIVE_MIND_REDIS_URL": REDIS_URL,
        "HIVE_MIND_HOST_ID": HOST,
        "HIVE_MIND_EMBEDDING_PROVIDER": "test",
        "HIVE_MIND_JOB_TIMEOUT_SECONDS": "4",
        "HIVE_MIND_JOB_MAX_TRIES": "8",
    }


class Procs:
    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env, self.logs = env, logs
        self.running: list[subprocess.Popen[bytes]] = []

    def start(self, command: str) -> subprocess.Popen[bytes]:
        args = [command, "--port", "0"] if command == "serve" else [command]  # no fixed port
        proc = spawn(args, self.env, self.logs / f"{command}.log")
        self.running.append(proc)
        return proc

    def log(self) -> str:
        return "\n".join(p.read_text()[-3000:] for p in self.logs.glob("*.log"))


@pytest.fixture
def procs(env: dict[str, str], tmp_path: Path) -> Iterator[Procs]:
    p = Procs(env, tmp_path)
    yield p
    for proc in p.running:
        stop(proc)


def saves(n_ops: int, per_op: int, prefix: str = "m") -> list[ops.SaveFrames]:
    return [
        ops.SaveFrames(
            mind_id="personal",
            frames=[ops.NewFrameOp(gop_id=f"conv-{i}", content=f"{prefix} {i}.{j}: Alice reviews the Apollo budget item {j}",
                                   external_id=f"{prefix}:{i}:{j}", dedup=False)
                    for j in range(per_op)],
        )
        for i in range(n_ops)
    ]


async def state(data: Path) -> dict[str, int]:
    path = data / "personal.mind"
    empty = {"frames": 0, "pending": 0, "vectors": 0, "vector_writes": 0, "dup_rel": 0}
    if not path.exists():
        return empty
    try:
        return await _read_state(path)
    except StorageError:  # the host is still creating the file
        return empty


async def _read_state(path: Path) -> dict[str, int]:
    async with await Mind.open(path, readonly=True) as m:
        db = m.db
        return {
            "frames": await m.frames.count(),
            "pending": await m.outbox.count(),
            "vectors": (await m.vectors.counts())["frame_vectors"],
            "vector_writes": int(await db.fetchval("SELECT COUNT(*) FROM vector_log WHERE kind='frame'")),
            "dup_rel": int(await db.fetchval(
                "SELECT COUNT(*) FROM (SELECT 1 FROM knowledge_relations WHERE valid_to IS NULL "
                "GROUP BY source_id, target_id, relation_type HAVING COUNT(*) > 1)")),
        }


def data_dir(env: dict[str, str]) -> Path:
    return Path(env["HIVE_MIND_DATA_DIR"])


async def wait_indexed(env: dict[str, str], procs: Procs, total: int, timeout: float = 90) -> dict[str, int]:
    async def done() -> bool:
        s = await state(data_dir(env))
        return s["frames"] == total and s["pending"] == 0 and s["vectors"] == total

    try:
        await eventually(done, timeout, f"{total} frames indexed")
    except AssertionError:
        print(await state(data_dir(env)), procs.log())
        raise
    return await state(data_dir(env))


async def test_end_to_end_and_kill9_worker_mid_batch(redis: Any, env: dict[str, str], procs: Procs) -> None:
    procs.start("serve")
    worker = procs.start("worker")
    for op in saves(80, 100):  # enough work that the kill lands mid-way
        await enqueue_op(redis, HOST, op)

    async def some_indexed() -> bool:
        s = await state(data_dir(env))
        return 0 < s["vectors"] < 8000

    await eventually(some_indexed, 60, "the worker to be mid-way")
    kill9(worker)  # dies with batches in flight
    procs.start("worker")
    final = await wait_indexed(env, procs, 8000, timeout=120)
    assert final["vector_writes"] == 8000  # each frame's vector written exactly once
    assert final["dup_rel"] == 0
    async with await Mind.open(data_dir(env) / "personal.mind", readonly=True) as m:
        assert await m.knowledge.find_entity_by_name("Alice") is not None


async def test_kill9_host_during_group_commits(redis: Any, env: dict[str, str], procs: Procs) -> None:
    host = procs.start("serve")
    procs.start("worker")
    for op in saves(60, 40, prefix="h"):
        await enqueue_op(redis, HOST, op)

    async def committing() -> bool:
        return (await state(data_dir(env)))["frames"] > 0

    await eventually(committing, 60, "the host to start committing")
    kill9(host)
    procs.start("serve")  # arq re-delivers unacknowledged ops; op ids + external ids dedupe
    final = await wait_indexed(env, procs, 2400, timeout=120)
    assert final["vector_writes"] == 2400 and final["dup_rel"] == 0


async def test_redis_flush_then_startup_sweep_restores(redis: Any, env: dict[str, str], procs: Procs) -> None:
    host = procs.start("serve")
    for op in saves(5, 20, prefix="f"):
        await enqueue_op(redis, HOST, op)

    async def saved() -> bool:
        return (await state(data_dir(env)))["frames"] == 100

    await eventually(saved, 60, "frames committed (no worker yet)")
    assert await redis.zcard(COGNIFY_QUEUE) > 0
    await redis.flushdb()  # the cognify jobs are gone; the outbox still knows
    stop(host)
    procs.start("serve")  # startup sweep re-sends the outbox
    procs.start("worker")
    final = await wait_indexed(env, procs, 100)
    assert final["vector_writes"] == 100


async def test_duplicate_delivery_and_old_schema_payloads(redis: Any, env: dict[str, str], procs: Procs) -> None:
    procs.start("serve")
    procs.start("worker")
    op = saves(1, 10, prefix="d")[0]
    await enqueue_op(redis, HOST, op)
    await wait_indexed(env, procs, 10)
    # the same op delivered again (as arq may after a crash) under another job id
    await redis.enqueue_job("apply_op", op.model_dump(mode="json"), _job_id="redelivery-1",
                            _queue_name=f"hive-mind:host:{HOST}")
    bad = {"kind": "cognify", "v": 99, "op_id": "future-job", "mind_id": "personal",
           "created_at": "2026-01-01T00:00:00.000Z", "items": []}
    await redis.enqueue_job("cognify", bad, _job_id="future-job", _queue_name=COGNIFY_QUEUE)

    async def dead_lettered() -> bool:
        return int(await redis.llen(DEAD_LETTERS_KEY)) >= 1

    await eventually(dead_lettered, 30, "the v99 payload to be dead-lettered")
    entry = json.loads(await redis.lindex(DEAD_LETTERS_KEY, 0))
    assert entry["job_id"] == "future-job" and "newer" in entry["error"]
    s = await state(data_dir(env))
    assert s["frames"] == 10 and s["vector_writes"] == 10
    # ops see it in status
    out = subprocess.run([sys.executable, "-m", "hive_mind", "status", "--json", "--no-probe"],
                         cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=60)
    report = json.loads(out.stdout)
    assert report["queue"]["dead_letters"] == 1
    assert {"depth", "in_progress"} <= set(report["queue"])
    assert report["minds"] == [{"id": "personal", "frames": 10, "pending_index": 0, "vectors": 10,
                                "entities": report["minds"][0]["entities"]}]


async def test_sigterm_under_load_stops_cleanly_and_resumes(redis: Any, env: dict[str, str], procs: Procs) -> None:
    host = procs.start("serve")
    procs.start("worker")
    for op in saves(100, 80, prefix="s"):
        await enqueue_op(redis, HOST, op)

    async def busy() -> bool:
        return 0 < (await state(data_dir(env)))["vectors"] < 8000

    await eventually(busy, 60, "indexing under way")
    host.terminate()  # graceful: queued ops are applied or left for re-delivery
    try:
        host.wait(30)  # no deadlock between shutdown and commit hooks
    except subprocess.TimeoutExpired:
        host.send_signal(signal.SIGUSR2)  # dump asyncio tasks into the log
        time.sleep(2)
        raise AssertionError("host did not stop on SIGTERM:\n" + procs.log()[-6000:]) from None
    procs.start("serve")
    final = await wait_indexed(env, procs, 8000, timeout=120)
    assert final["vector_writes"] == 8000 and final["dup_rel"] == 0


async def test_workers_embed_with_the_int8_onnx_backend(redis: Any, env: dict[str, str],
                                                        procs: Procs) -> None:
    """Two cognify workers on the real model through ONNX Runtime (int8): every frame indexed
    once, under the backend's own fingerprint, and the host's recall uses the same backend."""
    env.update({"HIVE_MIND_EMBEDDING_PROVIDER": "inprocess",
                "HIVE_MIND_EMBEDDING_BACKEND": "onnx-int8",
                "HIVE_MIND_JOB_TIMEOUT_SECONDS": "120"})
    procs.start("serve")
    procs.start("worker")
    procs.start("worker")
    for op in saves(6, 50, prefix="q"):
        await enqueue_op(redis, HOST, op)
    final = await wait_indexed(env, procs, 300, timeout=240)
    assert final["vector_writes"] == 300
    async with await Mind.open(data_dir(env) / "personal.mind", readonly=True) as m:
        fp = await m.vectors.fingerprint()
    assert fp is not None and (fp.model, fp.dim) == ("all-MiniLM-L6-v2+onnx-int8", 384)
    assert "Loading weights" not in procs.log()
