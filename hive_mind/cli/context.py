"""``identity get|set`` and ``awareness get|set|clear``: who the agent is and what it is doing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from hive_mind.cli.common import (
    IdempotencyKeyOpt,
    JsonOpt,
    WorkspaceOpt,
    kv_table,
    output,
    table,
    with_facade,
)
from mind.errors import ValidationError
from vocabulary.enums import AWARENESS_CATEGORIES, AwarenessCategory
from vocabulary.limits import AWARENESS_PRIORITY_MAX, INT64_MAX, MAX_TTL_MINUTES

if TYPE_CHECKING:
    from rich.console import Console

    from hive_mind.contract import MindFacade
    from hive_mind.shapes import AwarenessShape

identity_app = typer.Typer(help="Show or change the agent's identity.", no_args_is_help=True)
awareness_app = typer.Typer(help="Short-lived working context: tasks, actions, pending items, "
                                 "flags.", no_args_is_help=True)

CATEGORY_HELP = "|".join(AWARENESS_CATEGORIES)


def _field(flag: str, what: str) -> Any:
    return typer.Option(flag, metavar="TEXT", help=what)


@identity_app.command("get")
def identity_get(ctx: typer.Context, workspace: WorkspaceOpt = None,
                 as_json: JsonOpt = False) -> None:
    """Show the identity (name, role, personality, capabilities, system prompt)."""

    async def act(hm: MindFacade) -> dict[str, Any]:
        return dict(await hm.get_identity(workspace=workspace))

    identity = with_facade(ctx, act)

    def human(c: Console) -> None:
        if not identity.get("configured"):
            c.print("No identity configured yet. Use `hive-mind identity set --name ...`.",
                    markup=False)
            return
        c.print(kv_table("Identity", identity, skip=("configured",)))

    output(as_json, identity, human)


@identity_app.command("set")
def identity_set(
    ctx: typer.Context,
    name: Annotated[str | None, _field("--name", "Name.")] = None,
    role: Annotated[str | None, _field("--role", "Role.")] = None,
    department: Annotated[str | None, _field("--department", "Department.")] = None,
    personality: Annotated[str | None, _field("--personality", "Personality.")] = None,
    capabilities: Annotated[str | None, _field("--capabilities", "Capabilities.")] = None,
    system_prompt: Annotated[str | None, _field("--system-prompt", "System prompt.")] = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create or update the identity; only the given fields change."""
    fields = {"name": name, "role": role, "department": department, "personality": personality,
              "capabilities": capabilities, "system_prompt": system_prompt}
    if all(v is None for v in fields.values()):
        raise ValidationError("give at least one field, e.g. --name or --role")

    async def act(hm: MindFacade) -> dict[str, Any]:
        return dict(await hm.set_identity(
            workspace=workspace, name=name, role=role, department=department,
            personality=personality, capabilities=capabilities, system_prompt=system_prompt))

    result = with_facade(ctx, act, writes=True)
    output(as_json, result, lambda c: c.print(kv_table("Identity", result)))


@awareness_app.command("get")
def awareness_get(
    ctx: typer.Context,
    category: Annotated[AwarenessCategory | None, typer.Option(
        "--category", "-c", metavar="CATEGORY",
        help=f"Only this category: {CATEGORY_HELP}.")] = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the live (unexpired) awareness items, highest priority first."""

    async def act(hm: MindFacade) -> list[AwarenessShape]:
        return await hm.get_awareness(category=category, workspace=workspace)

    items = with_facade(ctx, act)

    def human(c: Console) -> None:
        if not items:
            c.print("No active awareness items.")
            return
        c.print(table("Awareness", ["id", "category", "priority", "expires_at", "content"],
                      ([i.get("id"), i.get("category"), i.get("priority"), i.get("expires_at"),
                        i.get("content")] for i in items)))

    output(as_json, items, human)


@awareness_app.command("set")
def awareness_set(
    ctx: typer.Context,
    category: Annotated[AwarenessCategory, typer.Argument(
        metavar="CATEGORY",
        help=f"Category: {CATEGORY_HELP}.")],
    content: Annotated[str, typer.Argument(help="What to keep in mind.")],
    priority: Annotated[int, typer.Option(
        "--priority", min=0, max=AWARENESS_PRIORITY_MAX,
        help=f"Priority 0-{AWARENESS_PRIORITY_MAX} (higher first).")] = 0,
    ttl_minutes: Annotated[int | None, typer.Option(
        "--ttl-minutes", min=1, max=MAX_TTL_MINUTES, metavar="MINUTES",
        help="Expire after this many minutes, at most 10 years (default: never).")] = None,
    idempotency_key: IdempotencyKeyOpt = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Add an awareness item."""

    async def act(hm: MindFacade) -> dict[str, Any]:
        return dict(await hm.set_awareness(category, content, priority=priority,
                                           ttl_minutes=ttl_minutes, workspace=workspace,
                                           idempotency_key=idempotency_key))

    item = with_facade(ctx, act, writes=True)
    title = "Awareness item (already added under this idempotency key)" \
        if item.get("replayed") else "Awareness item"
    output(as_json, item, lambda c: c.print(kv_table(title, item, skip=("replayed",))))


@awareness_app.command("clear")
def awareness_clear(
    ctx: typer.Context,
    item_id: Annotated[int | None, typer.Option(
        "--id", min=1, max=INT64_MAX, metavar="ID", help="Remove this item.")] = None,
    category: Annotated[AwarenessCategory | None, typer.Option(
        "--category", "-c", metavar="CATEGORY",
        help=f"Remove every item of this category: {CATEGORY_HELP}.")] = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Remove one awareness item (--id) or a whole category (--category)."""
    if (item_id is None) == (category is None):
        raise ValidationError("give exactly one of --id or --category")

    async def act(hm: MindFacade) -> dict[str, Any]:
        return dict(await hm.clear_awareness(item_id=item_id, category=category,
                                             workspace=workspace))

    result = with_facade(ctx, act, writes=True)
    output(as_json, result, lambda c: c.print(kv_table("Cleared", result)))


def register(root: typer.Typer) -> None:
    root.add_typer(identity_app, name="identity")
    root.add_typer(awareness_app, name="awareness")
