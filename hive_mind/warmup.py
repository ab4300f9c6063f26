"""What a serving process loads before ``/readyz`` says ready, so that the first requests a
load balancer sends are as fast as the rest.

Loaded lazily, each of these cost the request that first needed it, or ran beside the
requests that followed: the embedding model (seconds), a mind's reader and its startup sweep
of the outbox, its in-memory vector index (1.3 s at 100,000 frames) and keyword index (~3 s at
100,000 frames, on a thread that holds the GIL much of that time: recalls meanwhile took
200-500 ms instead of ~10), with many workspaces their routing summaries, a process's first
search and recall (ONNX Runtime sessions made, regular expressions compiled), and the
collector's full passes over all of it (75-110 ms pauses every few seconds). ``serve`` starts
the warm-up (:func:`start`) before it listens; until it has finished ``/readyz`` answers 503
and names the steps still pending. A request that arrives meanwhile is answered all the same
(it loads what it needs, as before).

Which minds: the personal mind and the workspaces that have a file, at most as many as the
host keeps open (``HIVE_MIND_MAX_OPEN_MINDS``: the LRU would close the others again). A step
that fails is logged and counted as done (the request that needs it reports the error); the
server does not stay unready because of one bad mind.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from vocabulary.ids import PERSONAL_MIND, WORKSPACE_PREFIX, split_mind_id

if TYPE_CHECKING:
    from hive_mind.settings import Settings
    from workers.protocol import Runtime

log = logging.getLogger(__name__)

MODEL = "embedding model"
ROUTING = "routing summaries"
RECALL = "first recall"


def mind_step(ident: str) -> str:
    """A mind's step (its reader, sweep and in-memory indexes), as logged."""
    return f"mind {ident}"


WORKSPACE_STEP = mind_step(WORKSPACE_PREFIX)


class WarmUp:
    """The warm-up's pending steps, in order. Nothing is pending before :meth:`expect` (a
    facade that is not serving has nothing to wait for) or once every step has finished."""

    def __init__(self) -> None:
        self._pending: dict[str, None] = {}
        self.failed: list[str] = []
        self.seconds: float | None = None  # how long the whole warm-up took, once done

    @property
    def pending(self) -> list[str]:
        """The steps still pending as ``/readyz`` lists them. It answers anyone (no token), so
        no workspace is named: their steps are counted (``workspace minds (3 left)``)."""
        steps = list(self._pending)
        workspaces = [s for s in steps if s.startswith(WORKSPACE_STEP)]
        if not workspaces:
            return steps
        at = steps.index(workspaces[0])
        named = [s for s in steps if not s.startswith(WORKSPACE_STEP)]
        return [*named[:at], f"workspace minds ({len(workspaces)} left)", *named[at:]]

    def expect(self, steps: Iterable[str]) -> None:
        """Mark ``steps`` pending: called synchronously before the warm-up task first runs,
        so that a probe answered in between already sees them."""
        self._pending.update(dict.fromkeys(steps))

    async def step(self, name: str, work: Callable[[], Awaitable[object]]) -> None:
        """Run one step; it is done (no longer pending) whatever the outcome."""
        try:
            await work()
        except asyncio.CancelledError:
            raise
        except Exception:
            self.failed.append(name)
            log.warning("warm-up: %s failed; the first request that needs it loads it",
                        name, exc_info=True)
        finally:
            self._pending.pop(name, None)


class Warmed(Protocol):
    """What the warm-up needs of the facade it warms (:class:`hive_mind.facade.HiveMind`)."""

    @property
    def settings(self) -> Settings: ...

    @property
    def runtime(self) -> Runtime: ...

    @property
    def warming(self) -> WarmUp: ...

    async def resume_pending(self, ident: str) -> None: ...

    async def recall(self, query: str, *, workspace: str | None = None,
                     touch: bool = True) -> Sequence[object]: ...


def minds_to_warm(mind_ids: list[str], cap: int) -> list[str]:
    """The personal mind first, then the workspaces, at most ``cap``."""
    ordered = sorted(mind_ids, key=lambda m: m != PERSONAL_MIND)
    return ordered[:max(cap, 0)]


async def warm_mind(facade: Warmed, ident: str) -> None:
    """Open the mind's reader (the outbox swept, as on any first use), load its vector index
    and build its keyword index (a mind big enough for one), as its first recall would."""
    started = time.perf_counter()
    await facade.resume_pending(ident)
    async with facade.runtime.lease(ident, create=False) as reader:
        index = await reader.vector_index()
        if index is not None:
            await index.warm()
        await asyncio.to_thread(reader.keyword_index().build_and_wait)
    log.info("warm-up: mind %s ready in %.1f s", ident, time.perf_counter() - started)


async def first_recall(facade: Warmed, ident: str) -> None:
    """One recall of a warmed mind, its hits not counted: what a process does once on its
    first recall (regular expressions compiled, code paths' first runs) is done here."""
    _, workspace = split_mind_id(ident)
    await facade.recall("warm-up", workspace=workspace, touch=False)


def start(facade: Warmed) -> asyncio.Future[None]:
    """Mark the warm-up's steps pending and start it as a task of the running loop."""
    warming: WarmUp = facade.warming
    present = facade.runtime.list_minds()
    minds = minds_to_warm(present, facade.settings.writer.max_open_minds)
    workspaces = [m for m in present if m != PERSONAL_MIND]
    routing = 0 < facade.settings.retrieval.scope_minds < len(workspaces)
    warming.expect([MODEL, *map(mind_step, minds), *([ROUTING] if routing else []),
                    *([RECALL] if minds else [])])
    return asyncio.ensure_future(_run(facade, warming, minds, workspaces if routing else []))


async def _run(facade: Warmed, warming: WarmUp, minds: list[str], routed: list[str]) -> None:
    """The model loads beside the minds (it runs mostly outside the GIL); the routing
    summaries come last (they read every workspace's file)."""
    started = time.perf_counter()
    runtime = facade.runtime

    async def minds_then_routing() -> None:
        for ident in minds:
            await warming.step(mind_step(ident), functools.partial(warm_mind, facade, ident))
        if routed:
            await warming.step(ROUTING, lambda: runtime.route_pool(routed))

    await asyncio.gather(warming.step(MODEL, runtime.embedder_ready), minds_then_routing())
    if minds:
        await warming.step(RECALL, functools.partial(first_recall, facade, minds[0]))
    settle_heap()
    warming.seconds = time.perf_counter() - started
    log.info("warm-up done in %.1f s (%d minds%s)", warming.seconds, len(minds),
             f", routing summaries of {len(routed)} workspaces" if routed else "")


def settle_heap() -> None:
    """Collect once, then move every object alive now (modules, the loaded indexes) out of the
    collector's sight (``gc.freeze``). Without it the collector's full passes walked them all
    every few seconds while the server answered: 75-110 ms pauses of every request in flight
    at 100,000 frames."""
    gc.collect()
    gc.freeze()
