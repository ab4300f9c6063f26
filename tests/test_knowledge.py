from __future__ import annotations

from typing import Any

import pytest

from mind.errors import InvalidTimestampError, NotFoundError, ValidationError
from mind.knowledge.store import KnowledgeGraph
from mind.storage.db import Database
from mind.timeutil import is_strict_iso
from tests.support import active_relation_rows, add_frames


@pytest.fixture
def kg(db: Database) -> KnowledgeGraph:
    return KnowledgeGraph(db)


# -- entities ----------------------------------------------------------------------------------


async def test_create_entity_stores_every_field(kg: KnowledgeGraph) -> None:
    entity = await kg.create_entity(" Person ", "  Ada   Lovelace ", {"born": 1815})
    assert entity.entity_type == "person"
    assert entity.name == "Ada Lovelace"
    assert entity.normalized_name == "ada lovelace"
    assert entity.properties == {"born": 1815}
    assert entity.active and entity.valid_to is None
    assert is_strict_iso(entity.valid_from) and entity.valid_from.endswith("Z")
    assert await kg.get_entity(entity.id) == entity


async def test_create_entity_normalizes_timestamps(kg: KnowledgeGraph) -> None:
    entity = await kg.create_entity("event", "Launch", valid_from="2024-05-01T12:00:00+02:00",
                                    valid_to="2024-05-02T00:00:00Z")
    assert entity.valid_from == "2024-05-01T10:00:00.000Z"
    assert entity.valid_to == "2024-05-02T00:00:00.000Z"
    assert not entity.active


