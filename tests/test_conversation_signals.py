"""Conversation signals (mind/retrieval/conversation.py) as pure functions, then through HybridSearch on a
real mind file with the real embedding model: time named in the query, the answer that follows
a question, speakers, and the bound on graph proximity. Each integration test also runs with the
signal switched off, to show that the signal — not the lanes — does the work."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from mind.embeddings.inprocess import InProcessEmbedder
from mind.frames.model import Frame, NewFrame
from mind.frames.store import FrameStore
from mind.knowledge.store import KnowledgeGraph
from mind.retrieval.candidates import SearchResult
from mind.retrieval.conversation import (
    DEFAULT_SIGNALS,
    Signals,
    is_gathering,
    named_speakers,
    neighbour_gains,
    session_bonus,
    speaker_of,
    spread_factors,
)
from mind.retrieval.scoring import RRF_K
from mind.retrieval.search import HybridSearch
from mind.retrieval.text_query import query_terms, tokenize
from mind.storage.db import Database
from mind.timeutil import format_ts
from tests.support import cognify

# -- pure functions ----------------------------------------------------------------------------

TS = "2024-01-01T00:00:00.000Z"


def frame(fid: int, gop: str, t: int, content: str, speaker: object = None) -> Frame:
    return Frame(id=fid, frame_type="I", gop_id=gop, t=t, base_frame_id=None, content=content,
                 importance="normal", source="import", access_count=0, created_at=TS,
                 recorded_at=TS, last_accessed=TS, content_hash=f"h{fid}",
                 metadata={} if speaker is None else {"speaker": speaker})


def test_session_bonus_ranks_conversations_by_their_best_turns() -> None:
    fused = {1: 0.20, 2: 0.10, 3: 0.15, 4: 0.90, 5: 0.80}
    session_of = {1: "chat:a", 2: "chat:a", 3: "chat:b", 4: "save:2024-01-01"}  # 5: unknown
    bonus = session_bonus(fused, session_of, RRF_K)
    w = DEFAULT_SIGNALS.session_weight
    # chat:a (0.30) before chat:b (0.15); every turn of a conversation gets its conversation's
    # bonus; the daily bucket and frames without a session get none, however strong
    assert bonus == {1: pytest.approx(w / RRF_K), 2: pytest.approx(w / RRF_K),
                     3: pytest.approx(w / (RRF_K + 1))}


def test_session_bonus_counts_only_the_top_turns() -> None:
    fused = {1: 0.25, **{10 + i: 0.06 for i in range(6)}}
    session_of = {1: "chat:one-strong", **{10 + i: "chat:many-weak" for i in range(6)}}
    bonus = session_bonus(fused, session_of, RRF_K)  # 0.25 against 3 × 0.06 = 0.18
    assert bonus[1] > bonus[10]
    wide = session_bonus(fused, session_of, RRF_K, replace(DEFAULT_SIGNALS, session_top=6))
    assert wide[10] > wide[1]  # 6 × 0.06 = 0.36 now counts


def test_session_bonus_ties_and_switch_off() -> None:
    bonus = session_bonus({1: 0.1, 2: 0.1}, {1: "chat:b", 2: "chat:a"}, 5)
    assert bonus[2] == pytest.approx(0.6 / 5) and bonus[1] == pytest.approx(0.6 / 6)  # by name
    assert session_bonus({1: 0.1}, {1: "chat:a"}, RRF_K, replace(DEFAULT_SIGNALS,
                                                                  session_weight=0.0)) == {}
    assert session_bonus({}, {}, RRF_K) == {}


def test_neighbour_gains_only_questions_pass_score() -> None:
    hits = [
        (frame(1, "chat:a", 5, "Have you ever been to the Lost Coast?"), 0.4),
        (frame(2, "chat:a", 9, "The Lost Coast is in California."), 0.5),  # a statement
        (frame(3, "save:2024-01-01", 2, "Where is the Lost Coast?"), 0.6),  # daily bucket
    ]
    share = DEFAULT_SIGNALS.neighbour_share
    assert neighbour_gains(hits) == {("chat:a", 4): pytest.approx(share * 0.4),
                                     ("chat:a", 6): pytest.approx(share * 0.4)}


def test_neighbour_gains_sum_and_are_bounded() -> None:
    q1 = frame(1, "chat:a", 5, "Was it cold?")
    q2 = frame(2, "chat:a", 7, "And the tides?")
    gains = neighbour_gains([(q1, 0.2), (q2, 0.1)])
    share = DEFAULT_SIGNALS.neighbour_share
    assert gains[("chat:a", 6)] == pytest.approx(share * 0.2 + share * 0.1)  # between two questions
    assert set(gains) == {("chat:a", 4), ("chat:a", 6), ("chat:a", 8)}
    only_first = neighbour_gains([(q1, 0.2), (q2, 0.1)], replace(DEFAULT_SIGNALS,
                                                                  neighbour_hits=1))
    assert set(only_first) == {("chat:a", 4), ("chat:a", 6)}
    assert neighbour_gains([(q1, 0.2)], replace(DEFAULT_SIGNALS, neighbour_share=0.0)) == {}
    assert neighbour_gains([]) == {}


@pytest.mark.parametrize(
    ("query", "speakers", "expected"),
    [
        ("What recipes has Nate made?", ["Nate", "Joanna"], {"Nate"}),
        ("What is Nate's favourite dish?", ["Nate", "Joanna"], {"Nate"}),
        ("What is Nate’s favourite dish?", ["Nate"], {"Nate"}),  # typographic apostrophe
        ("what did NATE and joanna cook", ["Nate", "Joanna", "Tim"], {"Nate", "Joanna"}),
        ("What did Mary Ann say about the trip?", ["Mary Ann", "Annabel"], {"Mary Ann"}),
        ("What did Mary say?", ["Mary Ann"], set()),  # part of a longer name is not the name
        ("What did Timothy cook?", ["Tim"], set()),  # no partial word matches
        ("What did Tim cook?", ["Timothy"], set()),
        ("What did Natalie bake?", ["Nate", "Nat"], set()),
        ("What did Zoë plan for June?", ["Zoë"], {"Zoë"}),
        ("What did Dr Smith prescribe?", ["Dr. Smith"], {"Dr. Smith"}),
        ("What did anyone say?", ["—", ""], set()),  # a name of no letters names nobody
        ("", ["Nate"], set()),
    ],
)
def test_named_speakers(query: str, speakers: list[str], expected: set[str]) -> None:
    assert named_speakers(query, speakers) == expected


def test_speaker_of_reads_only_a_text_speaker() -> None:
    assert speaker_of(frame(1, "chat:a", 0, "hi", "Nate")) == "Nate"
    assert speaker_of(frame(1, "chat:a", 0, "hi")) is None
    assert speaker_of(frame(1, "chat:a", 0, "hi", "")) is None
    assert speaker_of(frame(1, "chat:a", 0, "hi", 42)) is None


# -- through HybridSearch with the real model ---------------------------------------------------

Turn = tuple[str, str, str | None]  # speaker, text, created_at


async def add(db: Database, model: InProcessEmbedder, gop: str, turns: Sequence[Turn]) -> list[int]:
    """One conversation's turns in order (t = 0, 1, …), indexed with the real model."""
    ids = await cognify(db, model, *[
        NewFrame(gop, text, source="import", created_at=ts, metadata={"speaker": speaker},
                 dedup=False)
        for speaker, text, ts in turns])
    frames = await FrameStore(db).get_many(ids)
    assert [frames[i].t for i in ids] == list(range(len(turns)))
    return ids


