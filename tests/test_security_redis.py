"""Issue #45 finding 7: what Redis access grants, replayed against a real ``serve`` (distributed
mode) and a real Redis. A job pushed into a host's queue by whoever can write to Redis may at
most add to a mind; ops that remove or replace need the deployment key's signature (with the
key set, every op does); forgetting a frame takes its text out of the jobs still queued."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from arq.constants import job_key_prefix

from queue_schemas import ops
from queue_schemas.constants import COGNIFY_QUEUE, DEAD_LETTERS_KEY, host_queue
from tests.conftest import REDIS_URL
from tests.procs import ROOT, eventually, free_port, spawn, stop
from workers.distributed import enqueue_op

pytestmark = pytest.mark.slow

HOST = "sec7"
KEY = "redis-security-deployment-key-0123456789"
SECRET = "the payroll vault code is Kestrel-8812"


class Host:
    def __init__(self, tmp: Path, key: str | None) -> None:
        self.port = free_port()
        self.env = {"HIVE_MIND_DATA_DIR": str(tmp / "data"), "HIVE_MIND_REDIS_URL": REDIS_URL,
                    "HIVE_MIND_HOST_ID": HOST, "HIVE_MIND_EMBEDDING_PROVIDER": "test",
                    "HIVE_MIND_MAINTENANCE_ENABLED": "false",
                    "HIVE_MIND_JOB_TIMEOUT_SECONDS": "10"}
        if key:
            self.env["HIVE_MIND_CLUSTER_KEY"] = key
        self.tmp = tmp
        self.procs = [spawn(["serve", "--port", str(self.port)], self.env, tmp / "serve.log")]
        self.api = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=60)

    def worker(self) -> None:
        self.procs.append(spawn(["worker"], self.env, self.tmp / "worker.log"))

    def frames(self) -> int:
        return int(self.api.get("/v1/stats").json()["frames"])

    def close(self) -> None:
        self.api.close()
        for proc in self.procs:
            stop(proc)


@pytest.fixture
def hosts(tmp_path: Path) -> Iterator[list[Host]]:
    made: list[Host] = []
    yield made
    for host in made:
        host.close()
    for log in tmp_path.glob("*.log"):
        print(log.name, log.read_text()[-2000:])


async def started(hosts: list[Host], tmp: Path, key: str | None = None) -> Host:
    host = Host(tmp, key)
    hosts.append(host)

    async def up() -> bool:
        try:
            return host.api.get("/readyz").status_code == 200
        except httpx.HTTPError:
            return False

    await eventually(up, 90, "serve ready")
    return host


async def dead_letters(redis: Any) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in await redis.lrange(DEAD_LETTERS_KEY, 0, -1)]


async def queued_text(redis: Any) -> str:
    """Everything the cognify queue's waiting jobs hold."""
    texts = []
    for job_id in await redis.zrange(COGNIFY_QUEUE, 0, -1):
        raw = await redis.get(job_key_prefix + job_id.decode())
        texts.append(raw.decode() if raw else "")
    return "\n".join(texts)


async def test_forged_ops_in_redis_cannot_remove_and_forget_reaches_the_queue(
        redis: Any, hosts: list[Host], tmp_path: Path) -> None:
    host = await started(hosts, tmp_path)  # no worker: cognify jobs wait in Redis
    ids = []
    for text in (SECRET, "Alice reviews the Apollo budget", "Bob books the Lisbon tram"):
        r = host.api.post("/v1/memories", json={"content": text})
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    await eventually(lambda: _has(redis, SECRET), 30, "the cognify job queued")

    # the attack: ops pushed straight into the host's queue
    for forged in (ops.WipeFrames(mind_id="personal", mode="all"),
                   ops.Erase(mind_id="personal", frame_id=ids[1]),
                   ops.CleanupEntities(mind_id="personal", mode="wipe_all")):
        await enqueue_op(redis, HOST, forged)

    async def refused() -> bool:
        return len(await dead_letters(redis)) >= 3

    await eventually(refused, 30, "the forged ops dead-lettered")
    errors = [e["error"] for e in await dead_letters(redis)]
    assert all("must be signed with HIVE_MIND_CLUSTER_KEY" in e for e in errors), errors
    assert host.frames() == 3
    # an adding op is taken unsigned, as documented
    await enqueue_op(redis, HOST, ops.SaveFrames(mind_id="personal", frames=[
        ops.NewFrameOp(gop_id="forged", content="an added memory", dedup=False)]))
    await eventually(lambda: _frames_are(host, 4), 30, "the added frame")

    # forgetting the secret takes its text out of the job still waiting for a worker
    assert host.api.delete(f"/v1/memories/{ids[0]}").status_code == 200
    waiting = await queued_text(redis)
    assert SECRET not in waiting and "Apollo budget" in waiting


