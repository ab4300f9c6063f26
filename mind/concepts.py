"""ConceptTracker (engine-spec a.9): spaced-review mastery of concepts, levels 1..5."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from mind.db import Database
from mind.errors import ValidationError
from mind.timeutil import now_iso

MIN_LEVEL, MAX_LEVEL = 1, 5
_COLUMNS = (
    "concept, mastery_level, last_tested, times_correct, times_wrong, notes, created_at, updated_at"
)


@dataclass(frozen=True, slots=True)
class Concept:
    concept: str
    mastery_level: int
    last_tested: str | None
    times_correct: int
    times_wrong: int
    notes: str
    created_at: str
    updated_at: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def clamp_level(level: int) -> int:
    return max(MIN_LEVEL, min(MAX_LEVEL, int(level)))


def _name(concept: str) -> str:
    if not isinstance(concept, str) or not concept.strip():
        raise ValidationError("concept must be a non-empty string")
    return concept.strip()


class ConceptTracker:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, concept: str) -> Concept | None:
        row = await self._db.fetchone(
            f"SELECT {_COLUMNS} FROM concept_mastery WHERE concept = ?", (_name(concept),)
        )
        return None if row is None else Concept(*row)

    async def upsert_concept(
        self, concept: str, *, mastery_level: int | None = None, notes: str | None = None
    ) -> Concept:
        """Create or update; fields left as None keep their stored values."""
        name = _name(concept)
        now = now_iso()
        level = None if mastery_level is None else clamp_level(mastery_level)
        async with self._db.transaction():
            await self._db.execute(
                "INSERT INTO concept_mastery(concept, mastery_level, notes, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT(concept) DO UPDATE SET "
                "mastery_level = COALESCE(?, mastery_level), notes = COALESCE(?, notes), "
                "updated_at = ?",
                (name, level or MIN_LEVEL, notes or "", now, now, level, notes, now),
            )
        found = await self.get(name)
        assert found is not None
        return found

    async def record_answer(self, concept: str, correct: bool) -> Concept:
        """A new concept starts at 2 (correct) or 1 (wrong); later answers move it ±1."""
        name = _name(concept)
        now = now_iso()
        step = 1 if correct else -1
        async with self._db.transaction():
            await self._db.execute(
                "INSERT INTO concept_mastery(concept, mastery_level, last_tested, times_correct, "
                "times_wrong, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(concept) DO UPDATE SET "
                "mastery_level = MAX(?, MIN(?, mastery_level + ?)), last_tested = ?, "
                "times_correct = times_correct + ?, times_wrong = times_wrong + ?, updated_at = ?",
                (name, 2 if correct else 1, now, int(correct), int(not correct), now, now,
                 MIN_LEVEL, MAX_LEVEL, step, now, int(correct), int(not correct), now),
            )
        found = await self.get(name)
        assert found is not None
        return found

    async def list_concepts(
        self, min_level: int | None = None, max_level: int | None = None
    ) -> list[Concept]:
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM concept_mastery WHERE mastery_level >= ? "
            "AND mastery_level <= ? ORDER BY updated_at DESC, id DESC",
            (min_level or MIN_LEVEL, max_level or MAX_LEVEL),
        )
        return [Concept(*r) for r in rows]

    async def get_due_for_review(self, limit: int = 10) -> list[Concept]:
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM concept_mastery WHERE mastery_level < 4 "
            "ORDER BY mastery_level ASC, last_tested ASC NULLS FIRST, id ASC LIMIT ?",
            (limit,),
        )
        return [Concept(*r) for r in rows]
