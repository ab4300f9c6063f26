"""Absolute relevance (``mind/retrieval/relevance.py``): fitted on the shipped synthetic chats,
measured on LoCoMo and SciFact and on unrelated questions.

Every question goes through the product path (``HiveMind.recall``, default settings, limit 10,
``explain=True``); each result's evidence (``above_background``, ``coverage``) and whether it is
evidence for its question are collected, and so are the results of **unrelated questions**
(each corpus asked another corpus' questions: SciFact claims of the chat minds, chat questions
of SciFact). "Relevant" means a match, not noise: a logistic regression on the synthetic chats
(``bench/data/conv``, data the project may ship) separating evidence results from the results
of unrelated questions (classes weighted equally) gives the three constants; LoCoMo and
SciFact, never fitted on, measure them: the mean ``absolute_relevance`` of evidence results, of
the other top-10 results and of an unrelated question's top result, and ROC AUC of evidence
against unrelated results. Figures with the constants in the code and the fitted ones.

Last, ``make run``'s mind (``examples/chatgpt-export`` through ``HiveMind.harvest``): the value
of each of ``examples/questions.json``'s answers among its question's top 10, against the top
result of unrelated questions (the SciFact claims and "quantum chromodynamics lattice gauge").

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.evals.relevance_calibration --keep DIR
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from bench.common import ROOT
from bench.evals import recall_eval as harness
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from mind.retrieval import relevance

Row = tuple[float, float, int]  # above background, coverage, evidence


async def rows_of(ev: harness.Eval, data_dir: Path, questions: list[harness.Question] | None = None,
                  ) -> list[list[Row]]:
    """Per question, its top 10 as rows (``questions``: ask these instead of the eval's own)."""
    await harness.run_eval(ev, data_dir, {"default": harness.MODES["default"]}, "balanced")
    hm = await harness.open_hive(data_dir)
    out = []
    try:
        for q in questions or ev.questions:
            workspace = q.workspace if questions is None else _any_workspace(ev)
            hits = await hm.recall(q.text, limit=10, workspace=workspace, touch=False,
                                   explain=True, catch_up=False)
            out.append([(_num(h["explain"]["above_background"]), h["explain"]["coverage"],
                         int(questions is None and ev.to_id(h) in q.gold))
                        for h in hits if h.get("explain")])
    finally:
        await hm.close()
    return out


async def demo(data_dir: Path, unrelated: list[str]) -> str:
    """``make run``'s mind: each question's answer (its first result holding the expected
    text) against the top result of each unrelated question; the rank score beside it."""
    examples = ROOT / "examples"
    fresh = not (data_dir / "personal.mind").exists()
    hm = await harness.open_hive(data_dir)
    try:
        if fresh:
            await hm.harvest("chatgpt", examples / "chatgpt-export")
            await hm.wait_idle()
        answers = []
        for q in json.loads((examples / "questions.json").read_text()):
            hits = await hm.recall(q["question"], limit=10, touch=False)
            answers += [next((h["absolute_relevance"] for h in hits if q["expect"] in h["content"]),
                             0.0)]
        tops = [(await hm.recall(text, limit=10, touch=False))[0] for text in unrelated]
    finally:
        await hm.close()
    a, noise = np.array(answers), np.array([t["absolute_relevance"] for t in tops])
    return (f"| make run's mind | {len(a)} answers: mean {a.mean():.3f}, min {a.min():.3f}, "
            f">= 0.5 {np.mean(a >= 0.5):.2f} | {len(noise)} unrelated tops: mean "
            f"{noise.mean():.3f}, max {noise.max():.3f}, >= 0.3 {np.mean(noise >= 0.3):.2f} | "
            f"'{unrelated[-1]}': score {tops[-1]['score']:.3f}, absolute_relevance "
            f"{noise[-1]:.3f} |")


def _any_workspace(ev: harness.Eval) -> str | None:
    return next((w for _, _, w in ev.imports if w), None)


def _num(value: Any) -> float:
    return 0.0 if value is None else float(value)


def curve(x: np.ndarray, w: tuple[float, ...]) -> np.ndarray:
    """sigmoid(w · features + bias): ``w`` holds a weight per feature, then the bias."""
    return 1.0 / (1.0 + np.exp(-(x[:, :len(w) - 1] @ np.asarray(w[:-1]) + w[-1])))


def summary(name: str, asked: list[list[Row]], unrelated: list[list[Row]],
            w: tuple[float, ...], cols: list[int]) -> str:
    flat = np.array([r for rows in asked for r in rows])
    p = curve(flat[:, cols], w)
    y = flat[:, 2] > 0
    noise = curve(np.array([[r[c] for c in cols] for rows in unrelated for r in rows]), w)
    top = curve(np.array([[rows[0][c] for c in cols] for rows in unrelated if rows]), w)
    auc = roc_auc_score(np.r_[np.ones(y.sum()), np.zeros(len(noise))], np.r_[p[y], noise])
    return (f"| {name} | {p[y].mean():.3f} | {np.mean(p[y] >= 0.5):.2f} | {p[~y].mean():.3f} | "
            f"{top.mean():.3f} | {np.mean(top >= 0.5):.2f} | {auc:.3f} |")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, help="the recall eval's kept data dirs (reused)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        conv_ev = harness.conv_eval(harness.CONV, 0)
        locomo_ev = harness.locomo_eval(harness.LOCOMO, work, 0, 0)
        sci_ev = harness.scifact_eval(harness.SCIFACT, work, 0)
        claims = sci_ev.questions[:150]
        conv = await rows_of(conv_ev, work / "conv")
        locomo = await rows_of(locomo_ev, work / "locomo")
        scifact = await rows_of(sci_ev, work / "scifact")
        unrelated = {"conv": await rows_of(conv_ev, work / "conv", claims),
                     "locomo": await rows_of(locomo_ev, work / "locomo", claims),
                     "scifact": await rows_of(sci_ev, work / "scifact", conv_ev.questions)}
        demo_row = await demo(work / "demo", [q.text for q in claims]
                              + ["quantum chromodynamics lattice gauge"])
    train = np.array([r for rows in conv for r in rows if r[2]]
                     + [r for rows in unrelated["conv"] for r in rows])
    current = ((relevance.COSINE_WEIGHT, relevance.COVERAGE_WEIGHT, relevance.BIAS), [0, 1])
    variants = {"in the code": current}
    for label, cols in (("fitted: above background + coverage", [0, 1]),
                        ("fitted: above background alone", [0])):
        model = LogisticRegression(class_weight="balanced").fit(train[:, cols], train[:, 2])
        variants[label] = ((*map(float, model.coef_[0]), float(model.intercept_[0])), cols)
    head = ("| eval | evidence, mean | evidence >= 0.5 | other top-10 results, mean | "
            "unrelated question's top, mean | unrelated top >= 0.5 | AUC evidence vs unrelated |"
            "\n|---|---:|---:|---:|---:|---:|---:|")
    for label, (w, cols) in variants.items():
        print(f"\n{label}: weights {', '.join(f'{x:.2f}' for x in w)}\n{head}")
        for name, asked in (("conv (fitted on)", conv), ("locomo", locomo),
                            ("scifact", scifact)):
            print(summary(name, asked, unrelated[name.split()[0]], w, cols))
    print(f"\n| mind | answers | unrelated questions' top result | the rank score |\n"
          f"|---|---|---|---|\n{demo_row}")


if __name__ == "__main__":
    asyncio.run(main())
