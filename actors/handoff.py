"""A one-shot process hands the indexing of the frames it saves to a process that keeps the
mind's writer open.

A CLI ``save`` is a process of its own. Alone on its mind it indexes its frame before it exits
(so a following ``recall`` finds the vector), which costs it the embedding model's load — most
of its time after its own start. Beside another process writing the same mind (an import, ``serve``,
an agent's MCP server), that process already has the model loaded and indexes as it writes, so
the save leaves the indexing to it, as a save made inside that process would:

* A one-shot writer (:class:`Handing`: a CLI command, whose locks are not registered in
  ``<mind>-writers``, :mod:`mind.storage.writer_locks`) that finds a registered writer of its
  mind when a group commit starts marks the new frames of that commit ``handed`` in the outbox,
  inside the same transaction. The frame, its FTS row and its outbox row commit together as
  always: durable, and found by keyword at once. Its commit hook leaves those frames out.
* A registered writer (:class:`Adopting`) claims handed frames inside the write transaction of a
  group commit (at most every :data:`CLAIM_EVERY` seconds), and while it is idle as soon as the
  mind's WAL changed and handed frames wait; after the commit its ``on_handed`` hook queues
  their indexing at interactive priority, ahead of an import's backlog.
* Nothing is lost when the registered writer exits or dies first: a frame handed and not yet
  indexed stays in the outbox, and the next long-lived process that opens the mind with no
  other writer re-queues it, as it does every pending row (:mod:`workers.backlog`; a one-shot
  process takes on no backlog). A writer closing a mind stops being registered first and
  claims what was handed until then.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

from mind.frames.outbox import claim_handed, hand_off, last_frame
from mind.mind import Mind
from mind.storage.db import Database
from mind.storage.writer_locks import WriterLocks

log = logging.getLogger(__name__)

HandedHook = Callable[[list[int]], Awaitable[None]]
"""What a registered writer does with the frames it claimed (queue their indexing)."""

CLAIM_EVERY: Final = 0.5
"""Seconds between a busy registered writer's claims, and between an idle one's looks at the
WAL: how late a handed frame's indexing can start, not its save's acknowledgement."""
LOOK_EVERY: Final = 5.0
"""Seconds after which an idle registered writer looks for handed frames even though the WAL
seems unchanged: a WAL rewritten from its start after a checkpoint keeps its size, and its
modification time can miss a change within one tick of the clock."""


class Handing:
    """The one-shot writer's side: marks its new frames handed while a registered writer is
    there."""

    def __init__(self, locks: WriterLocks) -> None:
        self._locks = locks

    async def mark(self, db: Database) -> int | None:
        """At a group's start, inside its transaction: the newest frame id when another
        process will index this group's new frames (None: this process indexes them)."""
        if not self._locks.others_present():
            return None
        return await db.run(last_frame)

    async def hand(self, db: Database, mark: int) -> frozenset[int]:
        """At the group's end, inside its transaction: mark its new frames handed."""
        return frozenset(await db.run(lambda sync: hand_off(sync, mark)))


class Adopting:
    """The registered writer's side: claims what one-shot writers handed over."""

    def __init__(self, path: str | Path, on_handed: HandedHook) -> None:
        self._wal = Path(f"{path}-wal")
        self._on_handed = on_handed
        self._claimed_at = float("-inf")
        self._wal_seen: tuple[int, int] | None = None
        self._looked_at = float("-inf")

    async def claim(self, db: Database) -> list[int]:
        """Inside a group's write transaction: the handed frames, claimed, when a claim is due
        (:data:`CLAIM_EVERY`); they go back to the outbox if the transaction rolls back."""
        now = time.monotonic()
        if now - self._claimed_at < CLAIM_EVERY:
            return []
        self._claimed_at = now
        return await db.run(claim_handed)

    async def waiting(self, mind: Mind, *, look: bool = False) -> bool:
        """While idle: whether handed frames wait for a claim — looked up when the mind's WAL
        changed since the last look (every commit of any process changes it), at least every
        :data:`LOOK_EVERY` seconds, or when asked to ``look``."""
        seen, now = self._wal_signature(), time.monotonic()
        if seen == self._wal_seen and now - self._looked_at < LOOK_EVERY and not look:
            return False
        self._wal_seen, self._looked_at = seen, now
        if not await mind.outbox.handed():
            return False
        self._claimed_at = float("-inf")  # the claim is due now
        return True

    async def adopted(self, name: str, frame_ids: list[int]) -> None:
        """After the commit that claimed ``frame_ids``: queue their indexing (a failure is
        logged: the frames stay in the outbox for the next sweep)."""
        log.info("mind %s: indexing %d frame(s) another process saved", name, len(frame_ids))
        try:
            await self._on_handed(frame_ids)
        except Exception:
            log.exception("mind %s: queuing the indexing of handed frames failed (they stay "
                          "in the outbox)", name)

    def _wal_signature(self) -> tuple[int, int]:
        try:
            stat = os.stat(self._wal)
        except OSError:
            return (0, 0)
        return (stat.st_mtime_ns, stat.st_size)
