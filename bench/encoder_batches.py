"""How the ONNX encoder forms its forward batches, side by side (issue #14): characters or tokens.

The same texts, the same loaded model and session, one lane (one thread), two ways to cut a call
into forward passes:

* ``characters, 32 a pass``: sorted by character length, 32 texts a pass, each pass padded to its
  longest text — sentence-transformers' way and the encoder's before this change;
* ``token counts`` (the product's now): :func:`mind.embeddings.batching.plan_batches` over the
  exact token counts.

Calls of 64 texts are what a cognify micro-batch gives the encoder during an import; a call of
every text is the raw-encode reference of bench/product/ingest.py. Texts: bench/product/ingest.py's synthetic
chat turns, LoCoMo chat turns and SciFact abstracts (the evaluation data). CPU time of the lane's
thread per text (``time.thread_time``: a shared machine's load hardly moves it), medians of
interleaved repetitions; padded tokens = what the passes computed over the texts' own tokens.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.encoder_batches [--reps 3] [--no-report]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench.common import write_section
from bench.components.encoder_backends import corpora
from bench.product.ingest import chat

from mind.embeddings.batching import plan_batches
from mind.embeddings.inprocess import InProcessEmbedder
from mind.embeddings.onnx_encoder import OnnxEncoder

Plan = Callable[[list[str], list[int]], list[list[int]]]


def by_characters(texts: list[str], lengths: list[int]) -> list[list[int]]:
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    return [order[k: k + 32] for k in range(0, len(order), 32)]


def by_tokens(texts: list[str], lengths: list[int]) -> list[list[int]]:
    return plan_batches(lengths, 32)


PLANS: dict[str, Plan] = {"characters, 32 a pass": by_characters, "token counts": by_tokens}


def run(encoder: OnnxEncoder, texts: list[str], encodings: list[Any], call: int, plan: Plan
        ) -> tuple[float, float]:
    """CPU ms per text and padded tokens / real tokens over ``texts`` in calls of ``call``."""
    padded = real = 0
    started = time.thread_time()
    for first in range(0, len(texts), call):
        part, encoded = texts[first: first + call], encodings[first: first + call]
        lengths = [len(e.ids) for e in encoded]
        for batch in plan(part, lengths):
            encoder.encode_tokens([encoded[i] for i in batch])
            padded += len(batch) * max(lengths[i] for i in batch)
        real += sum(lengths)
    return (time.thread_time() - started) / len(texts) * 1000, padded / real


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--backend", default="onnx-int8", choices=("onnx", "onnx-int8"))
    parser.add_argument("--no-report", action="store_true")
    args = parser.parse_args()
    embedder = InProcessEmbedder(backend=args.backend, lanes=1, num_threads=1)
    asyncio.run(embedder.load())
    encoder = embedder._encoder
    assert isinstance(encoder, OnnxEncoder)
    sets = {"synthetic chat turns (bench/product/ingest.py)": chat(random.Random(11), 1024),
            **{f"LoCoMo {k}" if k == "chat turns" else f"SciFact {k}": v
               for k, v in corpora(256, 1024).items()}}
    rows = []
    for name, texts in sets.items():
        encodings = encoder.tokenize(texts)
        for call in (64, len(texts)):
            runs: dict[str, list[tuple[float, float]]] = {p: [] for p in PLANS}
            run(encoder, texts[:64], encodings[:64], call, by_tokens)  # warm
            for _ in range(args.reps):
                for plan_name, plan in PLANS.items():
                    runs[plan_name].append(run(encoder, texts, encodings, call, plan))
            cpu = {p: statistics.median(c for c, _ in r) for p, r in runs.items()}
            pad = {p: r[0][1] for p, r in runs.items()}
            old, new = PLANS
            rows.append(f"| {name} ({len(texts):,}) | {call:,} | {cpu[old]:.2f} ms · "
                        f"{pad[old]:.2f}x | {cpu[new]:.2f} ms · {pad[new]:.2f}x | "
                        f"{cpu[old] / cpu[new]:.2f}x |")
            print(rows[-1], flush=True)
    table = ("| texts | texts a call | characters, 32 a pass: CPU a text · padded tokens | "
             "token counts (now) | CPU saved (before / now) |\n|---|---:|---:|---:|---:|\n"
             + "\n".join(rows))
    if not args.no_report:
        write_section("Encoder forward batches (#14)", f"""
`HF_HUB_OFFLINE=1 .venv/bin/python -m bench.encoder_batches --reps {args.reps}` (backend
`{args.backend}`, one lane, one thread; CPU time of the lane's thread per text, medians of
{args.reps} interleaved repetitions; "padded tokens" = tokens the passes computed / the texts'
own tokens).

{table}

"characters, 32 a pass" is how the encoder cut its calls before (sentence-transformers' way:
sorted by character length, 32 texts a pass, each padded to its longest); "token counts" is
`mind.embeddings.batching.plan_batches` over exact token counts, which the ONNX encoder uses
now. Calls of 64 texts are what a cognify micro-batch hands the encoder during an import; the
call of every text is the raw-encode reference of bench/product/ingest.py.
""")


if __name__ == "__main__":
    main()
