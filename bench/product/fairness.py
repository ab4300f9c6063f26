"""Fair indexing: saves in one workspace while another workspace's bulk import is cognified.

Per mode, two runs on fresh data dirs with the same synthetic ChatGPT export
(``harvest_bench.generate``), alternating:

1. **alone** — the export harvested into workspace ``bulk`` until fully indexed (frames/s);
2. **with saves** — the same import while a client saves one memory into workspace ``live``
   every ``--interval`` seconds and waits for it to be indexed (``wait``): per save, the time
   from the request to its vector being written (ack + indexing; the ack alone is a few ms).

The modes, through the product's own path and default settings:

* **embedded** — one process: ``HiveMind`` (embedded runtime, real model) runs
  ``harvest(..., wait=True)`` and ``save(..., wait=True)`` concurrently;
* **distributed** — ``hive-mind serve`` (the mind host) and one ``hive-mind worker`` on Redis,
  driven over HTTP: ``POST /v1/harvest`` (a path on the server) and
  ``POST /v1/memories {"wait": true}``.

Targets (issue #16): save → indexed p95 ≤ 2 s during the import, import throughput with the
saves ≥ 90 % of alone.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.product.fairness [--conversations 1000] [--messages 20]
        [--interval 1.0] [--modes embedded distributed] [--redis-url redis://127.0.0.1:6379/13]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, write_section
from bench.product.harvest_bench import generate
from bench.product.serve_recall import Server, pct

SAVE_TEXT = "Note {i}: the quarterly budget review moved to Friday at 10:00 with Priya."
HTTP_TIMEOUT = 3600.0


class Saver:
    """Saves one memory every ``interval`` s until stopped; records request → indexed."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.latencies: list[float] = []
        self.stop = asyncio.Event()

    async def run(self, save: Any, warmup: float) -> None:
        await asyncio.sleep(warmup)  # the import is writing and indexing by then
        i = 0
        while not self.stop.is_set():
            started = time.perf_counter()
            await save(SAVE_TEXT.format(i=i))
            self.latencies.append(time.perf_counter() - started)
            i += 1
            pause = self.interval - (time.perf_counter() - started)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), max(0.0, pause))


async def embedded_run(export: Path, data: Path, interval: float | None) -> dict[str, Any]:
    from hive_mind.facade import HiveMind

    async with await HiveMind.open(data_dir=data, maintenance_enabled=False) as hm:
        await hm.runtime.embedder_ready()
        for name in ("bulk", "live"):
            await hm.create_workspace(name, workspace_id=name)
        await hm.save("warm the query path", workspace="live", wait=True)

        async def save(text: str) -> None:
            await hm.save(text, workspace="live", wait=True)

        async def harvest() -> dict[str, Any]:
            return await hm.harvest("chatgpt", export, workspace="bulk", wait=True)

        return await timed(harvest, save, interval)


async def timed(harvest: Any, save: Any, interval: float | None) -> dict[str, Any]:
    saver = Saver(interval or 1.0)
    task = asyncio.ensure_future(saver.run(save, 3.0)) if interval else None
    started = time.perf_counter()
    summary = await harvest()
    elapsed = time.perf_counter() - started
    if task is not None:
        saver.stop.set()
        await task
    return {"frames": summary["frames_created"], "elapsed": elapsed,
            "rate": summary["frames_created"] / elapsed, "latencies": saver.latencies}


