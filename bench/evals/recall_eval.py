"""Retrieval quality through the product's own path: harvest → actor → cognify → HiveMind.recall.

One harness for the three evals (issue #11). Every corpus is imported with the facade's
``harvest`` — the same adapters, actor writes, cognify extraction, chunking, embedding and
supersession pairs users get — into a fresh embedded data dir, and every question is asked with
``HiveMind.recall`` (default profile, limit as given), once per lane setting:

* ``keyword`` — the FTS5 lane alone, ``vector`` — the vector lane alone, ``hybrid`` — the
  product default (both lanes, fusion and re-scoring);
* ``touch=False`` so no question's access counts leak into the next one.

Evals:

* ``locomo`` — ``locomo-dev`` of the evaluation data (five LoCoMo conversations, 760 questions;
  read in place, never copied: its licence is non-commercial). Each conversation file goes into
  its own workspace (``harvest import universal``); a question is asked in its conversation's
  workspace; results map back to message ids through ``metadata.message_id``. Evidence
  recall@5/@10 overall and per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop),
  and session recall@10 (``S@10``, what other systems publish): the share of a question's
  evidence sessions among the sessions of its top 10 (a message id ``conv-26:D3:12`` is turn 12
  of the third session, D3, of conv-26).
* ``scifact`` — BEIR SciFact train queries over the 5,183-document corpus, imported as a folder
  of markdown notes (``# title`` + abstract, one file per document: ``harvest import markdown``);
  nDCG@10 and Recall@100.
* ``conv`` — our synthetic multi-session chats (``bench/data/conv``, universal format, personal
  mind); Recall@5/@10 overall and per question type.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.evals.recall_eval [--evals locomo scifact conv]
        [--keep DIR] [--conversations N] [--questions N] [--steps] [--folds] [--no-report]

``--keep DIR`` keeps the imported data dirs under DIR and reuses them on the next run (for
tuning query-time ranking; delete DIR after changing anything at import time).

``--steps`` adds the "what moved it" table: each ranking signal added one at a time.

``--folds`` (LoCoMo) adds leave-conversations-out figures (issue #40): every question is scored
once under each setting of :data:`GRID` (the default and each ranking knob of
:class:`~mind.retrieval.conversation.Signals` moved down and up, one at a time); for each
conversation the setting with the best R@10 on the other conversations scores it, and the
question-weighted mean over the held-out conversations is the leave-out figure. It is printed
next to the in-sample figure (the setting best on all conversations, scored on all of them) and
the default's; an in-sample lead of more than :data:`OVERFIT_GAP` is flagged as overfitting.
A new ranking knob takes one entry in :data:`GRID_AXES`. A (lanes, signals) setting is asked
once per run however many modes, steps or grid entries name it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.common import ROOT, write_section

from mind.retrieval import conversation
from mind.retrieval.conversation import DEFAULT_SIGNALS, LANES_ONLY, Signals
from mind.harvest.types import stable_id



def _shared() -> Path:
    """The evaluation data (not in the repository: licences): ``shared/data`` beside the
    checkout (where CI has it); ``HIVE_MIND_SHARED_DATA`` overrides, and a checkout elsewhere on this machine falls back to /work/shared/data."""
    if os.environ.get("HIVE_MIND_SHARED_DATA"):
        return Path(os.environ["HIVE_MIND_SHARED_DATA"])
    beside = ROOT.parent / "shared" / "data"
    return beside if beside.exists() or not Path("/work/shared/data").exists() \
        else Path("/work/shared/data")


SHARED = _shared()
LOCOMO = SHARED / "locomo-dev"
SCIFACT = SHARED / "scifact"
CONV = ROOT / "bench" / "data" / "conv"
# name → (lanes, signals): single lanes and the fused lanes alone, then the product default
MODES: dict[str, tuple[str, Signals]] = {
    "keyword": ("keyword", LANES_ONLY),
    "vector": ("vector", LANES_ONLY),
    "lanes": ("hybrid", LANES_ONLY),
    "default": ("hybrid", DEFAULT_SIGNALS),
}
# the "what moved it" steps: each adds one thing to the one before (--steps)
_PLAIN = replace(LANES_ONLY, context_weight=0.0, complete=False)
STEPS: dict[str, tuple[str, Signals]] = {
    "lanes fused (rank + score)": ("hybrid", _PLAIN),
    "+ keyword context": ("hybrid", replace(_PLAIN, context_weight=DEFAULT_SIGNALS.context_weight)),
    "+ lane completion": ("hybrid", LANES_ONLY),
    "+ re-score": ("hybrid", replace(LANES_ONLY, rescore=True)),
    "+ session lane": ("hybrid", replace(LANES_ONLY, rescore=True,
                                         session_weight=DEFAULT_SIGNALS.session_weight)),
    "+ neighbours": ("hybrid", replace(DEFAULT_SIGNALS, speaker_boost=0.0, time_boost=0.0,
                                       supersede=False)),
    "+ speaker": ("hybrid", replace(DEFAULT_SIGNALS, time_boost=0.0, supersede=False)),
    "+ time": ("hybrid", replace(DEFAULT_SIGNALS, supersede=False)),
    "+ supersession (= default)": ("hybrid", DEFAULT_SIGNALS),
    "default without re-score": ("hybrid", replace(DEFAULT_SIGNALS, rescore=False)),
    "keyword lane without context": ("keyword", replace(LANES_ONLY, context_weight=0.0)),
}


def around(knob: str, down: float = 0.5, up: float = 2.0) -> tuple[Any, ...]:
    """The default of a numeric :class:`Signals` knob moved down and up: scaled by ``down`` and
    ``up`` (an int knob by at least 1 each way), so the grid follows the default when it moves."""
    value = getattr(DEFAULT_SIGNALS, knob)
    if isinstance(value, int):
        return max(1, min(value - 1, round(value * down))), max(value + 1, round(value * up))
    return round(value * down, 4), round(value * up, 4)


# the --folds grid: knob → the values it takes, one knob at a time, the others at the default.
# A new ranking knob of Signals (a supersession or query-splitting weight, ...) is one entry here.
GRID_AXES: dict[str, tuple[Any, ...]] = {
    "session_weight": around("session_weight"),
    "session_top": around("session_top"),
    "neighbour_share": around("neighbour_share"),
    "neighbour_hits": around("neighbour_hits"),
    "speaker_boost": around("speaker_boost"),
    "time_boost": around("time_boost"),
    "context_weight": around("context_weight"),
    "complete": (False,),
    "rescore": (False,),
    "supersede": (False,),
    "spread": around("spread"),
    "parts": around("parts"),
    "anchor_time": (False,),
    "told_time": (False,),
}


def grid(base: Signals = DEFAULT_SIGNALS, axes: dict[str, tuple[Any, ...]] | None = None
         ) -> dict[str, Signals]:
    """``{name: signals}``: ``default`` (``base``) first, then ``knob=value`` for each value of
    each axis that differs from ``base`` (the first setting wins ties in :func:`pick`)."""
    out = {"default": base}
    for knob, values in (GRID_AXES if axes is None else axes).items():
        for value in values:
            if value != getattr(base, knob):
                out[f"{knob}={value:g}" if not isinstance(value, bool) else f"{knob}={value}"] = \
                    replace(base, **{knob: value})
    return out


GRID = grid()
GRID_PREFIX = "grid "  # a grid setting's mode name in Eval.scores
SELECT = "R@10"  # the metric each fold's setting is picked by
OVERFIT_GAP = 0.03  # an in-sample lead over leave-out above this is overfitting (issue #40)
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DONE = ".imported"


# -- metrics ------------------------------------------------------------------------------------


def recall_at(ranked: Sequence[str], gold: Sequence[str] | set[str], k: int) -> float:
    gold = set(gold)
    return len(set(ranked[:k]) & gold) / len(gold) if gold else 0.0


def session_of(message_id: str) -> str:
    """A LoCoMo message id's session: ``conv-26:D3:12`` (turn 12 of its third session) → ``conv-26:D3``.
    The import's ``conversation_id`` (``conv-26:session_3``) names the same session; the id
    prefix also covers evidence ids no imported turn carries."""
    return message_id.rpartition(":")[0]


def session_recall_at(ranked: Sequence[str], gold: Sequence[str] | set[str], k: int) -> float:
    """Share of the evidence's sessions among the sessions of the top ``k`` results."""
    wanted = {session_of(g) for g in gold}
    found = {session_of(r) for r in ranked[:k] if r}
    return len(found & wanted) / len(wanted) if wanted else 0.0


