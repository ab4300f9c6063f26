"""`save` acknowledgement latency in embedded mode while a bulk ingest runs, and that ingest's rate.

A bulk ingest (SaveFrames ops of 1,000 chat turns, with cognify running on the real model and
its index results applied through the same actor) keeps the mind busy; meanwhile single-frame
saves arrive every 20 ms and the time until each is acknowledged (committed) is recorded. The
same run times the bulk import until every frame is indexed (frames/s), so a configuration that
buys latency with throughput shows it. Each run is one embedder configuration:
``default`` (the settings' defaults, as ``hive-mind`` runs embedded), a backend name (the
defaults with that backend), or ``BACKEND:THREADS:NICE[:LANES]``.

``--trace`` explains the slow saves: it records the actor's group commits (start, end, op kinds,
frames: the actor's DEBUG records, actors/actor.py "Tracing"), the event loop's callbacks over
10 ms (asyncio's debug mode, ``slow_callback_duration``) and its lag (a 1 ms ticker's
overshoot), and prints, for the saves above the 95th percentile, what they overlapped. Debug
mode makes the loop's own work slower: a traced run's latencies explain, they are not figures.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.product.ack_latency [--bulk 20000] [--saves 1000]
        [--runs default torch onnx:2:10:1] [--trace]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.common import thread_groups, thread_times, write_section
from bench.product.ingest import chat, embedded_config, save_ops

from queue_schemas import ops
from workers.runtime import EmbeddedRuntime


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


@dataclass
class Trace:
    """What the loop and the writer did while saves waited (``--trace``)."""

    commits: list[tuple[float, float, str, int]] = field(default_factory=list)  # start, end, ...
    lags: list[tuple[float, float]] = field(default_factory=list)  # when, ms late
    saves: list[tuple[float, float]] = field(default_factory=list)  # start, end
    # loop callbacks over 10 ms: start, wall ms, what ran
    slow: list[tuple[float, float, str]] = field(default_factory=list)


class Commits(logging.Handler):
    """The actor's group commits, from the DEBUG record it makes after each ``COMMIT`` with the
    group's ops and its start (actors/actor.py, "Tracing")."""

    def __init__(self, trace: Trace) -> None:
        super().__init__(logging.DEBUG)
        self.trace = trace

    def emit(self, record: logging.LogRecord) -> None:
        batch, started = getattr(record, "ops", None), getattr(record, "started", None)
        if batch is None or started is None:
            return
        kinds = ",".join(sorted({op.kind for op in batch}))
        frames = sum(len(getattr(op, "frames", None) or getattr(op, "results", None) or [])
                     for op in batch)
        self.trace.commits.append((started, time.perf_counter(), f"{len(batch)}x {kinds}",
                                   frames))


class SlowCallbacks(logging.Filter):
    """The loop's callbacks over ``slow_callback_duration``, from asyncio's debug-mode warnings
    ("Executing <handle> took 0.012 seconds"), kept here instead of printed."""

    def __init__(self, trace: Trace) -> None:
        super().__init__()
        self.trace = trace

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        if not (str(record.msg).startswith("Executing ") and len(args) == 2):
            return True
        what, took = args
        self.trace.slow.append((time.perf_counter() - float(took), float(took) * 1000,
                                str(what)[:120]))
        return False


@contextlib.contextmanager
def tracing(trace: Trace) -> Iterator[None]:
    """Record the actor's commits and the loop's slow callbacks into ``trace`` meanwhile."""
    actor_log, asyncio_log = logging.getLogger("actors.actor"), logging.getLogger("asyncio")
    loop = asyncio.get_running_loop()
    commits, slow, level = Commits(trace), SlowCallbacks(trace), actor_log.level
    actor_log.setLevel(logging.DEBUG)
    actor_log.addHandler(commits)
    asyncio_log.addFilter(slow)
    loop.set_debug(True)
    loop.slow_callback_duration = 0.01
    try:
        yield
    finally:
        loop.set_debug(False)
        asyncio_log.removeFilter(slow)
        actor_log.removeHandler(commits)
        actor_log.setLevel(level)


async def ticker(trace: Trace) -> None:
    while True:
        start = time.perf_counter()
        await asyncio.sleep(0.001)
        late = (time.perf_counter() - start - 0.001) * 1000
        if late > 2:
            trace.lags.append((start, late))


def thread_report(before: dict[str, tuple[float, float]], after: dict[str, tuple[float, float]],
                  window: float) -> None:
    print(f"  threads over the {window:.1f} s of sampling (CPU s, waited for a core s):")
    groups = thread_groups(before, after)
    for group, (ran, waited, n) in sorted(groups.items(), key=lambda g: -g[1][0] - g[1][1]):
        if ran + waited > 0.05:
            print(f"    {group:<36} x{n}: ran {ran:5.1f}  waited {waited:5.1f}")


