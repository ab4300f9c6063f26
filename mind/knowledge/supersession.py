"""Supersession pairs: which stored turns replace which (rules: :mod:`mind.knowledge.updates`).

Found while a batch's index results are applied (:func:`mind.cognify_apply.apply_index`), in the
batch's own transaction, in both directions, so the order frames are indexed in does not matter
(a ChatGPT export lists its newest conversation first):

* a turn of the batch that decides or changes something is paired with the earlier turns it may
  replace;
* every turn of the batch is paired with later update turns already stored.

The turns looked at for a frame are its conversation's turns within
:data:`mind.knowledge.updates.SAME_SESSION_WINDOW` of it, the frames its vector is nearest to
(the link search's hits, cosine ≥ :data:`CANDIDATE_FLOOR`) and the batch itself. A pair is stored
in ``frame_supersessions`` with the newer turn's source time as the older one's ``valid_to``; both
ends cascade, so forgetting the newer turn makes the older one current again. ``frame_updates``
keeps which stored turns carry a cue.

A save that says what it updates (a P-frame on its base I-frame) is an **explicit** pair
(:func:`record_updates`, cue :data:`EXPLICIT`, written with the frame): no rule is asked, the
heuristic pairs never replace it and it is never dropped to keep a turn's nearest pairs.

Recall reads the pairs of its candidates (:func:`pairs_sync`, in the trip that reads their
frames); the graph view shows, for an entity, the statements about it that were updated and
what replaced them (:func:`history`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mind.knowledge.updates import (
    BACK_REFERENCE_COSINE,
    MAX_SUPERSEDED,
    SAME_SESSION_WINDOW,
    Statement,
    supersedes,
    update_cue,
)
from mind.storage.db import Database, SyncDb
from mind.storage.sqlutil import chunked, placeholders
from mind.timeutil import now_iso

if TYPE_CHECKING:  # numpy loads with the first vectors compared
    import numpy as np

EXPLICIT = "explicit"  # the cue of a pair a save declared (a P-frame and its base)
CANDIDATE_FLOOR = BACK_REFERENCE_COSINE  # the loosest cosine floor any pair may pass
CANDIDATES_PER_FRAME = 16  # nearest frames looked at per frame of a batch
WINDOW = SAME_SESSION_WINDOW


class Similarities(Protocol):
    """What the pairs need of the mind's vector index (:mod:`mind.retrieval.vector_index`)."""

    async def similarities(self, query: np.ndarray, frame_ids: list[int]
                           ) -> dict[int, float]: ...


@dataclass(frozen=True, slots=True)
class Position:
    """A frame's place: its conversation and turn, and whether it carries a cue."""

    frame_id: int
    session: str
    t: int
    cued: bool = False


@dataclass(slots=True)
class Candidates:
    """What the async half of apply gathered for a batch: the cosine of each pair to look at
    and the cues of the batch's frames."""

    cosine: dict[tuple[int, int], float] = field(default_factory=dict)
    cues: dict[int, str] = field(default_factory=dict)
    stored_cued: list[int] = field(default_factory=list)  # recent stored frames with a cue

    def add(self, a: int, b: int, sim: float) -> None:
        if a != b:
            self.cosine[(min(a, b), max(a, b))] = float(sim)


def positions_sync(db: SyncDb, frame_ids: Sequence[int]
                   ) -> tuple[list[Position], list[Position], dict[int, str]]:
    """The batch's frames, the stored turns of their conversations within the window of them
    (with their cue flag) and the batch's texts: a query per conversation of the batch."""
    batch: list[Position] = []
    texts: dict[int, str] = {}
    for part in chunked(list(frame_ids)):
        for r in db.fetchall("SELECT id, gop_id, t, content FROM memory_frames "
                             f"WHERE id IN ({placeholders(len(part))})", part):
            batch.append(Position(r[0], r[1], r[2]))
            texts[r[0]] = r[3]
    spans: dict[str, tuple[int, int]] = {}
    for p in batch:
        low, high = spans.get(p.session, (p.t, p.t))
        spans[p.session] = (min(low, p.t), max(high, p.t))
    near: list[Position] = []
    for session, (low, high) in spans.items():
        near += [Position(r[0], session, r[1], bool(r[2])) for r in db.fetchall(
            "SELECT f.id, f.t, u.frame_id IS NOT NULL FROM memory_frames f LEFT JOIN "
            "frame_updates u ON u.frame_id = f.id WHERE f.gop_id = ? AND f.t BETWEEN ? AND ?",
            (session, low - WINDOW, high + WINDOW)) if r[0] not in texts]
    return batch, near, texts