async def ranked(db: Database, model: InProcessEmbedder, query: str,
                 signals: Signals | None = None, **kw: object) -> list[SearchResult]:
    search = HybridSearch(db, model, signals=signals)
    try:
        response = await search.search(query, limit=20, touch=False, **kw)  # type: ignore[arg-type]
    finally:
        await search.close()
    return response.results


def order(results: list[SearchResult]) -> list[int]:
    return [r.frame.id for r in results]


DISHES = [  # the same sentence, cooked in other months (and in May of another year)
    ("2023-01-14T18:00:00Z", "lemon"), ("2023-03-11T18:00:00Z", "pea"),
    ("2023-05-20T18:00:00Z", "mushroom"), ("2022-05-21T18:00:00Z", "tomato"),
    ("2023-10-07T18:00:00Z", "pumpkin"), ("2023-08-05T18:00:00Z", "asparagus"),
]


async def dinner_parties(db: Database, model: InProcessEmbedder,
                         dishes: list[tuple[str, str]]) -> list[int]:
    """One conversation per dinner: a question, then Sam's answer; returns the answers' ids."""
    answers = []
    for i, (ts, dish) in enumerate(dishes):
        _, answer = await add(db, model, f"chat:dinner-{i}", [
            ("Alex", "What did you make for the dinner party?", ts),
            ("Sam", f"I cooked a {dish} risotto for everyone.", ts)])
        answers.append(answer)
    return answers


