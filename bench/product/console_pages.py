"""The web console's pages through ``hive-mind serve``: the time each page takes to render,
with a personal mind of ``--personal`` frames (sessions of 50) and ``--workspaces``
workspaces of ``--frames`` frames each.

The data dir is built directly (synthetic sentences and vectors under the default embedder's
fingerprint, a knowledge graph of ``--entities`` entities in the personal mind); the
measurement goes through the product: ``hive-mind serve`` with default settings and an API
token, signed in to the console as a browser is (the login form, its session cookie), each
page fetched ``--repeat`` times after one warm-up fetch over loopback HTTP. The figure is the
request's wall time at the client, an upper bound of the server's time (the target: each
page ≤ 300 ms at 100,000 frames and 1,000 workspaces).

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.product.console_pages [--personal 100000]
        [--workspaces 1000] [--frames 20] [--entities 2000] [--repeat 10] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import sys
from pathlib import Path

from bench.common import in_data_dir, write_section
from bench.product.many_workspaces import build_data, timed
from bench.product.serve_recall import Server, pct

TOKEN = "console-bench-token-0123456789"


async def add_graph(path: Path, entities: int) -> None:
    """``entities`` entities, each related to three others, the first one to 60."""
    from mind.mind import Mind

    rng = random.Random(7)
    async with await Mind.open(path) as mind:
        kg = mind.knowledge
        if await kg.get_entity_count() >= entities:
            return
        ids = [(await kg.upsert_entity("concept", f"Topic {n:05d}"))[0].id
               for n in range(entities)]
        pairs = {(ids[0], ids[k]) for k in range(1, 61)}
        while len(pairs) < entities * 3:
            a, b = rng.sample(ids, 2)
            pairs.add((a, b))
        for a, b in sorted(pairs):
            await kg.create_relation(a, b, rng.choice(("uses", "part_of", "depends_on")))


def pages(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(what, path) of every page measured."""
    last = max(1, args.personal // 50 // 50)  # the last page of sessions (50 a page)
    frame, session = args.personal // 2, f"s{args.personal // 100}"  # in the middle
    return [
        ("Search (scope personal)", "/ui/search?q=quarterly+budget+review+thursday"),
        ("Search (scope all)", "/ui/search?q=quarterly+budget+review&scope=all"),
        ("Memories: sessions, page 1", "/ui/memories"),
        (f"Memories: sessions, page {last}", f"/ui/memories?page={last}"),
        ("Memories: a session's frames", f"/ui/memories/session?session={session}"),
        ("Memories: one frame", f"/ui/memories/frame?id={frame}"),
        ("Memories: forget, asked to confirm", f"/ui/memories/forget?id={frame}"),
        ("Knowledge graph: entity search", "/ui/graph?q=Topic+001"),
        ("Knowledge graph: entity with 60 neighbours", "/ui/graph/entity?id=1"),
        ("Knowledge graph: its elements (JSON)", "/ui/graph/entity.json?id=1"),
        ("Workspaces", "/ui/workspaces"),
        ("Imports", "/ui/imports"),
        ("Operations", "/ui/operations"),
        ("Memories of a workspace", f"/ui/memories?workspace=ws-{args.workspaces // 2:04d}"),
    ]


async def measure(args: argparse.Namespace, data: Path) -> list[tuple[str, list[float]]]:
    import httpx

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HIVE_MIND_DATA_DIR": str(data),
           "HIVE_MIND_MAINTENANCE_ENABLED": "false", "HIVE_MIND_API_TOKEN": TOKEN}
    env.pop("HIVE_MIND_REDIS_URL", None)
    server = Server([sys.executable, "-m", "hive_mind", "serve"], env, data / "serve.log")
    rows = []
    try:
        async with httpx.AsyncClient(timeout=600, base_url=server.url) as client:
            await server.ready(client, "/readyz")
            while (await client.get("/readyz")).status_code != 200:
                await asyncio.sleep(0.5)
            login = await client.get("/ui/login")
            nonce = re.search(r'name="csrf" value="([^"]+)"', login.text)
            assert nonce is not None
            await client.post("/ui/login", data={"csrf": nonce.group(1), "token": TOKEN})
            for what, path in pages(args):
                await timed(client, "GET", path)  # the first fetch: the mind opened, cached
                times = [await timed(client, "GET", path) for _ in range(args.repeat)]
                rows.append((what, times))
                print(f"{what}: p50 {statistics.median(times):.1f} ms, "
                      f"max {max(times):.1f} ms", flush=True)
    finally:
        server.close()
    return rows


async def run(args: argparse.Namespace, data: Path) -> list[tuple[str, list[float]]]:
    from hive_mind.settings import load_settings
    from mind.embeddings.base import fingerprint
    from mind.embeddings.registry import PROVIDERS

    embedder = PROVIDERS["inprocess"](load_settings().embedding_config())
    await embedder.embed_batch(["the fingerprint"])
    await build_data(data, args, fingerprint(embedder))
    await embedder.close()
    await add_graph(data / "personal.mind", args.entities)
    return await measure(args, data)


def report(args: argparse.Namespace, rows: list[tuple[str, list[float]]]) -> None:
    lines = [f"Personal mind of {args.personal:,} frames ({args.personal // 50:,} sessions) "
             f"and {args.entities:,} entities, {args.workspaces:,} workspaces of "
             f"{args.frames} frames; each page {args.repeat} times after a warm-up fetch, "
             "wall time at the client over loopback HTTP.", "",
             "| page | p50 ms | p95 ms | max ms |", "|---|---:|---:|---:|"]
    for what, times in rows:
        lines.append(f"| {what} | {statistics.median(times):.1f} | {pct(times, 95):.1f} | "
                     f"{max(times):.1f} |")
    write_section(f"console pages, {args.personal:,} frames, {args.workspaces:,} workspaces",
                  "\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--personal", type=int, default=100_000)
    parser.add_argument("--workspaces", type=int, default=1000)
    parser.add_argument("--frames", type=int, default=20)
    parser.add_argument("--entities", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--keep", type=Path, default=None,
                        help="build the data dir here and keep it (reused when present)")
    args = parser.parse_args()
    rows = in_data_dir(args.keep, "hm-console-", lambda data: run(args, data))
    report(args, rows)


if __name__ == "__main__":
    main()
