"""Wall time of embedded CLI commands on a small mind (issue #14's "a CLI that answers in a
second"): ``hive-mind recall … --json`` and ``hive-mind save … --json`` as a user runs them,
each a fresh process with the default embedder, median of ``--runs`` (after one warm-up that
also creates the mind). Also peak RSS of one recall (``/usr/bin/time``-free: the child's
``ru_maxrss``).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/cli_latency.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "hive_mind", *args], cwd=ROOT, env=env, check=True,
                   capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HIVE_MIND_DATA_DIR": tmp, "HF_HUB_OFFLINE": "1"}
        for key in ("HIVE_MIND_REDIS_URL", "HIVE_MIND_URL", "HIVE_MIND_EMBEDDING_PROVIDER"):
            env.pop(key, None)
        timed(["save", "The Q3 budget review moved to Thursday", "--json"], env)
        recall = [timed(["recall", "budget", "--json"], env) for _ in range(args.runs)]
        save = [timed(["save", f"Note {i} about the budget", "--json"], env)
                for i in range(args.runs)]
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"{platform.processor() or platform.machine()}, median of {args.runs} fresh processes")
    print(f"  recall --json  {statistics.median(recall):5.2f} s  (min {min(recall):.2f})")
    print(f"  save --json    {statistics.median(save):5.2f} s  (min {min(save):.2f})")
    print(f"  peak RSS of a child: {rss_mb:,.0f} MB")


if __name__ == "__main__":
    main()
