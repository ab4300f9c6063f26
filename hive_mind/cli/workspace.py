"""``workspace create|list|get|update|delete|default``: one mind per workspace."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hive_mind.cli.common import JsonOpt, kv_table, message, output, table, with_facade
from mind.errors import ValidationError

if TYPE_CHECKING:
    from rich.console import Console

    from hive_mind.contract import MindFacade

app = typer.Typer(help="Create, list and delete workspaces (one mind file each).",
                  no_args_is_help=True)

IdArg = Annotated[str, typer.Argument(metavar="ID", help="Workspace id (a slug).")]
GroupOpt = Annotated[str | None, typer.Option("--group", metavar="TEXT", help="Group name.")]
IconOpt = Annotated[str | None, typer.Option("--icon", metavar="TEXT", help="Icon (an emoji).")]
ModelOpt = Annotated[str | None, typer.Option(
    "--model", metavar="TEXT", help="Preferred model for agents in this workspace.")]


@app.command("create")
def create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Display name, e.g. 'Project Apollo'.")],
    workspace_id: Annotated[str | None, typer.Option(
        "--id", metavar="ID", help="Explicit id (a slug; default: derived from the name).")] = None,
    group: GroupOpt = None,
    icon: IconOpt = None,
    model: ModelOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a workspace and its mind file."""

    async def act(hm: MindFacade) -> dict[str, Any]:
        return dict(await hm.create_workspace(name, group=group or "general", icon=icon,
                                              model=model, workspace_id=workspace_id))

    meta = with_facade(ctx, act, writes=True)
    output(as_json, meta, lambda c: c.print(kv_table(f"Created workspace {meta['id']}", meta)))


@app.command("list")
def list_(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """List workspaces with their frame and entity counts (and the personal mind's)."""

    async def act(hm: MindFacade) -> dict[str, Any]:
        return dict(await hm.list_workspaces())

    data = with_facade(ctx, act)

    def human(c: Console) -> None:
        p = data["personal"]
        c.print(f"personal: {p.get('frames', 0)} frames, {p.get('entities', 0)} entities",
                markup=False)
        default = data.get("default_workspace")
        rows = data["workspaces"]
        if not rows:
            c.print("No workspaces yet. Create one with `hive-mind workspace create NAME`.",
                    markup=False)
            return
        c.print(table("Workspaces", ["id", "name", "group", "frames", "entities", "created",
                                     "default"],
                      ([w.get("id"), w.get("name"), w.get("group"), w.get("frames"),
                        w.get("entities"), w.get("created"),
                        "yes" if w.get("id") == default else ""] for w in rows)))

    output(as_json, data, human)


@app.command("get")
def get(ctx: typer.Context, workspace_id: IdArg, as_json: JsonOpt = False) -> None:
    """Show one workspace with its statistics."""

    async def act(hm: MindFacade) -> dict[str, Any]:
        return dict(await hm.get_workspace(workspace_id))

    data = with_facade(ctx, act)
    output(as_json, data, lambda c: c.print(kv_table(f"Workspace {workspace_id}", data)))


@app.command("update")
def update(
    ctx: typer.Context,
    workspace_id: IdArg,
    name: Annotated[str | None, typer.Option("--name", metavar="TEXT",
                                             help="New display name.")] = None,
    group: GroupOpt = None,
    icon: IconOpt = None,
    model: ModelOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Change a workspace's name, group, icon or model (the id stays)."""
    fields = {k: v for k, v in {"name": name, "group": group, "icon": icon,
                                "model": model}.items() if v is not None}
    if not fields:
        raise ValidationError("give at least one of --name, --group, --icon, --model")

    async def act(hm: MindFacade) -> dict[str, Any]:
        return dict(await hm.update_workspace(workspace_id, name=name, group=group, icon=icon,
                                              model=model))

    meta = with_facade(ctx, act, writes=True)
    output(as_json, meta, lambda c: c.print(kv_table(f"Workspace {workspace_id}", meta)))


@app.command("delete")
def delete(
    ctx: typer.Context,
    workspace_id: IdArg,
    yes: Annotated[bool, typer.Option(
        "--yes", "-y", metavar="",
        help="Do not ask for confirmation (required when not interactive).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Delete a workspace and its mind file (all its memories). Cannot be undone."""
    if not yes:
        if not sys.stdin.isatty():
            raise ValidationError(f"refusing to delete workspace {workspace_id!r} without --yes")
        typer.confirm(f"Delete workspace {workspace_id!r} and all its memories?", abort=True,
                      err=True)

    async def act(hm: MindFacade) -> dict[str, Any]:
        return dict(await hm.delete_workspace(workspace_id))

    result = with_facade(ctx, act)
    output(as_json, result, message(f"Deleted workspace {workspace_id}"))


@app.command("default")
def default(
    ctx: typer.Context,
    workspace_id: Annotated[str | None, typer.Argument(
        metavar="[ID]", help="Workspace to make the default (omit to show it).")] = None,
    clear: Annotated[bool, typer.Option(
        "--clear", metavar="", help="Unset the default workspace.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Show, set or clear the default workspace."""
    if clear and workspace_id:
        raise ValidationError("give either an ID or --clear, not both")

    async def act(hm: MindFacade) -> dict[str, Any]:
        if clear:
            return dict(await hm.set_default_workspace(None))
        if workspace_id:
            await hm.get_workspace(workspace_id)  # validated, and must exist
            return dict(await hm.set_default_workspace(workspace_id))
        return {"default_workspace": (await hm.list_workspaces())["default_workspace"]}

    data = with_facade(ctx, act)
    output(as_json, data,
           message(f"default workspace: {data['default_workspace'] or '(none)'}", style=""))


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="workspace")
