from __future__ import annotations

from typing import Any

import pytest

from mind.knowledge import dedupe as kg_dedupe
from mind.knowledge.dedupe import dedupe_by_name, merge_properties, pick_survivor, repoint
from mind.knowledge.store import KnowledgeGraph
from mind.storage.db import Database
from tests.support import active_relation_rows, add_frames


@pytest.fixture
def kg(db: Database) -> KnowledgeGraph:
    return KnowledgeGraph(db)


@pytest.mark.parametrize(
    ("members", "survivor"),
    [
        ([(7, 0)], 7),
        ([(1, 0), (2, 3), (3, 1)], 2),  # most relations
        ([(5, 2), (3, 2), (9, 1)], 3),  # tie → lowest id
        ([(4, 0), (2, 0)], 2),
    ],
)
def test_pick_survivor(members: list[tuple[int, int]], survivor: int) -> None:
    assert pick_survivor(members) == survivor


def test_pick_survivor_needs_members() -> None:
    with pytest.raises(ValueError):
        pick_survivor([])


@pytest.mark.parametrize(
    ("survivor", "duplicates", "expected"),
    [
        # 4 + 5 + 6 → 15 (every duplicate's count, not only the last one's)
        ({"seen_count": 4}, [("ACME", {"seen_count": 5}), ("acme", {"seen_count": 6})],
         {"seen_count": 15, "aliases": ["ACME", "acme"]}),
        # absent counts are 1 each; survivor properties win, later duplicates over earlier
        ({"hq": "Berlin"}, [("Acme Inc", {"hq": "Paris", "size": 1}), ("ACME", {"size": 2})],
         {"hq": "Berlin", "size": 2, "seen_count": 3, "aliases": ["Acme Inc", "ACME"]}),
        # aliases: unique, carried over from earlier merges, never the survivor's own name
        ({"aliases": ["acme"]}, [("Acme", {"aliases": ["ACME", "acme"]}), ("ACME", {})],
         {"aliases": ["acme", "ACME"], "seen_count": 3}),
        ({}, [("Acme", {})], {"seen_count": 2}),
    ],
)
def test_merge_properties(survivor: dict[str, Any], duplicates: list[tuple[str, dict[str, Any]]],
                          expected: dict[str, Any]) -> None:
    assert merge_properties("Acme", survivor, duplicates) == expected


@pytest.mark.parametrize(
    ("edge", "expected"),
    [
        ((2, 9), (1, 9)),  # outgoing from the duplicate
        ((9, 2), (9, 1)),  # incoming to the duplicate
        ((1, 2), None),  # survivor→duplicate would become a self-loop: dropped
        ((2, 1), None),
        ((2, 2), (1, 1)),  # an existing self-loop stays one
    ],
)
def test_repoint(edge: tuple[int, int], expected: tuple[int, int] | None) -> None:
    assert repoint(edge[0], edge[1], duplicate=2, survivor=1) == expected


async def test_nothing_to_merge(kg: KnowledgeGraph, db: Database) -> None:
    assert await dedupe_by_name(db) == {"groups": 0, "merged": 0}
    await kg.create_entity("org", "Acme")
    await kg.create_entity("person", "Acme")  # other type: not a duplicate
    assert await dedupe_by_name(db) == {"groups": 0, "merged": 0}


async def test_seen_counts_sum_over_the_whole_group(kg: KnowledgeGraph, db: Database) -> None:
    a = await kg.create_entity("org", "Acme", {"seen_count": 4, "hq": "Berlin"})
    b = await kg.create_entity("Org", "ACME", {"seen_count": 5, "size": 10})
    c = await kg.create_entity("ORG", " acme ", {"seen_count": 6, "hq": "Paris"})
    assert await dedupe_by_name(db) == {"groups": 1, "merged": 2}
    survivor = await kg.get_entity(a.id)
    assert survivor.active
    assert survivor.properties == {"seen_count": 15, "hq": "Berlin", "size": 10,
                                   "aliases": ["ACME", "acme"]}
    for dup in (b, c):
        retired = await kg.get_entity(dup.id)
        assert not retired.active and retired.properties["merged_into"] == a.id
    assert await kg.get_entity_count() == 1
    assert await dedupe_by_name(db) == {"groups": 0, "merged": 0}  # idempotent


async def test_alias_groups_merge(kg: KnowledgeGraph, db: Database) -> None:
    pg = await kg.create_entity("technology", "PostgreSQL")
    await kg.create_entity("technology", "Postgres")
    await kg.create_entity("technology", "PG")
    await kg.create_entity("concept", "PG")
    assert await dedupe_by_name(db) == {"groups": 1, "merged": 2}
    assert [e.id for e in await kg.search_entities("", entity_type="technology")] == [pg.id]
    assert (await kg.get_entity(pg.id)).properties["aliases"] == ["Postgres", "PG"]


