"""A CLI ``save`` from another process while a bulk import writes into the same mind.

One process runs ``hive-mind harvest import chatgpt`` of a synthetic export (the generator of
bench/product/harvest_bench.py) into a data dir; meanwhile another runs ``--saves`` CLI saves into the
same mind, one after the other, each a fresh ``hive-mind save … --json`` process, and the wall
time of each (process start to exit: what a user or an agent's shell waits) is recorded. Before
the import starts, ``--idle`` saves into the same data dir give the figure of the machine
without the import. Only saves that started and ended while the import ran count as "during";
the bench stops saving when the import ends and says how many made it. Every save must land: the
bench counts them in the mind afterwards. What a waiting save printed on stderr is shown.
Bytecode is cached as an installed package's is (:func:`bench.common.cli_environment`); a first
save, not counted, creates the mind and writes that cache.

``--provider``: the import's embedder (``default``: the product default, the import indexes as
it writes; ``mock``: indexing off, the import writes as fast as it can). The saves always use
the product default, as ``hive-mind save`` runs.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.product.save_during_import [--conversations 2000]
        [--saves 50] [--idle 10] [--provider default]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

from bench.common import ROOT, cli_environment, machine
from bench.product.harvest_bench import generate


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def save(data: Path, text: str) -> tuple[float, str]:
    """One ``hive-mind save`` process: (wall seconds, its stderr); a failure stops the bench."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "hive_mind", "save", text, "--json"], cwd=ROOT,
                          env=cli_environment(data, "default", data.parent / "pycache"),
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"save failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    json.loads(done.stdout)  # the acknowledgement: the saved frame
    return wall, done.stderr.strip()


def summary(name: str, walls: list[float]) -> str:
    return (f"{name}: {len(walls)} saves, p50 {pct(walls, 50):.2f} s, p95 {pct(walls, 95):.2f} s,"
            f" p99 {pct(walls, 99):.2f} s, max {max(walls):.2f} s")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--conversations", type=int, default=2_000)
    p.add_argument("--messages", type=int, default=20)
    p.add_argument("--saves", type=int, default=50)
    p.add_argument("--idle", type=int, default=10, help="saves before the import (baseline)")
    p.add_argument("--provider", default="default", help="the import's embedder")
    args = p.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        export, data = root / "conversations.json", root / "data"
        generate(export, args.conversations, args.messages)
        save(data, "the first note: it creates the mind and writes the bytecode cache")
        idle = [save(data, f"idle note {i} about the garden")[0] for i in range(args.idle)]
        if idle:
            print(summary("idle mind", idle))
        log = (root / "import.log").open("w")  # not a pipe: a full one would stall the import
        importer = subprocess.Popen(
            [sys.executable, "-m", "hive_mind", "harvest", "import", "chatgpt", str(export),
             "--json"], cwd=ROOT, env=cli_environment(data, args.provider, root / "pycache"),
            stdout=subprocess.PIPE, stderr=log, text=True)
        started = time.perf_counter()
        mind = data / "personal.mind"
        while importer.poll() is None and _frames(mind) < args.idle + 1_001:
            time.sleep(0.2)  # the import is writing
        during: list[float] = []
        notes: list[str] = []
        for i in range(args.saves):
            if importer.poll() is not None:
                break
            wall, stderr = save(data, f"live note {i} while the import runs")
            if importer.poll() is not None:
                break  # it ended during this save: not counted
            during.append(wall)
            if stderr:
                notes.append(stderr.splitlines()[-1])
        out, _ = importer.communicate()
        log.close()
        if importer.returncode:
            raise SystemExit(f"import failed: {(root / 'import.log').read_text()[-2000:]}")
        result = json.loads(out)
        print(f"import: {result['frames_created']:,} frames in "
              f"{time.perf_counter() - started:.0f} s (embedder: {args.provider})")
        if not during:
            raise SystemExit("the import ended before the first save: use more --conversations")
        print(summary(f"during the import ({len(during)} of {args.saves} saves)", during))
        landed = _count(mind, "SELECT count(*) FROM memory_frames WHERE content LIKE 'live note %'")
        print(f"saves in the mind: {landed} (every acknowledged save: {landed >= len(during)})")
        for note in sorted(set(notes))[:5]:
            print(f"  a save said: {note}")


def _frames(mind: Path) -> int:
    return _count(mind, "SELECT count(*) FROM memory_frames") if mind.exists() else 0


def _count(mind: Path, sql: str) -> int:
    try:
        with closing(sqlite3.connect(f"file:{mind}?mode=ro", uri=True, timeout=10)) as conn:
            return int(conn.execute(sql).fetchone()[0])
    except sqlite3.Error:
        return 0


if __name__ == "__main__":
    main()