async def distributed_run(export: Path, data: Path, interval: float | None,
                          redis_url: str) -> dict[str, Any]:
    import httpx

    from workers.queue import connect

    redis = await connect(redis_url)
    await redis.flushdb()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HIVE_MIND_DATA_DIR": str(data),
           "HIVE_MIND_REDIS_URL": redis_url, "HIVE_MIND_HOST_ID": "fair",
           "HIVE_MIND_MAINTENANCE_ENABLED": "false"}
    data.mkdir(parents=True, exist_ok=True)
    worker_log = (data / "worker.log").open("ab")
    worker = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hive_mind", "worker", cwd=ROOT, env=env, stdout=worker_log,
        stderr=worker_log)
    server = Server([sys.executable, "-m", "hive_mind", "serve"], env, data / "serve.log")
    try:
        async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as client:
            await server.ready(client, "/readyz")
            for name in ("bulk", "live"):
                response = await client.post(server.url + "/v1/workspaces",
                                             json={"name": name, "id": name})
                response.raise_for_status()

            async def save(text: str) -> None:
                response = await client.post(server.url + "/v1/memories", json={
                    "content": text, "workspace": "live", "wait": True})
                response.raise_for_status()

            await save("warm the worker's model and the query path")

            async def harvest() -> dict[str, Any]:
                response = await client.post(server.url + "/v1/harvest", json={
                    "source": "chatgpt", "path": str(export), "workspace": "bulk",
                    "wait": True})
                response.raise_for_status()
                result: dict[str, Any] = response.json()
                return result

            return await timed(harvest, save, interval)
    finally:
        server.close()
        worker.terminate()
        await worker.wait()
        worker_log.close()
        await redis.flushdb()
        await redis.aclose()


async def run_mode(mode: str, export: Path, root: Path, args: argparse.Namespace
                   ) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, interval in (("alone", None), ("with saves", args.interval)):
        data = root / f"{mode}-{name.replace(' ', '-')}"
        if mode == "embedded":
            result = await embedded_run(export, data, interval)
        else:
            result = await distributed_run(export, data, interval, args.redis_url)
        shutil.rmtree(data, ignore_errors=True)
        out[name] = result
        lat = result["latencies"]
        extra = (f", saves: {len(lat)}, p50 {statistics.median(lat):.2f} s, "
                 f"p95 {pct(lat, 95):.2f} s, max {max(lat):.2f} s") if lat else ""
        print(f"{mode} {name}: {result['frames']} frames in {result['elapsed']:.1f} s "
              f"({result['rate']:.1f} frames/s){extra}", flush=True)
    return out


def report(args: argparse.Namespace, results: dict[str, dict[str, dict[str, Any]]],
           messages: int) -> None:
    lines = [
        f"`HF_HUB_OFFLINE=1 .venv/bin/python -m bench.product.fairness --conversations "
        f"{args.conversations} --messages {args.messages} --interval {args.interval} --modes "
        f"{' '.join(args.modes)}`: a {messages:,}-message ChatGPT export harvested into "
        "workspace `bulk` alone, then again while a client saves one memory into workspace "
        f"`live` every {args.interval:g} s and waits for it to be indexed (default settings, "
        "real model; distributed: `serve` + one `worker` over HTTP on the same machine).",
        "",
        "| mode | import alone (frames/s) | import with saves (frames/s) | with / alone | saves "
        "| save → indexed p50 | p95 | max |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for mode, runs in results.items():
        alone, busy = runs["alone"], runs["with saves"]
        lat = busy["latencies"]
        lines.append(
            f"| {mode} | {alone['rate']:.1f} | {busy['rate']:.1f} | "
            f"{busy['rate'] / alone['rate']:.2f} | {len(lat)} | "
            f"{statistics.median(lat):.2f} s | {pct(lat, 95):.2f} s | {max(lat):.2f} s |")
    lines += ["", "Targets: p95 ≤ 2 s, with / alone ≥ 0.90 (issue #16)."]
    write_section("Fair indexing", "\n".join(lines))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--modes", nargs="+", default=["embedded", "distributed"],
                        choices=["embedded", "distributed"])
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hm-fair-") as tmp:
        root = Path(tmp)
        export = root / "conversations.json"
        generate(export, args.conversations, args.messages)
        messages = args.conversations * args.messages
        results = {mode: await run_mode(mode, export, root, args) for mode in args.modes}
    report(args, results, messages)


if __name__ == "__main__":
    asyncio.run(main())