@pytest.mark.parametrize(
    ("args", "kwargs", "error"),
    [
        (("person", ""), {}, ValidationError),
        (("", "Bob"), {}, ValidationError),
        (("person", "Bob", {"x": object()}), {}, ValidationError),
        (("person", "Bob", ["x"]), {}, ValidationError),
        (("person", "Bob"), {"valid_from": "yesterday"}, InvalidTimestampError),
        (("person", "Bob"), {"valid_from": "2024-05-01 12:00:00"}, InvalidTimestampError),
        (("person", "Bob"), {"valid_from": "2024-05-02T00:00:00Z",
                             "valid_to": "2024-05-01T00:00:00Z"}, ValidationError),
        (("person", "Bob"), {"valid_from": "2024-05-01T00:00:00Z",
                             "valid_to": "2024-05-01T00:00:00Z"}, ValidationError),
    ],
)
async def test_create_entity_rejects(kg: KnowledgeGraph, args: tuple[Any, ...],
                                     kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        await kg.create_entity(*args, **kwargs)
    assert await kg.get_entity_count() == 0


async def test_create_entity_does_not_dedupe(kg: KnowledgeGraph) -> None:
    await kg.create_entity("org", "Acme")
    await kg.create_entity("org", "Acme")
    assert await kg.get_entity_count() == 2


async def test_upsert_is_case_insensitive_and_counts_sightings(kg: KnowledgeGraph) -> None:
    first, created = await kg.upsert_entity("Org", "Acme", {"hq": "Berlin"})
    assert created and first.properties == {"hq": "Berlin"}
    second, created = await kg.upsert_entity("org", "ACME", {"hq": "Paris", "size": 10})
    assert not created and second.id == first.id
    assert second.name == "Acme"  # the first spelling stays
    assert second.properties == {"hq": "Paris", "size": 10, "seen_count": 2}
    third, _ = await kg.upsert_entity("ORG", " acme ", {"seen_count": 99})
    assert third.properties["seen_count"] == 3
    assert await kg.get_entity_count() == 1


async def test_upsert_is_alias_aware_and_type_scoped(kg: KnowledgeGraph) -> None:
    pg, _ = await kg.upsert_entity("technology", "PostgreSQL")
    again, created = await kg.upsert_entity("technology", "Postgres")
    assert not created and again.id == pg.id
    other, created = await kg.upsert_entity("concept", "Postgres")
    assert created and other.id != pg.id


async def test_upsert_ignores_retired_entities(kg: KnowledgeGraph) -> None:
    old, _ = await kg.upsert_entity("org", "Acme")
    await kg.retire_entity(old.id)
    fresh, created = await kg.upsert_entity("org", "Acme")
    assert created and fresh.id != old.id


async def test_get_entity_not_found(kg: KnowledgeGraph) -> None:
    with pytest.raises(NotFoundError, match="entity 42 not found"):
        await kg.get_entity(42)


async def test_update_entity(kg: KnowledgeGraph) -> None:
    entity = await kg.create_entity("tech", "Postgres", {"a": 1, "b": 2})
    renamed = await kg.update_entity(entity.id, name="Mongo")
    assert (renamed.name, renamed.normalized_name) == ("Mongo", "mongodb")
    assert renamed.properties == {"a": 1, "b": 2}
    replaced = await kg.update_entity(entity.id, properties={"c": 3})
    assert replaced.properties == {"c": 3} and replaced.name == "Mongo"
    assert await kg.find_entity_by_name("mongodb") == replaced
    with pytest.raises(NotFoundError):
        await kg.update_entity(999, name="x")
    with pytest.raises(ValidationError):
        await kg.update_entity(entity.id, name="  ")


async def test_retire_entity_hides_it_and_retires_its_relations(kg: KnowledgeGraph) -> None:
    bob = await kg.create_entity("person", "Bob")
    acme = await kg.create_entity("org", "Acme")
    await kg.create_relation(bob.id, acme.id, "works_at")
    retired = await kg.retire_entity(bob.id)
    assert not retired.active and retired.valid_to is not None
    assert await kg.get_entity(bob.id) == retired  # still readable
    assert await kg.search_entities("") == [acme]
    assert await kg.get_entity_count() == 1
    assert await kg.search_entities("bob") == []
    assert await kg.find_entity_by_name("Bob") is None
    assert await kg.get_relations_to(acme.id) == []
    again = await kg.retire_entity(bob.id)
    assert again.valid_to == retired.valid_to  # idempotent
    with pytest.raises(NotFoundError):
        await kg.retire_entity(999)


async def test_listings(kg: KnowledgeGraph) -> None:
    names = ["Carol", "alice", "Bob", "Dave"]
    for name in names:
        await kg.create_entity("person", name)
    await kg.create_entity("Org", "Acme")
    listed = [e.name for e in await kg.search_entities("")]
    assert listed == sorted(listed)  # ordered by name
    assert [e.name for e in await kg.search_entities("", entity_type="PERSON")] == sorted(names)
    assert len(await kg.search_entities("", entity_type="person", limit=2)) == 2
    assert await kg.get_entity_type_counts() == {"person": 4, "org": 1}
    assert await kg.get_entity_count() == 5
    with pytest.raises(ValidationError):
        await kg.search_entities("", limit=-1)


async def test_search_entities(kg: KnowledgeGraph) -> None:
    for name in ["Acme Corp", "ACME Labs", "100% Pure", "100 Pure", "a_b", "axb", "Kubernetes",
                 "Zürich"]:
        await kg.create_entity("thing", name)
    assert [e.name for e in await kg.search_entities("acme")] == ["ACME Labs", "Acme Corp"]
    assert [e.name for e in await kg.search_entities("100%")] == ["100% Pure"]
    assert [e.name for e in await kg.search_entities("a_b")] == ["a_b"]
    assert [e.name for e in await kg.search_entities("k8s")] == ["Kubernetes"]  # alias aware
    assert [e.name for e in await kg.search_entities("ZÜRICH")] == ["Zürich"]
    assert await kg.search_entities("'; DROP TABLE knowledge_entities; --") == []
    assert len(await kg.search_entities("", limit=3)) == 3


async def test_search_type_filter_does_not_miss_later_matches(db: Database,
                                                              kg: KnowledgeGraph) -> None:
    # every entity of the type is searched, not only the first 2*limit alphabetically.
    for i in range(60):
        await kg.create_entity("person", f"Aaron {i:02d}")
    await kg.create_entity("project", "Match Project")
    zoe = await kg.create_entity("person", "Zoe Match")
    assert await kg.search_entities("match", limit=2, entity_type="Person") == [zoe]
    assert [e.name for e in await kg.search_entities("match")] == ["Match Project", "Zoe Match"]


async def test_find_entity_by_name(kg: KnowledgeGraph) -> None:
    acme = await kg.create_entity("org", "Acme")
    await kg.create_entity("org", "Acme")  # a later duplicate: the oldest wins
    pg = await kg.create_entity("technology", "PG")
    assert await kg.find_entity_by_name("ACME") == acme
    assert await kg.find_entity_by_name("acme", "ORG") == acme
    assert await kg.find_entity_by_name("acme", "person") is None
    assert await kg.find_entity_by_name("PostgreSQL") == pg
    assert await kg.find_entity_by_name("nobody") is None


# -- relations ---------------------------------------------------------------------------------


async def test_create_relation_and_adjacency(kg: KnowledgeGraph) -> None:
    bob = await kg.create_entity("person", "Bob")
    acme = await kg.create_entity("org", "Acme")
    rel = await kg.create_relation(bob.id, acme.id, " works_at ", 0.8, {"since": 2020})
    assert (rel.source_id, rel.target_id, rel.relation_type) == (bob.id, acme.id, "works_at")
    assert (rel.confidence, rel.properties) == (0.8, {"since": 2020})
    other = await kg.create_relation(acme.id, bob.id, "employs")
    assert await kg.get_relations_from(bob.id) == [rel]
    assert await kg.get_relations_from(bob.id, "employs") == []
    assert await kg.get_relations_from(bob.id, " works_at") == [rel]
    assert await kg.get_relations_to(bob.id) == [other]
    assert await kg.get_relations_to(acme.id, "works_at") == [rel]


async def test_create_relation_deduplicates(db: Database, kg: KnowledgeGraph) -> None:
    bob = await kg.create_entity("person", "Bob")
    acme = await kg.create_entity("org", "Acme")
    first = await kg.create_relation(bob.id, acme.id, "works_at", 0.5, {"a": 1})
    higher = await kg.create_relation(bob.id, acme.id, "works_at", 0.9, {"b": 2})
    lower = await kg.create_relation(bob.id, acme.id, "works_at", 0.3)
    assert first.id == higher.id == lower.id
    assert (lower.confidence, lower.properties) == (0.9, {"a": 1, "b": 2})
    assert await active_relation_rows(db) == 1
    await kg.retire_relation(first.id)
    again = await kg.create_relation(bob.id, acme.id, "works_at")
    assert again.id != first.id and again.confidence == 1.0


async def test_create_relation_errors(kg: KnowledgeGraph) -> None:
    bob = await kg.create_entity("person", "Bob")
    gone = await kg.create_entity("org", "Gone")
    await kg.retire_entity(gone.id)
    with pytest.raises(NotFoundError, match="entity 999 not found"):
        await kg.create_relation(bob.id, 999, "knows")
    with pytest.raises(NotFoundError, match="entity 999 not found"):
        await kg.create_relation(999, bob.id, "knows")
    with pytest.raises(NotFoundError, match="retired"):
        await kg.create_relation(bob.id, gone.id, "knows")
    for bad in (1.5, -0.1, float("nan"), True):
        with pytest.raises(ValidationError, match="confidence"):
            await kg.create_relation(bob.id, bob.id, "knows", bad)
    with pytest.raises(ValidationError, match="relation type"):
        await kg.create_relation(bob.id, bob.id, "  ")


async def test_retire_relation(kg: KnowledgeGraph) -> None:
    bob = await kg.create_entity("person", "Bob")
    acme = await kg.create_entity("org", "Acme")
    rel = await kg.create_relation(bob.id, acme.id, "works_at")
    retired = await kg.retire_relation(rel.id)
    assert not retired.active
    assert await kg.get_relations_from(bob.id) == []
    assert (await kg.retire_relation(rel.id)).valid_to == retired.valid_to
    with pytest.raises(NotFoundError, match="relation 999 not found"):
        await kg.retire_relation(999)


# -- entity↔frame bridge -----------------------------------------------------------------------


async def test_bridge(db: Database, kg: KnowledgeGraph) -> None:
    frames = await add_frames(db, 3)
    bob = await kg.create_entity("person", "Bob")
    acme = await kg.create_entity("org", "Acme")
    assert await kg.link_entity_to_frame(bob.id, frames[0]) is True
    assert await kg.link_entity_to_frame(bob.id, frames[0]) is False
    pairs = [(bob.id, frames[0]), (bob.id, frames[2]), (acme.id, frames[0]), (acme.id, frames[0])]
    assert await kg.link_entities_to_frames(pairs) == 2
    assert await kg.link_entities_to_frames([]) == 0
    assert await kg.get_entity_frames(bob.id) == [frames[0], frames[2]]
    assert await kg.get_frame_entities(frames[0]) == [acme, bob]  # by name
    assert await kg.get_frame_entities(frames[1]) == []
    await kg.retire_entity(acme.id)
    assert await kg.get_frame_entities(frames[0]) == [bob]


async def test_bridge_rejects_unknown_ids_atomically(db: Database, kg: KnowledgeGraph) -> None:
    frames = await add_frames(db, 1)
    bob = await kg.create_entity("person", "Bob")
    with pytest.raises(NotFoundError):
        await kg.link_entities_to_frames([(bob.id, frames[0]), (bob.id, 12345)])
    with pytest.raises(NotFoundError):
        await kg.link_entity_to_frame(999, frames[0])
    assert await kg.get_entity_frames(bob.id) == []


# -- mentions in text --------------------------------------------------------------------------


async def test_find_entities_in_text(kg: KnowledgeGraph) -> None:
    hive = await kg.create_entity("project", "Hive")
    nyc = await kg.create_entity("place", "NYC")
    acme = await kg.create_entity("org", "Acme Corp")
    go = await kg.create_entity("technology", "Go")
    zurich = await kg.create_entity("place", "Zürich")
    await kg.create_entity("letter", "x")
    gone = await kg.create_entity("org", "Gone Inc")
    await kg.retire_entity(gone.id)

    async def found(text: str, limit: int = 12) -> list[int]:
        return [e.id for e in await kg.find_entities_in_text(text, limit)]

    assert await found("see the archive") == []  # no substring matches
    assert await found("the hive-mind project") == [hive.id]
    assert await found("ACME CORP ships Go code from the hive in ZÜRICH.") == [
        acme.id, zurich.id, hive.id, go.id]  # longest name first
    assert await found("acme corp, hive, go", limit=2) == [acme.id, hive.id]
    assert await found("I flew to New York City") == [nyc.id]  # alias aware
    assert await found("x marks the spot, Gone Inc too") == []
    assert await found("going to the hives") == []
    assert await found("") == []
    assert await found("hive", limit=0) == []
