"""The Search page: a recall with its filters, each result with where it came from, its time,
its score and the explain of its rank (lane ranks, fused score, every factor, supersession).

A console search is a look, not a use: it leaves access counts alone (``touch=False``), so
browsing does not change later rankings."""

from __future__ import annotations

from typing import Annotated, Final

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from hive_mind.api.deps import Facade
from hive_mind.console.render import page
from hive_mind.console.sessions import PREFIX
from hive_mind.shapes import RecallDetail
from vocabulary.enums import RECALL_PROFILES, RecallProfile, Scope
from vocabulary.limits import MAX_QUERY_CHARS

router = APIRouter(include_in_schema=False)
SCOPE_CHOICES: Final[tuple[Scope, ...]] = ("personal", "workspace", "all")
FACTORS: Final = ("keyword_rank", "vector_rank", "similarity", "lanes", "fused", "session",
                  "neighbour", "update", "match", "spread", "decision", "recency", "importance",
                  "proximity", "popularity", "coverage", "above_background", "relevance",
                  "final", "score", "absolute_relevance")
Text = Annotated[str, Query(max_length=64)]


@router.get(PREFIX + "/search")
async def search(request: Request, hm: Facade,
                 q: Annotated[str, Query(max_length=MAX_QUERY_CHARS)] = "",
                 scope: Annotated[str, Query(max_length=16)] = "personal",
                 workspace: Text = "", since: Text = "", until: Text = "",
                 profile: RecallProfile = "balanced",
                 limit: Annotated[int, Query(ge=1, le=100)] = 20) -> Response:
    chosen: Scope = next((s for s in SCOPE_CHOICES if s == scope), "personal")
    answer: RecallDetail | None = None
    if q.strip():
        answer = await hm.recall_detail(
            q, limit=limit, scope=chosen, workspace=workspace or None, profile=profile,
            since=since or None, until=until or None, touch=False, explain=True)
    form = {"q": q, "scope": chosen, "workspace": workspace, "since": since, "until": until,
            "profile": profile, "limit": limit}
    return page(request, "search.html", active="search", form=form, answer=answer,
                scopes=SCOPE_CHOICES, profiles=RECALL_PROFILES, factors=FACTORS)
