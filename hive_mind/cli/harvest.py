"""``harvest import`` and ``harvest sources``: bulk import of chat exports and documents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Final

import typer

from hive_mind.cli.common import (
    JsonOpt,
    WorkspaceOpt,
    kv_table,
    output,
    table,
    with_facade,
)
from hive_mind.cli.harvest_progress import harvest_progress
from mind.harvest.registry import SOURCES
from vocabulary.enums import HarvestChoice

if TYPE_CHECKING:
    from rich.console import Console

    from hive_mind.contract import MindFacade

app = typer.Typer(help="Import conversation exports and documents.", no_args_is_help=True)


@app.command("import")
def harvest_import(
    ctx: typer.Context,
    source: Annotated[HarvestChoice, typer.Argument(
        metavar="SOURCE",
        help="Export format: auto (detected from the content: zip members, JSON shape, "
             "JSONL records, file type) or " + "|".join(SOURCES) + ".")],
    path: Annotated[str, typer.Argument(
        help="The export: a file, a directory or a .zip (a URL for the url source).")],
    workspace: WorkspaceOpt = None,
    auto_sync: Annotated[bool | None, typer.Option(
        "--auto-sync/--no-auto-sync", metavar="",
        help="Re-harvest this source from PATH on the maintenance schedule.")] = None,
    interval_hours: Annotated[int | None, typer.Option(
        "--interval-hours", min=1, metavar="HOURS",
        help="Auto-sync interval in hours (default 24).")] = None,
    progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress", metavar="",
        help="Show progress on stderr: bars at a terminal (default there), else a plain line "
             "every few seconds (for logs and CI).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Import an export into a mind: one session per conversation, one frame per message.

    Re-importing the same export is idempotent. The command waits until every frame is
    indexed (embedded mode) and prints a summary; its elapsed_seconds cover the whole import,
    index_wait_seconds the wait for indexing after the last frame was written.
    """
    with harvest_progress(progress) as bar:
        async def act(hm: MindFacade) -> dict[str, Any]:
            if getattr(hm, "mode", None) == "client":
                bar.remote(str(getattr(hm, "url", "")))
            return dict(await hm.harvest(source, path, workspace=workspace, progress=bar,
                                         auto_sync=auto_sync,
                                         sync_interval_hours=interval_hours))

        summary = with_facade(ctx, act, writes=True, bulk=True)
    output(as_json, summary, lambda c: c.print(kv_table(
        f"Harvested {summary.get('source', source)}", for_humans(summary))))


_PLURALS: Final = {"memory": "memories", "conversation": "conversations"}
_MACHINE_KEYS: Final = ("run_id", "content_hash")  # for scripts: in --json output only


def for_humans(summary: dict[str, Any]) -> dict[str, Any]:
    """A harvest summary as a person reads it: the items counted by kind ("conversations 62,
    instructions 8" rather than "items 70"), without the run's internal keys."""
    out: dict[str, Any] = {}
    for key, value in summary.items():
        if key == "items" and summary.get("kinds"):
            out.update((_PLURALS.get(k, k + "s"), n) for k, n in summary["kinds"].items())
        elif key not in (*_MACHINE_KEYS, "kinds"):
            out[key] = value
    return out


@app.command("sources")
def harvest_sources(
    ctx: typer.Context,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the export formats and the sources already imported into a mind."""

    async def act(hm: MindFacade) -> list[dict[str, Any]]:
        return list(await hm.harvest_sources(workspace=workspace))

    registered = with_facade(ctx, act)
    data = {"available": list(SOURCES), "registered": registered}

    def human(c: Console) -> None:
        c.print("Available sources: " + ", ".join(SOURCES), markup=False)
        if not registered:
            c.print("No harvest sources registered yet. Use `hive-mind harvest import`.",
                    markup=False)
            return
        c.print(table("Imported sources", ["source", "last synced", "items", "frames",
                                           "auto-sync", "last import", "syncs from"],
                      ([r.get("source"), r.get("last_synced_at"), r.get("items_imported"),
                        r.get("frames_created"), r.get("auto_sync"), r.get("display_name"),
                        r.get("source_path")]
                       for r in registered), whole=("source",)))

    output(as_json, data, human)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="harvest")