def ndcg_at(ranked: Sequence[str], relevant: set[str], k: int = 10) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return dcg / ideal if ideal else 0.0


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


# -- one eval = a corpus imported into a data dir + questions asked in it -------------------------


@dataclass
class Question:
    text: str
    gold: set[str]
    group: str  # category / question type
    workspace: str | None = None


@dataclass
class Eval:
    name: str
    limit: int
    questions: list[Question]
    to_id: Callable[[dict[str, Any]], str]  # recall result → the id the gold set uses
    metrics: dict[str, Callable[[list[str], set[str]], float]]
    imports: list[tuple[str, Path, str | None]]  # (source, path, workspace)
    frames: int = 0
    import_s: float = 0.0
    query_s: dict[str, float] = field(default_factory=dict)
    scores: dict[str, list[tuple[str, dict[str, float]]]] = field(default_factory=dict)
    # (lanes, signals) → (per-question scores, seconds): each setting asked once per run
    asked: dict[tuple[str, Signals], tuple[list[tuple[str, dict[str, float]]], float]] = \
        field(default_factory=dict)

    def summary(self, mode: str) -> dict[str, dict[str, float]]:
        """group ('all' and each group) → metric → mean."""
        return summarize(self.scores[mode], self.metrics)

    def fold_rows(self, mode: str) -> list[Row]:
        """A mode's scores as :data:`Row` s: each question's conversation (workspace) is its
        fold."""
        return [(q.workspace or "", group, values)
                for q, (group, values) in zip(self.questions, self.scores[mode], strict=True)]


