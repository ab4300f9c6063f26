"""``maintenance compact|reconcile|reembed|dedupe|sync``: per-mind upkeep, on one mind or on all;
``maintenance nightly``: the day's scheduled maintenance (:mod:`workers.schedule`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hive_mind.cli.common import CountProgress, JsonOpt, WorkspaceOpt, output, table, with_facade
from mind.errors import ValidationError
from vocabulary.enums import MaintenanceKind

if TYPE_CHECKING:
    from rich.console import Console

    from hive_mind.contract import MindFacade

app = typer.Typer(help="Run maintenance on one mind (--workspace ID, default personal) or on "
                       "every mind (--all).", no_args_is_help=True)

AllOpt = Annotated[bool, typer.Option(
    "--all", metavar="", help="Every mind: the personal mind and all workspaces.")]

KINDS: dict[MaintenanceKind, str] = {  # one command per kind (tests/test_vocabulary.py)
    "compact": "Prune old temporary/deprecated frames and merge P-frames into their I-frame.",
    "reconcile": "Repair FTS and vector indexes and re-queue frames still waiting for indexing.",
    "reembed": "Re-embed every frame with the current embedding model (after a model change).",
    "dedupe": "Merge duplicate entities (same normalized name and type).",
    "sync": "Re-harvest auto-sync sources whose interval has passed, from their recorded path.",
}


def _run(ctx: typer.Context, kind: str, workspace: str | None, all_minds: bool,
         as_json: bool) -> None:
    if all_minds and workspace:
        raise ValidationError("give either --workspace or --all, not both")

    async def act(hm: MindFacade) -> dict[str, Any]:
        return dict(await hm.maintenance(kind, workspace=workspace, all_minds=all_minds))

    result = with_facade(ctx, act, writes=True, bulk=True)

    def human(c: Console) -> None:
        rows = []
        for mind, stats in result.get("minds", {}).items():
            if isinstance(stats, dict):
                summary = ", ".join(f"{k}={v}" for k, v in stats.items()
                                    if not isinstance(v, (dict, list)))
            else:
                summary = str(stats)
            rows.append([mind, summary or "-"])
        c.print(table(f"maintenance {kind}", ["mind", "result"], rows))

    output(as_json, result, human)


def _make(kind: str, doc: str) -> Any:
    def command(ctx: typer.Context, workspace: WorkspaceOpt = None, all_minds: AllOpt = False,
                as_json: JsonOpt = False) -> None:
        _run(ctx, kind, workspace, all_minds, as_json)

    command.__doc__ = doc
    command.__name__ = f"maintenance_{kind}"
    return command


for _kind, _doc in KINDS.items():
    app.command(_kind)(_make(_kind, _doc))


@app.command("nightly")
def nightly(ctx: typer.Context, as_json: JsonOpt = False, spread: Annotated[bool, typer.Option(
        "--spread/--no-spread",
        help="Start the minds spread over HIVE_MIND_MAINTENANCE_SPREAD_MINUTES, as the "
             "servers' schedule does (the systemd timer passes it); by default one after "
             "another, a second apart.")] = False) -> None:
    """Run today's scheduled maintenance now (HIVE_MIND_MAINTENANCE_TASKS on every mind but
    HIVE_MIND_MAINTENANCE_SKIP_WORKSPACES), skipping what a process on this data dir already
    ran today: for a systemd timer or cron when no `serve` or `mcp` runs the schedule."""

    async def act(hm: MindFacade) -> dict[str, Any]:
        with CountProgress("minds maintained", not as_json and sys.stderr.isatty()) as progress:
            return dict(await hm.nightly_maintenance(spread=spread, on_progress=progress))

    result = with_facade(ctx, act, writes=True, bulk=True)
    failed = ", ".join(result.get("failed") or []) or "-"
    output(as_json, result, lambda c: c.print(table(
        f"nightly maintenance {result.get('day')}", ["ran", "skipped (ran elsewhere)", "failed"],
        [[result.get("ran"), result.get("skipped"), failed]])))


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="maintenance")
