"""MindHost: opens minds by validated id from a data dir and keeps their actors.

Mind ids are ``personal`` or ``workspace:<slug>`` (slug validated before it touches the
filesystem: docs/architecture.md, "Invariants"). The host keeps at most ``max_open`` minds open
(LRU; the personal mind stays open, every scope-wide recall reads it). Each open mind has one
writer actor and one read-only ``Mind`` for searches; a mind only read so far (a scope-wide
recall) has just the reader, its writer and actor open on its first write. Several processes may
host the same data dir (one MCP stdio server per agent window): SQLite's locks serialize their
short write transactions.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from actors.actor import CommitHook, Handler, MindActor
from actors.constants import (
    DEFAULT_BULK_FRAMES,
    DEFAULT_BULK_WEIGHT,
    DEFAULT_MAILBOX,
    DEFAULT_MAX_OPEN,
    DEFAULT_MAX_OPS,
    DEFAULT_MAX_WAIT,
    DEFAULT_PART_FRAMES,
    PERSONAL_FILE,
    URGENT_MAX_WEIGHT,
    WORKSPACE_FILE,
    WORKSPACE_META,
    WORKSPACES_DIR,
)
from actors.handoff import HandedHook
from actors.heap import HeapTrimmer
from actors.moves import Authority, Departure, MoveBook
from mind.errors import (
    ConflictError,
    InvalidIdError,
    NotFoundError,
    StorageError,
    ValidationError,
)
from mind.ids import validate_slug
from mind.mind import Mind
from mind.storage import fencing
from mind.storage.fencing import Fence
from mind.storage.migrate import needs_migration
from mind.storage.private_files import make_private_dir, write_private_text
from mind.storage.writer_locks import others_writing
from vocabulary.ids import PERSONAL_MIND, WORKSPACE_PREFIX, split_mind_id

log = logging.getLogger(__name__)


def mind_path(data_dir: Path, mind_id: str) -> Path:
    """The file of a mind id; raises InvalidIdError for anything but a valid id."""
    try:
        _, slug = split_mind_id(mind_id)
    except ValueError as exc:
        raise InvalidIdError(str(exc)) from None
    if slug is None:
        return data_dir / PERSONAL_FILE
    return data_dir / WORKSPACES_DIR / slug / WORKSPACE_FILE


def list_minds(data_dir: Path) -> list[str]:
    """Mind ids with a file in the data dir."""
    ids = [PERSONAL_MIND] if (data_dir / PERSONAL_FILE).exists() else []
    root = data_dir / WORKSPACES_DIR
    if root.is_dir():
        for child in sorted(root.iterdir()):
            if (child / WORKSPACE_FILE).exists():
                try:
                    ids.append(WORKSPACE_PREFIX + validate_slug(child.name))
                except InvalidIdError:
                    log.warning("ignoring workspace dir with an invalid name: %s", child)
    return ids


@dataclass
class ActorSettings:
    max_ops: int = DEFAULT_MAX_OPS
    max_wait: float = DEFAULT_MAX_WAIT
    mailbox: int = DEFAULT_MAILBOX
    bulk_weight: int = DEFAULT_BULK_WEIGHT  # frames per group commit of bulk work
    bulk_frames: int = DEFAULT_BULK_FRAMES  # new frames per commit of an import
    part_frames: int = DEFAULT_PART_FRAMES  # ... while interactive ops arrive
    urgent_weight: int = URGENT_MAX_WEIGHT  # 0: no urgent lane (one FIFO)
    one_shot: bool = False  # a CLI command's: hands its frames' indexing over (actors.handoff)


@dataclass
class _Open:
    name: str
    actor: MindActor | None  # None: open for reads only, until its first write
    reader: Mind
    pins: int = 0  # leases in use: the LRU never closes a pinned mind
    closing: asyncio.Future[None] | None = None  # set while the LRU closes it

async def verify_copy(copy: Path) -> None:
    """A moved mind's copy opens as a mind file of this version (migrated if older) and
    passes SQLite's quick check; ValidationError naming neither path nor content otherwise."""
    try:
        mind = await Mind.open(copy)
        try:
            intact = await mind.intact()
        finally:
            await mind.close()
    except Exception as exc:  # whatever the file did to the opener: refused, path-free
        log.warning("an arriving mind copy was refused: %s", type(exc).__name__)
        raise ValidationError(f"the copy is not a mind file this host can open "
                              f"({type(exc).__name__})") from None
    if not intact:
        raise ValidationError("the copy is damaged (SQLite quick_check failed)")


