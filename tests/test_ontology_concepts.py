from __future__ import annotations

import pytest

from mind.concepts import ConceptTracker, clamp_level
from mind.db import Database
from mind.errors import ValidationError
from mind.ontology import Ontology


def test_ontology_validation_messages() -> None:
    onto = Ontology()
    onto.define("person", required=["name"], optional=["email"])
    assert onto.has_type("person") and onto.get_types() == ["person"]
    assert onto.validate_entity("person", {"name": "A", "email": "a@x"}).valid
    bad = onto.validate_entity("person", {"phone": "1"})
    assert not bad.valid
    assert bad.issues == ("Missing required property: name", "Unknown property: phone")
    assert onto.validate_entity("robot", {}).issues == ("Unknown entity type: robot",)
    schema = onto.get_schema("person")
    assert schema is not None and schema.required == ("name",)


@pytest.mark.parametrize(("level", "expected"), [(-3, 1), (0, 1), (1, 1), (3, 3), (5, 5), (9, 5)])
def test_clamp(level: int, expected: int) -> None:
    assert clamp_level(level) == expected


async def test_concept_tracker_lifecycle(db: Database) -> None:
    tracker = ConceptTracker(db)
    first = await tracker.record_answer("recursion", correct=True)
    assert (first.mastery_level, first.times_correct, first.times_wrong) == (2, 1, 0)
    assert first.last_tested is not None
    wrong = await tracker.record_answer("closures", correct=False)
    assert wrong.mastery_level == 1
    for _ in range(6):
        top = await tracker.record_answer("recursion", correct=True)
    assert top.mastery_level == 5 and top.times_correct == 7
    low = await tracker.record_answer("closures", correct=False)
    assert low.mastery_level == 1 and low.times_wrong == 2
    kept = await tracker.upsert_concept("closures", notes="review scope chains")
    assert kept.mastery_level == 1 and kept.notes == "review scope chains"
    fresh = await tracker.upsert_concept("monads", mastery_level=12)
    assert fresh.mastery_level == 5 and fresh.last_tested is None
    await tracker.upsert_concept("generators", mastery_level=3)
    due = [c.concept for c in await tracker.get_due_for_review()]
    assert due == ["closures", "generators"]  # mastery ASC; untested first within a level
    assert {c.concept for c in await tracker.list_concepts(min_level=5)} == {"recursion", "monads"}
    with pytest.raises(ValidationError):
        await tracker.record_answer("  ", correct=True)
