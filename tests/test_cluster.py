"""A sharded deployment with real processes (issue #17): one Redis, three shard hosts, one
gateway, two workers, the real embedding model.

Through the gateway only: 30 workspaces spread over the shards by the shard map (each file on
its owner's volume, fenced for it), concurrent saves and harvests; kill -9 of one shard host
mid-load → its minds answer 503 + Retry-After at once while the other shards keep serving;
restart it → every acknowledged frame present exactly once and indexed. The caller's own
credentials reach the owner (the gateway has no token of its own here).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from actors.placement import parse_shards
from hive_mind.move_orders import sign_order
from hive_mind.remote import POOL_LIMITS
from mind.mind import Mind
from mind.storage.fencing import read_file_fence
from tests.conftest import REDIS_URL
from tests.procs import ROOT, eventually, free_port, kill9, spawn, stop
from tests.support import CLUSTER_TOKEN, mcp_call

pytestmark = pytest.mark.slow

TOKEN = CLUSTER_TOKEN
CLUSTER_KEY = "cluster-test-deployment-key-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SHARDS = ("shard-0", "shard-1", "shard-2")
NEW_SHARD = "shard-3"
WORKSPACES = [f"ws-{i:02d}" for i in range(30)]


class Cluster:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.ports = {s: free_port() for s in (*SHARDS, NEW_SHARD)}
        self.gateway_port = free_port()
        self.shard_map = ",".join(f"{s}=http://127.0.0.1:{self.ports[s]}" for s in SHARDS)
        self.grown_map = f"{self.shard_map},{NEW_SHARD}=http://127.0.0.1:{self.ports[NEW_SHARD]}"
        self.placement = parse_shards(self.shard_map)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.common = {"HIVE_MIND_REDIS_URL": REDIS_URL, "HIVE_MIND_SHARDS": self.shard_map,
                       "HIVE_MIND_MAINTENANCE_ENABLED": "false",
                       "HIVE_MIND_CLUSTER_KEY": CLUSTER_KEY}

    def data(self, shard: str) -> Path:
        return self.root / shard

    def start_shard(self, shard: str, shard_map: str | None = None) -> None:
        env = {**self.common, "HIVE_MIND_HOST_ID": shard, "HIVE_MIND_API_TOKEN": TOKEN,
               "HIVE_MIND_DATA_DIR": str(self.data(shard))}
        if shard_map is not None:
            env["HIVE_MIND_SHARDS"] = shard_map
        self.procs[shard] = spawn(["serve", "--port", str(self.ports[shard])], env,
                                  self.root / f"{shard}.log")

    def start(self) -> None:
        for shard in SHARDS:
            self.start_shard(shard)
        self.start_gateway()
        for n in range(2):
            self.procs[f"worker-{n}"] = spawn(
                ["worker"], {**self.common, "HIVE_MIND_DATA_DIR": str(self.root / "worker")},
                self.root / f"worker-{n}.log")

    def start_gateway(self, shard_map: str | None = None) -> None:
        env = {**self.common, "HIVE_MIND_DATA_DIR": str(self.root / "gateway")}
        if shard_map is not None:
            env["HIVE_MIND_SHARDS"] = shard_map
        self.procs["gateway"] = spawn(["serve", "--gateway", "--port", str(self.gateway_port)],
                                      env, self.root / "gateway.log")

    def url(self, shard: str) -> str:
        return f"http://127.0.0.1:{self.ports[shard]}"

    @property
    def gateway(self) -> str:
        return f"http://127.0.0.1:{self.gateway_port}"

    def owner(self, workspace: str) -> str:
        return self.placement.owner(f"workspace:{workspace}")

    def mind_file(self, workspace: str) -> Path:
        return self.data(self.owner(workspace)) / "workspaces" / workspace / "workspace.mind"

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-2500:]}"
                         for p in sorted(self.root.glob("*.log")))

    def stop(self) -> None:
        for proc in self.procs.values():
            stop(proc)


async def ready(client: httpx.AsyncClient, url: str) -> bool:
    try:
        return (await client.get(f"{url}/readyz")).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture
async def cluster(tmp_path: Path, redis: Any) -> AsyncIterator[Cluster]:
    c = Cluster(tmp_path)
    c.start()
    try:
        async with httpx.AsyncClient(timeout=10, limits=POOL_LIMITS) as client:
            for url in [*(c.url(s) for s in SHARDS), c.gateway]:
                await eventually(lambda u=url: ready(client, u), 90, f"{url} ready")
        yield c
    except BaseException:
        print(c.logs())
        raise
    finally:
        c.stop()


async def file_state(path: Path) -> dict[str, Any]:
    async with await Mind.open(path, readonly=True) as m:
        rows = await m.db.fetchall("SELECT content, COUNT(*) FROM memory_frames GROUP BY content")
        fence = dict(await m.db.fetchall(
            "SELECT key, value FROM meta WHERE key LIKE 'fence_%'"))
        return {"contents": {r[0]: r[1] for r in rows}, "pending": await m.outbox.count(),
                "frames": await m.frames.count(),
                "vectors": (await m.vectors.counts())["frame_vectors"], "fence": fence}


async def save(client: httpx.AsyncClient, gateway: str, workspace: str, text: str,
               key: str) -> tuple[int, float, httpx.Response]:
    started = time.perf_counter()
    response = await client.post(f"{gateway}/v1/memories", headers=AUTH, json={
        "content": text, "workspace": workspace, "idempotency_key": key})
    return response.status_code, time.perf_counter() - started, response


async def test_sharded_cluster_routes_fences_and_survives_kill9(cluster: Cluster) -> None:
    c = cluster
    acked: dict[str, str] = {}  # content -> workspace, acknowledged (201/200)
    async with httpx.AsyncClient(timeout=30, limits=POOL_LIMITS) as client:
        # the gateway forwards the caller's credentials: none → the owner refuses
        bare = await client.post(f"{c.gateway}/v1/workspaces", json={"name": "x", "id": "x"})
        assert bare.status_code == 401, bare.text
        for ws in WORKSPACES:
            r = await client.post(f"{c.gateway}/v1/workspaces", headers=AUTH,
                                  json={"name": f"Project {ws}", "id": ws})
            assert r.status_code == 201, r.text
        owners = {ws: c.owner(ws) for ws in WORKSPACES}
        assert set(owners.values()) == set(SHARDS)  # 30 workspaces reach every shard
        for ws in WORKSPACES:  # each file on its owner's volume only
            assert c.mind_file(ws).exists()
            for shard in SHARDS:
                if shard != owners[ws]:
                    assert not (c.data(shard) / "workspaces" / ws).exists()
        listed = (await client.get(f"{c.gateway}/v1/workspaces", headers=AUTH)).json()
        assert sorted(w["id"] for w in listed["workspaces"]) == WORKSPACES

        # MCP over HTTP through the gateway: the client knows nothing of shards
        mcp_ws = WORKSPACES[7]
        saved = json.loads(await mcp_call(c.gateway, "save_memory", {
            "content": "the Zephyr launch moved to Friday", "workspace": mcp_ws}))
        assert saved["created"] is True
        acked["the Zephyr launch moved to Friday"] = mcp_ws
        found = await mcp_call(c.gateway, "recall_memory", {"query": "Zephyr launch",
                                                            "workspace": mcp_ws})
        assert "Zephyr launch moved to Friday" in found
        assert (await file_state(c.mind_file(mcp_ws)))["contents"].get(
            "the Zephyr launch moved to Friday") == 1

        # concurrent saves over every workspace, then kill -9 one shard host mid-load
        victim = owners[WORKSPACES[0]]
        live_ws = [ws for ws in WORKSPACES if owners[ws] != victim]
        dead_ws = [ws for ws in WORKSPACES if owners[ws] == victim]
        results: list[tuple[str, str, int, float]] = []
        sem = asyncio.Semaphore(12)

        async def one(ws: str, n: int, phase: str) -> None:
            text = f"{phase} note {n} for {ws}: Alice moved the Apollo review"
            async with sem:
                try:
                    status, took, _ = await save(client, c.gateway, ws, text, f"{phase}-{ws}-{n}")
                except httpx.HTTPError:
                    status, took = -1, 0.0
            if status in (200, 201):
                acked[text] = ws
            results.append((phase, ws, status, took))

        # harvests through the gateway (inline data), one per shard, beside the saves
        harvested = sorted({owners[ws]: ws for ws in reversed(WORKSPACES)}.values())

        async def harvest(ws: str) -> int:
            doc = "\n\n".join(f"## Part {i}\n\nHarvested {ws} section {i} about the Apollo "
                              f"launch budget." for i in range(12))
            try:
                r = await client.post(f"{c.gateway}/v1/harvest", headers=AUTH, json={
                    "source": "markdown", "data": doc, "filename": f"{ws}.md",
                    "workspace": ws})
            except httpx.HTTPError:
                return -1
            return r.status_code

        before = [one(ws, n, "before") for ws in WORKSPACES for n in range(6)]
        await asyncio.gather(*before)
        assert all(s in (200, 201) for _, _, s, _ in results), results
        during = asyncio.gather(*(one(ws, n, "during") for n in range(6) for ws in WORKSPACES),
                                *(harvest(ws) for ws in harvested))
        await asyncio.sleep(0.3)
        kill9(c.procs[victim])
        statuses = (await during)[-len(harvested):]
        for ws, status in zip(harvested, statuses, strict=True):
            assert status == 200 or owners[ws] == victim, (ws, status)
        after = [one(ws, n, "down") for ws in WORKSPACES for n in range(3)]
        await asyncio.gather(*after)

        down = [(ws, s, t) for phase, ws, s, t in results if phase == "down"]
        for ws, status, took in down:
            if ws in dead_ws:
                assert status == 503 and took < 5.0, (ws, status, took)
            else:
                assert status in (200, 201), (ws, status)
        r = await client.get(f"{c.gateway}/v1/stats", headers=AUTH,
                             params={"workspace": dead_ws[0]})
        assert r.status_code == 503 and r.headers.get("Retry-After")
        assert r.json()["error"]["code"] == "shard_unavailable"
        # a scope-wide recall still answers from the shards that are up, naming the one down
        r = await client.post(f"{c.gateway}/v1/recall", headers=AUTH,
                              json={"query": "Apollo review", "scope": "all", "limit": 20})
        assert r.status_code == 200, r.text
        body = r.json()
        assert victim in body["unreachable"]
        assert {x["from"] for x in body["results"]} <= {f"workspace:{ws}" for ws in live_ws}
        assert body["results"]

        # jobs through the gateway: each live shard's minds once, the dead shard named
        jobs = (await client.get(f"{c.gateway}/v1/jobs", headers=AUTH)).json()
        assert victim in jobs["unreachable"]
        held = [m["id"] for m in jobs["minds"]  # a holder's row: its pending count
                if m["id"].startswith("workspace:") and m["pending_index"] is not None]
        assert sorted(held) == sorted(f"workspace:{ws}" for ws in live_ws)

        # cluster status (the CLI, from the gateway's settings) shows the shard down
        status = subprocess.run(
            [".venv/bin/hive-mind", "cluster", "status", "--json"], capture_output=True,
            env={**os.environ, **c.common, "HIVE_MIND_API_TOKEN": TOKEN}, timeout=60, cwd=ROOT)
        report = json.loads(status.stdout)
        assert status.returncode == 1, status.stderr
        alive = {r["shard"]: r["alive"] for r in report["shards"]}
        assert alive == {s: s != victim for s in SHARDS}
        for row in report["shards"]:  # each live shard lists exactly the minds it owns
            if row["alive"]:
                assert {m for m in row["mind_ids"] if m.startswith("workspace:")} == {
                    f"workspace:{ws}" for ws in WORKSPACES if owners[ws] == row["shard"]}

        # restart: every acknowledged frame exactly once, indexed, in its owner's file
        c.start_shard(victim)
        await eventually(lambda: ready(client, c.url(victim)), 90, "restarted shard ready")
        # the writes refused (or cut off) while it was down, retried with their keys
        for phase in ("during", "down"):
            for ws in dead_ws:
                for n in range(6 if phase == "during" else 3):
                    text = f"{phase} note {n} for {ws}: Alice moved the Apollo review"
                    if text not in acked:
                        s, _, resp = await save(client, c.gateway, ws, text, f"{phase}-{ws}-{n}")
                        assert s in (200, 201), resp.text
                        acked[text] = ws

        for ws in harvested:  # the same export again: only what is missing is imported
            assert await harvest(ws) == 200

        async def indexed() -> bool:
            for ws in WORKSPACES:
                state = await file_state(c.mind_file(ws))
                if state["pending"] or state["vectors"] != state["frames"]:
                    return False
            return True

        await eventually(indexed, 120, "every workspace indexed")
        for ws in harvested:
            contents = (await file_state(c.mind_file(ws)))["contents"]
            for i in range(12):
                marker = f"Harvested {ws} section {i} about"
                assert sum(n for t, n in contents.items() if marker in t) == 1, (ws, i)
        for ws in WORKSPACES:
            state = await file_state(c.mind_file(ws))
            mine = [t for t, w in acked.items() if w == ws]
            for text in mine:
                assert state["contents"].get(text) == 1, (ws, text, state["contents"].get(text))
            assert max(state["contents"].values()) == 1  # nothing at all twice
            assert state["fence"]["fence_shard"] == owners[ws]
        # the restarted shard serves again, through the gateway
        r = await client.post(f"{c.gateway}/v1/recall", headers=AUTH, json={
            "query": "Apollo review", "workspace": dead_ws[0], "scope": "workspace"})
        assert r.status_code == 200 and r.json()["results"]


def fences(c: Cluster, ws: str) -> dict[str, str]:
    """holder -> the shard each live copy of ``ws``'s file names (unfenced: its holder)."""
    out = {}
    for shard in (*SHARDS, NEW_SHARD):
        path = c.data(shard) / "workspaces" / ws / "workspace.mind"
        if not path.exists():
            continue
        try:
            found = read_file_fence(path)
        except Exception:  # renamed into place or aside right now
            continue
        out[shard] = found.shard if found is not None else shard
    return out


