"""``export``: a mind's memories and knowledge graph as a file (``universal`` JSON Lines that
``harvest import universal`` reads back, or one ``json`` document); ``backup`` and
``restore``: consistent copies of every mind file and the workspace registry."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hive_mind.cli.common import (
    CountProgress,
    JsonOpt,
    WorkspaceOpt,
    message,
    output,
    state,
    with_facade,
)
from mind.errors import ConfigurationError, ValidationError
from vocabulary.enums import EXPORT_FORMATS, ExportFormat

if TYPE_CHECKING:
    from hive_mind.contract import MindFacade
    from hive_mind.export import Export


async def _write(opened: Export, dest: Path, progress: CountProgress, before: int,
                 total: int) -> int:
    """Write the export to ``dest`` (through ``dest.partial``, renamed when complete, so an
    interrupted export never leaves a file that looks whole); returns its size in bytes."""
    partial = dest.with_name(dest.name + ".partial")
    size = 0
    try:
        with os.fdopen(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
                       "wb") as out:  # memories: owner-only, like the minds
            async for chunk in opened.chunks:
                out.write(chunk)
                size += len(chunk)
                progress(before + opened.done, total)
        os.replace(partial, dest)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return size


def export(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(
        metavar="PATH", help="The file to write; with --all a directory (one file per mind: "
                             "personal.jsonl, workspaces/<id>.jsonl).")],
    workspace: WorkspaceOpt = None,
    all_minds: Annotated[bool, typer.Option(
        "--all", help="Every mind: the personal one and every workspace.")] = False,
    fmt: Annotated[ExportFormat, typer.Option(
        "--format", metavar="FORMAT",
        help=f"{'|'.join(EXPORT_FORMATS)}: universal JSON Lines (re-imports with `harvest "
             "import universal`), or one JSON document with the entities and relations "
             "too.")] = "universal",
    force: Annotated[bool, typer.Option(
        "--force", help="Replace files that exist already.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Export memories (sessions, speakers, source times, importances) and the knowledge graph
    (entities and relations with their validity), streamed from one consistent snapshot of
    each mind in constant memory."""
    if all_minds and workspace:
        raise ValidationError("give --workspace or --all, not both")

    async def act(hm: MindFacade) -> list[dict[str, Any]]:
        if all_minds:
            listed = await hm.list_workspaces()
            names: list[str | None] = [None] if listed.get("personal") is not None else []
            names += [ws["id"] for ws in listed["workspaces"]]
        else:
            names = [workspace]
        from hive_mind.export import SUFFIX

        targets = [(name, path / "workspaces" / f"{name}{SUFFIX[fmt]}" if name else
                    path / f"personal{SUFFIX[fmt]}") for name in names] if all_minds \
            else [(workspace, path)]
        for _, dest in targets:
            if dest.is_dir():
                raise ValidationError(f"{dest} is a directory: name a file (or give --all to "
                                      "write one file per mind into a directory)")
            if dest.exists() and not force:
                raise ValidationError(f"{dest} exists: give --force to replace it")
        written: list[dict[str, Any]] = []
        done = total = 0
        with CountProgress("Exporting frames", not as_json) as progress:
            for name, dest in targets:
                dest.parent.mkdir(parents=True, exist_ok=True)
                opened = await hm.export_mind(workspace=name, fmt=fmt)
                total += opened.frames
                size = await _write(opened, dest, progress, done, total)
                done += opened.frames
                progress(done, total)
                written.append({"mind": opened.mind_id, "path": str(dest),
                                "frames": opened.frames, "bytes": size, "format": fmt})
        return written

    written = with_facade(ctx, act)
    frames = sum(w["frames"] for w in written)
    output(as_json, {"exported": written}, message(
        f"Exported {frames:,} frames of {len(written)} mind(s) to {path}"))


def _host_settings(ctx: typer.Context, what: str) -> Any:
    settings = state(ctx).settings()
    if settings.url:
        raise ConfigurationError(f"{what} runs on the host that holds the data dir, not as a "
                                 "client (--url / HIVE_MIND_URL)")
    return settings


def _megabytes(done: int, due: int) -> tuple[int, int]:
    return (done + 999_999) // 1_000_000, (due + 999_999) // 1_000_000


def backup(
    ctx: typer.Context,
    dest: Annotated[Path, typer.Argument(
        metavar="DIR", help="A new or empty directory for the copy.")],
    as_json: JsonOpt = False,
) -> None:
    """Copy every mind file and the workspace registry of the data dir into DIR, online (serve
    and the workers keep writing; every save acknowledged before the backup began is in the
    copy), with DIR/manifest.json: each file's mind, size, SHA-256, schema version and
    fencing record."""
    from hive_mind.backup import backup as run_backup

    settings = _host_settings(ctx, "backup")
    with CountProgress("Backing up (MB)", not as_json) as progress:
        manifest = run_backup(settings.data_dir, dest, host=settings.cluster.host_id,
                              progress=lambda done, due: progress(*_megabytes(done, due)))
    minds = [f for f in manifest["files"] if f["mind"]]
    output(as_json, manifest, message(
        f"Backed up {len(minds)} mind(s), {sum(f['frames'] for f in minds):,} frames, "
        f"{sum(f['size'] for f in manifest['files']):,} bytes to {dest}"))


def restore(
    ctx: typer.Context,
    source: Annotated[Path, typer.Argument(
        metavar="DIR", help="A directory written by `hive-mind backup`.")],
    force: Annotated[bool, typer.Option(
        "--force", help="Replace minds that exist in the data dir already.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Verify the backup in DIR (manifest, each file's SHA-256 and PRAGMA integrity_check)
    and put its minds and workspace registry into the data dir, fenced for this host. Stop
    serve and the workers of the data dir first."""
    from hive_mind.backup import Target
    from hive_mind.backup import restore as run_restore

    settings = _host_settings(ctx, "restore")
    shards = settings.shard_map()
    target = Target(settings.data_dir, settings.fence(),
                    None if shards is None else shards.owner)
    with CountProgress("Verifying (MB)", not as_json) as progress:
        summary = run_restore(source, target, force=force,
                              progress=lambda done, due: progress(*_megabytes(done, due)))
    output(as_json, summary, message(
        f"Restored {len(summary['restored'])} mind(s) into {settings.data_dir}"))


def register(root: typer.Typer) -> None:
    root.command("export")(export)
    root.command("backup")(backup)
    root.command("restore")(restore)
