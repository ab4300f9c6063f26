from __future__ import annotations

from typing import Any

import pytest

from mind.errors import ValidationError
from mind.knowledge import graph
from mind.knowledge.graph import bfs, bfs_distances, frame_distances_from_entities
from mind.knowledge.graph import traverse as traverse_ids
from mind.knowledge.store import KnowledgeGraph
from mind.storage.db import Database
from mind.timeutil import now_iso
from tests.support import add_frames


@pytest.fixture
def kg(db: Database) -> KnowledgeGraph:
    return KnowledgeGraph(db)


async def make(kg: KnowledgeGraph, names: str) -> dict[str, int]:
    return {name: (await kg.create_entity("node", name)).id for name in names.split()}


async def link(kg: KnowledgeGraph, ids: dict[str, int], edges: str, rtype: str = "knows") -> None:
    """``"A>B B>C"`` creates A→B and B→C."""
    for edge in edges.split():
        src, tgt = edge.split(">")
        await kg.create_relation(ids[src], ids[tgt], rtype)




async def test_traverse_follows_one_type_outwards_by_default(db: Database,
                                                             kg: KnowledgeGraph) -> None:
    ids = await make(kg, "A B C D E")
    await link(kg, ids, "A>B B>C C>D")
    await link(kg, ids, "A>E", "owns")
    assert await traverse_ids(db, ids["A"], "knows", 2) == [ids["B"], ids["C"]]
    assert await traverse_ids(db, ids["A"], "knows", 5) == [ids["B"], ids["C"], ids["D"]]
    assert await traverse_ids(db, ids["A"], None, 1) == [ids["B"], ids["E"]]
    assert await traverse_ids(db, ids["D"], "knows", 5) == []
    assert await traverse_ids(db, ids["D"], "knows", 5, "in") == [ids["C"], ids["B"], ids["A"]]
    assert await traverse_ids(db, ids["C"], "knows", 1, "both") == [ids["B"], ids["D"]]
    entities = await kg.traverse(ids["A"], "knows", 2)
    assert [e.name for e in entities] == ["B", "C"]


async def test_bfs_distances_are_bidirectional_by_default(db: Database,
                                                          kg: KnowledgeGraph) -> None:
    # walks follow edges both ways: C (C→A) is reachable from A.
    ids = await make(kg, "A B C D")
    await link(kg, ids, "A>B C>A D>C")
    assert await kg.bfs_distances(ids["A"], 3) == {ids["B"]: 1, ids["C"]: 1, ids["D"]: 2}
    assert await bfs_distances(db, ids["A"], 3, "out") == {ids["B"]: 1}
    assert await bfs_distances(db, ids["A"], 3, "in") == {ids["C"]: 1, ids["D"]: 2}
    assert await bfs_distances(db, ids["A"], 1) == {ids["B"]: 1, ids["C"]: 1}
    assert await bfs_distances(db, ids["A"], 0) == {}
    assert await bfs_distances(db, 999, 3) == {}


async def test_cycles_and_start_exclusion(db: Database, kg: KnowledgeGraph) -> None:
    ids = await make(kg, "A B C")
    await link(kg, ids, "A>B B>C C>A")
    assert await bfs_distances(db, ids["A"], 10, "out") == {ids["B"]: 1, ids["C"]: 2}
    assert await traverse_ids(db, ids["A"], "knows", 10) == [ids["B"], ids["C"]]


