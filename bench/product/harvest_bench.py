"""Harvest at scale: a synthetic ChatGPT export of 10,000 conversations / 200,000 messages.

Three measurements, each in its own child process so peak RSS is the import's own:
1. **write**: ``hive-mind`` harvest of the whole export with indexing switched off (embedding
   provider ``mock`` = degraded: frames stay pending, nothing is embedded) — frames written per
   second through adapter → HarvestBatch ops → actor, and peak RSS (target ≥ 10,000 frames/s,
   ≤ 1 GB).
2. **e2e**: a slice of the same export (``--e2e-conversations``; 10,000 = all of it) imported
   with the real model until fully indexed (embedded mode, encoder ``--backend``, default the
   settings'), vs
3. **raw**: that backend's ``InProcessEmbedder.embed_batch`` (the embedded lanes and priority)
   over the first ``--raw-sample`` frame texts of the slice, right before and right after the
   import, averaged (target e2e ≥ 85 % of raw).

**split**: the same export in the ChatGPT layout since August 2026 — a ``.zip`` of separate
JSON files (``--per-file`` conversations each) found by their content — written the same way,
side by side with the single file (``--repeat`` pairs; target: frames/s and peak RSS within
10 % of the single-file layout).

The generator streams the export to disk (each conversation: a `current_node` chain with a
regenerated branch every tenth conversation, timestamps, code blocks now and then).

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.product.harvest_bench [--conversations 10000]
        [--messages 20] [--e2e-conversations 400] [--per-file 200] [--repeat 1]
        [--backend onnx-int8] [--raw-sample 8000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import statistics
import tempfile
import time
import zipfile
from pathlib import Path

from bench.common import ROOT, write_section

TOPICS = ("billing", "postgres", "kubernetes", "garden", "marathon", "sourdough", "lisbon",
          "budget", "rust", "invoice", "roadmap", "latency", "piano", "tax", "camera")
WORDS = ("the we should maybe try next week because cache queue deploy review team plan cost "
         "fix test metric friday launch design schema index answer question detail").split()


def message(rng: random.Random, topic: str, turn: int) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 45))]
    words.insert(rng.randint(0, len(words)), topic)
    text = " ".join(words).capitalize() + f" ({turn})."
    if rng.random() < 0.05:
        text += f"\n```python\nprint('{topic}', {turn})\n```"
    return text


def conversation(rng: random.Random, n: int, messages: int) -> dict:
    topic = rng.choice(TOPICS)
    start = 1_700_000_000 + n * 3600.0
    mapping: dict[str, dict] = {"root": {"id": "root", "message": None, "parent": None,
                                         "children": []}}
    parent = "root"
    for t in range(messages):
        node = f"c{n}-m{t}"
        role = "user" if t % 2 == 0 else "assistant"
        mapping[node] = {"id": node, "parent": parent, "children": [], "message": {
            "id": node, "author": {"role": role}, "create_time": start + t * 30,
            "content": {"content_type": "text", "parts": [message(rng, topic, t)]},
            "metadata": {}}}
        mapping[parent]["children"].append(node)
        if n % 10 == 0 and t == messages // 2:  # an abandoned regenerated answer
            alt = f"c{n}-alt"
            mapping[alt] = {"id": alt, "parent": parent, "children": [], "message": {
                "id": alt, "author": {"role": role}, "create_time": start + t * 30 + 5,
                "content": {"content_type": "text", "parts": ["abandoned branch text"]},
                "metadata": {}}}
            mapping[parent]["children"].append(alt)
        parent = node
    return {"id": f"conv-{n}", "title": f"{topic.title()} chat {n}", "create_time": start,
            "update_time": start + messages * 30, "current_node": parent, "mapping": mapping}


def generate(path: Path, conversations: int, messages: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    with path.open("w") as fh:
        fh.write("[")
        for n in range(conversations):
            fh.write(("," if n else "") + json.dumps(conversation(rng, n, messages)))
        fh.write("]")
    return path.stat().st_size


def generate_split(path: Path, conversations: int, messages: int, per_file: int,
                   seed: int = 7) -> int:
    """The same conversations as :func:`generate`, as a zip of JSON files of ``per_file``
    conversations each (plus the small members a real export carries)."""
    rng = random.Random(seed)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        zf.writestr("export/user.json", json.dumps({"id": "user-1", "email": "a@example.org"}))
        zf.writestr("export/chat.html", "<html>not parsed</html>")
        for start in range(0, conversations, per_file):
            with zf.open(f"export/conversations-{start // per_file:03d}.json", "w") as fh:
                for n in range(start, min(start + per_file, conversations)):
                    fh.write((("," if n > start else "[") + json.dumps(
                        conversation(rng, n, messages))).encode())
                fh.write(b"]")
    return path.stat().st_size


def side_by_side(single: Path, split: Path, root: Path, repeat: int) -> dict[str, list[dict]]:
    """Both layouts written ``repeat`` times, alternating, each into a fresh mind."""
    runs: dict[str, list[dict]] = {"single": [], "split": []}
    for r in range(repeat):
        for layout, export in (("single", single), ("split", split)):
            run = spawn(export, root / f"{layout}-{r}", "mock")
            run["rate"] = run["frames"] / run["elapsed"]
            runs[layout].append(run)
            print(f"{layout} #{r + 1}: {run['frames']:,} frames, {run['rate']:,.0f} frames/s, "
                  f"peak RSS {run['rss_mb']:,.0f} MB")
    return runs


def child(args: argparse.Namespace) -> None:
    """Run one import in this process and print a JSON line with its figures."""
    import asyncio

    from hive_mind.facade import HiveMind

    async def run() -> dict:
        async with await HiveMind.open(data_dir=args.data,
                                       embedding_provider=args.provider) as hm:
            if args.provider != "mock":
                await hm.runtime.embedder_ready()
            start = time.perf_counter()
            summary = await hm.harvest("chatgpt", args.export, wait=args.provider != "mock")
            elapsed = time.perf_counter() - start
            # the import's own peak: stats() then resumes the mind's pending indexing (with
            # indexing off: all of it, read back a piece at a time: bench.product.resume_bench)
            rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            stats = await hm.stats()
        return {"elapsed": elapsed, "frames": summary["frames_created"],
                "items": summary["items"], "pending": stats["pending_index"],
                "vectors": stats["vectors"], "rss_mb": rss_mb}

    import logging

    logging.disable(logging.WARNING)  # the degraded embedder warns once per cognify job
    print(json.dumps(asyncio.run(run())))


def spawn(export: Path, data: Path, provider: str, backend: str | None = None) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    if backend:  # the encoder backend, its ONNX export cached across runs (ingest.MODEL_CACHE)
        from bench.product.ingest import MODEL_CACHE

        env |= {"HIVE_MIND_EMBEDDING_BACKEND": backend,
                "HIVE_MIND_EMBEDDING_CACHE_DIR": str(MODEL_CACHE)}
    out = subprocess.run(
        [sys.executable, "-m", __spec__.name, "--child", "--export", str(export), "--data", str(data),
         "--provider", provider], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def raw_rate(export: Path, backend: str, sample: int) -> tuple[float, int]:
    """Raw encode throughput of ``backend`` through ``InProcessEmbedder.embed_batch`` (the
    embedded layout and priority, as the import runs it) over the first ``sample`` frame texts
    of the export (as the harvest renders them); (texts/s, texts encoded)."""
    import asyncio

    from bench.product.ingest import RawEncoders, embedded_config

    from mind.harvest.chatgpt import parse

    texts = []
    for item in parse(export):
        texts.extend(f"{t.speaker}: {t.text}" for t in item.turns)
        if len(texts) >= sample:
            break
    texts = texts[:sample]

    async def measure() -> float:
        raw = RawEncoders(texts)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                return await raw.rate(embedded_config(Path(tmp), backend).embedding)
        finally:
            await raw.close()

    return asyncio.run(measure()), len(texts)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--conversations", type=int, default=10_000)
    p.add_argument("--messages", type=int, default=20)
    p.add_argument("--e2e-conversations", type=int, default=400,
                   help="0: measure the write only (no results file written)")
    p.add_argument("--child", action="store_true")
    p.add_argument("--export", type=Path)
    p.add_argument("--data", type=Path)
    p.add_argument("--provider", default="mock")
    p.add_argument("--backend", default=None,
                   help="encoder backend of the end-to-end import (default: the settings')")
    p.add_argument("--raw-sample", type=int, default=8_000,
                   help="frame texts the raw encode reference runs over")
    p.add_argument("--per-file", type=int, default=200,
                   help="conversations per JSON file of the split layout")
    p.add_argument("--repeat", type=int, default=1,
                   help="single/split write pairs (0: skip the split layout)")
    args = p.parse_args()
    if args.child:
        child(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        big = root / "conversations.json"
        size = generate(big, args.conversations, args.messages)
        total = args.conversations * args.messages
        print(f"export: {args.conversations:,} conversations, {total:,} messages, "
              f"{size / 1e6:,.0f} MB")
        write = spawn(big, root / "write", "mock")
        write_rate = write["frames"] / write["elapsed"]
        print(f"write: {write['frames']:,} frames in {write['elapsed']:.1f} s = "
              f"{write_rate:,.0f} frames/s, peak RSS {write['rss_mb']:,.0f} MB")
        again = spawn(big, root / "write", "mock")
        print(f"re-import: {again['frames']} new frames in {again['elapsed']:.1f} s")
        if args.repeat > 0:
            split = root / "chatgpt-export-split.zip"
            split_size = generate_split(split, args.conversations, args.messages, args.per_file)
            print(f"split layout: {split_size / 1e6:,.0f} MB zip of "
                  f"{-(-args.conversations // args.per_file)} JSON files")
            runs = side_by_side(big, split, root, args.repeat)
            rate = {k: statistics.median(r["rate"] for r in v) for k, v in runs.items()}
            rss = {k: statistics.median(r["rss_mb"] for r in v) for k, v in runs.items()}
            print(f"split / single (medians): frames/s {rate['split'] / rate['single']:.1%}, "
                  f"peak RSS {rss['split'] / rss['single']:.1%}")
        if args.e2e_conversations <= 0:
            return  # the write figure alone (side-by-side runs); the section needs all three
        small = root / "slice.json"
        generate(small, args.e2e_conversations, args.messages)
        from hive_mind.settings import load_settings

        backend = args.backend or load_settings().embedding.backend
        before, _ = raw_rate(small, backend, args.raw_sample)
        e2e = spawn(small, root / "e2e", "inprocess", backend)
        e2e_rate = e2e["frames"] / e2e["elapsed"]
        after, n_texts = raw_rate(small, backend, args.raw_sample)
        raw = (before + after) / 2
        print(f"e2e ({backend}): {e2e['frames']:,} frames indexed in {e2e['elapsed']:.1f} s = "
              f"{e2e_rate:,.0f} frames/s; raw {before:,.0f} / {after:,.0f} texts/s → "
              f"{e2e_rate / raw:.0%}")
    body = f"""
