"""How much slower the same CPU work runs right after the process has been idle.

A recall through ``serve`` mostly arrives after a pause, and on a virtual machine whose idle
vCPUs halt (this one: ``cpuidle_haltpoll`` with ``guest_halt_poll_ns=0``) the first
milliseconds after a pause can run slower than back-to-back work. bench/product/serve_recall.py sends
each query to every server in turn (ours, the flat KNN server taking ~0.9 s at 1,000,000 rows),
so our requests there come after such pauses, and back-to-back requests from a loop do not.
This separates the machine's part from ours: one fixed unit of single-thread NumPy work
(a few (2,000 × 384) @ (384 × 64) products, no threads, no I/O), timed after sleeps of each
length, in alternating rounds.

Not a product figure: it measures the machine.

    .venv/bin/python -m bench.idle_wake [--gaps 0 0.002 0.01 0.05 0.5] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from bench.common import machine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gaps", type=float, nargs="+", default=[0, 0.002, 0.01, 0.05, 0.5])
    parser.add_argument("--units", type=int, default=60, help="timed units per gap per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import threadpoolctl

    threadpoolctl.threadpool_limits(1)
    rows = np.random.default_rng(0).standard_normal((2000, 384)).astype(np.float32)
    queries = np.random.default_rng(1).standard_normal((384, 64)).astype(np.float32)

    def unit() -> float:
        start = time.perf_counter()
        for _ in range(4):
            rows @ queries
        return (time.perf_counter() - start) * 1000

    times: dict[float, list[float]] = {g: [] for g in args.gaps}
    for _ in range(args.rounds):
        for gap in args.gaps:
            for _ in range(args.units):
                if gap:
                    time.sleep(gap)
                times[gap].append(unit())
    print(f"_{machine()}_\n")
    print("| idle before each unit, ms | unit p50, ms | p95, ms | p50 vs back-to-back |")
    print("|---:|---:|---:|---:|")
    base = statistics.median(times[args.gaps[0]])
    for gap, values in times.items():
        values.sort()
        p50, p95 = statistics.median(values), values[round(0.95 * (len(values) - 1))]
        print(f"| {gap * 1000:g} | {p50:.2f} | {p95:.2f} | {p50 / base:.2f}× |")


if __name__ == "__main__":
    main()
