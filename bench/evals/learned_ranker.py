"""Would a learned ranker beat the hand-set formula? Measured on held-out data, never shipped.

Every question of an eval is asked through the product path (``HiveMind.recall``, default
settings, ``explain=True``) with a deep limit, so each candidate comes back with the features
its rank is computed from (``explain``: each lane's reciprocal rank, the cosine, the fused lanes,
session, neighbour, update, speaker and time match, spread, recency, importance, proximity,
popularity, and the formula's own ``final``). A model then re-orders each question's candidates:

* ``logistic`` — logistic regression on the standardized features;
* ``boosted`` — gradient-boosted trees (scikit-learn's histogram GBDT, LightGBM's algorithm).

Labels: a candidate is positive when it is evidence for its question. Figures (recall@10 for
the chats, nDCG@10 for SciFact), each next to the formula's own order of the same candidates:

* LoCoMo dev, **leave-one-conversation-out**: trained on four conversations, scored on the
  fifth, rotated; also the in-sample figure (trained and scored on all five);
* **trained on the synthetic chats** (data the project may ship) and scored on LoCoMo and
  SciFact, which it never saw (LoCoMo and SciFact are non-commercial: a model trained on them
  must not ship).

A re-ranking of the product's own candidates (the first ``--depth`` of each recall): a shortcut
figure for the ranker alone, labelled as such.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.evals.learned_ranker --keep DIR [--depth 50]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from bench.evals import recall_eval as harness
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

FEATURES = ("kw", "vec", "similarity", "lanes", "session", "neighbour", "update", "speaker",
            "time", "spread", "recency", "importance", "proximity", "popularity", "final")


def features(e: dict[str, Any]) -> list[float]:
    def rr(rank: int | None) -> float:
        return 0.0 if rank is None else 1.0 / (10 + rank)

    return [rr(e["keyword_rank"]), rr(e["vector_rank"]), e["similarity"] or 0.0, e["lanes"],
            e["session"], e["neighbour"], e["update"], float(e["speaker_match"]),
            float(e["time_match"]), e["spread"], e["recency"], e["importance"],
            e["proximity"], math.log(e["popularity"]), e["final"]]


@dataclass
class Asked:
    group: str  # the question's conversation (LoCoMo) or type
    ids: list[str]  # candidates in the formula's order
    x: np.ndarray
    gold: set[str]


async def collect(ev: harness.Eval, data_dir: Path, depth: int) -> list[Asked]:
    await harness.run_eval(ev, data_dir, {"default": harness.MODES["default"]}, "balanced")
    hm = await harness.open_hive(data_dir)
    out = []
    try:
        for q in ev.questions:
            hits = await hm.recall(q.text, limit=depth, workspace=q.workspace, touch=False,
                                   explain=True, catch_up=False)
            hits = [h for h in hits if h.get("explain")]
            if hits:
                out.append(Asked(q.workspace or q.group, [ev.to_id(h) for h in hits],
                                 np.array([features(h["explain"]) for h in hits]), q.gold))
    finally:
        await hm.close()
    return out


def fit(kind: str, train: Sequence[Asked]) -> Callable[[np.ndarray], np.ndarray]:
    x = np.vstack([a.x for a in train])
    y = np.concatenate([[i in a.gold for i in a.ids] for a in train]).astype(int)
    if kind == "logistic":
        scale = StandardScaler().fit(x)
        model = LogisticRegression(max_iter=2000, class_weight="balanced").fit(scale.transform(x), y)
        return lambda m: model.decision_function(scale.transform(m))
    boosted = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, max_leaf_nodes=15,
                                             random_state=0).fit(x, y)
    return lambda m: boosted.predict_proba(m)[:, 1]


def score(asked: Sequence[Asked], metric: Callable[[list[str], set[str]], float],
          model: Callable[[np.ndarray], np.ndarray] | None) -> float:
    values = []
    for a in asked:
        order = a.ids if model is None else [a.ids[i] for i in np.argsort(-model(a.x),
                                                                           kind="stable")]
        values.append(metric(order, a.gold))
    return float(np.mean(values)) if values else 0.0


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, help="the recall eval's kept data dirs (reused)")
    parser.add_argument("--depth", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        locomo = await collect(harness.locomo_eval(harness.LOCOMO, work, 0, 0), work / "locomo",
                               args.depth)
        conv = await collect(harness.conv_eval(harness.CONV, 0), work / "conv", args.depth)
        scifact = await collect(harness.scifact_eval(harness.SCIFACT, work, 0),
                                work / "scifact", min(args.depth, 100))
    r10: Callable[[list[str], set[str]], float] = lambda r, g: harness.recall_at(r, g, 10)  # noqa: E731
    ndcg: Callable[[list[str], set[str]], float] = lambda r, g: harness.ndcg_at(r, g, 10)  # noqa: E731
    by_conv: dict[str, list[Asked]] = defaultdict(list)
    for a in locomo:
        by_conv[a.group].append(a)
    rows = ["| model | LoCoMo R@10 in-sample | LoCoMo R@10 leave-one-out | trained on the synthetic "
            "chats: LoCoMo R@10 | SciFact nDCG@10 |", "|---|---:|---:|---:|---:|",
            f"| hand-set formula | {score(locomo, r10, None):.4f} | {score(locomo, r10, None):.4f}"
            f" | {score(locomo, r10, None):.4f} | {score(scifact, ndcg, None):.4f} |"]
    for kind in ("logistic", "boosted"):
        held = []
        for name, asked in by_conv.items():
            rest = [a for other, rows_ in by_conv.items() if other != name for a in rows_]
            model = fit(kind, rest)
            held += [(a, model) for a in asked]
        leave_out = float(np.mean([r10(
            [a.ids[i] for i in np.argsort(-m(a.x), kind="stable")], a.gold) for a, m in held]))
        shipped = fit(kind, conv)
        rows.append(f"| {kind} | {score(locomo, r10, fit(kind, locomo)):.4f} | {leave_out:.4f} "
                    f"| {score(locomo, r10, shipped):.4f} | {score(scifact, ndcg, shipped):.4f} |")
    print("\n".join(rows))
    print(f"{len(locomo)} LoCoMo, {len(conv)} synthetic, {len(scifact)} SciFact questions; "
          f"depth {args.depth}", file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main())
