"""A distributed host's own CPU per frame: the ingest bench's ops replayed in-process.

In ``bench/product/ingest.py``'s distributed run the host (``hive-mind serve``) shares the two cores
with a worker whose two encoder lanes never rest, so each CPU-second the host spends is about
half a second of the import's wall time. This replays what that host applies, one process,
nothing else running: the 20 ``save_frames`` ops of the ingest bench's 4,000 chat turns
(parsed from JSON as a job's payload is, all submitted at once), with the commit hook building
the cognify jobs it would queue (JSON-encoded as for Redis, not sent), then
an ``apply_index`` op per job (the real extraction's entities, random unit vectors, parsed
from JSON), eight at a time as a worker's batch delivers them. It prints the process's CPU a
frame for each phase, split by thread (the event loop; the SQLite connections; the default
executor: the link search) and its round trips to the SQLite threads (calls of
``Database.run``, which every statement goes through), and the CPU of one await on the SQLite
thread (``SELECT 1``): each trip of a write costs that much on top of its SQL.

A shortcut figure (no Redis, no arq, no worker): what the host's writes cost, not how fast an
import runs (that is bench/product/ingest.py).

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.components.host_replay [--frames 4000] [--reps 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from bench.common import machine, thread_groups, thread_times
from bench.product.ingest import chat, index_op, save_ops

from hive_mind.settings import load_settings
from mind.mind import Mind
from mind.storage.db import Database
from queue_schemas import jobs, ops
from workers.followups import followup_jobs
from workers.runtime import open_host

DELIVERED_TOGETHER = 8  # apply_index ops a worker's 512-text batch finishes at once


def as_payload(op: Any) -> dict[str, Any]:
    return json.loads(json.dumps(op.model_dump(mode="json")))  # type: ignore[no-any-return]


def index_payloads(queued: list[jobs.CognifyJob], seed: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    return [as_payload(index_op(job.items, rng, "idx-" + job.op_id)) for job in queued]


TRIPS = [0]  # calls of Database.run so far (every statement is one, or part of one)
_run = Database.run


async def _counted_run(self: Database, work: Any) -> Any:
    TRIPS[0] += 1
    return await _run(self, work)


Database.run = _counted_run  # type: ignore[method-assign]


class Phase:
    """CPU of this process (all threads), of its thread groups and its round trips to the
    SQLite threads over a ``with`` block."""

    def __enter__(self) -> Phase:
        self.threads, self.cpu, self.trips = thread_times(), time.process_time(), TRIPS[0]
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.process_time() - self.cpu
        self.groups = thread_groups(self.threads, thread_times())
        self.trips = TRIPS[0] - self.trips


async def replay(frames: int, seed: int) -> tuple[Phase, Phase, int]:
    texts = chat(random.Random(11), frames)
    with tempfile.TemporaryDirectory() as tmp:
        config = load_settings(data_dir=Path(tmp), embedding_provider="inprocess",
                               redis_url=None).runtime_config()
        queued: list[jobs.CognifyJob] = []

        def hook(mind_id: str, reader: Mind) -> Any:
            async def after_commit(committed: list[tuple[Any, Any]], _: frozenset[int]
                                   ) -> None:
                found = await followup_jobs(mind_id, committed, reader,
                                            batch=config.cognify_batch)
                for job in found:
                    json.dumps(job.model_dump(mode="json"))  # what enqueueing encodes
                queued.extend(j for j in found if isinstance(j, jobs.CognifyJob))
            return after_commit

        host = open_host(config, hook)
        try:
            saves = [as_payload(op) for op in save_ops(texts)]
            with Phase() as save:
                await asyncio.gather(*(host.submit("personal", ops.parse_op(p), create=True)
                                       for p in saves))
            indexes = index_payloads(queued, seed)
            with Phase() as index:
                for k in range(0, len(indexes), DELIVERED_TOGETHER):
                    await asyncio.gather(*(host.submit("personal", ops.parse_op(p))
                                           for p in indexes[k: k + DELIVERED_TOGETHER]))
        finally:
            await host.close()
    return save, index, len(indexes)


async def round_trip_cpu(calls: int = 2000) -> float:
    """CPU seconds (both threads) of one ``await db.execute("SELECT 1")``."""
    with tempfile.TemporaryDirectory() as tmp:
        mind = await Mind.open(Path(tmp) / "rt.mind")
        try:
            start = time.process_time()
            for _ in range(calls):
                await mind.db.execute("SELECT 1")
            return (time.process_time() - start) / calls
        finally:
            await mind.close()


def by_thread(phase: Phase, frames: int) -> str:
    return ", ".join(f"{name} {ran / frames * 1000:.3f}" for name, (ran, _, _) in
                     sorted(phase.groups.items(), key=lambda g: -g[1][0]) if ran > 0.005)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=4000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    print(f"_{machine()}_")
    rows = []
    for rep in range(args.reps):
        save, index, ops_applied = await replay(args.frames, rep)
        rows.append((save.seconds, index.seconds))
        print(f"[{rep + 1}/{args.reps}] save_frames {save.seconds / args.frames * 1000:.3f} ms "
              f"CPU a frame ({by_thread(save, args.frames)}); apply_index "
              f"{index.seconds / args.frames * 1000:.3f} ({by_thread(index, args.frames)}; "
              f"{ops_applied} ops); SQLite round trips: save_frames {save.trips}, apply_index "
              f"{index.trips}", flush=True)
    save_ms = statistics.median(s for s, _ in rows) / args.frames * 1000
    index_ms = statistics.median(i for _, i in rows) / args.frames * 1000
    print(f"median CPU a frame: save_frames {save_ms:.3f} ms, apply_index {index_ms:.3f} ms, "
          f"together {save_ms + index_ms:.3f} ms")
    print(f"one await on the SQLite thread: {await round_trip_cpu() * 1e6:.1f} us of CPU")


if __name__ == "__main__":
    asyncio.run(main())
