"""The update-statement rules (mind/knowledge/updates.py): cues, values and which pairs supersede,
as tables of cases."""

from __future__ import annotations

import pytest

from mind.knowledge.updates import (
    Statement,
    choices,
    is_history_query,
    old_values,
    supersedes,
    update_cue,
    values,
)


@pytest.mark.parametrize(("text", "cue"), [
    ("OK, decision made with Jonas: PostgreSQL 16 with TimescaleDB. MongoDB is out.", "decision"),
    ("I like Driftwood. Let's go with Driftwood.", "decision"),
    ("Going with a wheel-throwing class at Clayroom Studio.", "decision"),
    ("We settled on the blue logo.", "decision"),
    ("Driftwood it is!", "decision"),
    ("Change of plans: the trip moved to October.", "change"),
    ("She's 13.5 kg now, up from 11.", "change"),
    ("We booked Casa do Largo instead.", "change"),
    ("We renamed the repo to kestrel.", "change"),
    ("The dentist rescheduled my appointment.", "change"),
    ("I'm running about 25 km a week right now.", None),
    ("She picked up the kids at noon.", None),
    ("What options do we have for the database?", None),
    ("Noor and I love Lisbon in the autumn.", None),
    ("Thanks! I'll keep you updated.", None),
    ("Let me know how it turns out!", None),
    ("Not much has changed for me.", None),
    ("I've had them for 3 years now.", None),
    ("Turns out my sister's favorite restaurant is The Smokehouse.", "change"),
    ("The budget for the offsite got bumped to $4,500.", "change"),
    # a question states nothing, whatever verb it asks about
    ("Did we ever document why Atlas picked its database?", None),
    ("Which CI did we go with? I forgot.", None),
    ("Not sure about Beacon yet. Going with Buildkite for the CI?", None),
    ("Why did we switch? Anyway, going with Buildkite.", "decision"),
])
def test_update_cues(text: str, cue: str | None) -> None:
    assert update_cue(text) == cue


@pytest.mark.parametrize(("text", "expected"), [
    ("She weighs 11 kg.", {"qty:kg": {"11"}}),
    ("13,5 kg and 13.50 kilos", {"qty:kg": {"13.5"}}),
    ("The bill is $1,850 a month", {"money": {"1850"}}),
    ("€160 a night", {"money": {"160"}}),
    ("October 3-10 and 2025-10-03", {"date": {"10-3", "2025-10-03"}}),
    ("on the 4th of May? no: 4 May, at 10 am", {"date": {"5-4"}, "time": {"10am"}}),
    ("Goal: under 1:55.", {"time": {"1:55"}}),
    ("classes every Saturday", {"date": {"saturday"}}),
    ("no values here", {}),
])
def test_values(text: str, expected: dict[str, set[str]]) -> None:
    assert {k: set(v) for k, v in values(text).items()} == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("she's 13.5 kg now, up from 11", {"11"}),
    ("the bill went down from $1,200 to $900", {"1200"}),
    ("it moved from 3 pm to 5 pm", {"3"}),
    ("we took the train instead of the ferry", {"ferry"}),
    ("Casa do Largo rather than Alfama", {"alfama"}),
    ("nothing replaced here", set()),
])
def test_old_values(text: str, expected: set[str]) -> None:
    assert set(old_values(text)) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("For Atlas we're going with MongoDB as the DB.", {"mongodb"}),
    ("Change of plan on Cobalt: we're switching the hosting provider to Hetzner.", {"hetzner"}),
    ("We settled the message queue question for Granite: it's RabbitMQ.", {"rabbitmq"}),
    ("Decision made: we're going with ClickHouse. DuckDB is out.", {"clickhouse"}),
    ("Going with a wheel-throwing class at Clayroom Studio.", {"wheel-throwing class"}),
    ("We renamed Bluebird: the project is now called Larkspur.", {"larkspur"}),
    ("They renamed it Juniper.", {"juniper"}),
    ("The budget got bumped to $4,500 after the meeting.", {"$4,500"}),
    ("Driftwood it is!", {"driftwood"}),
    ("The hosting moved to Fly.io next week.", {"fly.io"}),
])
def test_choices(text: str, expected: set[str]) -> None:
    assert set(choices(text)) == expected