def summarize(rows: Iterable[tuple[str, Mapping[str, float]]], metrics: Iterable[str]
              ) -> dict[str, dict[str, float]]:
    """``(group, scores)`` per question → group ('all' and each group) → metric → mean."""
    groups: dict[str, list[Mapping[str, float]]] = defaultdict(list)
    for group, values in rows:
        groups["all"].append(values)
        groups[group].append(values)
    return {g: {m: mean([v[m] for v in scored]) for m in metrics} for g, scored in groups.items()}


# -- leave-conversations-out (--folds) ----------------------------------------------------------

Row = tuple[str, str, Mapping[str, float]]  # one question: (fold = its conversation, group, scores)


def pick(scores: Mapping[str, Sequence[Row]], folds: Collection[str], metric: str = SELECT
         ) -> str:
    """The setting whose mean ``metric`` over the questions of ``folds`` is best; a tie goes to
    the earlier setting (:data:`GRID` puts the default first)."""
    best, best_value = "", -math.inf
    for setting, rows in scores.items():
        value = mean([values[metric] for fold, _, values in rows if fold in folds])
        if value > best_value:
            best, best_value = setting, value
    return best


@dataclass(frozen=True)
class Folds:
    """Leave-conversations-out against in-sample figures (each: group → metric → mean)."""

    metrics: list[str]
    chosen: dict[str, str]  # held-out conversation → the setting picked on the others
    held_out: dict[str, dict[str, dict[str, float]]]  # conversation → its figures under chosen
    in_sample_setting: str  # picked on every conversation
    default: dict[str, dict[str, float]]
    in_sample: dict[str, dict[str, float]]
    leave_out: dict[str, dict[str, float]]

    def gap(self) -> dict[str, dict[str, float]]:
        """In-sample minus leave-out, per group and metric."""
        return {g: {m: self.in_sample[g][m] - self.leave_out[g][m] for m in self.metrics}
                for g in self.in_sample}

    def overfit(self, limit: float = OVERFIT_GAP) -> list[tuple[str, str]]:
        """``(group, metric)`` whose in-sample figure leads leave-out by more than ``limit``."""
        return [(g, m) for g, row in self.gap().items() for m, v in row.items()
                if overfits(v, limit)]


def overfits(gap: float, limit: float = OVERFIT_GAP) -> bool:
    """An in-sample lead over leave-out above ``limit`` (a float's last bit does not count)."""
    return gap > limit + 1e-9


