"""The Operations page (the admin's): per mind, the frames waiting for their index and the
jobs queued, running and failed; the dead letters with retry and drop; the nightly
schedule and its last runs; the cluster's shards when the deployment is sharded."""

from __future__ import annotations

from typing import Annotated, Final, Literal

from fastapi import APIRouter, Form, Request
from starlette.responses import RedirectResponse, Response

from hive_mind.api.deps import Facade
from hive_mind.console.render import page
from hive_mind.console.sessions import PREFIX, check_csrf
from workers.dead_letters import ID_RE

router = APIRouter(include_in_schema=False)
SHOWN_MINDS: Final = 100
DeadLetterId = Annotated[str, Form(pattern=ID_RE.pattern)]


def _busiest(minds: object) -> list[dict[str, object]]:
    """The minds with indexing or jobs to do, the most behind first."""
    rows = [m for m in minds if isinstance(m, dict)] if isinstance(minds, list) else []

    def key(row: dict[str, object]) -> tuple[int, ...]:
        return tuple(int(str(row.get(k) or 0)) for k in ("pending_index", "queued",
                                                          "dead_letters"))

    busy = [m for m in rows if any(key(m)) or m.get("running")]
    return sorted(busy, key=key, reverse=True)[:SHOWN_MINDS]


@router.get(PREFIX + "/operations")
async def operations(request: Request, hm: Facade) -> Response:
    jobs = await hm.jobs()
    status = await hm.status(probe=False)
    return page(request, "operations.html", active="operations", jobs=jobs,
                busiest=_busiest(jobs.get("minds")), minds=len(jobs.get("minds") or []),
                schedule=status.get("schedule"), cluster=status.get("cluster"),
                queue=status.get("queue"))


@router.post(PREFIX + "/operations/{action}")
async def dead_letter(request: Request, hm: Facade, action: Literal["retry", "drop"],
                      csrf: Annotated[str, Form(max_length=100)], id: DeadLetterId) -> Response:
    """Run a dead letter again, or forget it."""
    check_csrf(request, csrf)
    await (hm.retry_jobs(id) if action == "retry" else hm.drop_jobs(id))
    return RedirectResponse(f"{request.scope.get('root_path', '')}{PREFIX}/operations",
                            status_code=303)