def said(fid: int, text: str, *, session: str = "s1", t: int = 0,
         at: str = "2025-01-01T00:00:00.000Z", role: str = "user",
         entities: tuple[str, ...] = ()) -> Statement:
    return Statement(fid, session, t, at, text, role, frozenset(entities))


OPTIONS = said(1, "We're choosing between PostgreSQL and MongoDB for the readings store.",
               t=0, entities=("postgresql", "mongodb"))
DECISION = said(2, "Decision made: PostgreSQL 16 with TimescaleDB. MongoDB is out.", t=2,
                entities=("postgresql", "mongodb", "timescaledb"))
WEIGHT = said(3, "She weighs 11 kg and is very food-motivated.", session="s2",
              at="2025-03-09T10:00:00.000Z")
WEIGHT_NOW = said(4, "Vet check: she's 13.5 kg now, up from 11, so a diet.", session="s3",
                  at="2025-09-14T10:00:00.000Z", entities=("okafor",))
VET = said(5, "Her first vet appointment is with Dr. Okafor on March 14.", session="s2", t=4,
           at="2025-03-09T10:05:00.000Z", entities=("okafor",))
TRIP = said(6, "We're going to Lisbon, September 12-19, staying in Alfama at €145 a night.",
            session="s4", at="2025-05-01T10:00:00.000Z", entities=("lisbon", "alfama"))
TRIP_MOVED = said(7, "Change of plans: the Lisbon trip moved, we're now going October 3-10.",
                  session="s5", at="2025-07-01T10:00:00.000Z", entities=("lisbon",))
BOOKING = said(8, "The Alfama Airbnb could not move, so we booked Casa do Largo instead, €160.",
               session="s5", t=2, at="2025-07-01T10:05:00.000Z",
               entities=("alfama airbnb", "casa do largo"))
STANDUP = said(9, "Our standup moved to 10 am on Mondays now.", session="s6",
               at="2025-08-01T10:00:00.000Z", entities=("standup",))


@pytest.mark.parametrize(("new", "old", "cosine", "expected"), [
    (DECISION, OPTIONS, 0.56, "decision"),  # a choice among options, same conversation
    (DECISION, OPTIONS, 0.2, None),  # ... but not when the turns are unalike
    (OPTIONS, DECISION, 0.56, None),  # the older turn never supersedes the newer
    (WEIGHT_NOW, WEIGHT, 0.56, "change"),  # "up from 11" names the old value
    (WEIGHT_NOW, VET, 0.55, None),  # shares Dr. Okafor but no value of the same kind
    (TRIP_MOVED, TRIP, 0.70, "change"),  # a new date for the same trip
    (TRIP_MOVED, TRIP, 0.40, None),  # another conversation needs a closer match
    (BOOKING, TRIP, 0.55, "change"),  # a replaced booking: "Alfama Airbnb" ~ "Alfama"
    (BOOKING, TRIP_MOVED, 0.6, None),  # no entity in common: both stay current
    (STANDUP, TRIP, 0.5, None),  # an unrelated later change
    (STANDUP, VET, 0.5, None),
    (said(10, "Driftwood it is!", t=3, role="assistant"), OPTIONS, 0.9, None),  # assistants
    (said(13, TRIP_MOVED.text, session="s5", at=TRIP_MOVED.created_at, role="document",
          entities=TRIP_MOVED.entities), TRIP, 0.7, None),  # documents: no timeline
    (TRIP_MOVED, said(14, TRIP.text, session="s4", at=TRIP.created_at, role="document",
                      entities=TRIP.entities), 0.7, None),
    (said(11, "She's 11 kg now.", session="s3", at="2025-09-14T10:00:00.000Z",
          entities=("biscuit",)),
     said(12, "Biscuit weighs 11 kg.", session="s2", entities=("biscuit",)), 0.8, None),
])
def test_which_pairs_supersede(new: Statement, old: Statement, cosine: float,
                               expected: str | None) -> None:
    assert supersedes(new, old, cosine) == expected


