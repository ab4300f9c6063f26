"""Conversational recall: keyword-only vs vector-only vs hybrid on synthetic multi-session chats.

The data (``bench/conv_data.py``: planted facts, later corrections, month-specific decisions,
group-chat speakers, many look-alike distractors) is ingested into a fresh mind, one frame per
message (``"<speaker>: <text>"``, created at the message time) through the real harvest
pipeline (universal adapter, ``HarvestBatch`` ops, in-process cognify). The real model
(all-MiniLM-L6-v2, in-process) embeds everything. Each question is searched in the three lane
modes with the production search code (``HybridSearch``, balanced profile, no access-count
touching, no catch-up) and scored with Recall@5 and Recall@10 of its gold messages, overall and
per question type. Writes its tables into docs/benchmarks.md.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/conv_eval.py [--data bench/data/conv]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from common import ROOT, write_section

from mind.embeddings.inprocess import InProcessEmbedder
from mind.mind import Mind
from mind.search import HybridSearch, Lanes

DEFAULT_DATA = ROOT / "bench" / "data" / "conv"
MODES: tuple[Lanes, ...] = ("keyword", "vector", "hybrid")
TYPES = ("fact", "correction", "temporal", "speaker")
KS = (5, 10)


async def ingest(data_dir: Path, jsonl_path: Path) -> int:
    """Harvest the universal JSONL through the real pipeline (adapter → HarvestBatch ops →
    actor → cognify with the real model) into ``data_dir``'s personal mind; returns frames."""
    from hive_mind.facade import HiveMind

    async with await HiveMind.open(data_dir=data_dir, embedding_provider="inprocess") as hm:
        summary = await hm.harvest("universal", jsonl_path)
        assert summary["pending_index"] == 0, summary
    return int(summary["frames_created"])


def recall(ranked: list[str], gold: list[str], k: int) -> float:
    return len(set(ranked[:k]) & set(gold)) / len(gold)


async def evaluate(
    mind_path: Path, embedder: InProcessEmbedder, questions: list[dict[str, Any]]
) -> dict[str, list[tuple[str, dict[int, float]]]]:
    """mode → [(question type, {k: recall@k})] for every question."""
    scores: dict[str, list[tuple[str, dict[int, float]]]] = {}
    async with await Mind.open(mind_path) as mind:
        search = HybridSearch(mind.db, embedder)
        for mode in MODES:
            rows = []
            for q in questions:
                resp = await search.search(q["question"], limit=max(KS), lanes=mode,
                                           touch=False, catch_up=False)
                ranked = [r.frame.metadata.get("message_id", "") for r in resp.results]
                rows.append((q["type"], {k: recall(ranked, q["gold"], k) for k in KS}))
            scores[mode] = rows
        await search.close()
    return scores


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def summarize(rows: list[tuple[str, dict[int, float]]]) -> dict[str, dict[int, float]]:
    """'all' and each question type → {k: mean recall@k}."""
    groups: dict[str, list[dict[int, float]]] = defaultdict(list)
    for qtype, rec in rows:
        groups["all"].append(rec)
        groups[qtype].append(rec)
    return {g: {k: mean([r[k] for r in recs]) for k in KS} for g, recs in groups.items()}


def tables(scores: dict[str, list[tuple[str, dict[int, float]]]]) -> tuple[str, str]:
    overall, per_type = [], []
    for mode, rows in scores.items():
        s = summarize(rows)
        overall.append(f"| {mode} | {s['all'][5]:.3f} | {s['all'][10]:.3f} |")
        cells = " | ".join(f"{s[t][5]:.3f} / {s[t][10]:.3f}" if t in s else "–" for t in TYPES)
        per_type.append(f"| {mode} | {cells} |")
    return "\n".join(overall), "\n".join(per_type)


def report(data: Path, n_msgs: int, questions: list[dict[str, Any]], index_s: float,
           scores: dict[str, list[tuple[str, dict[int, float]]]]) -> None:
    overall, per_type = tables(scores)
    counts = {t: sum(q["type"] == t for q in questions) for t in TYPES}
    lines = (data / "messages.jsonl").read_text().splitlines()
    n_convs = len({json.loads(line)["conversation_id"] for line in lines if line.strip()})
    type_header = " | ".join(f"{t} ({counts[t]})" for t in TYPES)
    rel = data.resolve().relative_to(ROOT) if data.resolve().is_relative_to(ROOT) else data
    write_section(
        "Conversational recall (synthetic chats)",
        f"""
Command: `HF_HUB_OFFLINE=1 .venv/bin/python bench/conv_eval.py --data {rel}`
(data: `.venv/bin/python bench/conv_data.py`, seed 7)

{n_msgs:,} messages in {n_convs} conversations (one-on-one sessions with the assistant and
group chats with named friends, all of 2025), {len(questions)} questions: `fact` (one planted
statement), `correction` (the value changed in a later session; gold = the correcting message
only), `temporal` ("what did I decide in March about …": the same decision was made two or
three times in different months, and the month is only in the timestamp), `speaker` (what a
named friend said in a group chat). Every question has look-alike distractors: the same slot
family for other people/projects, stale values, chatter without the value. One frame per
message (`"<speaker>: <text>"`); model all-MiniLM-L6-v2 in-process; production
`HybridSearch`, profile `balanced`, 10 results per question. Indexing took {index_s:.0f} s.
Recall@k = share of a question's gold messages in the top k, averaged over questions.

| lanes | Recall@5 | Recall@10 |
|---|---:|---:|
{overall}

Per question type, Recall@5 / Recall@10:

| lanes | {type_header} |
|---|---:|---:|---:|---:|
{per_type}
""",
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--no-report", action="store_true", help="print only")
    args = parser.parse_args()
    questions = json.loads((args.data / "questions.json").read_text())
    embedder = InProcessEmbedder()
    await embedder.load()
    with tempfile.TemporaryDirectory() as tmp:
        mind_path = Path(tmp) / "personal.mind"
        start = time.perf_counter()
        n_msgs = await ingest(Path(tmp), args.data / "messages.jsonl")
        index_s = time.perf_counter() - start
        print(f"ingested and embedded {n_msgs} messages in {index_s:.1f}s")
        scores = await evaluate(mind_path, embedder, questions)
    await embedder.close()
    for mode, rows in scores.items():
        s = summarize(rows)
        by_type = "  ".join(f"{t} {s[t][5]:.2f}/{s[t][10]:.2f}" for t in TYPES if t in s)
        print(f"{mode:>8}: R@5 {s['all'][5]:.3f}  R@10 {s['all'][10]:.3f}   {by_type}")
    if not args.no_report:
        report(args.data, n_msgs, questions, index_s, scores)


if __name__ == "__main__":
    asyncio.run(main())