def explain(trace: Trace) -> None:
    lat = [(e - s) * 1000 for s, e in trace.saves]
    cut = pct(lat, 95)
    print(f"  trace: {len(trace.commits)} commits, loop lag > 2 ms {len(trace.lags)} times "
          f"(max {max((x for _, x in trace.lags), default=0):.0f} ms); slow saves (> p95 "
          f"{cut:.1f} ms):")
    durations = [(e - s) * 1000 for s, e, *_ in trace.commits]
    print(f"  commit ms: p50 {pct(durations, 50):.1f} p99 {pct(durations, 99):.1f} "
          f"max {max(durations):.0f}")
    slow_wall = sum(w for _, w, _ in trace.slow)
    print(f"  loop callbacks > 10 ms: {len(trace.slow)}, {slow_wall:.0f} ms wall; the longest:")
    for _, wall, what in sorted(trace.slow, key=lambda x: -x[1])[:8]:
        print(f"    {wall:6.1f} ms: {what}")
    kinds: dict[str, list[float]] = {}
    for _, wall, what in trace.slow:
        name = what.split(" ")[0].split(".")[-1]
        kinds.setdefault(name, [0.0, 0.0])
        kinds[name][0] += wall
        kinds[name][1] += 1
    for name, (wall, n) in sorted(kinds.items(), key=lambda x: -x[1][0])[:10]:
        print(f"    total {wall:7.0f} ms in {int(n)} callbacks: {name}")
    for (s, e), ms in sorted(zip(trace.saves, lat, strict=True), key=lambda x: -x[1])[:12]:
        before = [c for c in trace.commits if c[0] < s < c[1]]
        during = [c for c in trace.commits if s <= c[0] < e]
        lag = max((x for t, x in trace.lags if s - 0.05 <= t <= e), default=0.0)
        waited = ", ".join(f"{c[2]} {c[3]}fr {(c[1] - c[0]) * 1000:.0f}ms" for c in before)
        own = ", ".join(f"{c[2]} {c[3]}fr {(c[1] - c[0]) * 1000:.0f}ms" for c in during)
        print(f"    {ms:6.1f} ms: in flight at arrival [{waited}]; then [{own}]; "
              f"max loop lag {lag:.0f} ms")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bulk", type=int, default=20_000)
    parser.add_argument("--saves", type=int, default=400)
    parser.add_argument("--cognify-batch", type=int, default=None,
                        help="frames per cognify job (default: the runtime's)")
    parser.add_argument("--runs", nargs="*", default=["default", "torch", "default:2:10:1",
                                                      "default:1:10"],
                        help="embedder of each run: default | BACKEND | "
                             "BACKEND:THREADS:NICE[:LANES] (BACKEND may be 'default'), then "
                             "optionally the writer's /BULK_WEIGHT[/URGENT_WEIGHT] (frames per "
                             "group commit of bulk work; 0: no urgent lane; /1000/0 = before), "
                             "then optionally @JOBS (cognify jobs run at once; default 8)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run every configuration this many times (interleaved); medians")
    parser.add_argument("--trace", action="store_true", help="explain the slow saves")
    parser.add_argument("--switch-interval", type=float, default=None,
                        help="sys.setswitchinterval in ms (a diagnosis knob; default Python's)")
    parser.add_argument("--no-report", action="store_true")
    args = parser.parse_args()
    if args.switch_interval:
        sys.setswitchinterval(args.switch_interval / 1000)
    results: dict[str, list[tuple[list[float], list[float], float, str]]] = {}
    for _ in range(args.repeat):
        for spec in args.runs:
            results.setdefault(spec, []).append(await run(args, spec))
    report(args, results)


def overrides(spec: str) -> dict[str, Any]:
    backend, *numbers = spec.split("/")[0].split(":")
    out: dict[str, Any] = {"backend": None if backend == "default" else backend}
    if numbers:
        threads, nice, *lanes = (int(x) for x in numbers)
        out |= {"embedding_threads": threads, "embedding_nice": nice,
                "embedding_lanes": lanes[0] if lanes else None}
    return out


