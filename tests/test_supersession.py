"""Current vs outdated statements through the product path (harvest → actor → cognify with the
real model → HiveMind.recall): each kind of update ranks its current statement first and keeps
the old one findable; an unrelated later change supersedes nothing; forgetting the update makes
the old statement current again; ``make run``'s questions all find their answer."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from hive_mind.facade import HiveMind
from mind.errors import ValidationError
from tests.chat_world import chat_mind
from tests.procs import ROOT

pytestmark = pytest.mark.timeout(600)

# (conversation, time, speaker, text); each update in its own later conversation unless noted
TURNS = [
    ("db", "2025-01-10T10:00:00Z", "Sam",
     "For the Wren analytics service we're choosing between ClickHouse and DuckDB. "
     "Which one fits better?"),
    ("db", "2025-01-10T10:01:00Z", "Assistant",
     "ClickHouse scales out across servers; DuckDB is embedded and simpler to run."),
    ("db", "2025-01-10T10:05:00Z", "Sam",
     "Decision made: we're going with ClickHouse. DuckDB is out."),
    ("dentist", "2025-03-01T09:00:00Z", "Sam",
     "My dentist appointment with Dr. Hale is on May 4 at 10 am."),
    ("dentist-2", "2025-04-20T09:00:00Z", "Sam",
     "Dr. Hale's office rescheduled: my dentist appointment moved to May 18 at 2 pm."),
    ("rent", "2025-01-15T18:00:00Z", "Sam",
     "The monthly rent for the Elm Street flat is $1,450."),
    ("rent-2", "2025-07-01T18:00:00Z", "Sam",
     "Rent for the Elm Street flat is now $1,600 a month, up from 1,450."),
    ("name", "2025-02-01T12:00:00Z", "Sam",
     "The mobile app project is called Bluebird for now."),
    ("name-2", "2025-06-01T12:00:00Z", "Sam",
     "We renamed Bluebird: the mobile app project is now called Larkspur."),
    ("hotel", "2025-05-01T15:00:00Z", "Sam",
     "For the Porto offsite we booked the Hotel Infante for three nights."),
    ("hotel-2", "2025-05-20T15:00:00Z", "Sam",
     "Hotel Infante cancelled on us, so we booked Casa Azul in Porto instead for the offsite."),
    ("standup", "2025-06-10T08:00:00Z", "Sam",
     "Our weekly standup moved to Thursdays at 9 am now."),
    ("misc", "2025-02-10T08:00:00Z", "Sam", "I finally fixed the squeaky hinge on the back door."),
    ("misc", "2025-02-10T08:02:00Z", "Sam", "The garden needs mulch before the first frost."),
]
# question, the current statement's text, the outdated one's
CASES = [
    ("Which database did we choose for the Wren analytics service?", "going with ClickHouse",
     "choosing between ClickHouse"),
    ("When is my dentist appointment with Dr. Hale?", "moved to May 18", "on May 4 at 10 am"),
    ("How much is the monthly rent for the Elm Street flat?", "now $1,600", "is $1,450."),
    ("What is the mobile app project called?", "now called Larkspur", "called Bluebird for now"),
    ("Which hotel did we book for the Porto offsite?", "Casa Azul", "booked the Hotel Infante"),
]


@dataclass
class World:
    hm: HiveMind
    ids: dict[str, int]  # a distinctive piece of text → frame id


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    async with chat_mind(tmp_path_factory.mktemp("supersession"), TURNS) as (hm, ids):
        yield World(hm, ids)


def _id(world: World, piece: str) -> int:
    return next(fid for text, fid in world.ids.items() if piece in text)


async def _ask(world: World, question: str, limit: int = 5) -> list[dict[str, Any]]:
    return await world.hm.recall(question, limit=limit, touch=False, explain=True)


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(("question", "current", "outdated"), CASES)
async def test_the_current_statement_ranks_first_and_the_old_one_stays(
        world: World, question: str, current: str, outdated: str) -> None:
    new, old = _id(world, current), _id(world, outdated)
    hits = await _ask(world, question)
    ranked = [h["id"] for h in hits]
    assert ranked[0] == new, [h["content"] for h in hits]
    assert old in ranked  # still findable, below the update
    by_id = {h["id"]: h for h in hits}
    assert old in by_id[new]["explain"]["supersedes"]
    assert new in by_id[old]["explain"]["superseded_by"]


@pytest.mark.asyncio(loop_scope="module")
async def test_a_history_question_is_not_lifted(world: World) -> None:
    """"What was the first hotel…" asks for the old value: no update is lifted above it."""
    hits = await _ask(world, "What was the first hotel we booked for the Porto offsite?")
    old = _id(world, "booked the Hotel Infante")
    assert old in [h["id"] for h in hits[:2]]
    assert all(h["explain"]["update"] == 0.0 for h in hits)


@pytest.mark.asyncio(loop_scope="module")
async def test_as_of_a_date_asks_for_the_state_then(world: World) -> None:
    """"As of <date>" is the state on that day: before the rent went up, the old rent is the
    answer and the later update is not lifted above it; after it, the update is."""
    old, new = _id(world, "is $1,450."), _id(world, "now $1,600")
    then = await _ask(world, "As of 1 March 2025, how much was the rent for the Elm Street flat?")
    assert then[0]["id"] == old, [h["content"] for h in then]
    assert all(h["explain"]["update"] == 0.0 for h in then if h["id"] == new)
    later = await _ask(world, "As of 1 August 2025, how much was the rent for the Elm Street flat?")
    assert later[0]["id"] == new, [h["content"] for h in later]


@pytest.mark.asyncio(loop_scope="module")
async def test_an_unrelated_later_change_supersedes_nothing(world: World) -> None:
    standup = _id(world, "weekly standup")
    hits = await _ask(world, "When is our weekly standup?", limit=10)
    assert hits[0]["id"] == standup
    assert hits[0]["explain"]["supersedes"] == []
    for question, _, _ in CASES:
        for hit in await _ask(world, question, limit=10):
            assert standup not in hit["explain"]["superseded_by"], question


@pytest.mark.asyncio(loop_scope="module")
async def test_the_graph_view_shows_the_current_value_and_its_history(world: World) -> None:
    new, old = _id(world, "Casa Azul"), _id(world, "booked the Hotel Infante")
    found = await world.hm.search_entities("Infante")
    assert found, "the hotel is an entity"
    versions = {v["frame_id"]: v for e in found for v in e["history"]}
    assert versions[new]["current"] and versions[new]["valid_to"] is None
    assert not versions[old]["current"] and versions[old]["superseded_by"] == [new]
    assert versions[old]["valid_to"] == versions[new]["valid_from"]  # replaced when it was said
    unrelated = await world.hm.search_entities("Thursdays")
    assert all(e["history"] == [] for e in unrelated)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_catch_up_about_a_topic_runs_the_lanes_decisions_first(world: World) -> None:
    """"What did we decide about X" is a question about X, not a briefing of the newest frames:
    the topic's decision first, real scores, and explain names the path."""
    decision = _id(world, "going with ClickHouse")
    hits = await _ask(world, "What did we decide about the Wren analytics service?")
    assert hits[0]["id"] == decision
    assert {h["explain"]["path"] for h in hits} == {
        "catch-up about 'Wren analytics service': lanes, decisions first"}
    assert len({h["score"] for h in hits}) > 1  # not a briefing's flat 1.0
    assert hits[0]["explain"]["keyword_rank"] or hits[0]["explain"]["vector_rank"]
    # a decision about something else does not outrank the asked topic's statements
    hotel = await _ask(world, "What did we decide about the Porto offsite hotel?")
    assert hotel[0]["id"] in (_id(world, "Casa Azul"), _id(world, "booked the Hotel Infante"))
    assert decision not in [h["id"] for h in hotel[:2]]