async def test_retired_relations_and_entities_are_not_followed(db: Database,
                                                               kg: KnowledgeGraph) -> None:
    ids = await make(kg, "A B C D")
    await link(kg, ids, "A>B B>C A>D")
    rel = (await kg.get_relations_from(ids["A"]))[0]
    await kg.retire_relation(rel.id)
    # retire D with SQL only, leaving its relation active, to test the entity filter
    await db.execute("UPDATE knowledge_entities SET valid_to = ? WHERE id = ?",
                     (now_iso(), ids["D"]))
    assert await bfs_distances(db, ids["A"], 5) == {}
    assert await bfs_distances(db, ids["C"], 5) == {ids["B"]: 1}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_depth": -1}, "max_depth"),
        ({"max_depth": True}, "max_depth"),
        ({"max_depth": 2.0}, "max_depth"),
        ({"max_depth": 2, "direction": "up"}, "direction"),
    ],
)
async def test_bfs_rejects_bad_arguments(db: Database, kwargs: dict[str, Any],
                                         message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        await bfs(db, [1], **kwargs)


async def test_one_query_per_level_with_chunked_frontier(db: Database,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    now = now_iso()
    leaves = 1200
    async with db.transaction():
        await db.executemany(
            "INSERT INTO knowledge_entities (id, entity_type, name, normalized_name, valid_from) "
            "VALUES (?, 'node', ?, ?, ?)",
            [(i, f"n{i}", f"n{i}", now) for i in range(1, 2 * leaves + 2)],
        )
        # hub 1 → leaves 2..1201, and each leaf → one grandchild
        await db.executemany(
            "INSERT INTO knowledge_relations (source_id, target_id, relation_type, valid_from) "
            "VALUES (?, ?, 'r', ?)",
            [(1, i, now) for i in range(2, leaves + 2)]
            + [(i, i + leaves, now) for i in range(2, leaves + 2)],
        )
    calls: list[str] = []
    original = db.fetchall

    async def counting(sql: str, params: Any = ()) -> Any:
        calls.append(sql)
        return await original(sql, params)

    monkeypatch.setattr(db, "fetchall", counting)
    dist = await bfs_distances(db, 1, 2, "out")
    assert len(dist) == 2 * leaves
    assert sorted(set(dist.values())) == [1, 2]
    assert len(calls) == 1 + 3  # level 1: one query; level 2: 1200 nodes in chunks of 500
    calls.clear()
    both = await bfs_distances(db, 1, 2)
    assert both == dist and len(calls) == 4  # "both" walks each chunk in one UNION ALL query


async def test_frame_distances_from_entities(db: Database, kg: KnowledgeGraph) -> None:
    ids = await make(kg, "A B C D E")
    await link(kg, ids, "A>B C>B C>D")  # D is 3 hops from A, but 1 from seed C
    frames = await add_frames(db, 6)
    await kg.link_entities_to_frames([
        (ids["A"], frames[0]), (ids["B"], frames[1]), (ids["B"], frames[0]),
        (ids["C"], frames[2]), (ids["D"], frames[3]), (ids["E"], frames[4]),
    ])
    assert await kg.frame_distances_from_entities([ids["A"]]) == {
        frames[0]: 0, frames[1]: 1, frames[2]: 2, frames[3]: 3}
    assert await frame_distances_from_entities(db, [ids["A"]], max_depth=1) == {
        frames[0]: 0, frames[1]: 1}
    assert await frame_distances_from_entities(db, [ids["A"], ids["D"]], max_depth=1) == {
        frames[0]: 0, frames[1]: 1, frames[2]: 1, frames[3]: 0}
    assert await frame_distances_from_entities(db, [ids["A"]], 3, "out") == {
        frames[0]: 0, frames[1]: 1}
    assert await frame_distances_from_entities(db, []) == {}


async def test_get_relations_both_directions(db: Database, kg: KnowledgeGraph) -> None:
    ids = await make(kg, "A B C")
    await link(kg, ids, "A>B C>A")
    both = await graph.get_relations(db, ids["A"], None, "both")
    assert [(r.source_id, r.target_id) for r in both] == [(ids["A"], ids["B"]),
                                                          (ids["C"], ids["A"])]
    with pytest.raises(ValidationError):
        await graph.get_relations(db, ids["A"], None, "sideways")  # type: ignore[arg-type]


async def test_session_proximity_reaches_the_frames_of_a_named_conversation(db: Database) -> None:
    from mind.knowledge.graph import with_session_proximity
    from mind.timeutil import now_iso

    now = now_iso()
    ids: dict[str, int] = {}
    async with db.transaction():
        for gop in ("dog", "trip", "work"):
            await db.execute("INSERT INTO sessions(gop_id) VALUES (?)", (gop,))
        for t, (name, gop) in enumerate([("named", "dog"), ("weight", "dog"), ("hotel", "trip"),
                                          ("near", "work"), ("standup", "work")]):
            ids[name], _ = await db.execute(
                "INSERT INTO memory_frames (frame_type, gop_id, t, content, created_at, "
                "recorded_at, last_accessed, content_hash) VALUES ('I', ?, ?, ?, ?, ?, ?, ?)",
                (gop, t, name, now, now, now, f"h{t}"))
    distances = {ids["named"]: 0, ids["near"]: 2}  # entity links found by the graph walk
    candidates = {ids[n]: g for n, g in [("named", "dog"), ("weight", "dog"), ("hotel", "trip"),
                                          ("standup", "work")]}
    out = await with_session_proximity(db, candidates, distances)
    assert out[ids["named"]] == 0  # its own link wins
    assert out[ids["weight"]] == 1  # same conversation as a frame at 0
    assert out[ids["standup"]] == 3  # a frame at 2 in its session
    assert ids["hotel"] not in out  # nothing of its conversation is linked
    assert await with_session_proximity(db, candidates, {}) == {}
