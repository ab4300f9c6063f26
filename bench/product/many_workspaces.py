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

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.product.many_workspaces [--workspaces 1000]
        [--frames 300] [--personal 100000] [--queries 30] [--max-open 16 64]
        [--exhaustive-queries 5] [--keep DIR]

Each ``--max-open`` value is one routed run (``HIVE_MIND_SCOPE_MINDS`` default); a last run
searches every workspace (``HIVE_MIND_SCOPE_MINDS=0``) for the side-by-side ratio.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import in_data_dir, write_section
from bench.product.serve_recall import Server, build, pct, queries, rss_mb, vocabulary


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


async def measure(args: argparse.Namespace, data: Path, env: dict[str, str], n_queries: int
                  ) -> dict[str, Any]:
    """One ``serve`` with ``env``: the first recall right after /readyz, then ``n_queries``
    more (each a new query), status and the workspace list (5 each), RSS."""
    import httpx

    server = Server([sys.executable, "-m", "hive_mind", "serve"], env, data / "serve.log")
    texts = queries(vocabulary(), n_queries + 1)
    try:
        async with httpx.AsyncClient(timeout=600) as client:
            await server.ready(client, "/readyz")
            recall, routing = [], None
            for q in texts:
                started = time.perf_counter()
                response = await client.post(server.url + "/v1/recall",
                                             json={"query": q, "scope": "all", "limit": 10})
                response.raise_for_status()
                recall.append((time.perf_counter() - started) * 1000)
                routing = response.json().get("routing")
            status = [await timed(client, "GET", server.url + "/v1/status") for _ in range(5)]
            listing = [await timed(client, "GET", server.url + "/v1/workspaces")
                       for _ in range(5)]
            rss = rss_mb(server.proc.pid)
    finally:
        server.close()
    log = (data / "serve.log").read_text(encoding="utf-8", errors="replace")
    warmed = re.findall(r"routing summaries of \d+ workspaces ready in ([\d.]+) s", log)
    return {"cold": recall[0], "warm": recall[1:], "status": status, "list": listing,
            "rss": rss, "warm_up": float(warmed[-1]) if warmed else None,
            "searched": routing["searched"] if routing else args.workspaces}


async def run(args: argparse.Namespace, data: Path) -> list[tuple[str, dict[str, Any]]]:
    from hive_mind.settings import load_settings
    from mind.embeddings.base import fingerprint
    from mind.embeddings.registry import PROVIDERS

    embedder = PROVIDERS["inprocess"](load_settings().embedding_config())
    await embedder.embed_batch(["the fingerprint"])
    await build_data(data, args, fingerprint(embedder))
    await embedder.close()
    base = {**os.environ, "HF_HUB_OFFLINE": "1", "HIVE_MIND_DATA_DIR": str(data),
            "HIVE_MIND_MAINTENANCE_ENABLED": "false"}
    base.pop("HIVE_MIND_REDIS_URL", None)
    rows = []
    for n in args.max_open:
        env = {**base, "HIVE_MIND_MAX_OPEN_MINDS": str(n)}
        label = f"routed (default), HIVE_MIND_MAX_OPEN_MINDS={n}"
        rows.append((label, await measure(args, data, env, args.queries)))
        print(label, summary(rows[-1][1]), flush=True)
    if args.exhaustive_queries:
        env = {**base, "HIVE_MIND_SCOPE_MINDS": "0"}
        label = f"every workspace (HIVE_MIND_SCOPE_MINDS=0), {args.max_open[-1]} open"
        env["HIVE_MIND_MAX_OPEN_MINDS"] = str(args.max_open[-1])
        rows.append((label, await measure(args, data, env, args.exhaustive_queries)))
        print(label, summary(rows[-1][1]), flush=True)
    return rows


def summary(r: dict[str, Any]) -> str:
    return (f"cold {r['cold']:.0f} ms, warm p50 {statistics.median(r['warm']):.0f} / p95 "
            f"{pct(r['warm'], 95):.0f} ms, status {statistics.median(r['status']):.0f} ms, "
            f"list {statistics.median(r['list']):.0f} ms, RSS {r['rss']:.0f} MB")


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def report(args: argparse.Namespace, rows: list[tuple[str, dict[str, Any]]]) -> None:
    lines = [
        f"`HF_HUB_OFFLINE=1 .venv/bin/python -m bench.product.many_workspaces --workspaces "
        f"{args.workspaces} --frames {args.frames} --personal {args.personal} --queries "
        f"{args.queries} --max-open {' '.join(map(str, args.max_open))} --exhaustive-queries "
        f"{args.exhaustive_queries}` on {os.cpu_count()} cores ({cpu_model()}): "
        f"{args.workspaces:,} workspaces of {args.frames:,} frames and a personal mind of "
        f"{args.personal:,}, through `serve` (embedded, default settings but the ones named, "
        "HTTP on loopback, the real model embedding each query; the minds built directly with "
        "synthetic text and vectors, each workspace its own). Every recall is a new query "
        "(`scope: all`, limit 10), so most routed workspaces are not open yet. Cold: the first "
        "recall right after `/readyz`, while serve's background warm-up (embedder, every "
        "workspace's routing summary) still runs.",
        "",
        "| configuration | workspaces searched | first recall (cold) | warm-up | recall p50 / "
        "p95 | `GET /v1/status` | `GET /v1/workspaces` | RSS after |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, r in rows:
        warm_up = f"{r['warm_up']:.1f} s" if r["warm_up"] is not None else "—"
        lines.append(
            f"| {label} | {r['searched']} | {r['cold']:,.0f} ms | {warm_up} | "
            f"{statistics.median(r['warm']):,.0f} / {pct(r['warm'], 95):,.0f} ms | "
            f"{statistics.median(r['status']):.0f} ms | {statistics.median(r['list']):.0f} ms "
            f"| {r['rss']:.0f} MB |")
    lines += ["", "Targets (issue #16): scope-wide p95 ≤ 500 ms warm at 1,000 workspaces, status "
              "and the workspace list under a second, RSS bounded by the LRU of open minds."]
    write_section(f"Many workspaces ({args.workspaces:,})", "\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workspaces", type=int, default=1000)
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--personal", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--max-open", type=int, nargs="+", default=[16, 64],
                        help="HIVE_MIND_MAX_OPEN_MINDS of each routed run")
    parser.add_argument("--exhaustive-queries", type=int, default=5,
                        help="queries of a run searching every workspace (0: none)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="build the data dir here and keep it (reused when present)")
    args = parser.parse_args()
    result = in_data_dir(args.keep, "hm-many-", lambda data: run(args, data))
    report(args, result)


if __name__ == "__main__":
    main()
