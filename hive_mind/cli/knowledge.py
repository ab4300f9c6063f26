"""``entities search|save|relate``: the mind's knowledge graph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from hive_mind.cli.common import (
    JsonOpt,
    WorkspaceOpt,
    kv_table,
    output,
    parse_properties,
    table,
    with_facade,
)
from vocabulary.enums import ENTITY_TYPES, EntityType
from vocabulary.limits import INT64_MAX

if TYPE_CHECKING:
    from rich.console import Console

    from hive_mind.contract import MindFacade
    from hive_mind.shapes import EntityView

app = typer.Typer(help="Search and edit the knowledge graph (entities and relations).",
                  no_args_is_help=True)

PropertyOpt = Annotated[list[str] | None, typer.Option(
    "--property", "-p", metavar="KEY=VALUE", help="A property (repeatable).")]
PropertiesOpt = Annotated[str | None, typer.Option(
    "--properties", metavar="JSON", help="Properties as a JSON object.")]


@app.command("search")
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Name (or part of it) to look for.")],
    entity_type: Annotated[EntityType | None, typer.Option(
        "--type", metavar="TYPE",
        help="Only this type: " + "|".join(ENTITY_TYPES) + ".")] = None,
    limit: Annotated[int, typer.Option(
        "--limit", "-n", min=1, max=200, help="Maximum number of entities (1-200).")] = 20,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Find entities by name, with their active relations."""

    async def act(hm: MindFacade) -> list[EntityView]:
        return await hm.search_entities(query, entity_type=entity_type, limit=limit,
                                        workspace=workspace)

    found = with_facade(ctx, act)

    def human(c: Console) -> None:
        if not found:
            c.print(f'No entities found matching "{query}"', markup=False)
            return
        c.print(table(f"{len(found)} entit{'y' if len(found) == 1 else 'ies'}",
                      ["id", "type", "name", "properties", "out", "in"],
                      ([e["id"], e["type"], e["name"], e["properties"],
                        len(e["relations"]["outgoing"]), len(e["relations"]["incoming"])]
                       for e in found), limits={"properties": 80}))
        for e in found:
            if e["history"]:
                c.print(table(f"{e['name']}: current value and history",
                              ["frame", "valid from", "valid to", "statement"],
                              ([v["frame_id"], v["valid_from"][:10],
                                (v["valid_to"] or "current")[:10]
                                + "".join(f" (#{i})" for i in v["superseded_by"]),
                                v["content"]] for v in e["history"]),
                              limits={"statement": 90}))

    output(as_json, found, human)


@app.command("save")
def save(
    ctx: typer.Context,
    entity_type: Annotated[EntityType, typer.Argument(
        metavar="TYPE",
        help="Entity type: " + "|".join(ENTITY_TYPES) + ".")],
    name: Annotated[str, typer.Argument(help="Entity name.")],
    prop: PropertyOpt = None,
    properties: PropertiesOpt = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create an entity, or merge properties into the one with the same type and name."""
    props = parse_properties(prop, properties)

    async def act(hm: MindFacade) -> dict[str, Any]:
        return dict(await hm.save_entity(entity_type, name, properties=props,
                                         workspace=workspace))

    entity = with_facade(ctx, act, writes=True)
    output(as_json, entity, lambda c: c.print(kv_table("Entity", entity)))


@app.command("relate")
def relate(
    ctx: typer.Context,
    source_id: Annotated[int, typer.Argument(min=1, max=INT64_MAX,
                                             help="Id of the source entity.")],
    target_id: Annotated[int, typer.Argument(min=1, max=INT64_MAX,
                                             help="Id of the target entity (another one).")],
    relation_type: Annotated[str, typer.Argument(
        metavar="RELATION", help="Relation type, e.g. works_on.")],
    confidence: Annotated[float, typer.Option(
        "--confidence", min=0.0, max=1.0, help="Confidence in [0, 1].")] = 1.0,
    prop: PropertyOpt = None,
    properties: PropertiesOpt = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a relation SOURCE_ID -[RELATION]-> TARGET_ID between two entities."""
    props = parse_properties(prop, properties)

    async def act(hm: MindFacade) -> dict[str, Any]:
        return dict(await hm.create_relation(source_id, target_id, relation_type,
                                             confidence=confidence, properties=props,
                                             workspace=workspace))

    relation = with_facade(ctx, act, writes=True)
    output(as_json, relation, lambda c: c.print(kv_table("Relation", relation)))


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="entities")
