"""Scope-wide recall quality: routed (``HIVE_MIND_SCOPE_MINDS``) against every workspace.

BEIR SciFact (``scifact`` of the evaluation data, read in place, never copied) split over
``--workspaces`` workspaces: the 5,183 documents in a seeded shuffle, dealt round-robin (~26 a
workspace at 200). Each workspace's documents are written as a folder of markdown notes
(``# title`` + abstract, one file per document, as ``bench/evals/recall_eval.py`` writes them) and
imported with the facade's ``harvest import markdown`` into ``workspace=<id>`` — embedded mode,
default settings, the real model (all-MiniLM-L6-v2 in process). The personal mind stays empty.

Every question (SciFact train queries with qrels, the first ``--queries`` in qrels file order,
as recall_eval takes them) is asked with ``HiveMind.recall_detail(q, scope="all", limit=10,
touch=False)`` once per ``scope_minds`` setting (``--settings``, default 0 8 16 32; 0 searches
every workspace: the exhaustive reference), on one open facade whose ``settings`` are swapped
between passes (``scope_minds`` is read per recall). Per setting: nDCG@10 and Recall@10,
workspaces searched (``routing.searched``), overlap@10 with the exhaustive top 10, the share of
relevant documents whose workspace the router picked (``HiveMind._routed``, asked again beside
the recall: a diagnostic), and latency per query (informative only).

A reference row puts the same documents in ONE workspace (a separate data dir) searched with
``scope="workspace"``: what splitting costs at all.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.evals.scope_eval [--workspaces 200] [--queries 300]
        [--settings 0 8 16 32] [--keep DIR] [--no-report]

``--keep DIR`` keeps the notes and imported data dirs under DIR and reuses them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import write_section
from bench.evals.recall_eval import DONE, SCIFACT, Eval, mean, ndcg_at, recall_at, scifact_eval

SEED = 20_240_611
LIMIT = 10


@dataclass
class Pass:
    name: str
    ranked: list[list[str]] = field(default_factory=list)
    searched: list[int] = field(default_factory=list)
    routed_gold: list[float] = field(default_factory=list)  # share of gold docs' workspaces
    seconds: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def slug(k: int) -> str:
    return f"sf-{k:03d}"


def split_notes(notes: Path, out: Path, workspaces: int) -> dict[str, str]:
    """Doc id → workspace slug; the notes copied once into ``out/<slug>/``."""
    ids = sorted(p.stem for p in notes.glob("*.md"))
    random.Random(SEED).shuffle(ids)
    home = {doc: slug(i % workspaces) for i, doc in enumerate(ids)}
    if not (out / DONE).exists():
        shutil.rmtree(out, ignore_errors=True)
        for doc, ws in home.items():
            (out / ws).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(notes / f"{doc}.md", out / ws / f"{doc}.md")
        (out / DONE).touch()
    return home


async def open_hive(data_dir: Path, **overrides: Any) -> Any:
    from hive_mind.facade import HiveMind

    return await HiveMind.open(data_dir=data_dir, embedding_provider="inprocess", **overrides)


async def build(data_dir: Path, folders: list[tuple[str, Path]]) -> dict[str, Any]:
    """Import each (workspace slug, notes folder) unless ``data_dir`` holds it already."""
    marker = data_dir / DONE
    if marker.exists():
        return dict(json.loads(marker.read_text()))
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    hm = await open_hive(data_dir)
    frames = 0
    started = time.perf_counter()
    try:
        for k, (ws, folder) in enumerate(folders):
            await hm.create_workspace(f"SciFact {ws}", workspace_id=ws)
            summary = await hm.harvest("markdown", folder, workspace=ws)
            frames += int(summary["frames_created"])
            if k % 20 == 19 or k == len(folders) - 1:
                print(f"  {data_dir.name}: {k + 1}/{len(folders)} workspaces, {frames} frames, "
                      f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
        await hm.wait_idle()
    finally:
        await hm.close()
    saved = {"frames": frames, "import_s": time.perf_counter() - started,
             "workspaces": len(folders)}
    marker.write_text(json.dumps(saved))
    return saved


def doc_ids(ev: Eval, results: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for r in results:
        doc = ev.to_id(r) or Path(str(r["metadata"].get("file_path", ""))).stem
        if doc and doc not in out:  # a document's second section counts once
            out.append(doc)
    return out


async def ask_split(hm: Any, ev: Eval, home: dict[str, str], settings: list[int],
                    workspaces: list[str]) -> list[Pass]:
    from hive_mind.routing import routed_workspaces
    from mind.embeddings.memo import QueryMemo

    await hm.start_warm_up()
    for q in ev.questions[:5]:  # untimed: embedder, readers and routing summaries warm
        await hm.recall_detail(q.text, scope="all", limit=LIMIT, touch=False)
    passes = []
    for n in settings:
        hm.settings = hm.settings.replace(scope_minds=n)
        p = Pass("every workspace (scope_minds=0)" if n == 0 else f"routed, scope_minds={n}")
        started = time.perf_counter()
        for i, q in enumerate(ev.questions):
            t0 = time.perf_counter()
            try:
                detail = await hm.recall_detail(q.text, scope="all", limit=LIMIT, touch=False)
            except Exception as exc:  # counted and reported
                p.errors.append(f"{q.text[:60]!r}: {type(exc).__name__}: {exc}")
                detail = {"results": [], "routing": None}
            p.seconds.append(time.perf_counter() - t0)
            p.ranked.append(doc_ids(ev, detail["results"]))
            routing = detail.get("routing")
            p.searched.append(routing["searched"] if routing else len(workspaces))
            if n and len(workspaces) > n:
                embedder = QueryMemo(await hm.runtime.embedder_ready())
                chosen = set(await routed_workspaces(hm.runtime, q.text, workspaces, n, embedder))
                p.routed_gold.append(mean([home.get(d) in chosen for d in q.gold]))
            else:
                p.routed_gold.append(1.0)
            if i % 50 == 49:
                print(f"  {p.name}: {i + 1} queries, {time.perf_counter() - started:.0f} s",
                      file=sys.stderr, flush=True)
        passes.append(p)
    return passes


async def ask_single(hm: Any, ev: Eval, ws: str) -> Pass:
    p = Pass("one workspace, all documents (scope=workspace)")
    for q in ev.questions[:5]:
        await hm.recall_detail(q.text, scope="workspace", workspace=ws, limit=LIMIT, touch=False)
    for q in ev.questions:
        t0 = time.perf_counter()
        detail = await hm.recall_detail(q.text, scope="workspace", workspace=ws, limit=LIMIT,
                                        touch=False)
        p.seconds.append(time.perf_counter() - t0)
        p.ranked.append(doc_ids(ev, detail["results"]))
        p.searched.append(1)
        p.routed_gold.append(1.0)
    return p


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))] if s else 0.0


def overlap(a: list[str], b: list[str]) -> float:
    top = a[:LIMIT]
    return len(set(top) & set(b[:LIMIT])) / len(top) if top else 1.0


def table(ev: Eval, passes: list[Pass], exhaustive: Pass | None, workspaces: int) -> str:
    head = ("| setting | workspaces searched (mean) | nDCG@10 | Recall@10 | overlap@10 with "
            "every workspace | relevant docs' workspace routed | mean ms | p95 ms |")
    rows = [head, "|---" + "|---:" * 7 + "|"]
    for p in passes:
        gold = [q.gold for q in ev.questions]
        nd = mean([ndcg_at(r, g, 10) for r, g in zip(p.ranked, gold, strict=True)])
        rc = mean([recall_at(r, g, 10) for r, g in zip(p.ranked, gold, strict=True)])
        ov = (mean([overlap(e, r) for e, r in zip(exhaustive.ranked, p.ranked, strict=True)])
              if exhaustive is not None and p.searched[0] != 1 else None)
        searched = mean([float(s) for s in p.searched])
        rows.append(
            f"| {p.name} | {searched:.0f}" + (f" of {workspaces}" if p.searched[0] != 1 else "")
            + f" | {nd:.4f} | {rc:.4f} | {'—' if ov is None else f'{ov:.3f}'} | "
            + ("—" if p.searched[0] == 1 else f"{mean(p.routed_gold):.3f}")
            + f" | {mean(p.seconds) * 1000:.0f} | {pct(p.seconds, 0.95) * 1000:.0f} |")
    return "\n".join(rows)


def misses(ev: Eval, exhaustive: Pass, routed: Pass, home: dict[str, str], n: int = 5
           ) -> list[str]:
    """Questions whose relevant document exhaustive found in its top 10 and routed did not."""
    out = []
    for q, e, r, rg in zip(ev.questions, exhaustive.ranked, routed.ranked, routed.routed_gold,
                           strict=True):
        lost = [d for d in q.gold if d in e[:LIMIT] and d not in r[:LIMIT]]
        if lost:
            out.append(f"{q.text!r}: lost {lost} (workspace {[home[d] for d in lost]}; "
                       f"gold workspaces routed {rg:.2f})")
    return out[:n] + ([f"... {len(out) - n} more"] if len(out) > n else [])


EXHAUSTIVE_BELOW = (
    "Searching every workspace scores *below* routing, not above it: the merge interleaves the "
    "minds' lists by their normalized `score`, which is rank-based within each mind (a mind's "
    "best hit in both lanes scores 1.0 whatever its absolute relevance), so with hundreds of "
    "workspaces the merged top 10 is mostly the heads of different workspaces, ordered by "
    "tie-breaks (`final`, then workspace order). Routing helps because it drops the workspaces "
    "without evidence before that merge; searching more of them (8 → 32) lets more unrelated "
    "heads in even as the router picks more of the relevant workspaces. The gap to the "
    "one-workspace row is the merge's plus the router's misses.")


def report_body(command: str, docs: int, workspaces: int, split: dict[str, Any],
                single: dict[str, Any], questions: int, body_table: str, errors: int,
                findings: str) -> str:
    return (
        f"Command: `{command}`\n\n"
        f"BEIR SciFact's {docs:,} documents dealt over {workspaces} workspaces (seeded "
        f"shuffle, round-robin: {docs // workspaces}–{-(-docs // workspaces)} each), each "
        "workspace's documents imported as a folder of markdown notes (`# title` + abstract) "
        "with `HiveMind.harvest(\"markdown\", ...)` — embedded mode, default settings, model "
        f"all-MiniLM-L6-v2 in process; {split['frames']:,} frames imported and indexed in "
        f"{split['import_s']:.0f} s; the personal mind empty. {questions} SciFact train queries "
        "(the first with qrels, in qrels file order), each asked with `recall_detail(q, "
        "scope=\"all\", limit=10, touch=False)` once per `scope_minds` setting on one open "
        "facade. The last row puts all documents in one workspace (a separate data dir, "
        f"{single['frames']:,} frames, {single['import_s']:.0f} s) searched with "
        "`scope=\"workspace\"`.\n\n"
        f"{body_table}\n\n"
        "How to read it: with more workspaces than `scope_minds` (`HIVE_MIND_SCOPE_MINDS`, "
        "default 16), a scope-wide recall does not search every workspace; it ranks them by "
        "their routing summaries (sign bits of every vector, the keyword index's terms) and "
        "searches only the best `scope_minds` of them, with 40 candidates per lane and mind "
        "instead of 100. The first row searches all of them (`scope_minds=0`): *overlap@10* is "
        "the mean share of its top 10 documents the routed recall also returns, and *relevant "
        "docs' workspace routed* is the share of each query's relevant documents whose "
        "workspace the router picked (asked of `HiveMind._routed` beside the recall; a document "
        "in a workspace not picked cannot be found). The one-workspace row shows what splitting "
        "the corpus costs at all. Latency is the wall time of one `recall_detail` call, "
        "measured on this machine with other work possibly running: informative only."
        + (f"\n\n{findings}" if findings else "")
        + (f"\n\n{errors} recalls raised an error (counted as empty)." if errors else ""))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspaces", type=int, default=200)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--settings", type=int, nargs="+", default=[0, 8, 16, 32],
                        help="scope_minds values (0 = every workspace, measured first)")
    parser.add_argument("--keep", type=Path, help="keep notes and data dirs here and reuse them")
    parser.add_argument("--scifact", type=Path, default=SCIFACT)
    parser.add_argument("--no-report", action="store_true", help="print only")
    args = parser.parse_args()
    settings = sorted(set(args.settings))  # 0 (exhaustive) first: the overlap's reference
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        ev = scifact_eval(args.scifact, work, args.queries)  # notes, questions, id mapping
        notes = work / "scifact-notes"
        home = split_notes(notes, work / f"scope-notes-{args.workspaces}", args.workspaces)
        slugs = [slug(k) for k in range(args.workspaces)]
        split = await build(work / f"scope-{args.workspaces}",
                            [(ws, work / f"scope-notes-{args.workspaces}" / ws) for ws in slugs])
        single = await build(work / "scope-single", [("sf-all", notes)])
        print(f"imported: split {split}, single {single} "
              f"({time.perf_counter() - began:.0f} s so far)", file=sys.stderr, flush=True)

        hm = await open_hive(work / "scope-single")
        try:
            reference = await ask_single(hm, ev, "sf-all")
        finally:
            await hm.close()
        hm = await open_hive(work / f"scope-{args.workspaces}")
        try:
            passes = await ask_split(hm, ev, home, settings, slugs)
        finally:
            await hm.close()
    total = time.perf_counter() - began
    exhaustive = passes[0] if settings[0] == 0 else None
    body_table = table(ev, [*passes, reference], exhaustive, args.workspaces)
    print(body_table)
    errors = [e for p in passes for e in p.errors]
    for e in errors[:10]:
        print("ERROR", e)
    if exhaustive is not None:
        for p in passes[1:]:
            print(f"\n{p.name}: questions whose exhaustive top-10 hit was lost")
            print("\n".join(misses(ev, exhaustive, p, home)) or "  none")
    print(f"\ntotal {total:.0f} s; split import {split['import_s']:.0f} s, "
          f"single import {single['import_s']:.0f} s", file=sys.stderr)
    if args.no_report:
        return
    flags = " ".join(
        f"--{k} {v}" for k, v in (("workspaces", args.workspaces), ("queries", args.queries))
        if v != {"workspaces": 200, "queries": 300}[k])
    if settings != [0, 8, 16, 32]:
        flags += " --settings " + " ".join(map(str, settings))
    command = f"HF_HUB_OFFLINE=1 .venv/bin/python -m bench.evals.scope_eval {flags}".strip()
    def ndcg(p: Pass) -> float:
        return mean([ndcg_at(r, q.gold, 10) for r, q in zip(p.ranked, ev.questions, strict=True)])

    below = exhaustive is not None and any(ndcg(p) > ndcg(exhaustive) for p in passes[1:])
    body = report_body(command, len(home), args.workspaces, split, single, len(ev.questions),
                       body_table, len(errors), EXHAUSTIVE_BELOW if below else "")
    write_section(f"Scope-wide recall quality (SciFact over {args.workspaces} workspaces)", body)


if __name__ == "__main__":
    asyncio.run(main())
