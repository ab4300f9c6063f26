"""``harvest import`` and ``harvest sources``: bulk import of chat exports and documents."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hive_mind.cli.common import (
    JsonOpt,
    WorkspaceOpt,
    err_console,
    kv_table,
    output,
    table,
    with_facade,
)
from mind.harvest.registry import SOURCES
from vocabulary.enums import HarvestChoice

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from hive_mind.contract import MindFacade
    from workers.harvest_summary import ProgressEvent

app = typer.Typer(help="Import conversation exports and documents.", no_args_is_help=True)


class HarvestProgress:
    """The facade's progress callback drawn as a rich progress bar on stderr.

    Events: :class:`~workers.harvest_summary.ProgressEvent` (phase ``parse``, ``index`` or
    ``done``). Three rows: items parsed, frames written, frames indexed (the last one has a
    total once parsing is done, so it fills up while the embeddings are applied).
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.progress: Progress | None = None
        self.tasks: dict[str, Any] = {}

    def __enter__(self) -> HarvestProgress:
        if self.enabled:
            from rich.progress import (
                BarColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self.progress = Progress(
                SpinnerColumn(), TextColumn("{task.description:<16}"), BarColumn(),
                TextColumn("{task.completed:>9,.0f}{task.fields[of]}"), TimeElapsedColumn(),
                console=err_console(), transient=False,
            )
            self.progress.start()
            for key, label in (("items", "items parsed"), ("written", "frames written"),
                               ("indexed", "frames indexed")):
                self.tasks[key] = self.progress.add_task(label, total=None, of="")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()

    def __call__(self, event: ProgressEvent) -> None:
        if self.progress is None:
            return
        items, written, phase = event.items, event.frames_written, event.phase
        pending = event.pending_index or 0
        # written frames no longer in the outbox are indexed
        indexed = max(0, written - pending) if phase in ("index", "done") else 0
        p, t = self.progress, self.tasks
        p.update(t["items"], completed=items, total=items if phase != "parse" else None)
        p.update(t["written"], completed=written, total=written if phase != "parse" else None)
        if phase in ("index", "done"):
            total = max(written, indexed + pending, 1)
            p.update(t["indexed"], completed=min(indexed, total), total=total,
                     of=f" / {total:,}")
        else:
            p.update(t["indexed"], completed=indexed)


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
        help="Show a progress bar on stderr (default: when stderr is a terminal).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Import an export into a mind: one session per conversation, one frame per message.

    Re-importing the same export is idempotent. The command waits until every frame is
    indexed (embedded mode) and prints a summary.
    """
    show = sys.stderr.isatty() if progress is None else progress
    with HarvestProgress(show) as bar:
        async def act(hm: MindFacade) -> dict[str, Any]:
            return dict(await hm.harvest(source, path, workspace=workspace, progress=bar,
                                         auto_sync=auto_sync,
                                         sync_interval_hours=interval_hours))

        summary = with_facade(ctx, act, writes=True, bulk=True)
    output(as_json, summary,
           lambda c: c.print(kv_table(f"Harvested {summary.get('source', source)}", summary)))


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
        c.print(table("Imported sources", ["source", "last_synced_at", "items_imported",
                                           "frames_created", "auto_sync", "last import",
                                           "syncs from"],
                      ([r.get("source"), r.get("last_synced_at"), r.get("items_imported"),
                        r.get("frames_created"), r.get("auto_sync"), r.get("display_name"),
                        r.get("source_path")]
                       for r in registered)))

    output(as_json, data, human)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="harvest")