@pytest.mark.asyncio(loop_scope="module")
async def test_a_briefing_without_a_topic_skips_the_lanes(world: World) -> None:
    hits = await _ask(world, "Where were we?")
    assert hits and {h["explain"]["path"] for h in hits} == {"briefing"}
    assert all(h["explain"]["keyword_rank"] is None for h in hits)


@pytest.mark.asyncio(loop_scope="module")
async def test_absolute_relevance_tells_a_match_from_noise(world: World) -> None:
    """The rank score of any query's top result is ~1; absolute_relevance is not: a question
    about the mind scores high, one about something it never heard of scores low, and
    min_relevance keeps only the likely matches."""
    related = await _ask(world, "Which hotel did we book for the Porto offsite?")
    assert related[0]["absolute_relevance"] >= 0.5
    for noise in ("quantum chromodynamics lattice gauge", "sourdough starter feeding schedule"):
        hits = await _ask(world, noise)
        assert hits and hits[0]["score"] >= 0.5  # the rank score cannot tell
        assert max(h["absolute_relevance"] for h in hits) < 0.3
        assert await world.hm.recall(noise, touch=False, min_relevance=0.5) == []
    kept = await world.hm.recall("Which hotel did we book for the Porto offsite?",
                                 touch=False, min_relevance=0.5)
    assert kept and kept[0]["id"] == related[0]["id"]
    assert all(h["absolute_relevance"] >= 0.5 for h in kept)
    # an update is as relevant as the statement it replaces ("now called Larkspur")
    name = await _ask(world, "What is the mobile app project called?")
    assert name[0]["absolute_relevance"] >= name[1]["absolute_relevance"]
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValidationError):
            await world.hm.recall("hotel", min_relevance=bad)


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(("question", "current", "outdated"), CASES)
async def test_an_updates_absolute_relevance_does_not_depend_on_the_limit(
        world: World, question: str, current: str, outdated: str) -> None:
    """The update takes the value of the statement it replaces when that statement is a
    candidate of the recall, whether or not the limit lets it be returned: asked for one
    result, the current statement is as relevant as asked for ten (min_relevance keeps it)."""
    new = _id(world, current)
    alone = await _ask(world, question, limit=1)
    among = {h["id"]: h for h in await _ask(world, question, limit=10)}
    assert alone[0]["id"] == new
    assert alone[0]["absolute_relevance"] == among[new]["absolute_relevance"]
    assert among[new]["absolute_relevance"] >= among[_id(world, outdated)]["absolute_relevance"]


