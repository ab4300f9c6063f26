"""One deployment, many workspaces: scope-wide recall, status and the workspace list through
``serve`` over HTTP, and the server's RSS.

Builds a data dir of ``--workspaces`` workspaces of ``--frames`` frames each plus a personal
mind of ``--personal`` frames (synthetic sentences; vectors synthetic too, under the default
embedder's fingerprint — the data is built directly, the measurement goes through the product:
``hive-mind serve`` with default settings, the real model embedding each query). Then:

* ``POST /v1/recall {"scope": "all"}``: the first query after start (cold: no mind open) and
  ``--queries`` more (warm), p50 / p95;
* ``GET /v1/status`` and ``GET /v1/workspaces``: median of 5 (after the queries);
* the server's RSS after the queries.

Issue #16 targets: scope-wide p95 ≤ 500 ms at 1,000 workspaces (warm), status and workspace list
under a second, RSS bounded by the LRU of open minds (``HIVE_MIND_MAX_OPEN_MINDS``).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/many_workspaces.py [--workspaces 1000]
        [--frames 300] [--personal 100000] [--queries 30] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import write_section
from serve_recall import Server, build, pct, queries, rss_mb, vocabulary


async def build_data(data: Path, args: argparse.Namespace, fp: tuple[str, str, int]) -> None:
    from actors.host import mind_path
    from hive_mind.workspaces import WorkspaceManager, mind_id

    manager = WorkspaceManager(data)
    started = time.perf_counter()
    for k in range(args.workspaces):
        slug = f"ws-{k:04d}"
        if not manager.exists(slug):
            manager.create(f"Workspace {k}", workspace_id=slug)
            await build(mind_path(data, mind_id(slug)), args.frames, "random", fp,
                        seed=1_000_003 + k, quiet=True)  # each workspace its own content
        if k % 100 == 99:
            print(f"  {k + 1} workspaces in {time.perf_counter() - started:.0f} s", flush=True)
    personal = data / "personal.mind"
    if not personal.exists():
        await build(personal, args.personal, "random", fp)


async def timed(client: Any, method: str, url: str, **kw: Any) -> float:
    started = time.perf_counter()
    response = await client.request(method, url, **kw)
    response.raise_for_status()
    return (time.perf_counter() - started) * 1000


async def run(args: argparse.Namespace, data: Path) -> dict[str, Any]:
    import httpx

    from hive_mind.settings import load_settings
    from mind.embeddings.base import fingerprint
    from mind.embeddings.registry import PROVIDERS

    embedder = PROVIDERS["inprocess"](load_settings().embedding_config())
    await embedder.embed_batch(["the fingerprint"])
    await build_data(data, args, fingerprint(embedder))
    await embedder.close()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HIVE_MIND_DATA_DIR": str(data),
           "HIVE_MIND_MAINTENANCE_ENABLED": "false"}
    env.pop("HIVE_MIND_REDIS_URL", None)
    server = Server([sys.executable, "-m", "hive_mind", "serve"], env, data / "serve.log")
    texts = queries(vocabulary(), args.queries + 1)
    try:
        async with httpx.AsyncClient(timeout=600) as client:
            await server.ready(client, "/readyz")
            recall = [await timed(client, "POST", server.url + "/v1/recall",
                                  json={"query": q, "scope": "all", "limit": 10})
                      for q in texts]
            status = [await timed(client, "GET", server.url + "/v1/status") for _ in range(5)]
            listing = [await timed(client, "GET", server.url + "/v1/workspaces")
                       for _ in range(5)]
            rss = rss_mb(server.proc.pid)
    finally:
        server.close()
    log = (data / "serve.log").read_text(encoding="utf-8", errors="replace")
    warmed = re.findall(r"routing summaries of \d+ workspaces ready in ([\d.]+) s", log)
    return {"cold": recall[0], "warm": recall[1:], "status": status, "list": listing,
            "rss": rss, "warm_up": float(warmed[-1]) if warmed else None}


def report(args: argparse.Namespace, r: dict[str, Any]) -> None:
    warm = r["warm"]
    body = "\n".join([
        f"`HF_HUB_OFFLINE=1 .venv/bin/python bench/many_workspaces.py --workspaces "
        f"{args.workspaces} --frames {args.frames} --personal {args.personal} --queries "
        f"{args.queries}`: {args.workspaces:,} workspaces of {args.frames:,} frames and a "
        f"personal mind of {args.personal:,}, through `serve` (embedded, default settings, the "
        "real model embedding each query; the minds built directly with synthetic vectors).",
        "",
        "| measure | value |",
        "|---|---:|",
        f"| recall scope `all`, first query right after `/readyz` (cold) | {r['cold']:.0f} ms |",
        f"| serve's warm-up (embedder + routing summaries, background) | "
        f"{r['warm_up'] if r['warm_up'] is not None else '—'} s |",
        f"| recall scope `all`, warm p50 / p95 | {statistics.median(warm):.0f} / "
        f"{pct(warm, 95):.0f} ms |",
        f"| `GET /v1/status` median | {statistics.median(r['status']):.0f} ms |",
        f"| `GET /v1/workspaces` median | {statistics.median(r['list']):.0f} ms |",
        f"| serve RSS after the queries | {r['rss']:.0f} MB |",
        "",
        "Targets (issue #16): scope-wide p95 ≤ 500 ms warm at 1,000 workspaces, status and the "
        "workspace list under a second, RSS bounded by the LRU of open minds.",
    ])
    write_section(f"Many workspaces ({args.workspaces:,})", body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workspaces", type=int, default=1000)
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--personal", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--keep", type=Path, default=None,
                        help="build the data dir here and keep it (reused when present)")
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        result = asyncio.run(run(args, args.keep))
    else:
        with tempfile.TemporaryDirectory(prefix="hm-many-") as tmp:
            result = asyncio.run(run(args, Path(tmp)))
    print(result["cold"], statistics.median(result["warm"]), pct(result["warm"], 95),
          statistics.median(result["status"]), statistics.median(result["list"]), result["rss"])
    report(args, result)


if __name__ == "__main__":
    main()