async def test_a_month_in_the_query_finds_the_turn_of_that_month(
    db: Database, real_model: InProcessEmbedder
) -> None:
    answers = await dinner_parties(db, real_model, DISHES)
    may_2023, may_2022 = answers[2], answers[3]
    query = "What did Sam cook in May 2023?"
    results = await ranked(db, real_model, query)
    assert results[0].frame.id == may_2023
    by_id = {r.frame.id: r for r in results}
    assert by_id[may_2023].factors["time"] == 1.0
    assert by_id[may_2022].factors["time"] == 0.0  # May of another year is not "May 2023"
    assert all(r.factors["time"] == 0.0 for r in results if r.frame.id != may_2023
               and r.frame.gop_id != "chat:dinner-2")
    # the words alone do not pick it: without the time signal another dinner comes first
    plain = await ranked(db, real_model, query, replace(DEFAULT_SIGNALS, time_boost=0.0))
    assert plain[0].frame.id != may_2023
    # a full date finds it too
    dated = await ranked(db, real_model, "What did Sam cook on 20 May 2023?")
    assert dated[0].frame.id == may_2023


async def test_a_relative_time_in_the_query_follows_the_clock(
    db: Database, real_model: InProcessEmbedder
) -> None:
    now = datetime.now(UTC)
    weeks = [3, 1, 5, 9]  # the second one is always inside "last week" (Monday–Sunday)
    answers = await dinner_parties(db, real_model, [
        (format_ts(now - timedelta(days=7 * w)), dish)
        for w, dish in zip(weeks, ["lemon", "mushroom", "pea", "pumpkin"], strict=True)])
    results = await ranked(db, real_model, "What did Sam cook last week?")
    assert results[0].frame.id == answers[1]
    assert results[0].factors["time"] == 1.0


TRIP: list[Turn] = [
    ("Sam", "I finally bought a new tent for the summer.", None),
    ("Alex", "Nice, which one did you pick?", None),
    ("Sam", "A two-person ultralight one. Alex, have you ever done the Lost Coast hike?", None),
    ("Alex", "Yes, last summer, it took us four days.", None),  # the answer: no query word
    ("Sam", "Wow. I heard the tides there are tricky.", None),
    ("Alex", "The Lost Coast hike has sections you can only pass at low tide.", None),
    ("Alex", "I would love to hike the Lost Coast again with my sister.", None),
    ("Alex", "The black sand beaches on the Lost Coast are stunning.", None),
]
OTHER_TRIPS: list[Turn] = [
    ("Jo", "How long did your trip to Big Sur take?", None),
    ("Alex", "We spent a week in Big Sur, mostly hiking.", None),
    ("Alex", "My hike up Mount Tam took two hours.", None),
    ("Jo", "The coast road was closed for a long time after the storm.", None),
    ("Alex", "The marathon took me four hours and ten minutes.", None),
    ("Alex", "The drive to Tahoe takes about three hours.", None),
]
HIKE_QUERY = "How long did Alex's Lost Coast hike take?"