async def gather(db: Database, vectors: Mapping[int, np.ndarray], index: Similarities | None,
                 found: Candidates, recent: int = 0) -> None:
    """Add to ``found`` the batch's cues, the stored frames with a cue among the ``recent``
    newest frame ids (read in the same trip, for the nearest-frame search) and the pairs with a
    cue on one side among the batch itself (alike, or near turns of one conversation) and each
    frame's stored conversation neighbours (cosine from ``index``)."""

    def read(sync: SyncDb) -> tuple[list[Position], list[Position], dict[int, str], list[int]]:
        stored = [r[0] for r in sync.fetchall(
            "SELECT frame_id FROM frame_updates WHERE frame_id > "
            "(SELECT coalesce(max(id), 0) FROM memory_frames) - ?", (recent,))] if recent else []
        return (*positions_sync(sync, list(vectors)), stored)

    batch, near, texts, found.stored_cued = await db.run(read)
    found.cues = {fid: cue for fid, text in texts.items() if (cue := update_cue(text))}
    cued = set(found.cues) | {p.frame_id for p in near if p.cued}
    mine = [p for p in batch if p.frame_id in vectors]
    if len(mine) > 1:
        import numpy as np

        matrix = np.stack([vectors[p.frame_id] for p in mine])
        sims = matrix @ matrix.T
        number: dict[str, int] = {}
        session = np.array([number.setdefault(p.session, len(number)) for p in mine])
        turn = np.array([p.t for p in mine])
        flag = np.array([p.frame_id in cued for p in mine])
        close = (session[:, None] == session[None, :]) \
            & (np.abs(turn[:, None] - turn[None, :]) <= WINDOW)
        mask = np.triu((close | (sims >= CANDIDATE_FLOOR)) & (flag[:, None] | flag[None, :]), 1)
        for i, j in zip(*np.nonzero(mask), strict=True):
            found.add(mine[i].frame_id, mine[j].frame_id, float(sims[i, j]))
    if index is None:
        return
    for p in mine:
        around = [q.frame_id for q in near if q.session == p.session
                  and abs(q.t - p.t) <= WINDOW and (q.cued or p.frame_id in cued)]
        if around:
            for fid, sim in (await index.similarities(vectors[p.frame_id], around)).items():
                found.add(p.frame_id, fid, sim)


def _statements(db: SyncDb, ids: Iterable[int]) -> dict[int, Statement]:
    wanted = sorted(set(ids))
    entities: dict[int, set[str]] = {}
    rows: list[Any] = []
    for part in chunked(wanted):
        marks = placeholders(len(part))
        rows += db.fetchall(
            "SELECT id, gop_id, t, created_at, content, coalesce(json_extract(m, '$.role'), ''), "
            "coalesce(json_extract(m, '$.speaker'), '') FROM (SELECT *, CASE WHEN "
            "json_valid(metadata) THEN metadata END AS m FROM memory_frames "
            f"WHERE id IN ({marks}))", part)
        for fid, name in db.fetchall(
                "SELECT ef.frame_id, e.normalized_name FROM kg_entity_frames ef "
                f"JOIN knowledge_entities e ON e.id = ef.entity_id WHERE ef.frame_id IN ({marks})",
                part):
            entities.setdefault(fid, set()).add(name)
    speakers = frozenset(w for r in rows for w in str(r[6]).casefold().split())
    return {r[0]: Statement(r[0], r[1], r[2], r[3], r[4], str(r[5]).lower(), frozenset(
        name for name in entities.get(r[0], ()) if not set(name.split()) <= speakers), speakers)
        for r in rows}


def _cues(db: SyncDb, ids: Sequence[int]) -> set[int]:
    found: set[int] = set()
    for part in chunked(list(ids)):
        found.update(r[0] for r in db.fetchall(
            f"SELECT frame_id FROM frame_updates WHERE frame_id IN ({placeholders(len(part))})",
            part))
    return found


def _order(a: Statement, b: Statement) -> tuple[Statement, Statement]:
    """(older, newer): by turn inside one conversation, else by source time."""
    if a.session == b.session:
        return (a, b) if a.t < b.t else (b, a)
    return (a, b) if (a.created_at, a.frame_id) < (b.created_at, b.frame_id) else (b, a)


def detect_sync(db: SyncDb, batch: Sequence[int], found: Candidates) -> int:
    """Record the batch's cue frames and every supersession pair among ``found``'s pairs whose
    newer turn carries a cue; returns the number of pairs written. Runs after the batch's
    entity bridge rows are written (same transaction)."""
    if found.cues:
        db.executemany("INSERT OR REPLACE INTO frame_updates(frame_id, cue) VALUES (?, ?)",
                       list(found.cues.items()))
    others = sorted({x for pair in found.cosine for x in pair} - set(batch))
    cued = set(found.cues) | _cues(db, others)
    pairs = [pair for pair in found.cosine if pair[0] in cued or pair[1] in cued]
    if not pairs:
        return 0
    said = _statements(db, {x for pair in pairs for x in pair})
    now = now_iso()
    rows = []
    for pair in pairs:
        if pair[0] not in said or pair[1] not in said:
            continue
        old, new = _order(said[pair[0]], said[pair[1]])
        if new.frame_id in cued and (cue := supersedes(new, old, found.cosine[pair])):
            rows.append((old.frame_id, new.frame_id, cue, found.cosine[pair], new.created_at,
                         now))
    if rows:
        db.executemany(
            "INSERT INTO frame_supersessions(superseded_id, frame_id, cue, similarity, "
            "valid_to, recorded_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(superseded_id, "
            "frame_id) DO UPDATE SET cue = excluded.cue, similarity = excluded.similarity, "
            "valid_to = excluded.valid_to, recorded_at = excluded.recorded_at "
            f"WHERE cue <> '{EXPLICIT}'", rows)
        _keep_nearest(db, sorted({row[1] for row in rows}))
    return len(rows)


