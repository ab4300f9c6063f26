"""``cluster status``: the shards of a sharded deployment (issue #17), from any machine that has
its ``HIVE_MIND_SHARDS`` (and token): liveness, minds, frames, index lag, queued ops."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hive_mind.cli.common import CountProgress, JsonOpt, output, run, state, table
from mind.errors import ConfigurationError
from queue_schemas.constants import COGNIFY_QUEUE

if TYPE_CHECKING:
    from rich.console import Console

HELP = """A sharded deployment's shards (HIVE_MIND_SHARDS): which answer, what each holds.

Each shard is asked over HTTP (/healthz, then its own /v1/status) with HIVE_MIND_API_TOKEN; a
shard that does not answer within a few seconds is shown down. With a Redis URL, each shard's
queued write-ops too.
"""

app = typer.Typer(help=HELP, no_args_is_help=True)


@app.command("status")
def status(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Shards, their liveness and latency, minds, frames, index lag and queued ops."""
    from hive_mind.cluster import cluster_status

    settings = state(ctx).settings()
    shards = settings.shard_map()
    if shards is None:
        raise ConfigurationError("not a sharded deployment: set HIVE_MIND_SHARDS "
                                 "(shard-0=http://host:port,...)")
    report = run(cluster_status(settings, shards))
    output(as_json, report, lambda c: render(c, report))
    if report["alive"] < len(report["shards"]):
        raise typer.Exit(1)


@app.command("rebalance")
def rebalance(
    ctx: typer.Context,
    from_shards: Annotated[str | None, typer.Option(
        "--from-shards", metavar="MAP",
        help="The shard map before the change (to reach shards that were removed); "
             "HIVE_MIND_SHARDS is the new one.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", metavar="",
                                          help="Only show the plan.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Move each mind whose owner changed to its new shard (resumable: run it again after an
    interruption). Every host must answer; each mind is unavailable (503, retryable) only
    while it moves. A host hands a mind only to a shard of its own map, unless
    HIVE_MIND_CLUSTER_KEY (the hosts' shared key) is set here: then each move is a signed order
    naming the new map's shard and URL."""
    from actors.placement import ShardMapError, parse_shards
    from hive_mind.rebalance import Rebalancer

    settings = state(ctx).settings()
    new = settings.shard_map()
    if new is None:
        raise ConfigurationError("set HIVE_MIND_SHARDS to the new shard map")
    try:
        old = parse_shards(from_shards) if from_shards else None
    except ShardMapError as exc:
        raise ConfigurationError(f"--from-shards: {exc}") from None

    async def go() -> dict[str, Any]:
        tool = Rebalancer(settings, new, old)
        try:
            plan = await tool.plan()
            if dry_run:
                return plan.as_dict()
            total = len(plan.moves)
            with CountProgress("minds moved", not as_json and sys.stderr.isatty()) as bar:
                bar(0, total)
                return await tool.run(plan, on_step=lambda done: bar(done, total))
        finally:
            await tool.close()

    report = run(go())
    output(as_json, report, lambda c: render_plan(c, report))
    if report["problems"]:
        raise typer.Exit(1)


def render_plan(c: Console, report: dict[str, Any]) -> None:
    c.print(table("Moves", ["mind", "from", "to", "done"],
                  ([m["mind_id"], m["source"], m["target"],
                    "yes" if m["mind_id"] in report.get("moved", ()) else "no"]
                   for m in report["moves"])))
    for problem in report["problems"]:
        c.print(f"[red]not moved: {problem}[/red]")


def render(c: Console, report: dict[str, Any]) -> None:
    c.print(table(f"Shards ({report['alive']} of {len(report['shards'])} up)",
                  ["shard", "url", "up", "ms", "minds", "frames", "pending index",
                   "queued ops", "error"],
                  ([r["shard"], r["url"], "yes" if r["alive"] else "NO", r["latency_ms"],
                    r["minds"], r["frames"], r["pending_index"], r.get("queued_ops"),
                    r["error"] or ""] for r in report["shards"])))
    queue = report.get("queue")
    if queue and queue.get("error"):
        c.print(f"[red]queue: {queue['error']}[/red]")
    elif queue:
        c.print(f"cognify queue: {queue['queues'].get(COGNIFY_QUEUE, 0)} jobs; "
                f"dead letters: {queue.get('dead_letters', 0)}")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="cluster")
