"""A backlog left by a killed import: a CLI save beside it, its resumption, then a re-embed.

1. **write**: a synthetic ChatGPT export (the generator of bench/product/harvest_bench.py)
   imported with indexing off (embedder ``mock``: degraded, nothing is embedded), in a child
   process: every frame stays in the outbox, as an import killed before its indexing caught up
   leaves them.
2. **save**: ``--saves`` ``hive-mind save … --json`` processes into a copy of that data dir,
   one after the other, with the product's default embedder, as a user runs them: the wall
   time of each (process start to exit; a first save into a mind of its own, not counted,
   writes the bytecode cache) and what it leaves behind — its own frame indexed or not, and
   how many frames are still pending.
3. **resume**: a fresh long-lived process (the facade, as ``serve``, ``mcp`` or an import opens
   a mind) uses the mind of step 1 (not the copy: the saves' vectors are the default model's,
   which a resumption with another embedder would refuse); its first use resumes the backlog,
   and it waits until the indexing settled. Reported: peak RSS (and the RSS before the resumption: the process with its
   embedder), wall time, frames still pending and vectors after. ``--provider test`` (default)
   indexes with the deterministic embedder (no model: the process's memory is the resumption's
   and the index's); ``mock`` leaves every job without effect (a degraded embedder), so the
   figure is the reading and queuing of the backlog alone.
4. **reembed** (``--reembed``): a fresh long-lived process with the test embedder at another
   dimension (``--reembed-dimensions``, a model change) runs ``maintenance reembed`` on that
   mind, as the CLI command does, and waits until every frame is re-embedded. Reported: its
   peak RSS (and before the re-embed), wall time, frames re-embedded. With ``--provider
   test`` the mind is indexed first, as a mind switched to a new model is.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.product.resume_bench [--conversations 5000]
        [--messages 20] [--saves 3] [--provider test] [--reembed [--reembed-dimensions 32]]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

from bench.common import ROOT, machine, write_section
from mind.constants import DEFAULT_TEST_DIMENSIONS
from bench.product.harvest_bench import generate, spawn
from bench.product.save_during_import import pct, save


def child(step: str, data: Path, provider: str, dimensions: int) -> None:
    """Open the mind in this process and resume its backlog (``resume``) or re-embed it
    (``reembed``), wait until indexing settled; print a JSON line with the figures."""
    import asyncio
    import logging

    from hive_mind.facade import HiveMind

    async def run() -> dict[str, float]:
        async with await HiveMind.open(data_dir=data, embedding_provider=provider,
                                       test_embedding_dimensions=dimensions) as hm:
            await hm.runtime.embedder_ready()
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            started = time.perf_counter()
            if step == "resume":
                queued = await hm.runtime.resume("personal")
            else:
                done = await hm.maintenance("reembed")
                queued = int(done["minds"]["personal"]["queued"])
            await hm.wait_idle()
            elapsed = time.perf_counter() - started
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            vectors = (await hm.stats())["vectors"]
        return {"queued": queued, "elapsed": elapsed, "rss_before_mb": before,
                "rss_mb": peak, "vectors": vectors}

    logging.disable(logging.WARNING)  # a degraded embedder warns once per cognify job
    print(json.dumps(asyncio.run(run())))


def run_child(step: str, data: Path, provider: str, dimensions: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-m", __spec__.name, "--child", step, "--data", str(data),
         "--provider", provider, "--reembed-dimensions", str(dimensions)], cwd=ROOT,
        capture_output=True, text=True, check=False, env=_offline())
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def _offline() -> dict[str, str]:
    import os

    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for key in ("HIVE_MIND_REDIS_URL", "HIVE_MIND_URL", "HIVE_MIND_EMBEDDING_PROVIDER"):
        env.pop(key, None)
    return env


def count(mind: Path, sql: str, *args: object) -> int:
    with closing(sqlite3.connect(f"file:{mind}?mode=ro", uri=True, timeout=30)) as conn:
        return int(conn.execute(sql, args).fetchone()[0])


def pending(mind: Path) -> int:
    return count(mind, "SELECT count(*) FROM pending_index")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--conversations", type=int, default=5_000)
    p.add_argument("--messages", type=int, default=20)
    p.add_argument("--saves", type=int, default=3, help="CLI saves beside the backlog")
    p.add_argument("--provider", default="test", help="the resuming process's embedder")
    p.add_argument("--reembed", action="store_true",
                   help="then re-embed the mind with the test embedder at another dimension")
    p.add_argument("--reembed-dimensions", type=int, default=32)
    p.add_argument("--child", choices=["resume", "reembed"])
    p.add_argument("--data", type=Path)
    args = p.parse_args()
    if args.child:
        child(args.child, args.data, args.provider if args.child == "resume" else "test",
              DEFAULT_TEST_DIMENSIONS if args.child == "resume" else args.reembed_dimensions)
        return
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        export, data = root / "conversations.json", root / "data"
        size = generate(export, args.conversations, args.messages)
        write = spawn(export, data, "mock")
        mind = data / "personal.mind"
        backlog = pending(mind)
        print(f"write: {write['frames']:,} frames ({size / 1e6:,.0f} MB export, mind file "
              f"{mind.stat().st_size / 1e6:,.0f} MB) in {write['elapsed']:.1f} s, "
              f"{backlog:,} pending")
        walls: list[float] = []
        own_indexed, left, copy = 0, backlog, root / "saves" / "personal.mind"
        if args.saves:
            save(root / "warm-up", "a first note in a mind of its own")  # not counted
            shutil.copytree(data, copy.parent)
        for i in range(args.saves):
            wall, _ = save(root / "saves", f"note {i} saved beside a dead import's backlog")
            walls.append(wall)
            frame = count(copy, "SELECT max(id) FROM memory_frames")
            own_indexed += not count(copy, "SELECT count(*) FROM pending_index WHERE "
                                           "frame_id = ?", frame)
            left = pending(copy)
            print(f"save {i + 1}: {wall:.2f} s, its frame indexed: "
                  f"{bool(own_indexed == i + 1)}, pending after: {left:,}")
        run = run_child("resume", data, args.provider, DEFAULT_TEST_DIMENSIONS)
        after = pending(mind)
        print(f"resume ({args.provider}): {run['queued']:,} frames re-queued, settled in "
              f"{run['elapsed']:.1f} s, peak RSS {run['rss_mb']:,.0f} MB (before the "
              f"resumption {run['rss_before_mb']:,.0f} MB), pending after: {after:,}")
        if args.reembed:
            again = run_child("reembed", data, "test", args.reembed_dimensions)
            left = pending(mind)
            print(f"reembed (test, {args.reembed_dimensions} dims): {again['queued']:,} frames "
                  f"queued, {again['vectors']:,} re-embedded in {again['elapsed']:.1f} s, peak "
                  f"RSS {again['rss_mb']:,.0f} MB (before the re-embed "
                  f"{again['rss_before_mb']:,.0f} MB), pending after: {left:,}")
    body = f"""
