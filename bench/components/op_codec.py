"""What a distributed host spends on each job's envelope, beside the write itself.

A host (``hive-mind serve`` with Redis) runs every write-op as an arq job on its event loop:
decode the job, let arq format its arguments for the log, validate the op (``parse_op``),
apply it, encode the result for arq to store. This times those steps for the two ops an import
sends, built from the ingest bench's synthetic chat turns: an ``apply_index`` of one cognify
batch (64 frames, 384-dim vectors, the real extraction's entities) and a ``save_frames`` of
200 turns. Each row is timed side by side with the plainer alternative, re-implemented here:

* a stored result **with** the job's arguments (arq's default) against without (our codec);
* arq's ``repr`` of a plain ``dict`` payload against our short :class:`Payload` ``repr``;
* a vector's finiteness by summing its floats against the byte check now in ``Vector``;
* a 200-frame ``FramesSaved`` result through ``dataclasses.asdict`` against one level at a
  time.

Shortcut figures (the codec alone, one thread, no Redis, no SQLite): they say what each job
costs the host's event loop, not how fast an import runs (that is bench/product/ingest.py).

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.components.op_codec [--reps 200]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import random
import statistics
import time
from array import array
from collections.abc import Callable
from typing import Any

import numpy as np
from arq.jobs import deserialize_job_raw, serialize_result
from arq.utils import args_to_string
from bench.common import machine
from bench.product.ingest import chat, index_op, save_ops

from actors.results import FramesSaved, SavedFrame
from queue_schemas import jobs, ops
from queue_schemas.codec import deserialize, dumps, serialize
from queue_schemas.vector import all_finite

BATCH = 64  # frames of a cognify job (COGNIFY_BATCH_FRAMES)


def apply_index_op(texts: list[str]) -> ops.ApplyIndex:
    items = [jobs.CognifyItem(frame_id=i + 1, content=t) for i, t in enumerate(texts)]
    return index_op(items, np.random.default_rng(0), "idx-bench")


def timed(fn: Callable[[], object], reps: int) -> float:
    """Median of ``reps`` calls, ms."""
    fn()
    out = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return statistics.median(out)


def sum_finite(blob: bytes) -> bool:
    """The check ``Vector`` made before: a float64 sum of the components is finite."""
    values = array("f")
    values.frombytes(blob)
    return math.isfinite(sum(values))


def result_with_args(args: tuple[Any, ...], result: Any) -> bytes:
    """arq's stored result as it was: the job's arguments encoded once more, a dataclass
    result through ``dataclasses.asdict``."""
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        result = dataclasses.asdict(result)
    return dumps({"t": 1, "f": "apply_op", "a": args, "k": {}, "et": 1, "s": True,
                   "r": result, "st": 2, "ft": 3, "q": "q", "id": "x"},
                  ensure_ascii=False).encode()


def rows_for(name: str, op: Any, result: Any, reps: int) -> list[tuple[str, str, float]]:
    raw = serialize({"t": 1, "f": "apply_op", "a": (op,), "k": {}, "et": 1})
    _, args, kwargs, _, _ = deserialize_job_raw(raw, deserializer=deserialize)
    plain = (dict(args[0]),)
    stored = serialize_result("apply_op", args, kwargs, 1, 1, True, result, 2, 3, "r", "q",
                              job_id="x", serializer=serialize)
    assert stored is not None
    return [
        (name, f"job size, KB: {len(raw) / 1024:.0f}; stored result, bytes", float(len(stored))),
        (name, "decode the job (arq + our codec)",
         timed(lambda: deserialize_job_raw(raw, deserializer=deserialize), reps)),
        (name, "validate the op (parse_op)", timed(lambda: ops.parse_op(args[0]), reps)),
        (name, "arq's log repr of the arguments: plain dict (before)",
         timed(lambda: args_to_string(plain, kwargs), reps)),
        (name, "arq's log repr of the arguments: Payload (now)",
         timed(lambda: args_to_string(args, kwargs), reps)),
        (name, "encode the stored result with the arguments (before)",
         timed(lambda: result_with_args(args, result), reps)),
        (name, "encode the stored result without them (now)",
         timed(lambda: serialize_result("apply_op", args, kwargs, 1, 1, True, result, 2, 3,
                                        "r", "q", job_id="x", serializer=serialize), reps)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=200)
    args = parser.parse_args()

    index = apply_index_op(chat(random.Random(1), BATCH))
    saves = save_ops(chat(random.Random(2), 200))[0]
    saved = FramesSaved(tuple(SavedFrame(i + 1, True, False, f"conv-{i // 20}", i, "0" * 64)
                              for i in range(200)))
    rows = rows_for(f"apply_index ({BATCH} frames)", index, {"applied": BATCH, "supersessions": 2},
                    args.reps)
    rows += rows_for("save_frames (200 frames)", saves, saved, args.reps)
    blob = index.results[0].vector.to_bytes()
    rows += [
        ("one 384-dim vector", "finiteness by a float sum (before), µs",
         1000 * timed(lambda: sum_finite(blob), args.reps * 20)),
        ("one 384-dim vector", "finiteness by bytes (now), µs",
         1000 * timed(lambda: all_finite(blob), args.reps * 20)),
        ("FramesSaved (200 frames)", "dataclasses.asdict + encode (before)",
         timed(lambda: dumps(dataclasses.asdict(saved), ensure_ascii=False), args.reps)),
        ("FramesSaved (200 frames)", "one level at a time (now)",
         timed(lambda: dumps(saved, ensure_ascii=False), args.reps)),
    ]
    print(f"_{machine()}; medians of {args.reps} calls (finiteness: {args.reps * 20})._\n")
    print("| op | step | ms (median; or as named) |")
    print("|---|---|---:|")
    for op_name, step, value in rows:
        shown = f"{value:,.0f}" if step.endswith("bytes") else (
            f"{value:.1f}" if step.endswith("µs") else f"{value:.3f}")
        print(f"| {op_name} | {step} | {shown} |")


if __name__ == "__main__":
    main()