def leave_out(scores: Mapping[str, Sequence[Row]], metric: str = SELECT,
              default: str = "default") -> Folds:
    """``scores``: setting → every question's :data:`Row` (the same questions under each
    setting). Each fold (conversation) is scored with the setting best on the other folds; the
    leave-out figure is the question-weighted mean over all held-out folds."""
    rows = scores[default]
    folds = sorted({fold for fold, _, _ in rows})
    if len(folds) < 2:
        raise ValueError(f"leave-out needs two folds or more, got {folds}")
    metrics = list(rows[0][2])
    chosen = {f: pick(scores, [o for o in folds if o != f], metric) for f in folds}
    held = {f: [r for r in scores[chosen[f]] if r[0] == f] for f in folds}
    inside = pick(scores, folds, metric)

    def figures(part: Iterable[Row]) -> dict[str, dict[str, float]]:
        return summarize(((group, values) for _, group, values in part), metrics)

    return Folds(metrics, chosen, {f: figures(held[f]) for f in folds}, inside, figures(rows),
                 figures(scores[inside]), figures(r for f in folds for r in held[f]))


def _recall_metrics(*ks: int) -> dict[str, Callable[[list[str], set[str]], float]]:
    return {f"R@{k}": (lambda r, g, k=k: recall_at(r, g, k)) for k in ks}


def locomo_eval(data: Path, work: Path, conversations: int, questions: int) -> Eval:
    files = sorted(data.glob("conv-*.jsonl"))[: conversations or None]
    samples = {f.stem for f in files}
    wanted = [q for q in json.loads((data / "questions.json").read_text())
              if q["sample_id"] in samples]
    if questions:
        wanted = _spread(wanted, questions, key=lambda q: q["sample_id"])
    return Eval(
        "locomo", 10,
        [Question(q["question"], set(q["evidence"]), LOCOMO_CATEGORIES[q["category"]],
                  q["sample_id"]) for q in wanted],
        lambda r: str(r["metadata"].get("message_id", "")),
        {**_recall_metrics(5, 10), "S@10": lambda r, g: session_recall_at(r, g, 10)},
        [("universal", f, f.stem) for f in files],
    )


def scifact_eval(data: Path, work: Path, questions: int) -> Eval:
    """Corpus as a folder of markdown notes (written once under ``work``)."""
    docs = work / "scifact-notes"
    if not (docs / DONE).exists():
        docs.mkdir(parents=True, exist_ok=True)
        with open(data / "corpus.jsonl") as fh:
            for line in fh:
                doc = json.loads(line)
                title = " ".join(doc.get("title", "").split()) or doc["_id"]
                (docs / f"{doc['_id']}.md").write_text(f"# {title}\n\n{doc['text'].strip()}\n")
        (docs / DONE).touch()
    texts = {}
    with open(data / "queries.jsonl") as fh:
        for line in fh:
            q = json.loads(line)
            texts[q["_id"]] = q["text"]
    qrels: dict[str, set[str]] = defaultdict(set)
    with open(data / "qrels" / "train.tsv") as fh:
        next(fh)
        for line in fh:
            qid, did, score = line.strip().split("\t")
            if int(score) > 0:
                qrels[qid].add(did)
    asked = [Question(texts[q], rel, "all") for q, rel in qrels.items() if q in texts]
    if questions:
        asked = asked[:questions]
    doc_of = {stable_id("markdown", f"{p.stem}.md"): p.stem for p in docs.glob("*.md")}
    return Eval(
        "scifact", 100, asked,
        lambda r: doc_of.get(str(r["metadata"].get("conversation_id", "")), ""),
        {"nDCG@10": lambda r, g: ndcg_at(r, g, 10), "R@100": lambda r, g: recall_at(r, g, 100)},
        [("markdown", docs, None)],
    )


def conv_eval(data: Path, questions: int) -> Eval:
    asked = [Question(q["question"], set(q["gold"]), q["type"])
             for q in json.loads((data / "questions.json").read_text())]
    if questions:
        asked = _spread(asked, questions, key=lambda q: q.group)
    return Eval(
        "conv", 10, asked, lambda r: str(r["metadata"].get("message_id", "")),
        _recall_metrics(5, 10), [("universal", data / "messages.jsonl", None)],
    )


def _spread(items: list[Any], n: int, key: Callable[[Any], str]) -> list[Any]:
    """``n`` items taken round-robin over the groups ``key`` makes (a small but mixed slice)."""
    groups: dict[str, list[Any]] = defaultdict(list)
    for item in items:
        groups[key(item)].append(item)
    out: list[Any] = []
    while len(out) < min(n, len(items)):
        for rows in groups.values():
            if rows and len(out) < n:
                out.append(rows.pop(0))
    return out


# -- running through the facade -----------------------------------------------------------------


async def open_hive(data_dir: Path) -> Any:
    from hive_mind.facade import HiveMind

    return await HiveMind.open(data_dir=data_dir, embedding_provider="inprocess", redis_url=None)