def _log_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("closing minds over the LRU cap failed", exc_info=task.exception())


class MindHost:
    def __init__(
        self,
        data_dir: str | Path,
        handlers: Mapping[str, Handler],
        *,
        max_open: int = DEFAULT_MAX_OPEN,
        actor_settings: ActorSettings | None = None,
        on_commit: Callable[[str, Mind], CommitHook] | None = None,
        on_handed: Callable[[str, Mind], HandedHook] | None = None,
        fence: Fence | None = None,
        owner: Callable[[str], str] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir).expanduser()
        self.fence = fence  # a sharded host's (shard, epoch): files it opens must be its own
        self.owner = owner  # a sharded host's placement: mind id -> the shard that owns it
        self.moves = MoveBook(self.data_dir) if fence is not None else None  # minds moving
        self._handlers = handlers
        self.max_open = max_open
        self._settings = actor_settings or ActorSettings()
        self._on_commit = on_commit
        self._on_handed = on_handed  # frames one-shot processes hand over (actors.handoff)
        self._open: OrderedDict[str, _Open] = OrderedDict()
        self._lock = asyncio.Lock()
        self._busy: dict[str, asyncio.Future[None]] = {}  # minds being opened or closed
        self._trimmer = HeapTrimmer()
        self._closed = False

    def path(self, mind_id: str) -> Path:
        return mind_path(self.data_dir, mind_id)

    def exists(self, mind_id: str) -> bool:
        return self.path(mind_id).exists()

    @property
    def open_ids(self) -> list[str]:
        return list(self._open)

    def memory_indexes(self) -> dict[str, dict[str, Any]]:
        """The in-memory search indexes of the minds open here, by mind (``hive-mind status``:
        :meth:`mind.mind.Mind.memory_indexes`); minds holding none are left out."""
        out: dict[str, dict[str, Any]] = {}
        for name, entry in list(self._open.items()):
            found = entry.reader.memory_indexes()
            if found is not None:
                out[name] = found
        return out

    def queued(self, mind_id: str) -> int:
        """Write-ops waiting in an open mind's actor (0 when it is not open)."""
        entry = self._open.get(mind_id)
        return 0 if entry is None or entry.actor is None else entry.actor.queued

    async def _get(self, mind_id: str, create: bool, *, write: bool = True, pin: bool = False
                   ) -> _Open:
        """The open mind; a read (``write=False``) of an existing, migrated file opens only
        its reader — a scope-wide recall reads dozens of minds it does not write — and the
        writer and actor follow on its first write.

        Files are opened and closed outside the host's lock (a scope-wide recall opens a dozen
        minds at once; under one lock they opened one after another): a mind being opened or
        closed has a future in ``_busy`` that other callers for the same mind wait on."""
        path = self.path(mind_id)
        while True:
            async with self._lock:  # checked under the lock: a release closes what opened
                self.check_owner(mind_id)
                entry = self._open.get(mind_id)
                busy = self._busy.get(mind_id)
                if busy is None:
                    if entry is not None and (not write or entry.actor is not None):
                        self._open.move_to_end(mind_id)
                        entry.pins += pin
                        return entry
                    if entry is None and not create and not path.exists():
                        raise NotFoundError(f"mind {mind_id} does not exist")
                    busy = self._busy[mind_id] = asyncio.get_running_loop().create_future()
                    break
            await asyncio.shield(busy)  # opened (or closed) by another caller: look again
        victims: list[_Open] = []
        try:
            if entry is None:
                entry = await self._open_new(mind_id, path, write)
            else:
                await self._open_writer(mind_id, path, entry)
            async with self._lock:
                if not self._closed:
                    self._open[mind_id] = entry
                    self._open.move_to_end(mind_id)
                    entry.pins += pin  # before the evictions below yield: a lease keeps it
                    victims = self._over_cap(keep=mind_id)
        finally:
            self._settle(mind_id, busy)
        if self._open.get(mind_id) is not entry:  # the host closed meanwhile
            await self._stop(entry)
            raise StorageError(f"the mind host is closed: {mind_id} was not opened")
        if victims:  # closed in the background: no await between opening and the caller's
            closing = asyncio.ensure_future(self._close_all(victims))  # first read of it
            closing.add_done_callback(_log_failure)
        return entry

    async def _open_new(self, mind_id: str, path: Path, write: bool) -> _Open:
        if not write and path.exists():
            reader = await Mind.open(path, readonly=True)
            try:
                if self.fence is not None:
                    await fencing.check(reader.db, self.fence)
                stale = await needs_migration(reader.db)
            except BaseException:
                await reader.close()
                raise
            if not stale:
                return _Open(mind_id, None, reader)
            await reader.close()  # the writer migrates it first
        return await self._open_writer(mind_id, path, None)

    def _settle(self, mind_id: str, busy: asyncio.Future[None]) -> None:
        if self._busy.get(mind_id) is busy:
            del self._busy[mind_id]
        busy.set_result(None)

    async def _open_writer(self, mind_id: str, path: Path, entry: _Open | None) -> _Open:
        """Open the writer (migrating the file) and start the actor, for ``entry`` (a mind
        open for reads) or with a new reader."""
        if self.fence is not None and path.exists():  # before migrating it: no write at all
            await asyncio.to_thread(fencing.check_file, path, self.fence)
        writer = await Mind.open(path)
        try:
            if self.fence is not None:  # checked and recorded in one write transaction
                await fencing.claim(writer.db, self.fence)
            reader = entry.reader if entry is not None else await Mind.open(path, readonly=True)
        except BaseException:
            await writer.close()
            raise
        # the hook gets the reader itself: looking it up through the host from inside
        # an actor would deadlock with close() (which holds the lock while stopping)
        writer.share_index(reader)  # one in-memory vector index per mind, not two
        hook = self._on_commit(mind_id, reader) if self._on_commit else None
        adopt = self._on_handed(mind_id, reader) \
            if self._on_handed and not self._settings.one_shot else None
        actor = MindActor(
            writer, self._handlers, max_ops=self._settings.max_ops,
            max_wait=self._settings.max_wait, mailbox=self._settings.mailbox,
            bulk_weight=self._settings.bulk_weight, bulk_frames=self._settings.bulk_frames,
            part_frames=self._settings.part_frames,
            urgent_weight=self._settings.urgent_weight,
            on_commit=hook, on_handed=adopt, one_shot=self._settings.one_shot, name=mind_id,
        )
        actor.start()
        if entry is None:
            return _Open(mind_id, actor, reader)
        entry.actor = actor
        return entry

    def others_writing(self, mind_id: str) -> bool:
        """Whether a writer in another process has the mind open
        (:mod:`mind.storage.writer_locks`)."""
        entry = self._open.get(mind_id)
        if entry is not None and entry.actor is not None and entry.actor.locks is not None:
            return entry.actor.locks.others_present()
        return others_writing(self.path(mind_id))

    async def actor(self, mind_id: str, *, create: bool = True) -> MindActor:
        actor = (await self._get(mind_id, create)).actor
        assert actor is not None  # _get(write=True) started it
        return actor

    async def reader(self, mind_id: str, *, create: bool = True) -> Mind:
        return (await self._get(mind_id, create, write=False)).reader

    async def submit(self, mind_id: str, op: object, *, create: bool = True) -> object:
        """Apply ``op`` through the mind's actor; the mind stays open (pinned) until it is
        committed, however many other minds open meanwhile."""
        entry = await self._get(mind_id, create, pin=True)
        try:
            assert entry.actor is not None  # _get(write=True) started it
            return await entry.actor.submit(op)
        finally:
            await self._release(entry)

    @asynccontextmanager
    async def lease(self, mind_id: str, *, create: bool = True) -> AsyncIterator[Mind]:
        """The mind's reader, kept open until the block ends: the LRU closes no leased mind
        (it may hold more than ``max_open`` meanwhile, and catches up when leases end) — a
        reader handed out by :meth:`reader` may be closed by the next mind opened."""
        entry = await self._get(mind_id, create, write=False, pin=True)
        try:
            yield entry.reader
        finally:
            await self._release(entry)

    async def _release(self, entry: _Open) -> None:
        """Unpin; close what the LRU held open past its cap for pinned minds."""
        entry.pins -= 1
        if len(self._open) > self.max_open and not self._closed:
            async with self._lock:
                victims = self._over_cap()
            await self._close_all(victims)

    def _over_cap(self, keep: str | None = None) -> list[_Open]:
        """Take least recently used minds out while over the cap, never a leased one, one
        being opened, ``keep`` or the personal mind (every scope-wide recall searches it, and
        it is the one likely to be large: reloading a 100,000-frame index took seconds — it
        closes when idle); the caller closes them (:meth:`_close_all`) once the lock
        is released. Call with the lock held."""
        taken: list[_Open] = []
        for victim in [m for m, e in self._open.items() if not e.pins and m != keep
                       and m not in self._busy and m != PERSONAL_MIND]:
            if len(self._open) <= self.max_open:
                break
            entry = self._open.pop(victim)
            entry.closing = self._busy[victim] = asyncio.get_running_loop().create_future()
            taken.append(entry)
        return taken

    async def _close_all(self, entries: list[_Open]) -> None:
        for entry in entries:
            try:
                await self._stop(entry)
            finally:
                assert entry.closing is not None
                self._settle(entry.name, entry.closing)
        if entries:
            self._trimmer.request()  # what the closed minds freed goes back to the OS

    async def _stop(self, entry: _Open) -> None:
        if entry.actor is not None:
            await entry.actor.stop()
        await entry.reader.close()
        log.info("mind %s closed", entry.name)

    async def _close_one(self, mind_id: str) -> None:
        entry = self._open.pop(mind_id, None)
        if entry is not None:
            await self._stop(entry)

    async def close_mind(self, mind_id: str) -> None:
        while (busy := self._busy.get(mind_id)) is not None:
            await asyncio.shield(busy)  # being opened or closed: then close what is open
        async with self._lock:
            await self._close_one(mind_id)

    def owns(self, mind_id: str) -> bool:
        """Does this host's shard own ``mind_id`` (always, unsharded)?"""
        return self.fence is None or self.owner is None or self.owner(mind_id) == self.fence.shard

    def serves(self, mind_id: str) -> bool:
        """Does this host serve ``mind_id``: its shard owns it and it is not moving away or
        on its way here (what scope-wide passes cover)."""
        return self.owns(mind_id) and (self.moves is None or self.moves.refusal(mind_id) is None)

    def check_owner(self, mind_id: str) -> None:
        """Refuse a mind another shard owns by the shard map, before any file is opened or
        created: its file here (left by a move) or a new one would make a second writer."""
        self._check_owner_by_map(mind_id)
        refusal = None if self.moves is None else self.moves.refusal(mind_id)
        if refusal is not None:
            raise refusal

    def list_minds(self) -> list[str]:
        """The minds with a file here that this host owns (a sharded host skips the files a
        move left behind)."""
        return [m for m in list_minds(self.data_dir) if self.serves(m)]

    # -- moves between shards (actors/moves.py) ---------------------------------------------

    def _book(self) -> tuple[MoveBook, Fence]:
        if self.moves is None or self.fence is None:
            raise StorageError("minds move only between the hosts of a sharded deployment")
        return self.moves, self.fence

    async def holdings(self) -> list[dict[str, object]]:
        """Every mind file here, owned or not, with its fencing record and size; and the
        minds departed and awaited (what a rebalance plans from)."""
        book, _ = self._book()

        def look() -> list[dict[str, object]]:
            rows: list[dict[str, object]] = []
            for mind_id in list_minds(self.data_dir):
                path = self.path(mind_id)
                found = fencing.read_file_fence(path)
                rows.append({"mind_id": mind_id, "bytes": path.stat().st_size,
                             "fence": None if found is None else
                             {"shard": found.shard, "epoch": found.epoch}})
            return rows

        rows = await asyncio.to_thread(look)
        for d in book.departed.values():
            rows.append({"mind_id": d.mind_id,
                         "departed": {"to": d.to, "epoch": d.epoch, "state": d.state,
                                      "url": d.url, "authorized": d.authorized}})
        rows.extend({"mind_id": m, "awaited": True} for m in sorted(book.awaited))
        return rows

    def expect(self, mind_id: str, metadata: str | None = None) -> None:
        """Step 1 of a move here: refuse ``mind_id`` until it is admitted (a no-op once it is:
        a resumed rebalance). ``metadata``: a workspace's, checked by the caller."""
        book, fence = self._book()
        self._check_owner_by_map(mind_id)
        path = self.path(mind_id)
        if path.exists() and fencing.read_file_fence(path) == fence:
            return
        if path.exists():
            raise ConflictError(f"{mind_id} already has a file here not fenced for "
                                f"{fence.shard}: move it aside before moving the mind here")
        book.expect(mind_id, metadata)

    async def release(self, mind_id: str, to: Fence, url: str, authorized: Authority
                      ) -> Departure:
        """Step 2 of a move away: refuse the mind, close it (its acknowledged writes are in
        the file), hand the file's fencing record to ``to`` (at ``url``, which the operator's
        configuration named: ``authorized``)."""
        book, fence = self._book()
        path = self.path(mind_id)
        if mind_id not in book.departed:
            if not path.exists():
                raise NotFoundError(f"mind {mind_id} has no file on {fence.shard}")
            book.depart(Departure(mind_id, to.shard, to.epoch, url, "released", authorized))
        await self.close_mind(mind_id)
        if path.exists():
            await asyncio.to_thread(fencing.hand_over, path, fence, to)
        return book.departed[mind_id]

    async def snapshot(self, mind_id: str, dest: Path) -> None:
        """Step 3: a consistent copy of a released mind's file at ``dest``."""
        book, _ = self._book()
        path = self.path(mind_id)
        if mind_id not in book.departed or not path.exists():
            raise NotFoundError(f"mind {mind_id} is not released here (release it first)")
        await asyncio.to_thread(fencing.snapshot, path, dest)

    async def admit(self, mind_id: str, copy: Path) -> None:
        """Step 4 of a move here: put the copy (on this data dir's file system) in place, with
        the metadata its ``expect`` carried, once it proves to be an awaited mind, fenced for
        this shard, that this host can open (migrated, intact)."""
        book, fence = self._book()
        self._check_owner_by_map(mind_id)
        path = self.path(mind_id)
        if path.exists():
            if fencing.read_file_fence(path) != fence:
                raise ConflictError(f"{mind_id} already has another file on {fence.shard}")
            copy.unlink(missing_ok=True)  # admitted before: a resumed rebalance
            book.arrived(mind_id)
            return
        if mind_id not in book.awaited:
            raise ConflictError(f"{mind_id} is not awaited here: expect it first")
        metadata = book.awaited[mind_id]
        if metadata is None and mind_id != PERSONAL_MIND:
            raise ConflictError(f"{mind_id} was expected without its workspace metadata: "
                                "expect it again with them")
        found = await asyncio.to_thread(fencing.read_file_fence, copy)
        error = fencing.refusal("the copy", found, fence)
        if found is None or error is not None:
            raise error or fencing.FencedError(
                f"the copy of {mind_id} carries no fencing record: release it on its holder")
        await verify_copy(copy)
        make_private_dir(path.parent)
        if metadata is not None:
            write_private_text(path.parent / WORKSPACE_META, metadata)
        os.chmod(copy, 0o600)
        os.replace(copy, path)
        book.arrived(mind_id)

    def incoming_path(self, mind_id: str) -> Path:
        """Where an arriving copy of ``mind_id`` is written before :meth:`admit`: only for a
        mind awaited here (or admitted already: a resumed move), checked before any byte."""
        book, _ = self._book()
        self._check_owner_by_map(mind_id)
        if mind_id not in book.awaited and not self.path(mind_id).exists():
            raise ConflictError(f"{mind_id} is not awaited here: expect it first")
        return book.incoming(mind_id)

    def cancel_arrival(self, mind_id: str) -> bool:
        """Undo step 1: stop refusing ``mind_id`` (False: it was not awaited)."""
        book, _ = self._book()
        return book.cancel_arrival(mind_id)

    def cancel_departure(self, mind_id: str) -> Departure:
        """Undo a move away that did not complete: the departure is forgotten and the file,
        still here, fenced for this host again. Refused for a mind the shard map gives another
        shard, and once the file was retired (it lives on the new owner)."""
        book, fence = self._book()
        self._check_owner_by_map(mind_id)
        gone = book.departed.get(mind_id)
        if gone is None:
            raise NotFoundError(f"mind {mind_id} has no departure recorded on this host")
        path = self.path(mind_id)
        if gone.state == "retired" or not path.exists():
            raise ConflictError(f"{mind_id}'s file left this host: it lives on {gone.to}")
        fencing.hand_over(path, Fence(gone.to, gone.epoch), fence)
        return book.cancel_departure(mind_id)

    def metadata(self, mind_id: str) -> str | None:
        """(blocking) A workspace's metadata file as a move carries it (None: personal)."""
        meta = self.path(mind_id).parent / WORKSPACE_META
        return meta.read_text(encoding="utf-8") if mind_id != PERSONAL_MIND and meta.exists() \
            else None

    def retire(self, mind_id: str) -> None:
        """Step 5 of a move away, once the new owner holds the mind (the caller asked it): the
        released file is deleted (the departure stays)."""
        book, _ = self._book()
        book.retire(mind_id, self.path(mind_id))

    def _check_owner_by_map(self, mind_id: str) -> None:
        if not self.owns(mind_id):
            assert self.owner is not None and self.fence is not None
            raise fencing.FencedError(
                f"mind {mind_id} belongs to {self.owner(mind_id)} by the shard map, not to "
                f"this host's {self.fence.shard}: route the request to its owner",
                owner=self.owner(mind_id))

    def abort(self) -> None:
        """Release every mind without the event loop (after a failed graceful shutdown): stops
        the connection threads so the process can exit; uncommitted work rolls back and is
        re-delivered (nothing unacknowledged was promised)."""
        self._closed = True
        for entry in self._open.values():
            if entry.actor is not None:
                entry.actor.mind.abort()
            entry.reader.abort()
        self._open.clear()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        while self._busy:  # opens finish (and see the host closed), LRU closes complete
            await asyncio.gather(*(asyncio.shield(f) for f in list(self._busy.values())))
        async with self._lock:
            for mind_id in list(self._open):
                await self._close_one(mind_id)

    async def __aenter__(self) -> MindHost:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
