"""``Mind``: one mind file with all its layers, usable on its own (no queue, no actor)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from mind.awareness import AwarenessLayer
from mind.frames.compaction import CompactResult, compact
from mind.frames.forget import Erasure, erase_frame, scrub_wal
from mind.frames.outbox import Outbox
from mind.frames.sessions import SessionStore
from mind.frames.store import FrameStore
from mind.identity import IdentityLayer
from mind.knowledge.store import KnowledgeGraph
from mind.retrieval.reconcile import ReconcileResult, reconcile_indexes
from mind.retrieval.vectors import Fingerprint, VectorStore
from mind.storage.db import Database
from mind.storage.migrate import migrate
from mind.storage.private_files import make_private_dir

if TYPE_CHECKING:  # imported on first use: a process that only writes frames needs neither
    from mind.retrieval.keyword_index import KeywordIndex
    from mind.retrieval.vector_index import VectorIndex


class Mind:
    """All layers of one mind over one connection.

    Open the writer with ``await Mind.open(path)`` (creates and migrates the file) and readers
    with ``await Mind.open(path, readonly=True)``. Use as an async context manager or call
    :meth:`close`.
    """

    def __init__(self, db: Database) -> None:
        self.db = db
        self._index: VectorIndex | None = None
        self._keywords: KeywordIndex | None = None
        self._index_owner: Mind | None = None
        self.identity = IdentityLayer(db)
        self.awareness = AwarenessLayer(db)
        self.sessions = SessionStore(db)
        self.frames = FrameStore(db)
        self.knowledge = KnowledgeGraph(db)
        self.vectors = VectorStore(db)
        self.outbox = Outbox(db)

    @property
    def path(self) -> str:
        return self.db.path

    @classmethod
    async def open(cls, path: str | Path, *, readonly: bool = False) -> Mind:
        target = Path(path)
        if not readonly:
            make_private_dir(target.parent)
        db = await Database.open(target, readonly=readonly)
        try:
            if not readonly:
                await migrate(db)
        except BaseException:
            await db.close()
            raise
        return cls(db)

    async def vector_index(self, known: Fingerprint | None = None) -> VectorIndex | None:
        """The in-memory vector index of this mind file (None until it has vectors);
        ``known``: the fingerprint the caller just read, so it is not read again."""
        if self._index_owner is not None:
            return await self._index_owner.vector_index(known)
        fp = known or await self.vectors.fingerprint()
        if fp is None:
            return None
        if self._index is not None and self._index.dim != fp.dim:  # re-embedded at a new dim
            self._index.close()
            self._index = None
        if self._index is None:
            from mind.retrieval.vector_index import VectorIndex

            self._index = VectorIndex(self.db.path, fp.dim)
        return self._index

    def keyword_index(self) -> KeywordIndex:
        """The in-memory keyword index of this mind file (built on first use by a big mind:
        :mod:`mind.retrieval.keyword_index`)."""
        if self._index_owner is not None:
            return self._index_owner.keyword_index()
        if self._keywords is None:
            from mind.retrieval.keyword_index import KeywordIndex

            self._keywords = KeywordIndex(self.db.path)
        return self._keywords

    def memory_indexes(self) -> dict[str, Any] | None:
        """What this mind holds in memory for search (``hive-mind status``): its vector and
        keyword indexes' :meth:`status` (null until used); None when it holds neither (a
        writer sharing its reader's index reports nothing: the reader does)."""
        if self._index_owner is not None or (self._index is None and self._keywords is None):
            return None
        return {"vector": None if self._index is None else self._index.status(),
                "keyword": None if self._keywords is None else self._keywords.status()}

    def share_index(self, other: Mind) -> None:
        """Use ``other``'s vector index (a writer and a reader of one file need only one)."""
        self._index_owner = other

    async def erase_frame(self, frame_id: int) -> Erasure:
        """Forget a frame and every row derived from it (:mod:`mind.frames.forget`)."""
        return await erase_frame(self.db, frame_id)

    async def scrub_wal(self) -> bool:
        """After a forget's commit: truncate the WAL so old page images leave the disk."""
        return await scrub_wal(self.db)

    async def compact(
        self, max_temp_age_days: float = 30, max_deprecated_age_days: float = 90
    ) -> CompactResult:
        return await compact(self.db, max_temp_age_days, max_deprecated_age_days)

    async def reconcile(self, *, chunk_min_chars: int | None = None) -> ReconcileResult:
        return await reconcile_indexes(self.db, chunk_min_chars=chunk_min_chars)

    async def intact(self) -> bool:
        """SQLite's ``quick_check`` passes (a mind file that arrived from elsewhere)."""
        return bool(await self.db.fetchval("PRAGMA quick_check(1)") == "ok")

    async def stats(self) -> dict[str, Any]:
        return {
            "frames": await self.frames.get_stats(),
            "entities": await self.knowledge.get_entity_count(),
            "pending_index": await self.outbox.count(),
            "vectors": await self.vectors.counts(),
        }

    def abort(self) -> None:
        """Synchronous close for a process whose event loop already stopped."""
        self._close_indexes()
        self.db.abort()

    async def close(self) -> None:
        self._close_indexes()
        await self.db.close()

    def _close_indexes(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None
        if self._keywords is not None:
            self._keywords.close()
            self._keywords = None

    async def __aenter__(self) -> Mind:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
