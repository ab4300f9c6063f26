"""``hive-mind jobs``: queued, running and failed jobs per mind, and retry/drop of dead letters —
embedded (the data dir's dead letters, a CLI subprocess), distributed on a real Redis (db 12,
flushed), and over HTTP through a real server socket. Dead-letter ids are checked before they
reach a Redis key: a request naming ``*`` or another key changes nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from hive_mind.facade import HiveMind
from hive_mind.remote import RemoteHiveMind
from hive_mind.settings import Settings
from mind.embeddings.registry import EmbeddingConfig
from mind.errors import NotFoundError, ValidationError
from mind.mind import Mind
from queue_schemas import ops
from queue_schemas.constants import COGNIFY_QUEUE, DEAD_LETTERS_KEY, host_queue
from tests.conftest import flushed_redis, redis_db_url
from tests.http_server import running_server, server_settings
from tests.procs import run_cli
from workers.arq_worker import make_worker
from workers.dead_letters import PAYLOAD_KEY_PREFIX, DeadLetterFile, payload_key
from workers.distributed import enqueue_op, host_settings, worker_settings
from workers.queue import QueueConfig
from workers.runtime import EmbeddedRuntime, RuntimeConfig

REDIS12 = redis_db_url(12)  # this file's own db
HOST = "jobs1"
PRIVATE = "workspaces/private/workspace.mind"
FUTURE_JOB = {"kind": "cognify", "v": 99, "op_id": "future-job", "mind_id": "personal",
              "created_at": "2026-01-01T00:00:00.000Z", "items": []}


def cli(data: Path, *args: str, redis: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, data=data,
                   env={"HIVE_MIND_REDIS_URL": redis, "HIVE_MIND_HOST_ID": HOST} if redis else None)


def cli_json(data: Path, *args: str, redis: str | None = None) -> Any:
    out = cli(data, *args, "--json", redis=redis)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


async def counts(data: Path, mind_file: str = "personal.mind") -> tuple[int, int]:
    """(frames pending in the outbox, frame vectors)."""
    async with await Mind.open(data / mind_file, readonly=True) as mind:
        return await mind.outbox.count(), (await mind.vectors.counts())["frame_vectors"]


async def applied(data: Path, mind_file: str, op_id: str) -> bool:
    async with await Mind.open(data / mind_file, readonly=True) as mind:
        return bool(await mind.db.fetchval("SELECT 1 FROM applied_ops WHERE op_id = ?",
                                           (op_id,)))


async def dead_letter_by_model_change(data: Path, text: str) -> str:
    """The mind is indexed with the 64-dim test model; a process configured with another
    model (32 dims) saves a frame: its index job fails for good (one try) into a dead letter."""
    if not (data / "personal.mind").exists():
        async with await HiveMind.open(data_dir=data, embedding_provider="test") as hm:
            await hm.save("The first memory sets the model", wait=True)
    runtime = EmbeddedRuntime(RuntimeConfig(
        data_dir=data, embedding=EmbeddingConfig(provider="test", test_dimensions=32),
        max_tries=1))
    async with runtime:
        await runtime.submit("personal", ops.SaveFrames(mind_id="personal", frames=[
            ops.NewFrameOp(gop_id="jobs-test", content=text)]))
        await runtime.wait_idle()
        assert [d.kind for d in runtime.runner.dead_letters] == ["cognify"]
    return str(DeadLetterFile(data).entries()[0]["id"])


# -- embedded -------------------------------------------------------------------------------------

async def test_embedded_dead_letter_listed_and_retried_by_the_cli(tmp_path: Path) -> None:
    data = tmp_path / "data"
    ident = await dead_letter_by_model_change(data, "Grace keeps the Hubble archive")
    assert await counts(data) == (1, 1)  # the failed frame stays pending

    report = cli_json(data, "jobs")  # another process sees the data dir's dead letters
    assert report["mode"] == "embedded" and report["dead_letters"] == 1
    failure = report["failures"][0]
    assert failure["id"] == ident and failure["kind"] == "cognify"
    assert failure["mind_id"] == "personal" and failure["retryable"] is True
    assert "reembed" in failure["error"]  # the model mismatch, naming its fix
    assert report["minds"] == [{"id": "personal", "pending_index": 1, "queued": 0,
                                "running": 0, "dead_letters": 1}]
    queue = cli_json(data, "status", "--no-probe")["queue"]  # status agrees with jobs
    assert (queue["dead_letters"], queue["dead_letters_by_mind"]) == (1, {"personal": 1})
    assert queue["recent_dead_letters"][0]["id"] == ident

    retried = cli_json(data, "jobs", "retry", ident)  # the default model again: it indexes
    assert retried["retried"] == [{"id": ident, "job_id": failure["job_id"], "status": "queued",
                                   "frames": 1}]
    assert await counts(data) == (0, 2)
    assert cli_json(data, "jobs")["dead_letters"] == 0
    out = cli(data, "jobs", "retry", ident)
    assert out.returncode == 2 and "not found" in out.stderr


async def test_embedded_drop_keeps_the_frames_pending(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = await dead_letter_by_model_change(data, "Alan tends the orchids")
    second = await dead_letter_by_model_change(data, "Ada files the tax return")
    async with await HiveMind.open(data_dir=data, embedding_provider="test") as hm:
        with pytest.raises(ValidationError):
            await hm.drop_jobs(first, all_failed=True)  # one or all, not both
        with pytest.raises(ValidationError):
            await hm.drop_jobs("hm:dead-letters")
        assert (await hm.drop_jobs(first))["dropped"] == [first]
        with pytest.raises(NotFoundError):
            await hm.drop_jobs(first)
        assert [f["id"] for f in (await hm.jobs())["failures"]] == [second]
        assert (await hm.drop_jobs(all_failed=True))["dropped"] == [second]
        assert (await hm.jobs())["dead_letters"] == 0
    assert (await counts(data))[0] == 2  # dropped letters, frames still pending for a reconcile


async def test_embedded_failed_scheduled_task_retried(tmp_path: Path) -> None:
    """A nightly task that failed (a mind file that could not be read) is a dead letter; once
    the file is back, a retry runs it under the same per-day id."""
    data = tmp_path / "data"
    async with await HiveMind.open(data_dir=data, embedding_provider="test") as hm:
        await hm.create_workspace("Private")
        await hm.save("A private note", workspace="private", wait=True)
        await hm.save("A personal note", wait=True)
    good = tmp_path / "private.mind"
    shutil.copy(data / PRIVATE, good)
    (data / PRIVATE).write_bytes(b"this is not a SQLite database" * 100)
    settings = Settings(data_dir=data, embedding_provider="test", maintenance_tasks=["compact"])
    async with await HiveMind.open(settings) as hm:
        run = await hm.nightly_maintenance()
        day = datetime.now(UTC).date().isoformat()
        op_id = f"compact:workspace:private:{day}"
        assert run["failed"] == [op_id] and run["ran"] == 1  # personal was compacted
        failure = (await hm.jobs())["failures"][0]
        assert (failure["kind"], failure["job_id"], failure["retryable"]) == ("compact", op_id,
                                                                              True)
        assert (await hm.nightly_maintenance())["skipped"] == 2  # claimed today already
    shutil.copy(good, data / PRIVATE)
    async with await HiveMind.open(settings) as hm:
        retried = await hm.retry_jobs(failure["id"])
        assert retried["retried"][0]["status"] == "done"
        assert (await hm.jobs())["dead_letters"] == 0
    assert await applied(data, PRIVATE, op_id)


def test_embedded_http_jobs_and_nightly(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with running_server(server_settings(data)) as url, \
            httpx.Client(base_url=url, timeout=60) as api:
        assert api.post("/v1/memories", json={"content": "Nightly test"}).status_code in (200,
                                                                                         201)
        listed = api.get("/v1/jobs")
        assert listed.status_code == 200 and listed.json()["mode"] == "embedded"
        first = api.post("/v1/jobs/nightly").json()
        assert (first["ran"], first["skipped"]) == (3, 0)  # personal: compact, reconcile, sync
        again = api.post("/v1/jobs/nightly").json()
        assert (again["ran"], again["skipped"]) == (0, 3)  # once a day
        refused = api.delete("/v1/jobs")
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "invalid"


# -- distributed: a real Redis (db 12) ------------------------------------------------------------

@pytest.fixture
async def redis12() -> AsyncIterator[Any]:
    async with flushed_redis(REDIS12) as pool:
        yield pool


def distributed(data: Path) -> tuple[QueueConfig, RuntimeConfig]:
    return (QueueConfig(redis_url=REDIS12, host_id=HOST, max_tries=1),
            RuntimeConfig(data_dir=data, embedding=EmbeddingConfig(provider="test")))


async def drain(data: Path, *, host: bool = False) -> None:
    """Run the cognify worker (or the host's op consumer) until its queue is empty."""
    queue, runtime = distributed(data)
    settings = host_settings(queue, runtime) if host else worker_settings(queue, runtime)
    worker = make_worker(settings, burst=True, poll_delay=0.05, handle_signals=False)
    try:
        await worker.main()
    finally:
        await worker.close()


async def test_redis_dead_letters_retry_and_drop(tmp_path: Path, redis12: Any) -> None:
    data = tmp_path / "data"
    settings = Settings(data_dir=data, embedding_provider="test", redis_url=REDIS12,
                        host_id=HOST)
    async with await HiveMind.open(settings) as hm:
        await hm.save("The host owns this mind")
        # an op for a workspace that does not exist yet, and a payload no worker may run
        compact = ops.Compact(mind_id="workspace:later")
        await enqueue_op(redis12, HOST, compact)
        await redis12.enqueue_job("cognify", FUTURE_JOB, _job_id="future-job",
                                  _queue_name=COGNIFY_QUEUE)
        await drain(data, host=True)
        await drain(data)
        report = await hm.jobs()
        assert report["mode"] == "distributed" and report["dead_letters"] == 2
        by_kind = {f["kind"]: f for f in report["failures"]}
        assert set(by_kind) == {"apply_op", "cognify"}
        assert by_kind["apply_op"]["mind_id"] == "workspace:later"
        assert all(f["retryable"] for f in report["failures"])
        assert {m["id"]: m["dead_letters"] for m in report["minds"]} == {
            "personal": 1, "workspace:later": 1}
        assert cli_json(data, "jobs", redis=REDIS12)["dead_letters"] == 2  # the CLI, too

        await hm.create_workspace("Later")  # what the op was missing
        retried = await hm.retry_jobs(by_kind["apply_op"]["id"])
        assert retried["retried"][0]["status"] == "queued"
        queued = [i.decode() for i in await redis12.zrange(host_queue(HOST), 0, -1)]
        assert len([i for i in queued if i.startswith("retry-")]) == 1
        assert not await redis12.exists(payload_key(by_kind["apply_op"]["id"]))
        await drain(data, host=True)
        assert await applied(data, "workspaces/later/workspace.mind", compact.op_id)

        dropped = await hm.drop_jobs(by_kind["cognify"]["id"])
        assert dropped["dropped"] == [by_kind["cognify"]["id"]]
        assert await redis12.llen(DEAD_LETTERS_KEY) == 0
        assert [k async for k in redis12.scan_iter(match=PAYLOAD_KEY_PREFIX + "*")] == []
        with pytest.raises(NotFoundError):
            await hm.drop_jobs(by_kind["cognify"]["id"])
        assert (await hm.retry_jobs(all_failed=True))["count"] == 0


async def test_redis_entries_from_before_ids_are_listed_and_dropped(tmp_path: Path,
                                                                    redis12: Any) -> None:
    old = {"job_id": "x", "function": "cognify", "mind_id": "personal", "error": "boom",
           "tries": 5, "at": "2026-01-01T00:00:00.000Z"}
    await redis12.lpush(DEAD_LETTERS_KEY, json.dumps(old))
    settings = Settings(data_dir=tmp_path / "data", embedding_provider="test",
                        redis_url=REDIS12, host_id=HOST)
    async with await HiveMind.open(settings) as hm:
        failure = (await hm.jobs())["failures"][0]
        assert failure["id"] is None and failure["retryable"] is False
        assert (await hm.retry_jobs(all_failed=True))["count"] == 0
        assert await redis12.llen(DEAD_LETTERS_KEY) == 1  # not retryable: left alone
        assert (await hm.drop_jobs(all_failed=True))["count"] == 1
    assert await redis12.llen(DEAD_LETTERS_KEY) == 0


async def keys(redis: Any) -> list[bytes]:
    return sorted([k async for k in redis.scan_iter(match="*")])


async def test_http_jobs_on_redis_and_ids_that_name_other_keys(tmp_path: Path,
                                                               redis12: Any) -> None:
    data = tmp_path / "data"
    await redis12.enqueue_job("cognify", FUTURE_JOB, _job_id="future-job",
                              _queue_name=COGNIFY_QUEUE)
    await drain(data)
    await redis12.set("hm:unrelated", "kept")
    with running_server(server_settings(data, redis_url=REDIS12, host_id=HOST)) as url, \
            httpx.Client(base_url=url, timeout=60) as api:
        listed = api.get("/v1/jobs")
        assert listed.status_code == 200, listed.text
        ident = listed.json()["failures"][0]["id"]
        before = await keys(redis12)
        for bad in ("*", "hm:unrelated", "hm:dead-letters", ident.upper(), ident[:-1],
                    ident + "0", "%2A", "..%2F..%2Fstatus", "a" * 65, "%00" + ident[1:]):
            for method, path in (("POST", f"/v1/jobs/{bad}/retry"), ("DELETE", f"/v1/jobs/{bad}")):
                response = api.request(method, path)
                assert response.status_code in (400, 404, 405, 422), (bad, response.text)
                assert response.json()["error"]["code"] in ("invalid", "not_found",
                                                            "method_not_allowed")
        refused = api.delete("/v1/jobs")  # a bare DELETE does not mean "all"
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "invalid"
        assert await keys(redis12) == before  # nothing named by a request was touched
        assert await redis12.get("hm:unrelated") == b"kept"

        retried = api.post(f"/v1/jobs/{ident}/retry")
        assert retried.status_code == 200 and retried.json()["retried"][0]["status"] == "queued"
        assert await redis12.zcard(COGNIFY_QUEUE) == 1 and api.get("/v1/jobs").json()[
            "dead_letters"] == 0
        await drain(data)  # the same payload fails again: a new dead letter

        client = await HiveMind.open(server_settings(tmp_path / "client", url=url))
        async with client:
            assert isinstance(client, RemoteHiveMind)
            again = await client.jobs()
            assert again["dead_letters"] == 1 and again["failures"][0]["id"] != ident
            with pytest.raises(NotFoundError):
                await client.retry_jobs(ident)  # retried already
            with pytest.raises(ValidationError):
                await client.drop_jobs("*")
            assert (await client.drop_jobs(all_failed=True))["count"] == 1
        assert await redis12.llen(DEAD_LETTERS_KEY) == 0
        assert [k async for k in redis12.scan_iter(match=PAYLOAD_KEY_PREFIX + "*")] == []
