"""The runtime contract: what the facade, the status report, ``serve`` and the harvest driver
may ask of a runtime — and nothing else (nobody outside ``workers/`` reaches into its
``MindHost``).

Two runtimes implement it: :class:`workers.runtime.EmbeddedRuntime` (actors, embedder and an
in-process job runner in this process) and :class:`workers.host_runtime.HostRuntime` (actors
here, embeddings on Redis workers). Both build their ``MindHost`` with
:func:`workers.runtime.open_host`, the one place a host is made.

=====================  ==========================================================================
method                 contract
=====================  ==========================================================================
``submit``             apply a write-op through the mind's actor; its follow-up work is this
                       process's to wait for (``wait_idle``)
``reader``             the mind's read-only connection (``create``: make the file if missing)
``lease``              the reader, kept open until the block ends (the LRU of open minds may
                       close a plain ``reader`` when other minds open: a scope-wide recall)
``exists``             the mind has a file; ``list_minds`` every mind with one
``census``             counts of many minds without opening them (re-read where a file changed)
``memory_indexes``     the in-memory vector and keyword indexes of the minds open here (status)
``route_pool``         the routing summaries of many minds (a scope-wide recall picks from them);
                       ``stems`` a query's terms as the keyword index holds them
``close_mind``         stop the mind's actor and close its connections (workspace delete)
``sweep``              queue cognify jobs for everything the mind's outbox holds, a piece at a
                       time in the background (:mod:`workers.backlog`); the frames it found
``resume``             ``sweep`` once per mind per process start (a no-op afterwards), in a
                       long-lived process alone on the mind (a one-shot one leaves the backlog)
``wait_idle``          the indexing this process caused has been applied (False on timeout)
``wait_indexed``       the given frames of one mind (or its whole outbox) are indexed, whatever
                       other minds still have queued
``embedder_ready``     the provider chain, started once (loading a model can take seconds)
``quota_status``       this month's embedding count of the configured user, its tier and quota;
                       ``check_quota`` refuses work when the quota is used up (a gated tier)
``queue_status``       depth, in-progress and dead letters of this runtime's job queue
``ready_checks``       what readiness needs beyond the facade (distributed: Redis answers)
``job_queue``          its jobs and dead letters, to report, retry or drop (:class:`JobQueue`)
``consumer_settings``  the arq settings of this host's own write-op queue (``serve`` runs them);
                       ``None`` for a runtime without one
``close``              release everything; nothing hangs process exit
=====================  ==========================================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol

from mind.census import Census
from mind.embeddings.chain import EmbeddingProviderChain
from mind.mind import Mind
from queue_schemas.ops import OpEnvelope
from workers.jobs_shapes import JobsReport
from workers.schedule import ScheduleConfig

if TYPE_CHECKING:
    from mind.retrieval.routing import RoutePool


class MindAccess(Protocol):
    """Reads and writes of minds by id: what the harvest driver needs. A ``MindHost`` is one
    (the host process's maintenance jobs), a :class:`Runtime` is one (everything else)."""

    async def reader(self, mind_id: str, *, create: bool = True) -> Mind: ...

    async def submit(self, mind_id: str, op: OpEnvelope, *, create: bool = True) -> Any: ...


class JobQueue(Protocol):
    """The jobs of a runtime (``hive-mind jobs``, :mod:`workers.jobs_admin`): the report of
    queued, running and failed jobs per mind, and the retry or drop of dead letters (all of
    them for ``ids`` None)."""

    async def report(self) -> JobsReport: ...

    async def retry(self, ids: list[str] | None) -> list[dict[str, object]]: ...

    async def drop(self, ids: list[str] | None) -> list[str]: ...


class Runtime(MindAccess, Protocol):
    """The whole contract (table in the module docstring)."""

    def exists(self, mind_id: str) -> bool: ...

    def lease(self, mind_id: str, *, create: bool = True
              ) -> AbstractAsyncContextManager[Mind]: ...

    def list_minds(self) -> list[str]: ...

    def memory_indexes(self) -> dict[str, dict[str, Any]]: ...

    def serves(self, mind_id: str) -> bool: ...

    def check_serves(self, mind_id: str) -> None: ...

    async def census(self, mind_ids: Sequence[str]) -> dict[str, Census]: ...

    async def route_pool(self, mind_ids: Sequence[str]) -> tuple[list[str], RoutePool]: ...

    def stems(self, query: str) -> list[str]: ...

    async def close_mind(self, mind_id: str) -> None: ...

    async def sweep(self, mind_id: str) -> int: ...

    async def resume(self, mind_id: str) -> int: ...

    async def wait_idle(self, timeout: float | None = None) -> bool: ...

    async def wait_indexed(self, mind_id: str, frame_ids: Sequence[int] | None = None,
                           timeout: float | None = None) -> bool: ...

    async def embedder_ready(self) -> EmbeddingProviderChain: ...

    async def quota_status(self) -> dict[str, object] | None: ...

    async def check_quota(self, n: int = 1) -> None: ...

    async def queue_status(self) -> dict[str, Any]: ...

    async def ready_checks(self) -> dict[str, bool]: ...

    def job_queue(self) -> JobQueue: ...

    def consumer_settings(self, schedule: ScheduleConfig) -> type | None: ...

    async def close(self) -> None: ...
