"""Writers of one mind file in several processes: who else is writing, and whose turn it is.

Several processes may write one mind (an import in one, a CLI ``save`` or an agent's MCP server
in another: docs/architecture.md, "Processes and modes"). SQLite lets one writer in at a time
and makes the others poll: its busy handler sleeps up to 100 ms between tries, while a process
committing bulk work back to back (an import, its index results) takes the lock again within a
millisecond of releasing it, so a save from another process could wait for the whole import.
Two small lock files beside the mind file (``flock``: the kernel drops them when a process
dies) settle it:

* ``<mind>-writers``: every process that keeps a writer open on the mind — and indexes what
  it writes and what one-shot processes hand it — holds a shared lock on it. A process that
  finds another one there (:meth:`WriterLocks.others_present`) leaves the mind's outbox to it
  — that process queued the indexing of what it wrote — instead of queuing all of it again on
  first use; a process that dies leaves its outbox to the next one to open the mind. A
  one-shot process (a CLI command, ``register=False``) does not take it: it hands the
  indexing of the frames it saves to a process that holds it (:mod:`actors.handoff`).
* ``<mind>-turn``: a writer with interactive work to commit (a save) holds it exclusively from
  before ``BEGIN IMMEDIATE`` until its commit (:meth:`WriterLocks.interactive`); bulk work
  (:meth:`WriterLocks.bulk_turn`) takes and drops a shared lock on it before each of its
  commits, so an import pauses between two of its commits while a save from another process
  goes in. The save waits for at most the one bulk commit already running.

Locks are taken without blocking and retried after short sleeps, so a wait never holds a thread
or the event loop, and a cancelled wait leaves nothing behind. A file that cannot be opened (a
read-only directory) turns the locks off: writers then meet only SQLite's own locking.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import itertools
import logging
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Final

from mind.storage.private_files import PRIVATE_FILE

log = logging.getLogger(__name__)

WRITERS_SUFFIX: Final = "-writers"
TURN_SUFFIX: Final = "-turn"
LOCK_SUFFIXES: Final = (WRITERS_SUFFIX, TURN_SUFFIX)
POLL_SECONDS: Final = (0.001, 0.002, 0.005, 0.01, 0.02)
"""Sleeps between tries of a busy lock (then the last one, again)."""
NOTICE_AFTER: Final = 1.0
"""Seconds of waiting for another process's save before it is logged (once per wait)."""


def _open(path: Path, *, create: bool = True) -> int | None:
    try:
        return os.open(path, os.O_RDWR | os.O_CLOEXEC | (os.O_CREAT if create else 0),
                       PRIVATE_FILE)
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.debug("no writer lock file %s (%s): SQLite's locking only", path, exc)
        return None


def _try(fd: int, operation: int) -> bool:
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


async def _take(fd: int, operation: int, what: str) -> None:
    """``flock(fd, operation)``, waiting without blocking the loop; says after
    :data:`NOTICE_AFTER` seconds what it waits for."""
    started = time.monotonic()
    told = False
    for attempt in itertools.count():
        if _try(fd, operation):
            return
        if not told and time.monotonic() - started >= NOTICE_AFTER:
            log.warning("waiting for %s", what)
            told = True
        await asyncio.sleep(POLL_SECONDS[min(attempt, len(POLL_SECONDS) - 1)])


class WriterLocks:
    """The two locks of one mind file for one writer (a process's actor); see the module
    docstring. ``close`` drops both."""

    def __init__(self, mind_path: str | Path, *, register: bool = True) -> None:
        self.path = Path(mind_path)
        self.registered = register  # holds <mind>-writers (module docstring)
        self._writers = _open(Path(f"{mind_path}{WRITERS_SUFFIX}"))
        self._turn = _open(Path(f"{mind_path}{TURN_SUFFIX}"))
        if self._writers is not None and register:
            fcntl.flock(self._writers, fcntl.LOCK_SH)  # others hold it shared, or probe it

    @classmethod
    def for_mind(cls, mind_path: str | Path, *, register: bool = True) -> WriterLocks | None:
        """The locks of a mind file (None for an in-memory database)."""
        return None if str(mind_path) == ":memory:" else cls(mind_path, register=register)

    def others_present(self) -> bool:
        """Whether another registered writer (another process) has this mind open."""
        if self._writers is None:
            return False
        alone = _try(self._writers, fcntl.LOCK_EX)  # converts our own shared lock if alone
        # back to shared, or to none for a one-shot writer (a failed try may drop it)
        fcntl.flock(self._writers, fcntl.LOCK_SH if self.registered else fcntl.LOCK_UN)
        return not alone

    def leave(self) -> None:
        """Stop being a registered writer (closing: others no longer hand frames to us)."""
        if self._writers is not None and self.registered:
            fcntl.flock(self._writers, fcntl.LOCK_UN)
        self.registered = False

    @asynccontextmanager
    async def interactive(self, what: str) -> AsyncIterator[None]:
        """Hold the turn for an interactive commit: bulk writers of other processes do not start
        another commit until it is released."""
        if self._turn is None:
            yield
            return
        await _take(self._turn, fcntl.LOCK_EX, f"another process's save to {what}")
        try:
            yield
        finally:
            fcntl.flock(self._turn, fcntl.LOCK_UN)

    async def bulk_turn(self, what: str) -> bool:
        """Wait while another process holds the turn for an interactive commit; whether it
        did (another process is saving)."""
        if self._turn is None or _try(self._turn, fcntl.LOCK_SH):
            if self._turn is not None:
                fcntl.flock(self._turn, fcntl.LOCK_UN)
            return False
        await _take(self._turn, fcntl.LOCK_SH, f"another process's save to {what}")
        fcntl.flock(self._turn, fcntl.LOCK_UN)
        return True

    def close(self) -> None:
        for fd in (self._writers, self._turn):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)  # closing the descriptor drops its lock
        self._writers = self._turn = None


def others_writing(mind_path: str | Path) -> bool:
    """Whether any writer has the mind open, asked by a process that has none open on it."""
    fd = _open(Path(f"{mind_path}{WRITERS_SUFFIX}"), create=False)
    if fd is None:  # no writer ever opened the mind (or it is in memory)
        return False
    try:
        return not _try(fd, fcntl.LOCK_EX)
    finally:
        os.close(fd)
