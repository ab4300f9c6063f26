"""MindActor: the only writer of one mind file inside a process.

Callers ``submit`` operations; the actor's loop takes the first queued op, drains up to
``max_ops`` more or ``max_weight`` frames (so a commit stays short and a small save never waits
behind a long queue of bulk work), waiting at most ``max_wait`` for a group to fill, and applies
them in **one** ``BEGIN IMMEDIATE`` transaction with a savepoint per op, so one bad op
fails alone. Futures resolve only after ``COMMIT`` (acknowledged means durable). Every op has an
``op_id``; an op id already recorded in ``applied_ops`` is not applied again (at-least-once
delivery becomes exactly-once effect); an op named by a client's idempotency key gets its first
result back (``Replayed``) or a conflict (:mod:`mind.storage.idempotency`). The mailbox is bounded:
submitters wait when it is full. After each commit, before the futures resolve, an
``on_commit`` hook sees the applied ops and their results, and the new frames whose indexing
went to another process (it enqueues follow-up work such as cognify jobs; its failures are
logged, the outbox covers them).

Writers of the mind in other processes: each group commits in its turn among them
(:mod:`mind.storage.writer_locks`); a one-shot process's actor (``one_shot``: a CLI command)
hands the indexing of its new frames to a process that keeps the mind's writer open, and an
actor given ``on_handed`` claims such frames (:mod:`actors.handoff`).

Two lanes feed the loop: small interactive ops (kinds in ``URGENT_KINDS`` writing at most
``urgent_weight`` frames: a save, a touch, an erase) go before queued bulk work (imports,
cognify results) and are grouped only with each other, so a save waits for at most the one bulk
commit already running, never behind a queue of them nor inside a big group; bulk groups stop
at ``bulk_weight`` frames, so that one commit is short too (measured: save p99 during a bulk
import, docs/performance.md), and at a quarter of it while interactive ops arrive (one in the last
``INTERACTIVE_WINDOW`` seconds, or a save of another process this actor let go first: shorter
commits for the saves to wait for; the full weight, and fewer commits, for an import no one is
saving beside). Each lane is FIFO; the bulk lane keeps
the order of imports and of index results relative to the ops they follow.

New frames (imports, big saves) are weighed apart from index results: a frame costs a
fraction of an index result to write, and a commit's fixed cost (its round trips, the FTS5
segment it flushes, the WAL pages it rewrites) is paid per commit, so bulk groups of new frames
hold up to ``bulk_frames`` of them (an import no one saves beside: 1,024, a fifth of the
frames' cost of parts of 128) and one part of ``part_frames`` while interactive ops arrive.

An unkeyed bulk write bigger than a part (the bulk limit of the moment: new frames of an
import's batch, index results of a cognify job) is applied in parts, one commit each, so
interactive ops go between them (:mod:`actors.parts`: what that keeps — exactly-once, order —
and gives up: all-or-nothing).

Tracing: each group commit is logged at DEBUG on this module's logger, the record carrying
``ops`` (the group's ops, in order) and ``started`` (``time.perf_counter()`` at its ``BEGIN``;
the record is made right after ``COMMIT``). A handler on that logger sees every commit of the
process as it happens (``python -m bench.product.ack_latency --trace`` lists the commits a slow
save waited for).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from actors.constants import (
    DEFAULT_BULK_FRAMES,
    DEFAULT_BULK_WEIGHT,
    DEFAULT_MAILBOX,
    DEFAULT_MAX_OPS,
    DEFAULT_MAX_WAIT,
    DEFAULT_MAX_WEIGHT,
    DEFAULT_PART_FRAMES,
    INTERACTIVE_BULK_DIVISOR,
    INTERACTIVE_WINDOW,
    URGENT_KINDS,
    URGENT_MAX_WEIGHT,
)
from actors.handoff import CLAIM_EVERY, Adopting, HandedHook, Handing
from actors.metrics import GROUP_COMMIT_SECONDS
from actors.parts import Parted, merge, split
from mind.errors import HiveMindError, StorageError
from mind.mind import Mind
from mind.storage import idempotency
from mind.storage.writer_locks import NOTICE_AFTER, WriterLocks

log = logging.getLogger(__name__)

FRAME_KINDS = frozenset({"save_frames", "harvest_batch"})
"""Op kinds whose weight is new frames (bulk groups of ``bulk_frames``); the others' is index
results or one (groups of ``bulk_weight``)."""


SCRUBS_WAL = frozenset({"erase", "compact", "wipe_frames"})
"""Op kinds that delete frames: the WAL is truncated after their commit
(:mod:`mind.frames.forget`)."""


class Op(Protocol):
    @property
    def op_id(self) -> str: ...

    @property
    def kind(self) -> str: ...


Handler = Callable[[Mind, Any], Awaitable[Any]]
CommitHook = Callable[[list[tuple[Any, Any]], frozenset[int]], Awaitable[None]]
"""After a commit: its applied ops with their results, and the ids of its new frames another
process indexes (:mod:`actors.handoff`)."""


def op_weight(op: Any) -> int:
    """Rows an op writes (frames saved or indexed), so one group commit stays short."""
    items = getattr(op, "frames", None) or getattr(op, "results", None)
    return max(1, len(items)) if isinstance(items, list | tuple) else 1


@dataclass(frozen=True, slots=True)
class Duplicate:
    """Result of an op whose id was applied before."""

    op_id: str


@dataclass(frozen=True, slots=True)
class Replayed(Duplicate):
    """Result of a keyed op (an idempotency key, :mod:`mind.storage.idempotency`) applied before:
    ``result`` is what the first application returned."""

    result: Any


class ActorClosedError(HiveMindError):
    code = "actor_closed"
    status = 503


@dataclass(slots=True)
class _Pending:
    op: Any
    future: asyncio.Future[Any]
    parted: Parted | None = None  # a part of a bigger op (actors.parts)


class MindActor:
    def __init__(
        self,
        mind: Mind,
        handlers: Mapping[str, Handler],
        *,
        max_ops: int = DEFAULT_MAX_OPS,
        max_wait: float = DEFAULT_MAX_WAIT,
        mailbox: int = DEFAULT_MAILBOX,
        max_weight: int = DEFAULT_MAX_WEIGHT,
        bulk_weight: int = DEFAULT_BULK_WEIGHT,
        bulk_frames: int = DEFAULT_BULK_FRAMES,
        part_frames: int = DEFAULT_PART_FRAMES,
        urgent_weight: int = URGENT_MAX_WEIGHT,
        on_commit: CommitHook | None = None,
        on_handed: HandedHook | None = None,
        one_shot: bool = False,
        name: str = "",
    ) -> None:
        self.mind = mind
        self.name = name or mind.path
        self._handlers = dict(handlers)
        self._max_ops = max_ops
        self._max_wait = max_wait
        self._max_weight = max_weight
        self._bulk_weight = bulk_weight
        self._bulk_frames = bulk_frames
        self._part_frames = part_frames
        self._urgent_weight = urgent_weight
        self._last_interactive = float("-inf")  # monotonic time of the last urgent op
        self._queue: asyncio.Queue[_Pending | None] = asyncio.Queue(maxsize=mailbox)
        self._urgent: asyncio.Queue[_Pending] = asyncio.Queue(maxsize=mailbox)
        self._wake = asyncio.Event()  # set after every put into either lane
        self._held: _Pending | None = None  # bulk op that did not fit the last group: next
        self._on_commit = on_commit
        # other processes' writers: their turn, and the frames handed between them
        self.locks = WriterLocks.for_mind(mind.path, register=not one_shot)
        self._handing = Handing(self.locks) if self.locks is not None and one_shot else None
        self._adopting = Adopting(mind.path, on_handed) \
            if self.locks is not None and on_handed is not None and not one_shot else None
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self.last_used = time.monotonic()
        self.commits = 0
        self.ops_applied = 0

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"mind-actor:{self.name}")

    async def stop(self) -> None:
        """Apply what is queued, then stop and close the mind."""
        if self._closing:
            return
        self._closing = True
        if self._task is not None:
            await self._queue.put(None)
            self._wake.set()
            await self._task
        if self._adopting is not None and self.locks is not None:
            self.locks.leave()  # one-shot writers hand nothing more to this process
            if await self._adopting.waiting(self.mind, look=True):  # what they handed until now
                await self._apply_in_turn([], interactive=False)
        await self.mind.close()
        if self.locks is not None:
            self.locks.close()

    @property
    def queued(self) -> int:
        return self._queue.qsize() + self._urgent.qsize() + (self._held is not None)

    def urgent(self, op: Any) -> bool:
        """Whether ``op`` goes ahead of queued bulk work (module docstring)."""
        return op.kind in URGENT_KINDS and op_weight(op) <= self._urgent_weight

    def bulk_limit(self, kind: str = "") -> int:
        """Frames of bulk work per commit now (module docstring): of new frames (``kind`` one of
        :data:`FRAME_KINDS`) ``bulk_frames``, one part while interactive ops arrive; of index
        results ``bulk_weight``, a quarter of it while interactive ops arrive."""
        interactive = time.monotonic() - self._last_interactive < INTERACTIVE_WINDOW
        if kind in FRAME_KINDS:
            return self._part_frames if interactive else max(self._part_frames, self._bulk_frames)
        if interactive:
            return max(1, self._bulk_weight // INTERACTIVE_BULK_DIVISOR)
        return self._bulk_weight

    # -- submitting -------------------------------------------------------------------------

    async def submit(self, op: Any) -> Any:
        """Queue ``op`` and wait until it is committed; returns the handler's result."""
        if self._closing:
            raise ActorClosedError(f"mind {self.name} is closing")
        if op.kind not in self._handlers:
            raise HiveMindError(f"no handler for op kind {op.kind!r}")
        self.start()
        self.last_used = time.monotonic()
        urgent = self.urgent(op)
        if urgent:
            self._last_interactive = self.last_used
        parts = split(op, frames=self.bulk_limit(op.kind), results=self.bulk_limit())
        if parts is not None:
            return await self._submit_parts(op, parts)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        lane = self._urgent if urgent else self._queue
        await lane.put(_Pending(op, future))
        self._wake.set()
        return await future

    async def _submit_parts(self, op: Any, parts: list[Any]) -> Any:
        """Queue a big op's parts one after the other in the bulk lane; its result is theirs
        merged, or the first part's error."""
        parted = Parted(op.op_id, tuple(part.op_id for part in parts))
        futures: list[asyncio.Future[Any]] = []
        for part in parts:
            futures.append(asyncio.get_running_loop().create_future())
            await self._queue.put(_Pending(part, futures[-1], parted))
            self._wake.set()
        results = await asyncio.gather(*futures, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return merge(results, Duplicate(op.op_id))

    # -- the loop ---------------------------------------------------------------------------

    async def _run(self) -> None:
        stopping = False
        while not stopping:
            lane, first = await self._next()
            if first is None:
                break
            batch = [first]
            stopping = await self._fill(batch, lane)
            small = sum(op_weight(p.op) for p in batch) <= self._urgent_weight
            await self._apply_in_turn(batch, interactive=lane is self._urgent or small)

    async def _next(self) -> tuple[asyncio.Queue[Any], _Pending | None]:
        """The next op, urgent lane first (None: stop), and the lane it came from. While
        idle, an actor that adopts handed frames claims them as they come (an empty group)."""
        while True:
            self._wake.clear()  # before looking: a put after the look sets it again
            if not self._urgent.empty():
                return self._urgent, self._urgent.get_nowait()
            if self._held is not None:
                held, self._held = self._held, None
                return self._queue, held
            if not self._queue.empty():
                return self._queue, self._queue.get_nowait()
            if self._adopting is None:
                await self._wake.wait()
                continue
            try:
                await asyncio.wait_for(self._wake.wait(), CLAIM_EVERY)
            except TimeoutError:
                if await self._adopting.waiting(self.mind):
                    await self._apply_in_turn([], interactive=False)

    async def _fill(self, batch: list[_Pending], lane: asyncio.Queue[Any]) -> bool:
        """Add ops of the same lane to ``batch`` (the other lane's wait for the next group); a
        bulk op that would take the group past :meth:`bulk_limit` starts the next one."""
        deadline = time.monotonic() + self._max_wait
        weight = op_weight(batch[0].op)
        kind = batch[0].op.kind in FRAME_KINDS
        limit = self._max_weight if lane is self._urgent else self.bulk_limit(batch[0].op.kind)
        while len(batch) < self._max_ops and weight < limit:
            try:
                item = lane.get_nowait()
            except asyncio.QueueEmpty:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or len(batch) == 1:
                    return False
                try:
                    item = await asyncio.wait_for(lane.get(), remaining)
                except TimeoutError:
                    return False
            if item is None:
                return True
            if lane is self._queue and (weight + op_weight(item.op) > limit
                                        or (item.op.kind in FRAME_KINDS) != kind):
                self._held = item
                return False
            batch.append(item)
            weight += op_weight(item.op)
        return False

    async def _apply_in_turn(self, batch: list[_Pending], *, interactive: bool) -> None:
        """Apply a group in its turn among the mind's writers in other processes
        (:mod:`mind.storage.writer_locks`): an interactive group (a save, or any group as small
        as one: a CLI's own index result) holds the turn through its commit, a bulk group
        first lets another process's interactive commit go — and, as for an interactive op of
        this process, the bulk groups that follow are short for a while
        (:meth:`bulk_limit`)."""
        if self.locks is None:
            await self._apply(batch)
        elif interactive:
            notice = asyncio.get_running_loop().call_later(
                NOTICE_AFTER, log.warning, "mind %s: waiting for the mind file's write lock (held "
                "by another process) for %.0f s so far", self.name, NOTICE_AFTER)
            try:
                async with self.locks.interactive(f"mind {self.name}"):
                    await self._apply(batch)
            finally:
                notice.cancel()
        else:
            if await self.locks.bulk_turn(f"mind {self.name}"):  # another process saves:
                self._last_interactive = time.monotonic()  # short commits, as for our own
            await self._apply(batch)

    async def _apply(self, batch: list[_Pending]) -> None:
        db = self.mind.db
        outcomes: list[tuple[_Pending, Any, BaseException | None]] = []
        handed: frozenset[int] = frozenset()
        claimed: list[int] = []
        started = time.perf_counter()
        try:
            async with db.transaction():
                mark = None if self._handing is None else await self._handing.mark(db)
                if self._adopting is not None:
                    claimed = await self._adopting.claim(db)
                for pending in batch:
                    outcomes.append(await self._apply_one(pending))
                if mark is not None and self._handing is not None:
                    handed = await self._handing.hand(db, mark)
        except BaseException as exc:  # the COMMIT (or BEGIN) failed: nothing is durable
            err = exc if isinstance(exc, HiveMindError) else StorageError(f"commit failed: {exc}")
            log.exception("mind %s: group commit of %d ops failed", self.name, len(batch))
            for pending in batch:
                if pending.parted is not None and pending.parted.failed is None:
                    pending.parted.failed = err
                if not pending.future.done():
                    pending.future.set_exception(err)
            if not isinstance(exc, Exception):
                raise
            return
        self.commits += 1
        self.ops_applied += len(batch)
        GROUP_COMMIT_SECONDS.observe(time.perf_counter() - started)
        if log.isEnabledFor(logging.DEBUG):  # with the ops for a trace (module docstring)
            log.debug("mind %s: committed %d ops in %.1f ms", self.name, len(batch),
                      (time.perf_counter() - started) * 1000,
                      extra={"ops": [p.op for p in batch], "started": started})
        committed = [(p.op, result) for p, result, error in outcomes if error is None]
        if any(op.kind in SCRUBS_WAL for op, _ in committed):
            await self.mind.scrub_wal()  # deleted frames' old pages leave the -wal file too
        if handed:
            log.info("mind %s: the indexing of %d new frame(s) is left to the other process "
                     "writing the mind", self.name, len(handed))
        if claimed and self._adopting is not None:
            await self._adopting.adopted(self.name, claimed)
        if self._on_commit is not None and committed:
            try:  # before resolving: a caller that returns finds its follow-ups queued
                await self._on_commit(committed, handed)
            except Exception:
                log.exception("mind %s: on_commit hook failed (outbox will recover)", self.name)
        for pending, result, error in outcomes:
            if pending.future.done():
                continue
            if error is None:
                pending.future.set_result(result)
            else:
                pending.future.set_exception(error)

    async def _apply_one(self, pending: _Pending) -> tuple[_Pending, Any, BaseException | None]:
        op, parted = pending.op, pending.parted
        db = self.mind.db
        if parted is not None and parted.failed is not None:
            return pending, None, parted.failed  # an earlier part failed: keep the order
        try:
            async with db.transaction():
                applied = (await idempotency.seen(db, op.op_id) if parted is None
                           else await idempotency.seen_part(db, op.op_id, parted.op_id))
                if applied is not None:
                    again = Replayed(op.op_id, applied.result) if applied.keyed \
                        else Duplicate(op.op_id)
                    return pending, again, None
                result = await self._handlers[op.kind](self.mind, op)
                if parted is not None and parted.last(op.op_id):
                    await idempotency.record_whole(db, parted.op_id, parted.part_ids)
                else:
                    await idempotency.record(db, op.op_id, result)
            return pending, result, None
        except Exception as exc:
            if parted is not None:
                parted.failed = exc
            if not isinstance(exc, HiveMindError):
                log.exception("mind %s: op %s (%s) failed", self.name, op.op_id, op.kind)
            return pending, None, exc