async def run(args: argparse.Namespace, spec: str
              ) -> tuple[list[float], list[float], float, str]:
    """(idle save ms, busy save ms, bulk frames/s, the embedder's layout)."""
    texts = chat(random.Random(5), args.bulk)
    trace = Trace()
    with tempfile.TemporaryDirectory() as tmp, \
            tracing(trace) if args.trace else contextlib.nullcontext():
        extra = {"cognify_batch_frames": args.cognify_batch} if args.cognify_batch else {}
        spec, _, jobs = spec.partition("@")  # @N: cognify jobs the runner runs at once
        cfg = embedded_config(Path(tmp), **overrides(spec), **extra)
        if jobs:
            cfg = replace(cfg, concurrency=int(jobs))
        _, *actor = spec.split("/")  # the writer's bulk group limit and urgent lane: /1000/0
        if actor:
            cfg.actor = replace(cfg.actor, bulk_weight=int(actor[0]),
                                urgent_weight=int(actor[1]) if len(actor) > 1 else
                                cfg.actor.urgent_weight)
        async with EmbeddedRuntime(cfg) as rt:
            chain = await rt.embedder_ready()
            active: Any = chain.active
            layout = (f"{active.backend}, {active.lanes} lane(s) x {active.lane_threads} "
                      f"thread(s), nice +{active.nice}" if hasattr(active, "lanes")
                      else chain.provider)
            idle_ms = []
            for i in range(50):  # quiet baseline
                start = time.perf_counter()
                await rt.submit("personal", ops.SaveFrames(mind_id="personal", frames=[
                    ops.NewFrameOp(gop_id="live", content=f"quiet note {i}")]))
                idle_ms.append((time.perf_counter() - start) * 1000)

            async def bulk() -> None:
                for op in save_ops(texts, per_op=1000):
                    await rt.submit("personal", op)

            tick = asyncio.create_task(ticker(trace)) if args.trace else None
            threads_before = thread_times()
            bulk_start = time.perf_counter()
            bulk_task = asyncio.create_task(bulk())
            await asyncio.sleep(1.0)  # let the ingest and its cognify work get going
            busy_ms = []
            for i in range(args.saves):
                start = time.perf_counter()
                await rt.submit("personal", ops.SaveFrames(mind_id="personal", frames=[
                    ops.NewFrameOp(gop_id="live", content=f"live note {i} during the import")]))
                end = time.perf_counter()
                busy_ms.append((end - start) * 1000)
                trace.saves.append((start, end))
                await asyncio.sleep(0.02)
            pending = rt.runner.depth + rt.runner.in_progress
            threads_after = thread_times()
            await bulk_task
            await rt.wait_idle()
            rate = len(texts) / (time.perf_counter() - bulk_start)
            if tick is not None:
                tick.cancel()
    print(f"{spec} ({layout}): p50 {pct(busy_ms, 50):.2f} ms, p99 {pct(busy_ms, 99):.2f} ms, "
          f"max {max(busy_ms):.1f} ms; bulk {rate:,.0f} frames/s; cognify jobs still queued or "
          f"running when sampling ended: {pending}", flush=True)
    if args.trace:
        window = trace.saves[-1][1] - trace.saves[0][0]
        thread_report(threads_before, threads_after, window)
        explain(trace)
    return idle_ms, busy_ms, rate, layout


def report(args: argparse.Namespace,
           results: dict[str, list[tuple[list[float], list[float], float, str]]]) -> None:
    torch_rates = next((r for spec, r in results.items() if spec == "torch"), None)
    rows = []
    idle = [x for runs in results.values() for x in runs[0][0]]
    rows.append(f"| idle mind (every run's first 50 saves) | — | {len(idle)} | "
                f"{pct(idle, 50):.2f} ms | {pct(idle, 99):.2f} ms | {max(idle):.1f} ms | | |")
    for spec, runs in results.items():
        p50 = statistics.median(pct(busy, 50) for _, busy, _, _ in runs)
        p99 = statistics.median(pct(busy, 99) for _, busy, _, _ in runs)
        top = statistics.median(max(busy) for _, busy, _, _ in runs)
        rate = statistics.median(r for _, _, r, _ in runs)
        vs = ""
        if torch_rates is not None and spec != "torch":
            speedup = statistics.median(
                r / t[2] for (_, _, r, _), t in zip(runs, torch_rates, strict=True))
            vs = f"{speedup:.2f}x"
        rows.append(f"| during bulk ingest + cognify: `{spec}` | {runs[0][3]} | "
                    f"{sum(len(b) for _, b, _, _ in runs)} | {p50:.2f} ms | {p99:.2f} ms | "
                    f"{top:.1f} ms | {rate:,.0f} | {vs} |")
    print("\n".join(rows))
    if args.no_report:
        return
    write_section("Save acknowledgement latency", f"""
Command: `HF_HUB_OFFLINE=1 .venv/bin/python -m bench.product.ack_latency --bulk {args.bulk} --saves {args.saves} --runs {' '.join(args.runs)} --repeat {args.repeat}`

Embedded mode, one mind. A bulk import of {args.bulk:,} chat turns (SaveFrames ops of 1,000,
which the actor applies in parts: actors/parts.py)
runs while cognify embeds them with the real model and the actor applies the index results;
single-frame saves arrive every 20 ms. Latency = `submit` until the save is committed
(acknowledged); bulk frames/s = the import from its first op until every frame is indexed, in
the same run. `default` is the embedded configuration as `hive-mind` runs it (settings
defaults); `torch` the same with the PyTorch backend (the configuration before #14);
`BACKEND:THREADS:NICE[:LANES]` variations of it, `@N` with N cognify jobs at once (the embedded
runner's default: 8). Medians over {args.repeat} interleaved
repetition(s) (p50, p99, max and rate each the median of the runs). Targets: p50 ≤ 5 ms,
p99 ≤ 50 ms while the import runs, with the default also ≥ 1.5x torch's ingest rate. The
machine is shared with other helpers' benchmarks: compare rows within this table only.

| conditions | embedder | saves | p50 | p99 | max | bulk frames/s | vs torch |
|---|---|---:|---:|---:|---:|---:|---:|
{chr(10).join(rows)}
""")


if __name__ == "__main__":
    asyncio.run(main())