async def test_with_the_key_every_op_is_signed_and_indexing_still_works(
        redis: Any, hosts: list[Host], tmp_path: Path) -> None:
    host = await started(hosts, tmp_path, KEY)
    host.worker()
    r = host.api.post("/v1/memories", json={"content": "Alice reviews the Apollo budget"})
    assert r.status_code == 201, r.text

    async def indexed() -> bool:
        return int(host.api.get("/v1/stats").json().get("pending_index", 1) or 0) == 0 and \
            await redis.zcard(host_queue(HOST)) == 0

    await eventually(indexed, 120, "the save indexed through signed index results")
    hit = host.api.post("/v1/recall", json={"query": "Apollo budget"}).json()["results"]
    assert hit and hit[0]["content"] == "Alice reviews the Apollo budget"
    await enqueue_op(redis, HOST, ops.SaveFrames(mind_id="personal", frames=[
        ops.NewFrameOp(gop_id="forged", content="unsigned", dedup=False)]))
    await enqueue_op(redis, HOST, ops.WipeFrames(mind_id="personal", mode="all"),
                     key="a-guessed-key-that-is-not-the-deployments")

    async def refused() -> bool:
        return len(await dead_letters(redis)) >= 2

    await eventually(refused, 30, "both forged ops dead-lettered")
    assert all("unsigned" in e["error"] for e in await dead_letters(redis))
    assert host.frames() == 1


async def _has(redis: Any, text: str) -> bool:
    return text in await queued_text(redis)


async def _frames_are(host: Host, n: int) -> bool:
    return host.frames() == n


def test_every_manifest_puts_a_password_on_redis_and_a_key_on_every_process() -> None:
    yaml = pytest.importorskip("yaml")
    deploy = ROOT / "deploy"
    compose = yaml.safe_load((deploy / "compose.yaml").read_text())["services"]
    assert "--requirepass" in compose["redis"]["command"]
    for name, service in compose.items():
        env = service.get("environment") or {}
        if "HIVE_MIND_REDIS_URL" in env:
            url = re.sub(r"\$\{[^}]*\}", "secret", env["HIVE_MIND_REDIS_URL"])  # ${VAR:?…}
            assert urlsplit(url).password, name
            assert env.get("HIVE_MIND_CLUSTER_KEY"), name
    for manifest in ("hive-mind.yaml", "sharded.yaml"):
        for doc in yaml.safe_load_all((deploy / "k8s" / manifest).read_text()):
            if doc["kind"] not in ("StatefulSet", "Deployment"):
                continue
            for container in doc["spec"]["template"]["spec"]["containers"]:
                env = {e["name"]: e for e in container.get("env", [])}
                if container["image"].startswith("redis"):
                    assert "--requirepass" in container["args"], manifest
                elif "HIVE_MIND_REDIS_URL" in env:
                    assert urlsplit(env["HIVE_MIND_REDIS_URL"]["value"]).password, manifest
                    assert env["HIVE_MIND_CLUSTER_KEY"]["valueFrom"]["secretKeyRef"], manifest
