"""``serve`` warms up before ``/readyz`` says ready (hive_mind/warmup.py): a real server over
real mind files and real HTTP, the real embedding model; and the warm-up itself through the
facade (which minds, what it loads, what a failing mind does)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from hive_mind.facade import HiveMind
from hive_mind.warmup import MODEL, RECALL, mind_step
from mind.storage.connection import driver
from tests.procs import eventually, free_port, spawn, stop


class Hold:
    """Another process's exclusive hold on a mind file: nobody else can even read it (a
    server's warm-up waits on it, up to SQLite's busy timeout) until :meth:`release`."""

    def __init__(self, path: Path) -> None:
        self.conn = driver().connect(str(path), isolation_level=None)
        self.conn.execute("PRAGMA locking_mode=EXCLUSIVE")
        self.conn.execute("BEGIN EXCLUSIVE")

    def release(self) -> None:
        if self.conn is not None:
            self.conn.execute("ROLLBACK")
            self.conn.close()
            self.conn = None


async def first_answer(client: httpx.AsyncClient, path: str, proc: Any, log: Path
                       ) -> httpx.Response:
    """The server's first answer to ``GET path``, asked from the moment it listens."""
    for _ in range(3000):
        if proc.poll() is not None:
            raise AssertionError(f"serve exited: {log.read_text()}")
        try:
            return await client.get(path)
        except httpx.TransportError:
            await asyncio.sleep(0.02)
    raise AssertionError("serve did not start listening")


async def test_readyz_is_503_naming_what_it_waits_for_and_a_recall_meanwhile_answers(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with await HiveMind.open(data_dir=data, embedding_provider="inprocess",
                                   redis_url=None) as hm:
        cat = await hm.save("The lighthouse keeper feeds the cat at dawn", wait=True)
        await hm.save("The quarterly budget review moved to Thursday", wait=True)
    env = {"HIVE_MIND_DATA_DIR": str(data), "HIVE_MIND_EMBEDDING_PROVIDER": "inprocess",
           "HIVE_MIND_MAINTENANCE_ENABLED": "false", "HIVE_MIND_REDIS_URL": ""}
    log = tmp_path / "serve.log"
    port = free_port()
    hold = Hold(data / "personal.mind")
    proc = spawn(["serve", "--port", str(port)], env, log)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            first = await first_answer(client, "/readyz", proc, log)
            assert first.status_code == 503, first.text
            body = first.json()
            assert body["status"] == "not ready" and body["checks"]["warm_up"] is False
            assert mind_step("personal") in body["pending"]  # held: it cannot be loaded
            assert set(body["pending"]) <= {MODEL, mind_step("personal"), RECALL}
            recall = asyncio.ensure_future(client.post(
                "/v1/recall", json={"query": "who feeds the cat?", "limit": 2}))
            still = await client.get("/readyz")
            assert still.status_code == 503
            assert mind_step("personal") in still.json()["pending"]
            hold.release()  # while the recall waits for the mind

            answered = await recall
            assert answered.status_code == 200, answered.text
            results = answered.json()["results"]
            assert results[0]["id"] == cat["id"]
            assert results[0]["content"] == "The lighthouse keeper feeds the cat at dawn"

            async def ready() -> bool:
                return (await client.get("/readyz")).status_code == 200

            await eventually(ready, 120, "the warm-up to finish")
            done = (await client.get("/readyz")).json()
            assert done == {"status": "ready", "pending": [],
                            "checks": {"facade": True, "data_dir": True, "warm_up": True}}
            again = await client.post("/v1/recall", json={"query": "budget review day"})
            assert again.json()["results"][0]["content"].startswith("The quarterly budget")
        assert "warm-up done" in log.read_text()
    finally:
        hold.release()
        stop(proc)


async def test_the_warm_up_loads_each_mind_up_to_the_cap_and_creates_no_mind(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with await HiveMind.open(data_dir=data, embedding_provider="test",
                                   redis_url=None) as hm:
        for name in ("alpha", "beta", "gamma"):
            await hm.create_workspace(name, workspace_id=name)
        await hm.save("alpha's plan: ship on Friday", workspace="alpha", wait=True)
        await hm.save("gamma's plan: ship on Monday", workspace="gamma", wait=True)
    assert not (data / "personal.mind").exists()
    (data / "workspaces" / "beta" / "workspace.mind").write_bytes(b"not a mind file" * 300)
    async with await HiveMind.open(data_dir=data, embedding_provider="test", redis_url=None,
                                   max_open_minds=2) as hm:
        assert hm.warming_up() == []  # nothing started: nothing to wait for
        task = hm.start_warm_up()
        # marked before the task first runs: a probe answered in between sees them
        # counted, not named: /readyz answers anyone
        assert hm.warming_up() == [MODEL, "workspace minds (2 left)", RECALL]
        assert (await hm.readiness())["warm_up"] is False
        await task
        assert hm.warming_up() == [] and (await hm.readiness())["warm_up"] is True
        # the unreadable mind is logged and skipped: the server does not stay unready
        assert hm.warming.failed == [mind_step("workspace:beta")]
        indexes = hm.runtime.memory_indexes()
        assert indexes["workspace:alpha"]["vector"]["frames"] == 1  # loaded before any request
        assert "workspace:gamma" not in indexes  # over the cap: the LRU would close it again
        found = await hm.recall("when does alpha ship", workspace="alpha")
        assert found[0]["content"] == "alpha's plan: ship on Friday"
    assert not (data / "personal.mind").exists()  # the warm-up opens minds, never creates one