async def test_the_answer_after_a_question_is_found_through_its_neighbour(
    db: Database, real_model: InProcessEmbedder
) -> None:
    trip = await add(db, real_model, "chat:trip", TRIP)
    await add(db, real_model, "chat:other", OTHER_TRIPS)
    question, answer = trip[2], trip[3]
    assert not set(query_terms(HIKE_QUERY)) & set(tokenize(TRIP[3][1]))  # no word in common
    results = await ranked(db, real_model, HIKE_QUERY)
    assert answer in order(results)[:3]
    hit = next(r for r in results if r.frame.id == answer)
    assert hit.factors["neighbour"] > 0
    assert question in order(results)[:5]
    # the neighbour signal does the work: without it the answer is far down
    off = await ranked(db, real_model, HIKE_QUERY, replace(DEFAULT_SIGNALS, neighbour_share=0.0))
    assert answer not in order(off)[:5]
    assert all(r.factors["neighbour"] == 0.0 for r in off)


async def test_a_neighbour_the_lanes_missed_becomes_a_candidate(
    db: Database, real_model: InProcessEmbedder
) -> None:
    """The turn before the question ("Nice, which one did you pick?") shares no word with the
    query, nor does the turn before it: with the keyword lane alone, only expansion adds it."""
    trip = await add(db, real_model, "chat:trip", TRIP)
    before = trip[1]
    results = await ranked(db, real_model, HIKE_QUERY, lanes="keyword")
    assert trip[2] in order(results)  # the question, found by its words
    hit = next(r for r in results if r.frame.id == before)
    assert hit.keyword_rank is None and hit.vector_rank is None and hit.rrf == 0.0
    assert hit.factors["neighbour"] > 0
    off = await ranked(db, real_model, HIKE_QUERY, replace(DEFAULT_SIGNALS, neighbour_share=0.0),
                       lanes="keyword")
    assert before not in order(off)


async def test_neighbour_expansion_stays_inside_the_filters(
    db: Database, real_model: InProcessEmbedder
) -> None:
    turns = [(s, text, "2023-06-01T10:00:00Z" if i < 3 else "2023-06-02T10:00:00Z")
             for i, (s, text, _) in enumerate(TRIP)]
    trip = await add(db, real_model, "chat:trip", turns)
    question, answer = trip[2], trip[3]
    inside = await ranked(db, real_model, HIKE_QUERY, lanes="keyword", until="2023-06-01")
    assert question in order(inside) and answer not in order(inside)
    assert all(r.frame.created_at < "2023-06-02" for r in inside)
    other = await ranked(db, real_model, HIKE_QUERY, lanes="keyword", session="chat:nowhere")
    assert other == []


async def test_naming_a_speaker_ranks_their_turn_above_a_near_twin(
    db: Database, real_model: InProcessEmbedder
) -> None:
    joanna, nate, _ = await add(db, real_model, "chat:food", [
        ("Joanna", "I made a coconut curry for dinner.", None),
        ("Nate", "I made a coconut curry for dinner with friends.", None),
        ("Joanna", "Tomorrow I want to try baking bread.", None)])
    await add(db, real_model, "chat:soup", [("Tim", "I made a lentil soup for dinner.", None)])
    query = "What did Nate make for dinner?"
    results = await ranked(db, real_model, query)
    assert order(results)[0] == nate
    assert results[0].factors["speaker"] == 1.0
    assert all(r.factors["speaker"] == 0.0 for r in results[1:])
    # the lanes alone prefer Joanna's shorter twin: the speaker signal does the work
    plain = await ranked(db, real_model, query, replace(DEFAULT_SIGNALS, speaker_boost=0.0))
    assert order(plain).index(joanna) < order(plain).index(nate)
    # a partial name is not the speaker
    natalie = await ranked(db, real_model, "What did Natalie make for dinner?")
    assert all(r.factors["speaker"] == 0.0 for r in natalie)


