"""The workspaces a scope-wide recall searches when a deployment has more of them than
``HIVE_MIND_SCOPE_MINDS``: the facade's choice, in one function that the scope eval calls too, so
that it measures the choice recalls make.

Up to ``scope_minds`` workspaces (0: no limit) are all searched. Beyond that, a recall searches
the ``scope_minds`` workspaces whose routing summaries hold the best vector and keyword evidence
for the query (:mod:`mind.retrieval.routing`), and a catch-up (no topic to route by) the most
recently written.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hive_mind.workspaces import mind_id
from mind.embeddings.base import EmbeddingError
from mind.embeddings.memo import QueryMemo
from mind.retrieval.routing import select

if TYPE_CHECKING:
    from workers.protocol import Runtime


async def routed_workspaces(runtime: Runtime, query: str, workspaces: Sequence[str],
                            scope_minds: int, embedder: QueryMemo, *, lanes: str = "hybrid",
                            catching_up: bool = False) -> list[str]:
    """The workspaces of ``workspaces`` a scope-wide recall of ``query`` searches, best routed
    first (equal scores merge in that order). ``lanes``: a keyword-only recall routes by
    keyword evidence alone, a vector-only one by vector evidence alone; a query the embedder
    cannot encode routes by its keywords."""
    if scope_minds == 0 or len(workspaces) <= scope_minds:
        return list(workspaces)
    ids = {mind_id(ws): ws for ws in workspaces}
    if catching_up:
        counts = await runtime.census(list(ids))
        chosen = sorted(counts, key=lambda m: -counts[m].modified_ns)[:scope_minds]
    else:
        present, pool = await runtime.route_pool(list(ids))
        vector = None
        if lanes != "keyword" and not embedder.degraded:
            with contextlib.suppress(EmbeddingError):  # the keyword evidence still routes
                vector = (await embedder.embed_batch([query]))[0]
        stems = runtime.stems(query) if lanes != "vector" else []
        chosen = [present[i] for i in select(pool, vector, stems, scope_minds)]
    return [ids[m] for m in chosen]
