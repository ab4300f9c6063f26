"""The Knowledge graph page: entity search, an entity's neighbourhood drawn by cytoscape.js
(``static/graph.js`` reads it as JSON from this server), and its relation history with each
relation's validity interval."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import JSONResponse, Response

from hive_mind.api.deps import Facade
from hive_mind.console.render import HEADERS, page
from hive_mind.console.sessions import PREFIX
from vocabulary.limits import INT64_MAX, MAX_NAME_CHARS

router = APIRouter(include_in_schema=False)
Workspace = Annotated[str, Query(max_length=64)]
EntityId = Annotated[int, Query(ge=1, le=INT64_MAX)]


@router.get(PREFIX + "/graph")
async def entities(request: Request, hm: Facade, workspace: Workspace = "",
                   q: Annotated[str, Query(max_length=MAX_NAME_CHARS)] = "") -> Response:
    found = await hm.search_entities(q, limit=50, workspace=workspace or None) \
        if q.strip() else []
    return page(request, "graph.html", active="graph", workspace=workspace, q=q,
                entities=found)


@router.get(PREFIX + "/graph/entity")
async def entity(request: Request, hm: Facade, id: EntityId,
                 workspace: Workspace = "") -> Response:
    graph = await hm.entity_graph(id, workspace=workspace or None)
    names = {n["id"]: n["name"] for n in graph["nodes"]}  # type: ignore[attr-defined]
    return page(request, "entity.html", active="graph", workspace=workspace, graph=graph,
                names=names)


@router.get(PREFIX + "/graph/entity.json")
async def entity_json(hm: Facade, id: EntityId, workspace: Workspace = "") -> Response:
    """The neighbourhood as cytoscape elements: names travel as JSON data and are drawn on a
    canvas, never parsed as HTML."""
    graph = await hm.entity_graph(id, workspace=workspace or None)
    nodes = [{"data": {"id": str(n["id"]), "label": n["name"], "type": n["type"],
                       "center": n["id"] == id}}
             for n in graph["nodes"]]  # type: ignore[attr-defined]
    edges = [{"data": {"id": f"r{e['id']}", "source": str(e["source"]),
                       "target": str(e["target"]), "label": e["type"],
                       "retired": not e["active"]}}
             for e in graph["edges"]]  # type: ignore[attr-defined]
    return JSONResponse({"elements": [*nodes, *edges]}, headers=HEADERS)