`HF_HUB_OFFLINE=1 .venv/bin/python -m bench.product.harvest_bench --conversations {args.conversations} --messages {args.messages} --e2e-conversations {args.e2e_conversations} --repeat {args.repeat}` (encoder backend `{backend}`)

Synthetic ChatGPT export ({args.conversations:,} conversations, {total:,} messages, {size / 1e6:,.0f} MB
`conversations.json`, `current_node` chains with abandoned branches), imported by the chatgpt adapter
(streaming ijson) → `HarvestBatch` ops of 2,000 frames → the actor; each run in a fresh child process.

| measurement | result | target |
|---|---|---|
| frames written (indexing off: degraded embedder) | {write['frames']:,} in {write['elapsed']:.1f} s = **{write_rate:,.0f} frames/s** | ≥ 10,000/s |
| peak RSS of that import | **{write['rss_mb']:,.0f} MB** | ≤ 1,024 MB |
| re-import of the same file | {again['frames']} new frames, {again['elapsed']:.2f} s (content hash unchanged) | nothing new |
| end to end, real model (`{backend}`), {e2e['frames']:,} messages ({args.e2e_conversations:,} conversations) until fully indexed | {e2e['elapsed']:.1f} s = **{e2e_rate:,.0f} frames/s** | |
| raw encode (`{backend}`, `InProcessEmbedder.embed_batch`, embedded lanes and priority) of the first {n_texts:,} of those texts, right before and after | {raw:,.0f} texts/s ({before:,.0f} / {after:,.0f}) | |
| end to end / raw | **{e2e_rate / raw:.0%}** | ≥ 85 % |
"""
    write_section("Harvest: 200,000-message ChatGPT export", body)


if __name__ == "__main__":
    main()
