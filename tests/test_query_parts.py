"""Two-event questions (mind/retrieval/query_parts.py): which questions split, into what, and
the relation between the events; then through the facade on a small real mind: a question about
the time between two events gets a turn about each of them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from mind.retrieval import conversation
from mind.retrieval.query_parts import EventParts, event_parts


@pytest.mark.parametrize(
    ("query", "parts", "relation"),
    [
        # how long between A and B; a short part borrows the other's leading words
        ("How many weeks passed between Maria adopting Coco and Shadow?",
         ("Maria adopting Coco", "Maria adopting Shadow"), None),
        ("How long was it between the kitchen renovation and the roof repair?",
         ("the kitchen renovation", "the roof repair"), None),
        ("What was the gap between Sam's first race and his knee surgery?",
         ("Sam's first race", "his knee surgery"), None),
        # which came first
        ("Which came first, the move to Denver or the wedding?",
         ("the move to Denver", "the wedding"), None),
        ("Which did Priya do first: the pottery class or the trip to Lisbon?",
         ("the pottery class", "the trip to Lisbon"), None),
        ("Did the product launch or the reorg happen first?",
         ("the product launch", "the reorg"), None),
        ("Did the product launch happen before the reorg?", ("the product launch", "the reorg"),
         None),
        # how long after A did B: B is asked, after (before) A
        ("How many days after the launch did Sam quit?", ("Sam quit", "the launch"), "after"),
        ("How long before the wedding did they buy the house?",
         ("they buy the house", "the wedding"), "before"),
        # a wh-question about what happened after / before an event
        ("Which city was John in before traveling to Chicago?",
         ("Which city was John in", "traveling to Chicago"), "before"),
        ("When did Melanie go on a hike after the road trip?",
         ("When did Melanie go on a hike", "the road trip"), "after"),
    ],
)
def test_two_event_questions_split(query: str, parts: tuple[str, str],
                                   relation: str | None) -> None:
    assert event_parts(query) == EventParts(parts, relation)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "query",
    [
        "Where was John between August 11 and August 15 2023?",  # dates, not events
        "What did John do the week before August 3, 2023?",
        "What did we decide after 3 May 2023?",
        "What did Sam do after that?",  # a pronoun is no event
        "What did Sam eat after lunch?",
        "How long is the drive to Tahoe?",
        "When did Melanie paint a sunrise?",
        "Would Tim rather read C. S. Lewis or John Green?",
        "",
    ],
)
def test_other_questions_do_not_split(query: str) -> None:
    assert event_parts(query) is None


# -- through the facade, on a small real mind ---------------------------------------------------

CHAT = [  # session, speaker, text, day
    (1, "Maria", "Guess what, today I adopted Coco from the shelter where I volunteer!", "03-01"),
    (1, "John", "That's wonderful! Is she settling in well?", "03-01"),
    (1, "Maria", "She sleeps on my feet every night already.", "03-01"),
    (2, "John", "How many weeks have passed since your last long run, Maria?", "03-08"),
    (2, "Maria", "A few weeks have passed, I keep putting the long run off.", "03-08"),
    (2, "John", "Maria, how many weeks until the marathon between the two towns?", "03-08"),
    (2, "Maria", "Seven weeks, and the weeks pass quickly between work and training.", "03-08"),
    (3, "Maria", "Big news: Shadow joined our family, another pup from the shelter.", "03-15"),
    (3, "John", "Two dogs now! How are they getting along?", "03-15"),
    (3, "Maria", "They chase each other around the yard all day.", "03-15"),
    # later turns that name both dogs: close to the whole question, about neither event
    (4, "John", "Maria, how many weeks did Coco and Shadow need to learn to sit?", "04-20"),
    (4, "Maria", "Coco and Shadow both learned it in about two weeks of training.", "04-20"),
    (4, "John", "Do Coco and Shadow get along with the neighbours' cat, Maria?", "04-20"),
    (4, "Maria", "Coco and Shadow ignore the cat, which passed by weekly.", "04-20"),
]
QUESTION = "How many weeks passed between Maria adopting Coco and Shadow?"


def write_chat(path: Path) -> None:
    with path.open("w") as fh:
        for i, (session, speaker, text, day) in enumerate(CHAT):
            fh.write(json.dumps({
                "conversation_id": f"dogs:session_{session}", "message_id": f"m{i}",
                "speaker": speaker, "text": text, "timestamp": f"2024-{day}T10:{i:02d}:00Z",
                "title": f"Maria and John, session {session}"}) + "\n")


@pytest.mark.integration
async def test_a_two_event_question_gets_both_events(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from hive_mind.facade import HiveMind

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    write_chat(tmp_path / "chat.jsonl")
    hm = await HiveMind.open(data_dir=tmp_path / "data", embedding_provider="inprocess",
                             redis_url=None)
    try:
        await hm.harvest("universal", tmp_path / "chat.jsonl")
        await hm.wait_idle()

        async def top(limit: int) -> list[str]:
            results = await hm.recall(QUESTION, limit=limit, touch=False, catch_up=False)
            return [str(r["metadata"].get("message_id")) for r in results]

        found = await top(5)
        assert {"m0", "m7"} <= set(found), found  # adopting Coco, Shadow joining
        # the question alone ranks the look-alikes about weeks passing above an event
        monkeypatch.setattr(conversation, "DEFAULT_SIGNALS",
                            replace(conversation.DEFAULT_SIGNALS, parts=0.0))
        assert not {"m0", "m7"} <= set(await top(5))
    finally:
        await hm.close()
