"""Prometheus metrics (workers/metrics.py) scraped by a real HTTP client: ``serve``'s /metrics
during an import (embedded), its token rule, and a worker process's --metrics-port while it
runs cognify jobs from a real Redis."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from queue_schemas.jobs import CognifyItem, CognifyJob
from tests.chatgpt_chain import linear_conversation
from tests.conftest import REDIS_URL
from tests.http_server import running_server, server_settings
from tests.procs import eventually, spawn, stop
from workers.distributed import CognifyQueue


def scrape(client: httpx.Client | Any, url: str = "/metrics", **kw: Any) -> dict[tuple, float]:
    response = client.get(url, **kw)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return parse(response.text)


def parse(text: str) -> dict[tuple, float]:
    out: dict[tuple, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, *sorted(sample.labels.items()))] = sample.value
    return out


def value(samples: dict[tuple, float], name: str, **labels: str) -> float:
    return samples.get((name, *sorted(labels.items())), 0.0)


def export(conversations: int, turns: int) -> str:
    return json.dumps([linear_conversation(
        c, turns, lambda c, t: f"Conversation {c} turn {t}: Lena plans the Vega launch")
        for c in range(conversations)])


def test_serve_metrics_move_during_an_import(tmp_path: Path) -> None:
    with running_server(server_settings(tmp_path / "data")) as url, \
            httpx.Client(base_url=url, timeout=120) as client:
        before = scrape(client)
        assert value(before, "hive_mind_heartbeat_timestamp_seconds") > 0
        response = client.post("/v1/harvest", json={
            "source": "chatgpt", "data": export(20, 10), "filename": "conversations.json",
            "wait": True})
        assert response.status_code == 200, response.text
        assert response.json()["frames_created"] == 200
        saved = client.post("/v1/memories", json={"content": "Vega ships Friday", "wait": True})
        assert saved.status_code == 201, saved.text
        after = scrape(client)
    grew = {name: value(after, name, **labels) - value(before, name, **labels)
            for name, labels in [
                ("hive_mind_harvest_frames_total", {"source": "chatgpt"}),
                ("hive_mind_jobs_succeeded_total", {"kind": "cognify", "priority": "bulk"}),
                ("hive_mind_embedded_texts_total", {"priority": "bulk"}),
                ("hive_mind_group_commit_seconds_count", {}),
                ("hive_mind_job_seconds_count", {"kind": "cognify", "priority": "bulk"}),
            ]}
    assert grew["hive_mind_harvest_frames_total"] == 200
    assert grew["hive_mind_jobs_succeeded_total"] >= 4  # 200 frames in jobs of ≤ 64
    assert grew["hive_mind_embedded_texts_total"] >= 200
    assert grew["hive_mind_group_commit_seconds_count"] >= 2
    assert grew["hive_mind_job_seconds_count"] >= 4
    assert value(after, "hive_mind_jobs_succeeded_total", kind="cognify",
                 priority="interactive") >= 1
    assert value(after, "hive_mind_open_minds") >= 1
    assert value(after, "hive_mind_pending_index_frames") == 0
    assert value(after, "hive_mind_index_lag_seconds") == 0
    for band in ("interactive", "bulk"):
        assert ("hive_mind_queue_depth", ("priority", band), ("queue", "embedded")) in after


def test_metrics_need_the_token_unless_public(tmp_path: Path) -> None:
    settings = server_settings(tmp_path / "a", api_token="s3cret-token-for-tests")
    with running_server(settings) as url, httpx.Client(base_url=url) as client:
        assert client.get("/metrics").status_code == 401
        scrape(client, headers={"Authorization": "Bearer s3cret-token-for-tests"})
    public = server_settings(tmp_path / "b", api_token="s3cret-token-for-tests",
                             metrics_public=True)
    with running_server(public) as url, httpx.Client(base_url=url) as client:
        scrape(client)
        assert client.get("/v1/stats").status_code == 401  # only /metrics is exempt


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_worker_metrics_port_shows_its_jobs(redis: Any, tmp_path: Path) -> None:
    port = _free_port()
    env = {"HIVE_MIND_DATA_DIR": str(tmp_path / "data"), "HIVE_MIND_REDIS_URL": REDIS_URL,
           "HIVE_MIND_HOST_ID": "metrics", "HIVE_MIND_EMBEDDING_PROVIDER": "test"}
    queue = CognifyQueue(redis)
    await queue.send("workspace:w", [CognifyJob(
        mind_id="workspace:w", op_id=f"job-{k}", priority="bulk",
        items=[CognifyItem(frame_id=i + 1, content=f"text {k}.{i}") for i in range(5)])
        for k in range(3)])
    worker = spawn(["worker", "--metrics-port", str(port)], env, tmp_path / "worker.log")
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        async with httpx.AsyncClient(timeout=10) as client:
            async def done() -> bool:
                try:
                    samples = parse((await client.get(url)).text)
                except httpx.HTTPError:
                    return False
                return value(samples, "hive_mind_jobs_succeeded_total", kind="cognify",
                             priority="bulk") == 3

            await eventually(done, 60, "the worker's metrics to count its 3 jobs")
            samples = parse((await client.get(url)).text)
    finally:
        stop(worker)
    assert value(samples, "hive_mind_embedded_texts_total", priority="bulk") == 15
    assert value(samples, "hive_mind_heartbeat_timestamp_seconds") > 0
    assert ("hive_mind_queue_depth", ("priority", "bulk"),
            ("queue", "hive-mind:cognify")) in samples