async def test_survivor_has_most_relations(kg: KnowledgeGraph, db: Database) -> None:
    first = await kg.create_entity("org", "Acme")
    busy = await kg.create_entity("org", "ACME")
    bob = await kg.create_entity("person", "Bob")
    await kg.create_relation(bob.id, busy.id, "works_at")
    await dedupe_by_name(db)
    assert (await kg.get_entity(busy.id)).active
    assert not (await kg.get_entity(first.id)).active


async def test_relations_are_repointed_without_duplicates(kg: KnowledgeGraph,
                                                          db: Database) -> None:
    acme = await kg.create_entity("org", "Acme")
    dup = await kg.create_entity("org", "acme")
    bob = await kg.create_entity("person", "Bob")
    carol = await kg.create_entity("person", "Carol")
    await kg.create_relation(bob.id, acme.id, "works_at", 0.4, {"since": 2019, "a": 1})
    await kg.create_relation(acme.id, carol.id, "employs", 0.7)
    await kg.create_relation(bob.id, dup.id, "works_at", 0.9, {"since": 2020, "b": 2})
    old = await kg.create_relation(dup.id, carol.id, "sponsors", 0.6, {"x": 1})
    await kg.create_relation(acme.id, dup.id, "same_as")  # becomes a self-loop: dropped
    await kg.create_relation(dup.id, acme.id, "part_of")
    await dedupe_by_name(db)  # acme has 4 relations, dup 4: tie → lowest id survives

    works = await kg.get_relations_from(bob.id)
    assert len(works) == 1
    assert (works[0].target_id, works[0].confidence) == (acme.id, 0.9)
    assert works[0].properties == {"since": 2019, "a": 1, "b": 2}  # survivor's win
    to_carol = await kg.get_relations_to(carol.id)
    assert [(r.source_id, r.relation_type) for r in to_carol] == [
        (acme.id, "employs"), (acme.id, "sponsors")]
    sponsors = to_carol[1]
    assert sponsors.valid_from == old.valid_from and sponsors.properties == {"x": 1}
    assert await kg.get_relations_from(acme.id, "same_as") == []
    assert await kg.get_relations_from(acme.id, "part_of") == []
    assert await kg.get_relations_from(dup.id) == [] and await kg.get_relations_to(dup.id) == []
    assert await active_relation_rows(db) == 3
    dupes = await db.fetchval(
        "SELECT COUNT(*) FROM (SELECT 1 FROM knowledge_relations WHERE valid_to IS NULL "
        "GROUP BY source_id, target_id, relation_type HAVING COUNT(*) > 1)")
    assert dupes == 0


async def test_relations_between_duplicates_are_dropped(kg: KnowledgeGraph,
                                                        db: Database) -> None:
    a = await kg.create_entity("org", "Acme")
    b = await kg.create_entity("org", "ACME")
    c = await kg.create_entity("org", "acme")
    await kg.create_relation(b.id, c.id, "same_as")
    await kg.create_relation(c.id, b.id, "same_as")
    await dedupe_by_name(db)
    assert (await kg.get_entity(b.id)).active  # most relations (2, tie with c → lower id)
    assert not (await kg.get_entity(a.id)).active
    assert await active_relation_rows(db) == 0


async def test_bridge_rows_move_to_the_survivor(kg: KnowledgeGraph, db: Database) -> None:
    frames = await add_frames(db, 3)
    acme = await kg.create_entity("org", "Acme")
    dup = await kg.create_entity("org", "ACME")
    await kg.link_entities_to_frames([(acme.id, frames[0]), (dup.id, frames[0]),
                                      (dup.id, frames[2])])
    await dedupe_by_name(db)
    assert await kg.get_entity_frames(acme.id) == [frames[0], frames[2]]
    assert await kg.get_entity_frames(dup.id) == []
    assert await kg.get_frame_entities(frames[2]) == [await kg.get_entity(acme.id)]


async def test_dedupe_is_one_transaction(kg: KnowledgeGraph, db: Database,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    acme = await kg.create_entity("org", "Acme", {"seen_count": 2})
    dup = await kg.create_entity("org", "ACME")
    bob = await kg.create_entity("person", "Bob")
    await kg.create_relation(bob.id, acme.id, "knows")
    await kg.create_relation(acme.id, bob.id, "employs")
    await kg.create_relation(bob.id, dup.id, "works_at")

    async def boom(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("crash mid-merge")

    monkeypatch.setattr(kg_dedupe, "put_relation", boom)
    with pytest.raises(RuntimeError):
        await dedupe_by_name(db)
    assert (await kg.get_entity(dup.id)).active
    assert (await kg.get_entity(acme.id)).properties == {"seen_count": 2}
    assert [r.target_id for r in await kg.get_relations_from(bob.id)] == [acme.id, dup.id]