async def save_until_acked(client: httpx.AsyncClient, gateway: str, ws: str, text: str,
                           key: str) -> None:
    """A client's retry, with its key: of a retryable refusal (503 while its mind moves) and
    of a write whose answer was lost on the way (outcome_unknown, or the connection closed
    under the request, as a keep-alive connection can be: the key makes it once)."""
    for _ in range(300):
        try:
            status, _, resp = await save(client, gateway, ws, text, key)
        except httpx.TransportError:
            await asyncio.sleep(0.1)
            continue
        if status in (200, 201):
            return
        lost = resp.json()["error"]["code"] == "outcome_unknown"
        assert lost or (status == 503 and resp.headers.get("Retry-After")), resp.text
        await asyncio.sleep(0.1)
    raise AssertionError(f"{ws} refused for 30 s")


async def test_rebalance_onto_a_fourth_shard_under_load(cluster: Cluster) -> None:
    c = cluster
    acked: dict[str, str] = {}
    async with httpx.AsyncClient(timeout=30, limits=POOL_LIMITS) as client:
        for ws in WORKSPACES:
            r = await client.post(f"{c.gateway}/v1/workspaces", headers=AUTH,
                                  json={"name": f"Project {ws}", "id": ws, "group": "moving"})
            assert r.status_code == 201, r.text
            for n in range(4):
                text = f"first note {n} for {ws}: the Apollo review moved"
                await save_until_acked(client, c.gateway, ws, text, f"first-{ws}-{n}")
                acked[text] = ws
        grown = parse_shards(c.grown_map)
        moving = [ws for ws in WORKSPACES if grown.owner(f"workspace:{ws}") == NEW_SHARD]
        assert moving and all(c.owner(ws) != NEW_SHARD for ws in WORKSPACES)
        c.start_shard(NEW_SHARD, c.grown_map)
        await eventually(lambda: ready(client, c.url(NEW_SHARD)), 90, "new shard ready")

        stop_load = asyncio.Event()
        violations: list[str] = []

        async def load() -> None:
            n = 0
            while not stop_load.is_set():
                batch = []
                for ws in WORKSPACES:
                    text = f"load note {n} for {ws}: Alice moved the Apollo review"
                    batch.append(save_until_acked(client, c.gateway, ws, text, f"l-{ws}-{n}"))
                    acked[text] = ws
                await asyncio.gather(*batch)
                n += 1

        async def sample() -> None:
            while not stop_load.is_set():
                for ws in WORKSPACES:
                    named = set((await asyncio.to_thread(fences, c, ws)).values())
                    if len(named) > 1:
                        violations.append(f"{ws}: {named}")
                await asyncio.sleep(0.05)

        loader, sampler = asyncio.ensure_future(load()), asyncio.ensure_future(sample())
        await asyncio.sleep(1.0)
        # a rebalance cut off after its first release: handed over, not yet copied
        cut = f"/v1/cluster/minds/{quote('workspace:' + moving[0], safe='')}"
        r = await client.post(f"{c.url(NEW_SHARD)}{cut}/expect", headers=AUTH)
        assert r.status_code == 200, r.text
        r = await client.post(f"{c.url(c.owner(moving[0]))}{cut}/release", headers=AUTH,
                              json=sign_order(CLUSTER_KEY, f"workspace:{moving[0]}", NEW_SHARD,
                                              0, c.url(NEW_SHARD)))
        assert r.status_code == 200 and r.json()["state"] == "released", r.text
        await asyncio.sleep(0.5)  # its saves meanwhile: 503 + Retry-After, retried
        env = {**os.environ, **c.common, "HIVE_MIND_SHARDS": c.grown_map,
               "HIVE_MIND_API_TOKEN": TOKEN}
        done = await asyncio.to_thread(subprocess.run, [
            str(ROOT / ".venv/bin/hive-mind"), "cluster", "rebalance", "--from-shards",
            c.shard_map, "--json"], capture_output=True, env=env, timeout=300, cwd=ROOT)
        await asyncio.sleep(1.0)
        stop_load.set()
        await asyncio.gather(loader, sampler)
        assert done.returncode == 0, done.stderr.decode()[-3000:]
        report = json.loads(done.stdout)
        assert sorted(report["moved"]) == sorted(f"workspace:{ws}" for ws in moving)
        resumed = {m["mind_id"]: m["release"] for m in report["moves"]}
        assert resumed.pop(f"workspace:{moving[0]}") is False  # the cut-off move, resumed
        assert all(resumed.values())
        assert violations == []

        # every mind on exactly one volume, its new owner's, fenced for it
        for ws in WORKSPACES:
            assert fences(c, ws) == {grown.owner(f"workspace:{ws}"):
                                     grown.owner(f"workspace:{ws}")}, ws
        # a moved workspace answers through the gateway still on the old map (its old owner
        # forwards); then the gateway restarts on the new map and lists every workspace
        r = await client.get(f"{c.gateway}/v1/workspaces/{moving[0]}", headers=AUTH)
        assert r.status_code == 200 and r.json()["group"] == "moving", r.text
        stop(c.procs["gateway"])
        c.start_gateway(c.grown_map)
        await eventually(lambda: ready(client, c.gateway), 90, "gateway on the new map")
        listed = (await client.get(f"{c.gateway}/v1/workspaces", headers=AUTH)).json()
        assert sorted(w["id"] for w in listed["workspaces"]) == WORKSPACES
        assert {w["group"] for w in listed["workspaces"]} == {"moving"}

        def new_file(ws: str) -> Path:
            owner = grown.owner(f"workspace:{ws}")
            return c.data(owner) / "workspaces" / ws / "workspace.mind"

        async def indexed() -> bool:
            for ws in WORKSPACES:
                state = await file_state(new_file(ws))
                if state["pending"] or state["vectors"] != state["frames"]:
                    return False
            return True

        await eventually(indexed, 120, "every workspace indexed after the rebalance")
        for ws in WORKSPACES:
            contents = (await file_state(new_file(ws)))["contents"]
            for text in (t for t, w in acked.items() if w == ws):
                assert contents.get(text) == 1, (ws, text, contents.get(text))
        r = await client.post(f"{c.gateway}/v1/recall", headers=AUTH, json={
            "query": "Apollo review", "workspace": moving[0], "scope": "workspace"})
        assert r.status_code == 200 and r.json()["results"], r.text

        # run again: nothing left to move
        again = await asyncio.to_thread(subprocess.run, [
            str(ROOT / ".venv/bin/hive-mind"), "cluster", "rebalance", "--from-shards",
            c.shard_map, "--json"], capture_output=True, env=env, timeout=120, cwd=ROOT)
        assert again.returncode == 0 and json.loads(again.stdout)["moves"] == []
