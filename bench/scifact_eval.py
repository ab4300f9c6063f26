"""Retrieval quality on BEIR SciFact (train qrels): keyword-only vs vector-only vs hybrid.

Every corpus document becomes one frame (title + abstract) in a fresh mind; long abstracts are
chunked like any long frame. The real model (all-MiniLM-L6-v2, in-process) embeds everything.
Each train query is searched in the three lane modes with the production search code
(`HybridSearch`, balanced profile, no access-count touching) and scored with nDCG@10 and
Recall@100. Writes its table into docs/benchmarks.md.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/scifact_eval.py [--data ../shared/data/scifact]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from common import ROOT, write_section

from mind.embeddings.inprocess import InProcessEmbedder
from mind.frame import NewFrame
from mind.indexer import index_pending
from mind.mind import Mind
from mind.search import HybridSearch

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "scifact"


def load(data: Path) -> tuple[dict[str, str], dict[str, str], dict[str, set[str]]]:
    corpus = {}
    with open(data / "corpus.jsonl") as fh:
        for line in fh:
            doc = json.loads(line)
            corpus[doc["_id"]] = f"{doc.get('title', '')}\n{doc['text']}".strip()
    queries = {}
    with open(data / "queries.jsonl") as fh:
        for line in fh:
            q = json.loads(line)
            queries[q["_id"]] = q["text"]
    qrels: dict[str, set[str]] = defaultdict(set)
    with open(data / "qrels" / "train.tsv") as fh:
        next(fh)
        for line in fh:
            qid, did, score = line.strip().split("\t")
            if int(score) > 0:
                qrels[qid].add(did)
    return corpus, {q: queries[q] for q in qrels if q in queries}, qrels


def ndcg_at(ranked: list[str], relevant: set[str], k: int = 10) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return dcg / ideal if ideal else 0.0


def recall_at(ranked: list[str], relevant: set[str], k: int = 100) -> float:
    return len(set(ranked[:k]) & relevant) / len(relevant) if relevant else 0.0


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--queries", type=int, default=0, help="limit queries (0 = all)")
    args = parser.parse_args()
    corpus, queries, qrels = load(args.data)
    if args.queries:
        queries = dict(list(queries.items())[: args.queries])
    embedder = InProcessEmbedder()
    await embedder.load()
    with tempfile.TemporaryDirectory() as tmp:
        async with await Mind.open(Path(tmp) / "scifact.mind") as mind:
            items = [NewFrame("scifact", text, source="import", external_id=did, dedup=False)
                     for did, text in corpus.items()]
            saved = await mind.frames.insert_many(items)
            doc_of = {r.frame.id: r.frame.external_id for r in saved}
            start = time.perf_counter()
            indexed = await index_pending(mind.db, embedder)
            index_s = time.perf_counter() - start
            print(f"indexed {indexed.frames} frames + {indexed.chunks} chunks in {index_s:.0f}s")
            search = HybridSearch(mind.db, embedder)
            scores: dict[str, list[tuple[float, float]]] = {}
            for mode in ("keyword", "vector", "hybrid"):
                rows = []
                for qid, text in queries.items():
                    resp = await search.search(text, limit=100, lanes=mode, touch=False, catch_up=False)  # type: ignore[arg-type]
                    ranked = [doc_of[r.frame.id] for r in resp.results]
                    rows.append((ndcg_at(ranked, qrels[qid]), recall_at(ranked, qrels[qid])))
                scores[mode] = rows
                n = len(rows)
                print(f"{mode:>8}: nDCG@10 {sum(r[0] for r in rows) / n:.4f}  "
                      f"Recall@100 {sum(r[1] for r in rows) / n:.4f}")
            await search.close()
    await embedder.close()
    table = "\n".join(
        f"| {mode} | {sum(r[0] for r in rows) / len(rows):.4f} | {sum(r[1] for r in rows) / len(rows):.4f} |"
        for mode, rows in scores.items()
    )
    write_section(
        "Retrieval quality (SciFact)",
        f"""
Command: `HF_HUB_OFFLINE=1 .venv/bin/python bench/scifact_eval.py`

BEIR SciFact, {len(corpus):,} documents (one frame each: title + abstract; {indexed.chunks:,}
chunk vectors for long abstracts), {len(queries):,} train queries with their qrels. Model
all-MiniLM-L6-v2 in-process (384 dims); production `HybridSearch`, profile `balanced`,
100 results per query. Indexing took {index_s:.0f} s.

| lanes | nDCG@10 | Recall@100 |
|---|---:|---:|
{table}
""",
    )


if __name__ == "__main__":
    asyncio.run(main())