@pytest.mark.asyncio(loop_scope="module")
async def test_forgetting_the_update_makes_the_old_statement_current(world: World) -> None:
    # runs last in this module: it erases the rent update
    question = "How much is the monthly rent for the Elm Street flat?"
    new, old = _id(world, "now $1,600"), _id(world, "is $1,450.")
    await world.hm.forget(new)
    hits = await _ask(world, question)
    assert hits[0]["id"] == old
    assert hits[0]["explain"]["superseded_by"] == []
    assert new not in [h["id"] for h in hits]


async def test_make_run_questions_all_find_their_answer(tmp_path: Path) -> None:
    """The bundled export and its eight questions (examples/), unchanged: every answer in the
    top 5 with the real model, as `make run` prints it."""
    questions = json.loads((ROOT / "examples" / "questions.json").read_text())
    async with await HiveMind.open(data_dir=tmp_path / "demo", embedding_provider="inprocess",
                                   redis_url=None) as hm:
        await hm.harvest("chatgpt", ROOT / "examples" / "chatgpt-export" / "conversations.json")
        await hm.wait_idle()
        missed = []
        for q in questions:
            hits = await hm.recall(q["question"], limit=5, touch=False)
            if not any(q["expect"] in h["content"] for h in hits):
                missed.append(q["question"])
    assert missed == []