async def import_corpus(hm: Any, ev: Eval, progress: bool) -> None:
    start = time.perf_counter()
    for source, path, workspace in ev.imports:
        if workspace is not None:
            await hm.create_workspace(workspace)
        summary = await hm.harvest(source, path, workspace=workspace)
        if summary.get("pending_index"):
            raise RuntimeError(f"{path}: {summary['pending_index']} frames left unindexed")
        ev.frames += int(summary["frames_created"])
        if progress:
            print(f"  imported {path.name}: {summary['frames_created']} frames", file=sys.stderr)
    ev.import_s = time.perf_counter() - start


async def ask(hm: Any, ev: Eval, modes: dict[str, tuple[str, Signals]], profile: str) -> None:
    """Every question once per mode; a mode's signals are set as the process-wide default
    (what ``HiveMind.recall`` uses) for its questions only. A mode whose (lanes, signals) were
    asked before in this run takes those scores (and time) without asking again."""
    for mode, (lanes, signals) in modes.items():
        if (lanes, signals) in ev.asked:
            ev.scores[mode], ev.query_s[mode] = ev.asked[(lanes, signals)]
            continue
        rows = []
        start = time.perf_counter()
        conversation.DEFAULT_SIGNALS = signals
        try:
            for q in ev.questions:
                results = await hm.recall(q.text, limit=ev.limit, workspace=q.workspace,
                                          profile=profile, lanes=lanes, touch=False,
                                          catch_up=False)
                ranked = [ev.to_id(r) for r in results]
                rows.append((q.group, {m: fn(ranked, q.gold) for m, fn in ev.metrics.items()}))
        finally:
            conversation.DEFAULT_SIGNALS = DEFAULT_SIGNALS
        ev.query_s[mode] = time.perf_counter() - start
        ev.scores[mode] = rows
        ev.asked[(lanes, signals)] = rows, ev.query_s[mode]


async def run_eval(ev: Eval, data_dir: Path, modes: dict[str, tuple[str, Signals]], profile: str,
                   progress: bool = True) -> Eval:
    """Import (unless ``data_dir`` already holds this eval's import) and ask every question."""
    marker = data_dir / DONE
    if not marker.exists():
        shutil.rmtree(data_dir, ignore_errors=True)
        data_dir.mkdir(parents=True)
    hm = await open_hive(data_dir)
    try:
        if marker.exists():
            saved = json.loads(marker.read_text())
            ev.frames, ev.import_s = saved["frames"], saved["import_s"]
        else:
            await import_corpus(hm, ev, progress)
            await hm.wait_idle()
            marker.write_text(json.dumps({"frames": ev.frames, "import_s": ev.import_s}))
        await ask(hm, ev, modes, profile)
    finally:
        await hm.close()
    return ev


# -- output -------------------------------------------------------------------------------------


def lines(ev: Eval) -> list[str]:
    out = []
    for mode in ev.scores:
        s = ev.summary(mode)
        cells = "  ".join(f"{m} {v:.4f}" for m, v in s["all"].items())
        groups = "  ".join(
            f"{g} " + "/".join(f"{v:.3f}" for v in s[g].values())
            for g in sorted(s) if g != "all" and len(s) > 2)
        out.append(f"{ev.name:>8} {mode:>8}: {cells}   {groups}")
    return out


