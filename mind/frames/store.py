"""FrameStore: writes of I/P/B frames, every derived index kept consistent.

Every write keeps the derived indexes consistent: the batch writer adds new frames' FTS rows and
keyword context (:mod:`mind.storage.search_context`, the previous turn taken from the batch or
the session's last turn), and the schema's triggers and foreign keys do the rest: FTS rows
follow updates/deletes, a content change drops the frame's chunks and
vectors and puts it back in the ``pending_index`` outbox, a delete cascades to chunks, vectors,
the entity bridge, B-frame references and the outbox, and nulls dependants' ``base_frame_id``.

Bulk writes (:meth:`FrameStore.insert_many`) cost a fixed handful of statements per batch:
ids are assigned inside the write transaction, rows go in 64 to a statement
(:func:`~mind.storage.sqlutil.insert_rows`), and their FTS and outbox rows with one
``INSERT … SELECT`` each over the batch's new ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mind.constants import IMPORTANCE_RANK
from mind.errors import NotFoundError, ValidationError
from mind.frames.content_hash import hash_frame_content
from mind.frames.model import Frame, FrameToWrite, NewFrame, SaveResult
from mind.frames.queries import FrameQueries, frames_by_id
from mind.ids import validate_id
from mind.storage.db import SyncDb
from mind.storage.jsonfields import dump_object
from mind.storage.search_context import CONTEXT_CHARS, frame_context
from mind.storage.sqlutil import chunked, insert_rows, placeholders
from mind.timeutil import normalize_ts, now_iso
from vocabulary.enums import FRAME_SOURCES, FRAME_TYPES, IMPORTANCES, FrameSource, Importance
from vocabulary.limits import MAX_FRAME_REFERENCES, frame_text

_INSERT = (
    "INSERT INTO memory_frames(id, frame_type, gop_id, t, base_frame_id, content, importance, "
    "source, access_count, created_at, recorded_at, last_accessed, content_hash, metadata, "
    "external_id, search_context)"
)
_ROW = "(?,?,?,?,?,?,?,?,0,?,?,?,?,?,?,?)"


_NEW_FTS = (
    "INSERT INTO memory_frames_fts(rowid, content, search_context) "
    "SELECT id, content, search_context FROM memory_frames WHERE id BETWEEN ?1 AND ?2"
)
"""New frames' FTS rows: one statement for the batch's ids (no insert trigger, no row of
values from Python per frame: see ``python -m bench.components.bulk_write``)."""
_NEW_OUTBOX = (
    "INSERT OR IGNORE INTO pending_index(frame_id, reason, enqueued_at) "
    "SELECT id, 'new', ?3 FROM memory_frames WHERE id BETWEEN ?1 AND ?2"
)


def validate_content(content: object) -> str:
    """Frame content by the rule of :func:`vocabulary.limits.frame_text`."""
    try:
        return frame_text(content)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None


def _validate(item: FrameToWrite, *, text: bool = True) -> None:
    """The rules of a frame to write; ``text``: its session id and content too."""
    if text:
        validate_id(item.gop_id)
        validate_content(item.content)
    if item.frame_type not in FRAME_TYPES:
        raise ValidationError(f"frame_type must be one of {FRAME_TYPES}, got {item.frame_type!r}")
    if item.importance not in IMPORTANCES:
        raise ValidationError(f"importance must be one of {IMPORTANCES}, got {item.importance!r}")
    if item.source not in FRAME_SOURCES:
        raise ValidationError(f"source must be one of {FRAME_SOURCES}, got {item.source!r}")
    if item.frame_type == "B" and (item.base_frame_id is None or not item.references):
        raise ValidationError("a B-frame needs a base_frame_id and the frames it references")
    if item.references and item.frame_type != "B":
        raise ValidationError("only a B-frame references other frames")
    if len(item.references or ()) > MAX_FRAME_REFERENCES:
        raise ValidationError(f"a B-frame references at most {MAX_FRAME_REFERENCES} frames")
    if item.frame_type == "I" and item.base_frame_id is not None:
        raise ValidationError("an I-frame has no base frame")
    if item.external_id is not None and not (0 < len(item.external_id) <= 512):
        raise ValidationError("external_id must be 1..512 characters")


class FrameStore(FrameQueries):
    """Writer-side frame operations (reads are inherited from :class:`FrameQueries`)."""

    # -- create -----------------------------------------------------------------------------

    async def create_i_frame(
        self,
        gop_id: str,
        content: str,
        importance: Importance = "normal",
        source: FrameSource = "user_stated",
        created_at: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> SaveResult:
        item = NewFrame(gop_id, content, "I", importance, source, None, created_at, metadata)
        return (await self.insert_many([item]))[0]

    async def create_p_frame(
        self,
        gop_id: str,
        content: str,
        base_frame_id: int | None = None,
        importance: Importance = "normal",
        source: FrameSource = "user_stated",
        created_at: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Frame:
        item = NewFrame(
            gop_id, content, "P", importance, source, base_frame_id, created_at, metadata
        )
        return (await self.insert_many([item]))[0].frame

    async def create_b_frame(
        self,
        gop_id: str,
        description: str,
        base_frame_id: int,
        references: Sequence[int],
        source: FrameSource = "user_stated",
    ) -> Frame:
        item = NewFrame(
            gop_id, description, "B", "normal", source, base_frame_id, references=list(references)
        )
        return (await self.insert_many([item]))[0].frame

    async def insert_many(self, items: Sequence[FrameToWrite], *,
                          checked: bool = False) -> list[SaveResult]:
        """Write many frames in one transaction; results align with ``items``. ``checked``: the
        items' session ids and contents passed these rules already, and their source times are
        in the house format (a write-op's frames, checked when the op was built:
        :mod:`queue_schemas.ops`), so they are not scanned again."""
        for item in items:
            _validate(item, text=not checked)
        if not items:
            return []
        async with self._db.transaction():
            return await self._db.run(lambda db: _BatchWriter(db, items, checked).run())

    # -- modify -----------------------------------------------------------------------------

    async def touch(self, frame_ids: Sequence[int]) -> None:
        """Record an access (recall hit or duplicate save) on each frame."""
        now = now_iso()
        async with self._db.transaction():
            await self._db.executemany(
                "UPDATE memory_frames SET access_count = access_count + 1, last_accessed = ? "
                "WHERE id = ?",
                [(now, fid) for fid in frame_ids],
            )

    async def update(
        self,
        frame_id: int,
        content: str | None = None,
        importance: Importance | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Frame:
        """Change a frame; a content change re-queues it for indexing (triggers)."""
        if importance is not None and importance not in IMPORTANCES:
            raise ValidationError(f"importance must be one of {IMPORTANCES}, got {importance!r}")
        async with self._db.transaction():
            current = await self.get(frame_id)
            if current is None:
                raise NotFoundError(f"frame {frame_id} not found")
            new_content = current.content if content is None else validate_content(content)
            await self._db.execute(
                "UPDATE memory_frames SET content = ?, content_hash = ?, importance = ?, "
                "metadata = ? WHERE id = ?",
                (
                    new_content,
                    hash_frame_content(new_content),
                    importance or current.importance,
                    dump_object(current.metadata if metadata is None else metadata),
                    frame_id,
                ),
            )
            updated = await self.get(frame_id)
        assert updated is not None
        return updated

    async def delete(self, frame_id: int) -> bool:
        """Delete a frame and everything derived from it. True iff it existed."""
        async with self._db.transaction():
            _, count = await self._db.execute("DELETE FROM memory_frames WHERE id = ?", (frame_id,))
        return count > 0

class _BatchWriter:
    """One bulk insert inside an open transaction, in the connection's thread (one round trip:
    :meth:`Database.run`)."""

    def __init__(self, db: SyncDb, items: Sequence[FrameToWrite], checked: bool) -> None:
        self.db = db
        self.items = items
        self.checked = checked
        self.now = now_iso()
        self.hashes = [hash_frame_content(i.content) for i in items]

    def _lookup(self, column: str, keys: Sequence[str], where: str = "") -> dict[str, int]:
        """The newest frame of each of ``keys`` in ``column`` (among the frames ``where``, an
        SQL condition, admits)."""
        found: dict[str, int] = {}
        for part in chunked(list(dict.fromkeys(keys))):
            rows = self.db.fetchall(
                f"SELECT {column}, MAX(id) FROM memory_frames "
                f"WHERE {column} IN ({placeholders(len(part))}) {where} GROUP BY {column}",
                part,
            )
            found.update({r[0]: r[1] for r in rows})
        return found

    def run(self) -> list[SaveResult]:
        items = self.items
        dedup_keys = [h for i, h in zip(items, self.hashes, strict=True) if _dedups(i)]
        by_hash = self._lookup("content_hash", dedup_keys, _SAVED) if dedup_keys else {}
        ext_keys = [i.external_id for i in items if i.external_id]
        by_ext = self._lookup("external_id", ext_keys) if ext_keys else {}
        gops = list(dict.fromkeys(i.gop_id for i in items))
        insert_rows(self.db, "INSERT OR IGNORE INTO sessions(gop_id)", "(?)", [(g,) for g in gops])
        next_t, last_turn = self._last_turns(gops)
        latest_i = self._latest_i(gops) if _needs_base(items) else {}
        next_id = self._next_id()

        rows: list[tuple[Any, ...]] = []
        refs: list[tuple[int, int, int]] = []
        results: list[SaveResult | int] = []  # int = id of an existing frame to fetch
        hits: dict[int, list[Importance]] = {}
        for item, digest in zip(items, self.hashes, strict=True):
            existing = by_ext.get(item.external_id) if item.external_id else None
            if existing is None and _dedups(item):
                existing = by_hash.get(digest)
                if existing is not None:
                    hits.setdefault(existing, []).append(item.importance)
            if existing is not None:
                results.append(existing)
                continue
            fid = next_id
            next_id += 1
            base = item.base_frame_id
            if item.frame_type == "P" and base is None:
                base = latest_i.get(item.gop_id)
                if base is None:
                    raise ValidationError(
                        f"P-frame in session {item.gop_id!r} has no base and no I-frame to follow"
                    )
            if item.frame_type == "I":
                latest_i[item.gop_id] = fid
            t = next_t.get(item.gop_id, 0)
            next_t[item.gop_id] = t + 1
            created = item.created_at or self.now
            if item.created_at and not self.checked:
                created = normalize_ts(item.created_at)
            context = frame_context(created, item.gop_id, last_turn.get(item.gop_id))
            last_turn[item.gop_id] = item.content
            rows.append(
                (
                    fid,
                    item.frame_type,
                    item.gop_id,
                    t,
                    base,
                    item.content,
                    item.importance,
                    item.source,
                    created,
                    self.now,
                    self.now,
                    digest,
                    dump_object(item.metadata),
                    item.external_id,
                    context,
                )
            )
            if item.references:
                refs.extend(
                    (fid, ref, pos) for pos, ref in enumerate(dict.fromkeys(item.references))
                )
            if item.external_id:
                by_ext[item.external_id] = fid
            if _dedups(item):
                by_hash[digest] = fid
            results.append(SaveResult(_frame_from_row(rows[-1], item.metadata), created=True))

        self._check_bases(rows)
        if rows:
            insert_rows(self.db, _INSERT, _ROW, rows)
            new_ids = (rows[0][0], rows[-1][0], self.now)  # ids were given in order, no gap
            self.db.execute(_NEW_FTS, new_ids[:2])
            self.db.execute(_NEW_OUTBOX, new_ids)
        if refs:
            self._check_refs(refs)
            self.db.executemany(
                "INSERT OR IGNORE INTO frame_references(frame_id, ref_frame_id, position) "
                "VALUES (?,?,?)",
                refs,
            )
        return self._resolve(results, hits)

    def _last_turns(self, gops: list[str]) -> tuple[dict[str, int], dict[str, str]]:
        """Each session's next turn number and its last turn's content (the next turn's
        context), for the sessions that have turns."""
        next_t: dict[str, int] = {}
        last: dict[str, str] = {}
        for part in chunked(gops):
            rows = self.db.fetchall(  # the bare column is MAX(t)'s row (SQLite's rule)
                f"SELECT gop_id, MAX(t), substr(content, 1, {CONTEXT_CHARS}) FROM memory_frames "
                f"WHERE gop_id IN ({placeholders(len(part))}) GROUP BY gop_id",
                part,
            )
            for gop, t, content in rows:
                next_t[gop] = t + 1
                last[gop] = content
        return next_t, last

    def _latest_i(self, gops: list[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for part in chunked(gops):
            rows = self.db.fetchall(
                "SELECT gop_id, id, MAX(t) FROM memory_frames WHERE frame_type = 'I' "
                f"AND gop_id IN ({placeholders(len(part))}) GROUP BY gop_id",
                part,
            )
            out.update({r[0]: r[1] for r in rows})
        return out

    def _next_id(self) -> int:
        seq = self.db.fetchval(
            "SELECT seq FROM sqlite_sequence WHERE name = 'memory_frames'", default=0
        )
        top = self.db.fetchval("SELECT MAX(id) FROM memory_frames", default=0)
        return int(max(seq, top)) + 1

    def _check_bases(self, rows: list[tuple[Any, ...]]) -> None:
        """Each base is an earlier frame (no frame is its own base: the links point back in
        time, so they form no cycle); a P-frame's base is an I-frame of its own session."""
        new = {r[0]: (r[1], r[2]) for r in rows}
        wanted = sorted({r[4] for r in rows if r[4] is not None and r[4] not in new})
        stored = self._require_frames(wanted, "base frame")
        kinds = {**{fid: (f.frame_type, f.gop_id) for fid, f in stored.items()}, **new}
        for fid, ftype, gop, base in ((r[0], r[1], r[2], r[4]) for r in rows):
            if base is None:
                continue
            if base >= fid:
                raise ValidationError(f"base frame {base} is not an earlier frame")
            if ftype != "P":
                continue
            base_type, base_gop = kinds[base]
            if base_type != "I":
                raise ValidationError(
                    f"frame {base} is a {base_type}-frame: a P-frame updates an I-frame")
            if base_gop != gop:
                raise ValidationError(f"frame {base} is in session {base_gop!r}, not {gop!r}: "
                                      "a P-frame updates an I-frame of its own session")

    def _check_refs(self, refs: list[tuple[int, int, int]]) -> None:
        """Each reference is an earlier frame (none refers to itself or a later one: no
        cycle)."""
        new_ids = {r[0] for r in refs}
        self._require_frames(sorted({r[1] for r in refs if r[1] not in new_ids}), "reference")
        for fid, ref, _ in refs:
            if ref >= fid:
                raise ValidationError(f"reference {ref} is not an earlier frame")

    def _require_frames(self, ids: list[int], what: str) -> dict[int, Frame]:
        if not ids:
            return {}
        found = frames_by_id(self.db, ids)
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFoundError(f"{what} {missing[0]} not found")
        return found

    def _resolve(
        self, results: list[SaveResult | int], hits: dict[int, list[Importance]]
    ) -> list[SaveResult]:
        existing_ids = [r for r in results if isinstance(r, int)]
        existing = frames_by_id(self.db, existing_ids) if existing_ids else {}
        upgraded: set[int] = set()
        for fid, importances in hits.items():
            frame = existing[fid]
            best = max(importances, key=IMPORTANCE_RANK.__getitem__)
            if IMPORTANCE_RANK[best] > IMPORTANCE_RANK[frame.importance]:
                frame.importance = best
                upgraded.add(fid)
            frame.access_count += len(importances)
            frame.last_accessed = self.now
        if hits:
            self.db.executemany(
                "UPDATE memory_frames SET access_count = access_count + ?, last_accessed = ?, "
                "importance = ? WHERE id = ?",
                [
                    (len(imps), self.now, existing[fid].importance, fid)
                    for fid, imps in hits.items()
                ],
            )
        out: list[SaveResult] = []
        for r in results:
            if isinstance(r, SaveResult):
                out.append(r)
            else:
                out.append(SaveResult(existing[r], created=False, upgraded=r in upgraded))
        return out


_SAVED = "AND external_id IS NULL"
"""The frames a dedup save may match: saved without an external id (the partial content-hash
index holds only these, :mod:`mind.storage.schema`)."""


def _dedups(item: FrameToWrite) -> bool:
    return item.frame_type == "I" and item.dedup and not item.external_id


def _needs_base(items: Sequence[FrameToWrite]) -> bool:
    return any(i.frame_type == "P" and i.base_frame_id is None for i in items)


def _frame_from_row(row: tuple[Any, ...], metadata: Mapping[str, Any] | None) -> Frame:
    """The new frame as written. Its ``metadata`` is the caller's dict itself: not re-parsed
    JSON, and not a copy (one object fewer per frame of an import for the garbage collector to
    walk — a full collection among an import's objects took ~0.1 s on a 2-core AMD EPYC)."""
    (fid, ftype, gop, t, base, content, imp, src, created, recorded, last, digest, _, ext,
     _context) = row
    return Frame(fid, ftype, gop, t, base, content, imp, src, 0, created, recorded, last, digest,
                 metadata if isinstance(metadata, dict) else dict(metadata or {}), ext)