ATLAS_DB = said(20, "For Atlas we're going with MongoDB as the DB.", session="p1",
                at="2025-02-01T10:00:00.000Z", entities=("atlas", "mongodb"))
ATLAS_CI = said(21, "For Atlas we're going with CircleCI as the CI.", session="p2",
                at="2025-03-01T10:00:00.000Z", entities=("atlas", "circleci"))
ATLAS_CI_NOW = said(22, "Change of plan on Atlas: we're switching the CI to Jenkins.",
                    session="p3", at="2025-05-01T10:00:00.000Z", entities=("atlas", "jenkins"))
GRANITE_DB = said(23, "For Granite we're going with MongoDB as the database.", session="p4",
                  at="2025-06-01T10:00:00.000Z", entities=("granite", "mongodb"))
ATLAS_LEAD = said(24, "Chloe Martin is the lead engineer on Atlas.", session="p2", t=-2,
                  at="2025-03-01T09:58:00.000Z", entities=("atlas",))


@pytest.mark.parametrize(("new", "old", "cosine", "expected"), [
    (ATLAS_CI_NOW, ATLAS_CI, 0.55, "change"),  # the same thing of Atlas: "the CI"
    (ATLAS_CI, ATLAS_DB, 0.55, None),  # two decisions about different parts of one project
    (ATLAS_CI_NOW, ATLAS_DB, 0.5, None),
    (GRANITE_DB, ATLAS_DB, 0.85, None),  # the same value for another project: no update
    (ATLAS_CI, ATLAS_LEAD, 0.49, None),  # same conversation, same project, another thing
    # other words for one thing ("the DB", "the datastore"): the turns are alike
    (said(25, "Revisited the datastore for Atlas today and went with Cassandra instead.",
          session="p5", at="2025-07-01T10:00:00.000Z", entities=("atlas", "cassandra")),
     ATLAS_DB, 0.68, "decision"),
    (said(26, "Revisited the datastore for Atlas today and went with Cassandra instead.",
          session="p5", at="2025-07-01T10:00:00.000Z", entities=("atlas", "cassandra")),
     ATLAS_DB, 0.5, None),
])
def test_one_thing_of_an_entity(new: Statement, old: Statement, cosine: float,
                                expected: str | None) -> None:
    """An update replaces a statement about the same thing of an entity, not every statement
    that names the entity or the same value."""
    assert supersedes(new, old, cosine) == expected


def test_same_conversation_window() -> None:
    far = said(2, DECISION.text, t=9, entities=DECISION.entities)
    assert supersedes(far, OPTIONS, 0.9) is None
    assert supersedes(said(2, DECISION.text, t=8), OPTIONS, 0.9) == "decision"
    # in its conversation a decision closes a question or options, or a statement of its thing
    aside = said(3, "The standup ran long again today.", t=1)
    assert supersedes(said(4, DECISION.text, t=3), aside, 0.5) is None
    same_thing = said(5, "The readings store needs PostgreSQL replicas.", t=1,
                      entities=("postgresql",))
    assert supersedes(DECISION, same_thing, 0.5) == "decision"


@pytest.mark.parametrize(("query", "history"), [
    ("What was the first name we picked?", True),
    ("Which database did we originally want?", True),
    ("How much did Biscuit weigh before?", True),
    ("How much does Biscuit weigh now?", False),
    ("Which database did Maya choose?", False),
])
def test_history_questions(query: str, history: bool) -> None:
    assert is_history_query(query) is history