async def record_updates(db: Database, updates: Sequence[tuple[int, int, str]]) -> None:
    """Store the explicit pairs ``(base, update, update's source time)`` of P-frames just
    saved (in the save's transaction)."""
    if updates:
        now = now_iso()
        await db.executemany(
            "INSERT OR REPLACE INTO frame_supersessions(superseded_id, frame_id, cue, similarity, "
            "valid_to, recorded_at) VALUES (?, ?, ?, 1.0, ?, ?)",
            [(base, fid, EXPLICIT, at, now) for base, fid, at in updates])


def _keep_nearest(db: SyncDb, newer: Sequence[int]) -> None:
    """Each of these later turns keeps its :data:`MAX_SUPERSEDED` most alike heuristic pairs
    (and every explicit one)."""
    for part in chunked(list(newer)):
        db.execute(
            "DELETE FROM frame_supersessions WHERE (superseded_id, frame_id) IN (SELECT "
            "superseded_id, frame_id FROM (SELECT superseded_id, frame_id, row_number() OVER "
            "(PARTITION BY frame_id ORDER BY similarity DESC, superseded_id DESC) AS n FROM "
            f"frame_supersessions WHERE cue <> '{EXPLICIT}' AND frame_id IN "
            f"({placeholders(len(part))})) WHERE n > ?)",
            (*part, MAX_SUPERSEDED))


@dataclass(frozen=True, slots=True)
class Pairs:
    """Supersession pairs touching a set of frames."""

    superseded_by: dict[int, list[int]]  # older → newer turns
    supersedes: dict[int, list[int]]  # newer → older turns


def pairs_sync(db: SyncDb, frame_ids: Sequence[int]) -> Pairs:
    """Every stored pair with one end among ``frame_ids`` (on the connection's thread: recall
    reads them in the trip that reads its candidates' frames)."""
    by: dict[int, list[int]] = {}
    of: dict[int, list[int]] = {}
    for part in chunked(list(frame_ids)):
        marks = placeholders(len(part))
        rows = db.fetchall(
            "SELECT superseded_id, frame_id FROM frame_supersessions "
            f"WHERE superseded_id IN ({marks}) UNION "
            "SELECT superseded_id, frame_id FROM frame_supersessions "
            f"WHERE frame_id IN ({marks})", [*part, *part])
        for old, new in rows:
            if new not in by.setdefault(old, []):
                by[old].append(new)
            if old not in of.setdefault(new, []):
                of[new].append(old)
    return Pairs(by, of)



HISTORY_LIMIT = 20


@dataclass(frozen=True, slots=True)
class Version:
    """A statement about an entity that takes part in an update: ``valid_to`` is when a later
    statement replaced it (null: current), ``superseded_by`` those later statements."""

    frame_id: int
    content: str
    valid_from: str
    valid_to: str | None
    superseded_by: list[int]

    def as_dict(self) -> dict[str, object]:
        return {"frame_id": self.frame_id, "content": self.content,
                "valid_from": self.valid_from, "valid_to": self.valid_to,
                "superseded_by": self.superseded_by, "current": self.valid_to is None}


async def history(db: Database, entity_id: int, limit: int = HISTORY_LIMIT) -> list[Version]:
    """The entity's statements that were updated or that update another, newest first: the
    current value (``valid_to`` null) and its history."""
    rows = await db.fetchall(
        "SELECT f.id, f.content, f.created_at, (SELECT min(s.valid_to) FROM frame_supersessions s "
        "WHERE s.superseded_id = f.id), (SELECT group_concat(s.frame_id) FROM "
        "frame_supersessions s WHERE s.superseded_id = f.id) FROM kg_entity_frames ef "
        "JOIN memory_frames f ON f.id = ef.frame_id WHERE ef.entity_id = ? AND (EXISTS (SELECT 1 "
        "FROM frame_supersessions s WHERE s.superseded_id = f.id) OR EXISTS (SELECT 1 FROM "
        "frame_supersessions s WHERE s.frame_id = f.id)) ORDER BY f.created_at DESC, f.id DESC "
        "LIMIT ?", (entity_id, limit))
    return [Version(r[0], r[1], r[2], r[3], [int(x) for x in r[4].split(",")] if r[4] else [])
            for r in rows]
