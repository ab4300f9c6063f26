"""A thin async wrapper over one aiosqlite connection.

It translates driver errors into the hive-mind tree and provides a re-entrant
:meth:`Database.transaction`: the outermost level is ``BEGIN IMMEDIATE`` … ``COMMIT`` (so the
write lock is taken up front and ``busy_timeout`` applies), inner levels are savepoints, so one
failing operation rolls back alone while the surrounding group commit goes on.

Every awaited statement is a round trip to the connection's thread (~0.2 ms idle on a 2-core
AMD EPYC, more when the cores are busy; 60-100 us of CPU for the two threads on a 4th-generation
EPYC VM); a piece of work of many statements — a bulk insert — runs in one trip with
:meth:`Database.run`, its statements on a :class:`SyncDb`.

The transaction's own statements take no trip of their own: ``BEGIN IMMEDIATE``, ``SAVEPOINT``
and ``RELEASE`` are held (:attr:`Database._held`) and run in the trip of the next statement,
in order, so the SQL the connection sees is the same; a savepoint no statement ran inside is
never opened, and a transaction that ran none never begins. An index result's commit nests four
levels (the group, the op, the handler, a store's own) and ran ~10 of its ~30 trips for them
(bench/components/host_replay.py). ``COMMIT`` and the rollbacks run at once (the commit is the
durability point; a failure path stays plain). An error of a held statement (the write lock busy at
``BEGIN IMMEDIATE``) is raised by the statement whose trip ran it, inside the block, which
rolls the transaction back as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from mind.errors import ConflictError, HiveMindError, StorageError
from mind.storage.connection import connect, driver

Row = Any  # the driver's Row type (sqlite3.Row or pysqlite3.dbapi2.Row)
Params = Sequence[Any] | dict[str, Any]

_ids = itertools.count(1)
log = logging.getLogger(__name__)
T = TypeVar("T")


def translate(exc: BaseException) -> HiveMindError:
    """Map a driver exception onto the hive-mind error tree."""
    mod = driver()
    if isinstance(exc, HiveMindError):
        return exc
    if isinstance(exc, mod.IntegrityError):
        return ConflictError(f"constraint failed: {exc}")
    text = str(exc)
    if "locked" in text or "busy" in text:
        return StorageError(f"the mind file is busy (another writer holds the lock): {text}")
    return StorageError(f"SQLite error: {text}")


def _run_callbacks(callbacks: Sequence[Callable[[], None]]) -> None:
    for callback in callbacks:
        try:
            callback()
        except Exception:
            log.exception("an after-commit callback failed (the commit stands)")


class SyncDb:
    """The statements of :class:`Database` as its connection's thread runs them (inside
    :meth:`Database.run`): same names, same results, same errors."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Params = ()) -> tuple[int, int]:
        try:
            cur = self._conn.execute(sql, params)
        except Exception as exc:
            raise translate(exc) from exc
        return cur.lastrowid or 0, cur.rowcount

    def executemany(self, sql: str, rows: Iterable[Params]) -> int:
        try:
            return int(self._conn.executemany(sql, rows).rowcount)
        except Exception as exc:
            raise translate(exc) from exc

    def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        try:
            return self._conn.execute(sql, params).fetchall()  # type: ignore[no-any-return]
        except Exception as exc:
            raise translate(exc) from exc

    def fetchval(self, sql: str, params: Params = (), default: Any = None) -> Any:
        rows = self.fetchall(sql, params)
        return default if not rows or rows[0][0] is None else rows[0][0]


