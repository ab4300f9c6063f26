"""How a sharded deployment merges the answers of its shards to a call over every mind (see
:mod:`hive_mind.sharded`): the jobs report, a scope-wide recall, and the shards it could not
reach."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from typing_extensions import TypedDict

from hive_mind.shapes import RecallDetail, RecallResult, Routing
from workers.jobs_shapes import JobsReport, LetterRow, MindJobs


def merge_jobs(answers: Mapping[str, JobsReport]) -> JobsReport:
    """Every shard's jobs report as one: each mind's row from the shard that holds it, dead
    letters once each. Hosts on one Redis each see the same queues, so their totals are that
    queue's (the largest report), not a sum; hosts with their own queues add up."""
    shared = all(a.get("mode") == "distributed" for a in answers.values())
    minds: dict[str, MindJobs] = {}
    failures: dict[str, LetterRow] = {}
    for shard in sorted(answers):
        for row in answers[shard].get("minds", []):
            if row.get("pending_index") is not None or row["id"] not in minds:
                minds[row["id"]] = row
        for letter in answers[shard].get("failures", []):
            failures.setdefault(str(letter.get("id")), letter)

    def total(key: Literal["queued", "running", "dead_letters"]) -> int:
        counts = [int(a.get(key) or 0) for a in answers.values()]
        return max(counts, default=0) if shared else sum(counts)

    return {"mode": "sharded", "shared_queue": shared, "queued": total("queued"),
            "running": total("running"), "dead_letters": total("dead_letters"),
            "minds": [minds[m] for m in sorted(minds)],
            "running_jobs": [job for s in sorted(answers)
                             for job in answers[s].get("running_jobs", [])],
            "failures": list(failures.values()),
            "note": "per shard: " + "; ".join(f"{s}: {answers[s].get('mode')}"
                                               for s in sorted(answers))}


class Unreached(TypedDict, total=False):
    unreachable: dict[str, str]


def unreached(down: dict[str, str]) -> Unreached:
    """``{"unreachable": {shard: error}}`` when a fan-out missed shards, else nothing."""
    return {"unreachable": down} if down else {}


def merge_recalls(answers: Mapping[str, RecallDetail], limit: int,
                  down: dict[str, str]) -> RecallDetail:
    """Scope-wide answers of several shards as one (scores are each shard's cross-mind scale,
    :func:`mind.retrieval.combined.rescore_across`): by score, stable in shard order."""
    shards = sorted(answers)
    results: list[RecallResult] = []
    seen = set()
    for result in sorted((r for s in shards for r in answers[s]["results"]),
                         key=lambda r: -float(r.get("score") or 0.0)):
        key = (result.get("from"), result.get("id"))
        if key not in seen:
            seen.add(key)
            results.append(result)
    results = results[:limit]
    routing = [answers[s].get("routing") for s in shards]
    routed: Routing | None = None
    if any(routing):  # a shard that searched all its workspaces reports none: count none
        routed = {"searched": sum(r["searched"] for r in routing if r),
                  "workspaces": sum(r["workspaces"] for r in routing if r)}
    merged: RecallDetail = {
        "results": results, "count": len(results),
        "conflicts": [c for s in shards for c in answers[s].get("conflicts", [])],
        "external": next((answers[s]["external"] for s in shards
                          if answers[s].get("external")), None),
        "routing": routed}
    if down:
        merged["unreachable"] = down
    return merged
