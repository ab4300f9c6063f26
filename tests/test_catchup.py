"""Catch-up questions (mind/retrieval/catchup.py) through the product path with the real model:
"what did we decide about X" searches X and ranks the decisions about X first, with real scores;
a decision about something else is not lifted; only a catch-up without a topic ("where were
we?") is a briefing; explain, the search response and ``recall --explain`` say which ran."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from hive_mind.cli import main
from hive_mind.facade import HiveMind
from mind.embeddings.inprocess import InProcessEmbedder
from mind.frames.model import NewFrame
from mind.retrieval.catchup import (
    catch_up_topic,
    decision_factor,
    is_catch_up,
    is_decision,
    topic_text,
)
from mind.retrieval.search import HybridSearch
from mind.storage.db import Database
from tests.chat_world import chat_mind, write_export
from tests.explain_checks import check_explain
from tests.support import cognify

pytestmark = pytest.mark.timeout(600)

# (conversation, time, speaker, text)
TURNS = [
    ("db", "2025-01-10T10:00:00Z", "Sam",
     "For the Heron billing service we're torn between Postgres and CockroachDB. "
     "What would you pick?"),
    ("db", "2025-01-10T10:02:00Z", "Assistant",
     "Postgres is simpler to operate; CockroachDB spreads writes across regions."),
    ("db", "2025-01-10T10:06:00Z", "Sam", "OK, decision made: Postgres for Heron billing."),
    # a topic nothing was decided about
    ("garden", "2025-02-10T09:00:00Z", "Sam",
     "The garden fence is leaning after the storm; two posts need replacing before winter."),
    # decisions about other things, worded like the question ("what did we decide…")
    ("kitchen", "2025-03-01T18:00:00Z", "Sam",
     "We decided to repaint the kitchen cabinets sage green."),
    ("trip", "2025-03-05T18:00:00Z", "Sam",
     "We agreed on the Alfama apartment for the Lisbon trip."),
    # the newest frames: nothing decided, about nothing asked
    ("misc", "2025-06-01T08:00:00Z", "Sam", "I finally fixed the squeaky hinge on the back door."),
    ("misc", "2025-06-01T08:02:00Z", "Sam", "The dog needs her booster shot next month."),
    ("misc", "2025-06-01T08:04:00Z", "Sam", "Reading a novel about lighthouse keepers."),
    ("misc", "2025-06-01T08:06:00Z", "Sam", "Ran 10 km along the river this morning."),
    ("misc", "2025-06-01T08:08:00Z", "Sam", "The printer is out of cyan ink again."),
    ("misc", "2025-06-01T08:10:00Z", "Sam", "Booked a haircut for Friday at 5 pm."),
]
NEWEST = [text for conv, _, _, text in TURNS if conv == "misc"]
HERON = "What did we decide about the Heron billing service?"
HERON_PATH = "catch-up about 'Heron billing service': lanes, decisions first"


@dataclass
class World:
    hm: HiveMind
    ids: dict[str, int]  # each turn's text → frame id

    def id(self, piece: str) -> int:
        return next(fid for text, fid in self.ids.items() if piece in text)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    async with chat_mind(tmp_path_factory.mktemp("catchup"), TURNS) as (hm, ids):
        yield World(hm, ids)


async def _ask(world: World, question: str, limit: int = 6) -> list[dict[str, Any]]:
    return await world.hm.recall(question, limit=limit, touch=False, explain=True)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_topical_catch_up_ranks_the_topics_decision_first(world: World) -> None:
    """Not the briefing's decisions-then-newest at a flat 1.000: the lanes ran on the topic,
    its decision leads, the newest unrelated frames stay out of the top, scores differ."""
    hits = await _ask(world, HERON)
    decision = world.id("Postgres for Heron")
    assert hits[0]["id"] == decision, [h["content"] for h in hits]
    newest = {world.id(text) for text in NEWEST}
    assert not newest & {h["id"] for h in hits[:3]}
    assert len({h["score"] for h in hits}) > 1
    for h in hits:
        check_explain(h)
        assert h["explain"]["path"] == HERON_PATH
    top = hits[0]["explain"]
    assert top["keyword_rank"] is not None and top["vector_rank"] is not None
    assert top["decision"] == 1.5
    # the question about the same topic without the catch-up phrase finds the same frames
    plain = await _ask(world, "Heron billing service")
    assert {h["id"] for h in plain[:3]} == {h["id"] for h in hits[:3]}


@pytest.mark.asyncio(loop_scope="module")
async def test_a_decision_about_something_else_does_not_outrank_the_topic(
        world: World) -> None:
    """Nothing was decided about the fence: the frame about it leads, and the decisions about
    the kitchen and the trip (worded "we decided", "we agreed", like the question) are not
    lifted for being decisions."""
    hits = await _ask(world, "What did we decide about the garden fence?")
    ranked = [h["id"] for h in hits]
    assert ranked[0] == world.id("garden fence is leaning"), [h["content"] for h in hits]
    for other in ("repaint the kitchen", "Alfama apartment", "Postgres for Heron"):
        fid = world.id(other)
        if fid in ranked:
            assert hits[ranked.index(fid)]["explain"]["decision"] == 1.0, other


@pytest.mark.asyncio(loop_scope="module")
async def test_a_decision_about_the_topic_outranks_a_statement_about_it(world: World) -> None:
    """The Lisbon trip has one frame, a decision: it leads a catch-up about the trip, lifted
    as one (and the kitchen decision, also "we …" and in the candidates, is not)."""
    hits = await _ask(world, "Catch me up on the Lisbon trip")
    assert hits[0]["id"] == world.id("Alfama apartment")
    assert hits[0]["explain"]["decision"] == 1.5
    assert hits[0]["explain"]["path"] == "catch-up about 'Lisbon trip': lanes, decisions first"
    assert all(h["explain"]["decision"] == 1.0 for h in hits[1:])


@pytest.mark.asyncio(loop_scope="module")
async def test_a_briefing_without_a_topic_skips_the_lanes(world: World) -> None:
    hits = await _ask(world, "What did we decide?", limit=8)
    assert {h["explain"]["path"] for h in hits} == {"briefing"}
    assert all(h["explain"]["keyword_rank"] is None and h["explain"]["vector_rank"] is None
               for h in hits)
    reasons = {h["id"]: h["explain"]["reason"] for h in hits}
    decisions = {world.id(t) for t in ("Postgres for Heron", "repaint the kitchen",
                                       "Alfama apartment")}
    assert {fid for fid, why in reasons.items() if why == "decision"} == decisions
    assert world.id(NEWEST[-1]) in reasons  # and the newest frames
    # the question before the decision ("torn between…?") is no decision
    assert world.id("torn between Postgres") not in decisions


async def test_the_search_response_names_the_path(db: Database,
                                                  real_model: InProcessEmbedder) -> None:
    """HybridSearch on a real mind file: a topical catch-up is a hybrid search with a note,
    a briefing is mode catch_up."""
    await cognify(db, real_model, *[NewFrame("g", text) for *_, text in TURNS])
    search = HybridSearch(db, real_model)
    try:
        topical = await search.search(HERON, limit=5, touch=False)
        assert topical.mode == "hybrid" and HERON_PATH in topical.notes
        assert "Postgres for Heron" in topical.results[0].frame.content
        briefing = await search.search("where were we?", limit=5, touch=False)
        assert briefing.mode == "catch_up"
        assert {r.path for r in briefing.results} == {"briefing"}
    finally:
        await search.close()


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("HIVE_MIND_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HIVE_MIND_EMBEDDING_PROVIDER", "inprocess")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for key in ("HIVE_MIND_REDIS_URL", "HIVE_MIND_URL", "HIVE_MIND_API_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    export = tmp_path / "chats.jsonl"
    write_export(export, TURNS)
    yield export


def test_recall_explain_prints_the_path(cli_env: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    def run(*args: str) -> str:
        capsys.readouterr()
        assert main(list(args)) == 0
        return capsys.readouterr().out

    assert json.loads(run("harvest", "import", "universal", str(cli_env), "--json")
                      )["pending_index"] == 0
    out = " ".join(run("recall", HERON, "--explain", "--limit", "3").split())  # unwrapped
    assert f"path: {HERON_PATH};" in out
    # the match column names the decision lift (a narrow column may wrap it onto two lines)
    assert "1.5000" in out and "decision" in out.split("path:")[0]
    briefing = " ".join(run("recall", "where were we?", "--explain", "--limit", "3").split())
    assert "path: briefing;" in briefing
    # --json stays a list of results; each explain carries the path
    hits = json.loads(run("recall", HERON, "--json", "--explain", "--limit", "3"))
    assert isinstance(hits, list) and {h["explain"]["path"] for h in hits} == {HERON_PATH}
    assert hits[0]["explain"]["decision"] == 1.5


@pytest.mark.parametrize(("query", "topic"), [
    ("where were we?", ""),
    ("Catch me up", ""),
    ("What did we decide?", ""),
    ("recap please", ""),
    ("brief me", ""),
    ("what did we decide so far?", ""),
    ("Quick recap of where we are this week", ""),
    ("catch me up on what's new", ""),
    ("what did we decide about the database", "database"),
    ("catch me up on the Lisbon trip", "Lisbon trip"),
    ("Recap of the tidewatch schema", "tidewatch schema"),
    ("What did we agree on for the Lisbon trip?", "Lisbon trip"),
    ("Lisbon trip: what did we decide?", "Lisbon trip"),
    ("what have we decided about time off", "time off"),
    ("what was decided about the new logo?", "logo"),
    ("Which database did we choose?", None),
    ("what did I pick up from the store", None),
])
def test_catch_up_with_and_without_a_topic(query: str, topic: str | None) -> None:
    assert catch_up_topic(query) == topic
    assert is_catch_up(query) is (topic == "")


def test_the_keyword_lane_reads_the_query_without_its_catch_up_phrase() -> None:
    assert topic_text("what did we decide about the database") == "about the database"
    assert topic_text("What did we agree on for the Lisbon trip?") == "on for the Lisbon trip?"
    assert topic_text("Which database for Tidewatch?") == "Which database for Tidewatch?"


@pytest.mark.parametrize(("text", "relevance", "best", "factor"), [
    ("OK, decision made: Postgres for Heron billing.", 0.16, 0.16, 1.5),  # the best, however low
    ("OK, decision made: Postgres for Heron billing.", 0.6, 0.99, 1.5),
    ("We decided to repaint the kitchen cabinets.", 0.03, 0.99, 1.0),  # about something else
    ("The garden fence is leaning after the storm.", 0.99, 0.99, 1.0),  # no decision
])
def test_only_a_decision_about_the_topic_is_lifted(text: str, relevance: float, best: float,
                                                   factor: float) -> None:
    assert decision_factor(text, relevance, best) == factor


@pytest.mark.parametrize(("text", "decided"), [
    ("We decided to use Postgres for billing", True),
    ("OK, decision made with Jonas: PostgreSQL 16 with TimescaleDB.", True),
    ("I like Driftwood: calm and beachy. Let's go with Driftwood.", True),
    ("Driftwood it is — and driftwood.dog is a great domain.", True),
    ("Going with a wheel-throwing class at Clayroom Studio.", True),
    ("We opted for the night train.", True),
    ("I picked the blue one in the end.", True),
    ("We settled on Tuesdays.", True),
    ("We settled the login service question for Harbor: it's Cognito.", True),
    ("Decision on Ember: Amazon SQS for the message broker.", True),
    ("Agreed: we ship on Friday.", True),
    ("It's settled, the offsite is in Porto.", True),
    ("We decided not to use Kafka.", True),  # a decision, negative in content
    ("Which one fits better? We chose DuckDB.", True),
    ("Did we ever document why Falcon picked its login service?", False),
    ("We haven't decided yet.", False),
    ("We need to decide between Postgres and MongoDB.", False),
    ("Help me decide on a name.", False),
    ("A short decision record with context, options and consequences works well.", False),
    ("Nothing was agreed at the meeting.", False),
    ("I'm not going with Okta after all", False),
    ("Should we go with React or Svelte?", False),
    ("I picked up the kids at five.", False),
])
def test_decision_wording(text: str, decided: bool) -> None:
    assert is_decision(text) is decided