def table(ev: Eval) -> str:
    """One row per lane setting of :data:`MODES` (all metrics, per group when there are
    groups)."""
    groups = sorted(g for g in ev.summary(next(iter(ev.scores))) if g != "all")
    metrics = list(ev.metrics)
    head = ["lanes", *metrics]
    if len(groups) > 1:
        counts: dict[str, int] = defaultdict(int)
        for q in ev.questions:
            counts[q.group] += 1
        head += [f"{g} ({counts[g]}) {'/'.join(metrics)}" for g in groups]
    rows = [f"| {' | '.join(head)} |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for mode in (m for m in ev.scores if m in MODES):
        s = ev.summary(mode)
        cells = [mode, *(f"{s['all'][m]:.4f}" for m in metrics)]
        if len(groups) > 1:
            cells += ["/".join(f"{s[g][m]:.3f}" for m in metrics) for g in groups]
        rows.append(f"| {' | '.join(cells)} |")
    return "\n".join(rows)


DESCRIPTIONS = {
    "locomo": "LoCoMo development half (`locomo-dev` of the evaluation data): five long multi-session "
              "conversations, each imported into its own workspace with `harvest import "
              "universal`; every question asked in its conversation's workspace, limit 10; "
              "evidence recall@k (R@k) = share of the question's evidence messages in the top k; "
              "session recall@10 (S@10) = share of its evidence sessions among the sessions of "
              "the top 10.",
    "scifact": "BEIR SciFact train queries; the corpus imported as a folder of markdown notes "
               "(`# title` + abstract, one file per document) with `harvest import markdown`, "
               "so cognify extraction, chunking and embedding run as for users; limit 100.",
    "conv": "Our synthetic multi-session chats (`bench/data/conv`: planted facts, corrections, "
            "month-specific decisions, group-chat speakers, look-alike distractors), imported "
            "with `harvest import universal` into the personal mind; limit 10.",
}


HEADLINE = {"locomo": ("R@10",), "scifact": ("nDCG@10",), "conv": ("R@5", "R@10")}


def steps_table(evals: Sequence[Eval]) -> str:
    """The "what moved it" table: each step's headline metric on every eval."""
    cols = [(ev, m) for ev in evals for m in HEADLINE[ev.name]]
    head = "| step | " + " | ".join(f"{ev.name} {m}" for ev, m in cols) + " |"
    rows = [head, "|---" + "|---:" * len(cols) + "|"]
    for step in STEPS:
        if all(step in ev.scores for ev in evals):
            rows.append(f"| {step} | " + " | ".join(
                f"{ev.summary(step)['all'][m]:.4f}" for ev, m in cols) + " |")
    return "\n".join(rows)


def run_folds(ev: Eval) -> Folds:
    """:func:`leave_out` over the :data:`GRID` modes an eval was asked with."""
    return leave_out({name: ev.fold_rows(GRID_PREFIX + name) for name in GRID})


def folds_table(ev: Eval, folds: Folds) -> str:
    """Default, in-sample and leave-out figures with the gap (``!`` marks a gap above
    :data:`OVERFIT_GAP`), then which setting each held-out conversation was scored with."""
    counts: dict[str, int] = defaultdict(int)
    for q in ev.questions:
        counts[q.group] += 1
        counts[q.workspace or ""] += 1
    groups = sorted(g for g in folds.default if g != "all")
    metrics = folds.metrics
    head = ["figure", "setting", *metrics,
            *(f"{g} ({counts[g]}) {'/'.join(metrics)}" for g in groups)]
    rows = [f"| {' | '.join(head)} |", "|---|---" + "|---:" * (len(head) - 2) + "|"]

    def row(name: str, setting: str, figs: dict[str, dict[str, float]], gap: bool = False
            ) -> str:
        def cell(v: float, digits: int) -> str:
            return f"{v:{'+' if gap else ''}.{digits}f}" + ("!" if gap and overfits(v) else "")
        cells = [name, setting, *(cell(figs["all"][m], 4) for m in metrics),
                 *("/".join(cell(figs[g][m], 3) for m in metrics) for g in groups)]
        return f"| {' | '.join(cells)} |"

    rows += [row("default", "default", folds.default),
             row("in-sample", folds.in_sample_setting, folds.in_sample),
             row("leave-conversations-out", "picked per fold", folds.leave_out),
             row("gap (in-sample − leave-out)", "", folds.gap(), gap=True)]
    flagged = folds.overfit()
    verdict = ("overfitting: in-sample leads leave-out by more than "
               f"{OVERFIT_GAP} on " + ", ".join(f"{g} {m}" for g, m in flagged)
               if flagged else f"no gap above {OVERFIT_GAP}: no sign of overfitting")
    per_fold = ["| held out | questions | setting picked on the others | "
                + " | ".join(metrics) + f" | default {SELECT} |",
                "|---|---:|---" + "|---:" * (len(metrics) + 1) + "|"]
    for fold, setting in folds.chosen.items():
        mine = folds.held_out[fold]["all"]
        default = mean([v[SELECT] for f, _, v in ev.fold_rows("default") if f == fold])
        per_fold.append(f"| {fold} | {counts[fold]} | {setting} | "
                        + " | ".join(f"{mine[m]:.4f}" for m in metrics) + f" | {default:.4f} |")
    return "\n".join([*rows, "", verdict, "", *per_fold])


def report(evals: Sequence[Eval], profile: str, command: str,
           folds: dict[str, Folds] | None = None) -> None:
    parts = []
    for ev in evals:
        timing = ", ".join(f"{m} {ev.query_s[m] / max(1, len(ev.questions)) * 1000:.0f} ms"
                           for m in ev.query_s)
        parts.append(
            f"### {ev.name}\n\n{DESCRIPTIONS[ev.name]} {ev.frames:,} frames imported and "
            f"indexed in {ev.import_s:.0f} s; {len(ev.questions)} questions "
            f"(mean time per question: {timing}).\n\n{table(ev)}\n")
    for ev in evals:
        if folds and ev.name in folds:
            parts.append(
                f"### {ev.name}: leave-conversations-out\n\nEach question scored under "
                f"{len(GRID)} settings of the ranking knobs (`GRID` in bench/evals/recall_eval.py: the "
                "default, then one knob at a time moved down and up); each conversation held "
                f"out in turn is scored with the setting best by {SELECT} on the others "
                "(question-weighted over the held-out conversations); in-sample: the setting "
                f"best on all of them (`--folds`).\n\n{folds_table(ev, folds[ev.name])}\n")
    if any(step in ev.scores for ev in evals for step in STEPS):
        parts.append("### What moved it\n\nEach row adds one thing to the row above (same "
                     "import, same questions; `bench/evals/recall_eval.py --steps`).\n\n"
                     + steps_table(evals) + "\n")
    write_section(
        "Recall quality (product path)",
        f"Command: `{command}`\n\nEvery figure goes through the product's own path: "
        "`HiveMind.harvest` (adapters → actor → cognify extraction + embedding + supersession pairs, "
        "embedded default, model all-MiniLM-L6-v2 in-process) then `HiveMind.recall` with "
        f"profile `{profile}` and `touch=False` (no access counts leak between questions). "
        "`keyword` and `vector`: one lane alone (`lanes=`, no conversation signals, no "
        "re-score); `lanes`: both lanes fused and nothing else; `default`: the product default.\n\n" + "\n".join(parts))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--evals", nargs="+", default=["locomo", "scifact", "conv"],
                        choices=["locomo", "scifact", "conv"])
    parser.add_argument("--steps", action="store_true",
                        help="also measure each ranking signal added one at a time")
    parser.add_argument("--profile", default="balanced")
    parser.add_argument("--keep", type=Path, help="keep imported data dirs here and reuse them")
    parser.add_argument("--conversations", type=int, default=0, help="LoCoMo files (0 = all)")
    parser.add_argument("--questions", type=int, default=0, help="questions per eval (0 = all)")
    parser.add_argument("--locomo", type=Path, default=LOCOMO)
    parser.add_argument("--scifact", type=Path, default=SCIFACT)
    parser.add_argument("--conv", type=Path, default=CONV)
    parser.add_argument("--folds", action="store_true",
                        help="LoCoMo: leave-conversations-out figures over the GRID of settings")
    parser.add_argument("--no-report", action="store_true", help="print only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        build = {
            "locomo": lambda: locomo_eval(args.locomo, work, args.conversations, args.questions),
            "scifact": lambda: scifact_eval(args.scifact, work, args.questions),
            "conv": lambda: conv_eval(args.conv, args.questions),
        }
        done, folds = [], {}
        for name in args.evals:
            modes = {**MODES, **STEPS} if args.steps else dict(MODES)
            if args.folds and name == "locomo":
                modes |= {GRID_PREFIX + g: ("hybrid", signals) for g, signals in GRID.items()}
            ev = await run_eval(build[name](), work / name, modes, args.profile)
            print("\n".join(lines(ev)), flush=True)
            if args.folds and name == "locomo" and len({q.workspace for q in ev.questions}) > 1:
                folds[name] = run_folds(ev)
                print(f"\n{name} leave-conversations-out ({len(GRID)} settings):\n"
                      + folds_table(ev, folds[name]) + "\n", flush=True)
            done.append(ev)
    if not args.no_report:
        flags = " ".join(f"--{k} {v}" for k, v in (("conversations", args.conversations),
                                                    ("questions", args.questions)) if v)
        flags += " --steps" if args.steps else ""
        flags += " --folds" if args.folds else ""
        report(done, args.profile,
               f"HF_HUB_OFFLINE=1 .venv/bin/python -m bench.evals.recall_eval {flags}".strip(), folds)


if __name__ == "__main__":
    asyncio.run(main())