async def test_graph_proximity_cannot_lift_an_unrelated_frame_over_a_lane_hit(
    db: Database, real_model: InProcessEmbedder
) -> None:
    texts = [
        "The Apollo budget review is on Friday at ten.",  # the lane hit
        "The Zephyr budget review is on Friday at ten.",  # near miss, linked to Apollo
        "I bought new running shoes yesterday.",  # unrelated, linked to Apollo
        "The quarterly budget spreadsheet lives in the shared drive.",
        "Friday's standup is cancelled.",
        "Our office plants need watering twice a week.",  # unrelated, one hop from Apollo
    ]
    ids = await cognify(db, real_model, *[
        NewFrame(f"save:2024-01-0{i + 1}", text) for i, text in enumerate(texts)])
    # cognify linked the lane hit to the Apollo it names: unlinked, it has no graph help at all
    await db.execute("DELETE FROM kg_entity_frames WHERE frame_id = ?", (ids[0],))
    kg = KnowledgeGraph(db)
    apollo, _ = await kg.upsert_entity("project", "Apollo")
    ops, _ = await kg.upsert_entity("organization", "Facilities")
    await kg.create_relation(apollo.id, ops.id, "depends_on")
    await kg.link_entities_to_frames([(apollo.id, ids[1]), (apollo.id, ids[2]),
                                      (ops.id, ids[5])])
    for query in ("When is the Apollo budget review?", "Apollo review", "Apollo"):
        results = await ranked(db, real_model, query)
        by_id = {r.frame.id: r for r in results}
        assert order(results)[0] == ids[0], query
        # the graph signal did apply, and only within its bound
        assert by_id[ids[1]].factors["proximity"] == 1.0
        assert by_id[ids[2]].factors["proximity"] == 1.0
        assert by_id[ids[5]].factors["proximity"] == pytest.approx(0.7)
        assert by_id[ids[0]].factors["proximity"] == 0.0
        assert max(r.relevance for r in results) <= 1.03 + 1e-9
        assert_rescore_only_reorders_near_ties(results)


def assert_rescore_only_reorders_near_ties(results: list[SearchResult]) -> None:
    """Any two frames whose lane-and-conversation score (``fused × match``) differs by more
    than the re-score's reach (+3 % proximity, +2 % importance at most for normal frames, −5 %
    age) keep that order."""
    base = [r.factors["fused"] * r.factors["match"] for r in results]
    for i, upper in enumerate(base):
        for lower in base[i + 1:]:
            assert upper * 1.031 >= lower, (results[i].frame.content, upper, lower)


# -- questions that gather answers from many conversations ---------------------------------------


@pytest.mark.parametrize(("query", "gathering"), [
    ("What books has John read?", True),
    ("How many times has Melanie gone to the beach?", True),
    ("Which cities did we visit last year?", True),
    ("What are some hobbies Caroline has?", True),
    ("How often does Nate walk his turtles?", True),
    ("What kind of art does Caroline make?", False),
    ("When did Maria go to the beach?", False),
    ("What is my aunt's puppy called?", False),
])
def test_gathering_questions(query: str, gathering: bool) -> None:
    assert is_gathering(query) is gathering


def test_spread_factors_count_better_turns_of_the_same_conversation() -> None:
    order_ = [(1, "chat:a"), (2, "chat:a"), (3, "chat:b"), (4, "chat:a"), (5, "save:2024-01-01"),
              (6, "save:2024-01-01")]
    assert spread_factors(order_, 0.2) == {1: 1.0, 2: pytest.approx(0.8), 3: 1.0,
                                           4: pytest.approx(0.64), 5: 1.0, 6: 1.0}
    assert set(spread_factors(order_, 0.0).values()) == {1.0}


async def test_a_gathering_question_reaches_past_one_conversation(
    db: Database, real_model: InProcessEmbedder
) -> None:
    """Five turns of one chat talk about reading; another chat names the one other book. "What
    books has Ana read?" brings that chat's turn into the top 5 only with the spread."""
    ts = "2023-04-01T10:00:00Z"
    await add(db, real_model, "chat:club", [
        ("Ana", "I read Dune last month, what a book about the desert.", ts),
        ("Ana", "The book club loved how Dune handles politics.", ts),
        ("Ana", "I read Dune's sequel too, but the first book is better.", ts),
        ("Ana", "Our book club meets again to talk about Dune.", ts),
        ("Ana", "Reading Dune took me three weeks of evenings.", ts),
        ("Ana", "Books about deserts are my favourite reads.", ts)])
    other = await add(db, real_model, "chat:trip", [
        ("Ana", "On the train I finished reading Middlemarch.", "2023-09-01T10:00:00Z")])
    query = "What books has Ana read?"
    on = order(await ranked(db, real_model, query))[:5]
    off = order(await ranked(db, real_model, query, replace(DEFAULT_SIGNALS, spread=0.0)))[:5]
    assert other[0] in on and other[0] not in off