`HF_HUB_OFFLINE=1 .venv/bin/python -m bench.product.resume_bench --conversations {args.conversations} --messages {args.messages} --saves {args.saves} --provider {args.provider}`

A synthetic ChatGPT export imported with indexing off: {backlog:,} frames left in the outbox.

| measurement | result |
|---|---|
| CLI `save` beside the backlog, wall time p50 / max ({args.saves} saves) | {pct(walls, 50) if walls else 0:.2f} / {max(walls, default=0):.2f} s |
| saves whose own frame was indexed when they returned | {own_indexed} of {args.saves} |
| frames pending after the saves | {left:,} |
| resumption by a long-lived process (`{args.provider}`): frames re-queued, time until settled | {run['queued']:,}, {run['elapsed']:.1f} s |
| its peak RSS (before the resumption) | **{run['rss_mb']:,.0f} MB** ({run['rss_before_mb']:,.0f} MB) |
| frames pending after it | {after:,} |
"""
    write_section(f"Resuming a backlog ({args.provider})", body)
    if args.reembed:
        write_section(f"Re-embedding a mind ({args.reembed_dimensions} dims)", f"""
`HF_HUB_OFFLINE=1 .venv/bin/python -m bench.product.resume_bench --conversations {args.conversations} --messages {args.messages} --saves {args.saves} --provider {args.provider} --reembed --reembed-dimensions {args.reembed_dimensions}`

The mind of the resumption ({backlog:,} frames), re-embedded by `maintenance reembed` in a fresh
process with the `test` embedder at {args.reembed_dimensions} dimensions.

| measurement | result |
|---|---|
| frames queued, re-embedded, time until settled | {again['queued']:,}, {again['vectors']:,}, {again['elapsed']:.1f} s |
| its peak RSS (before the re-embed) | **{again['rss_mb']:,.0f} MB** ({again['rss_before_mb']:,.0f} MB) |
| frames pending after it | {left:,} |
""")


if __name__ == "__main__":
    main()