class Database:
    """One connection to a mind file (the writer, or a read-only reader)."""

    def __init__(self, conn: aiosqlite.Connection, path: str, *, readonly: bool) -> None:
        self._conn = conn
        self.path = path
        self.readonly = readonly
        self._lock = asyncio.Lock()
        self._depth: contextvars.ContextVar[int] = contextvars.ContextVar(
            f"hm_tx_depth_{next(_ids)}", default=0
        )
        self._closed = False
        self._held: list[str] = []  # transaction statements for the next trip (docstring)
        self._on_commit: list[Callable[[], None]] = []  # after_commit callbacks, in order

    @classmethod
    async def open(cls, path: str | Path, *, readonly: bool = False) -> Database:
        conn = await connect(path, readonly=readonly)
        return cls(conn, str(path), readonly=readonly)

    # -- statements -------------------------------------------------------------------------

    async def execute(self, sql: str, params: Params = ()) -> tuple[int, int]:
        """Run one statement; returns ``(lastrowid, rowcount)``."""
        return await self.run(lambda db: db.execute(sql, params))

    async def executemany(self, sql: str, rows: Iterable[Params]) -> int:
        return await self.run(lambda db: db.executemany(sql, rows))

    async def executescript(self, sql: str) -> None:
        """A script, outside any transaction (the driver commits an open one first)."""
        try:
            await self._conn.executescript(sql)
        except Exception as exc:
            raise translate(exc) from exc

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        return await self.run(lambda db: db.fetchall(sql, params))

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def fetchval(self, sql: str, params: Params = (), default: Any = None) -> Any:
        row = await self.fetchone(sql, params)
        if row is None or row[0] is None:
            return default
        return row[0]

    async def run(self, work: Callable[[SyncDb], T]) -> T:
        """``work`` in the connection's thread, its statements on a :class:`SyncDb`: one round
        trip for all of them (inside a transaction of this connection when one is open), after
        the transaction statements held for it."""
        held, self._held = self._held, []

        def trip() -> T:
            db = SyncDb(self._conn._connection)
            for sql in held:
                db.execute(sql)
            return work(db)

        try:
            return await self._conn._execute(trip)  # type: ignore[no-untyped-call,no-any-return]
        except Exception as exc:
            raise translate(exc) from exc

    def _hold(self, sql: str) -> None:
        self._held.append(sql)

    def _drop_held(self, sql: str) -> bool:
        """Take back ``sql`` if it is the last held statement (nothing ran since)."""
        if self._held and self._held[-1] == sql:
            self._held.pop()
            return True
        return False

    # -- transactions -----------------------------------------------------------------------

    @property
    def in_transaction(self) -> bool:
        return self._depth.get() > 0

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the current transaction has committed (at once outside one);
        dropped if the transaction, or the savepoint it was registered in, rolls back. For
        effects outside the file that must never show what SQLite did not keep (the vector
        index's hand-off of new vectors). A failing callback is logged: the commit stands."""
        if self.in_transaction:
            self._on_commit.append(callback)
        else:
            _run_callbacks([callback])

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Database]:
        """Re-entrant write transaction (BEGIN IMMEDIATE outside, SAVEPOINT inside); the
        opening and releasing statements ride on the next statement's trip (module docstring)."""
        depth = self._depth.get()
        if depth == 0:
            async with self._lock:
                self._hold("BEGIN IMMEDIATE")
                token = self._depth.set(1)
                try:
                    yield self
                except BaseException:
                    self._depth.reset(token)
                    self._on_commit.clear()
                    if not self._drop_held("BEGIN IMMEDIATE"):
                        await self._rollback()
                    raise
                self._depth.reset(token)
                if self._drop_held("BEGIN IMMEDIATE"):
                    self._on_commit.clear()
                    return  # no statement ran: nothing began, nothing to commit
                try:
                    await self.execute("COMMIT")
                except BaseException:
                    await self._rollback()
                    raise
                committed, self._on_commit = self._on_commit, []
                _run_callbacks(committed)
            return
        name = f"sp{depth}"
        opening = f"SAVEPOINT {name}"
        self._hold(opening)
        token = self._depth.set(depth + 1)
        registered = len(self._on_commit)
        try:
            yield self
        except BaseException:
            self._depth.reset(token)
            del self._on_commit[registered:]  # what the rolled-back savepoint did is gone
            if not self._drop_held(opening):
                self._held.clear()  # releases of inner savepoints: the rollback covers them
                await self.execute(f"ROLLBACK TO {name}")
                await self.execute(f"RELEASE {name}")
            raise
        self._depth.reset(token)
        if not self._drop_held(opening):
            self._hold(f"RELEASE {name}")

    async def _rollback(self) -> None:
        self._held.clear()  # inner savepoints' releases: the rollback ends them all
        self._on_commit.clear()
        with contextlib.suppress(Exception):  # nothing to roll back (e.g. a failed BEGIN)
            await self._conn.execute("ROLLBACK")

    # -- lifecycle --------------------------------------------------------------------------

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await self._conn.close()
        except Exception as exc:
            raise translate(exc) from exc

    def abort(self) -> None:
        """Synchronous last-resort close (the event loop is gone): stop the connection thread.
        Anything uncommitted rolls back, as after a crash."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            self._conn.stop()

    @property
    def closed(self) -> bool:
        return self._closed

    async def __aenter__(self) -> Database:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
