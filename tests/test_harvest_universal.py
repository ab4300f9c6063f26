"""Universal import format (mind/harvest/universal.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hive_mind.facade import HiveMind
from mind.harvest import detect, universal
from mind.harvest.errors import HarvestError
from mind.harvest.types import HarvestItem, stable_id

DATA = Path(__file__).parent / "data" / "harvest" / "universal"


def turns(item: HarvestItem) -> list[tuple[str, str, str, str, str | None]]:
    return [(t.turn_id, t.role, t.speaker, t.text, t.timestamp) for t in item.turns]


def test_jsonl_groups_consecutive_runs() -> None:
    items = list(universal.parse(DATA / "chat.jsonl"))
    assert [(i.item_id, i.title, i.position) for i in items] == [
        (stable_id("universal", "conv-a"), "Standup time", "chat.jsonl: line 1"),
        (stable_id("universal", "conv-b"), "conv-b", "chat.jsonl: line 3"),
        # conv-a comes back later: same item id (same session), the title seen first
        (stable_id("universal", "conv-a"), "Standup time", "chat.jsonl: line 6"),
        (stable_id("universal", "7"), "7", "chat.jsonl: line 7"),
    ]
    assert turns(items[0]) == [
        ("a1", "user", "Alice", "Can we move the standup to 10?", "2024-06-01T09:00:00.000Z"),
        ("a2", "assistant", "TeamBot", "Sure, moved to 10:00.\nI updated the calendar invite too.",
         "2024-06-01T09:01:00.000Z"),  # multi-line text kept whole; epoch seconds
    ]
    assert turns(items[1]) == [
        ("b1", "user", "me", "Remind me to renew my passport.", "2024-06-02T06:00:00.000Z"),
        ("b2", "assistant", "Assistant", "Reminder set for next Monday.", None),
    ]
    # Alice had role "user" explicitly earlier, so her later line without a role is the user's
    assert turns(items[2]) == [("a3", "user", "Alice", "Thanks!", "2024-06-01T09:05:00.250Z")]
    assert turns(items[3]) == [("1", "system", "System", "Session started", None)]
    assert items[0].timestamp == "2024-06-01T09:00:00.000Z"
    assert items[0].metadata == {"conversation_id": "conv-a"} and items[0].source == "universal"


def test_json_array_of_messages() -> None:
    items = list(universal.parse(DATA / "messages.json"))
    assert [i.title for i in items] == ["x1", "x2"]
    assert turns(items[0]) == [
        ("m1", "user", "Human", "What is the capital of Peru?", "2024-07-01T12:00:00.000Z"),
        ("m2", "assistant", "Grok", "Lima.", None)]
    assert turns(items[1]) == [("m1", "user", "user", "And of Chile?", None)]


def test_json_array_of_conversations() -> None:
    (item,) = universal.parse(DATA / "conversations.json")  # the empty one is dropped
    assert item.title == "Sourdough" and item.item_id == stable_id("universal", "perplexity-77")
    assert [(t.role, t.speaker) for t in item.turns] == [("user", "Me"),
                                                        ("assistant", "Perplexity")]
    assert item.turns[0].turn_id == "q1"
    assert item.turns[1].turn_id == stable_id("universal", "perplexity-77", 2)  # no message_id
    assert item.position == "conversations.json: entry 1"


def test_stable_across_runs() -> None:
    for name in ("chat.jsonl", "messages.json", "conversations.json"):
        assert list(universal.parse(DATA / name)) == list(universal.parse(str(DATA / name)))


def test_object_with_conversations_and_sniffing(tmp_path: Path) -> None:
    convs = json.loads((DATA / "conversations.json").read_text())
    wrapped = tmp_path / "export.data"
    wrapped.write_text(json.dumps({"conversations": convs}, indent=2))
    assert [i.title for i in universal.parse(wrapped)] == ["Sourdough"]
    lines = tmp_path / "chat.txt"  # no telling extension: one object per line → JSONL
    lines.write_bytes((DATA / "chat.jsonl").read_bytes().replace(b"\n", b"\r\n"))
    assert [i.item_id for i in universal.parse(lines)] == [
        i.item_id for i in universal.parse(DATA / "chat.jsonl")]
    array = tmp_path / "messages.txt"
    array.write_text((DATA / "messages.json").read_text())
    assert len(list(universal.parse(array))) == 2


def jsonl(tmp_path: Path, *rows: object) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


OK = {"conversation_id": "c", "message_id": "m1", "speaker": "Bo", "text": "hi"}


@pytest.mark.parametrize(("bad", "message"), [
    ({"conversation_id": "c", "speaker": "Bo", "text": "x"}, "missing required field 'message_id'"),
    ({"message_id": "m", "speaker": "Bo", "text": "x"}, "missing required field 'conversation_id'"),
    ({"conversation_id": "c", "message_id": "m", "speaker": "Bo"}, "'text'"),
    ({"conversation_id": "c", "message_id": "m", "text": "x"}, "missing required field 'speaker'"),
    ({**OK, "role": "narrator"}, "role is not one of"),  # the value is not echoed
    ({**OK, "timestamp": "last tuesday"}, "timestamp is not ISO-8601"),
    ({**OK, "importance": "urgent"}, "importance is not one of"),
    ({**OK, "verbatim": "yes"}, "verbatim must be true or false"),
    ('{"conversation_id": "c", broken', "not valid JSON"),
    ("[1, 2]", "expected a JSON object, found list"),
])
def test_errors_name_the_line(tmp_path: Path, bad: object, message: str) -> None:
    path = jsonl(tmp_path, OK, OK, bad)
    with pytest.raises(HarvestError, match=message) as info:
        list(universal.parse(path))
    assert info.value.position == "line 3" and info.value.path == str(path)
    assert "universal format" in str(info.value)


def test_role_synonyms_speaker_defaults_and_blank_text(tmp_path: Path) -> None:
    path = jsonl(tmp_path,
                 {"conversation_id": "c", "message_id": 1, "role": "human", "text": "q"},
                 {"conversation_id": "c", "message_id": 2, "role": "model", "text": "a",
                  "timestamp": 1717232460000, "metadata": {"lang": "en"}},
                 {"conversation_id": "c", "message_id": 3, "speaker": "X", "text": "   "})
    (item,) = universal.parse(path)
    assert turns(item) == [("1", "user", "User", "q", None),
                           ("2", "assistant", "Assistant", "a", "2024-06-01T09:01:00.000Z")]
    assert item.turns[1].metadata == {"lang": "en"}


def test_importance_and_verbatim(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {**OK, "importance": "critical"},
                 {**OK, "message_id": "m2", "text": "  Note: kept as is \n", "verbatim": True,
                  "role": "document"})
    (item,) = universal.parse(path)
    first, second = item.turns
    assert (first.importance, first.verbatim, first.text) == ("critical", False, "hi")
    assert (second.importance, second.verbatim, second.role) == (None, True, "document")
    assert second.text == "  Note: kept as is \n"


def test_wrong_source_and_oversize(tmp_path: Path) -> None:
    chatgpt = DATA.parent / "chatgpt" / "conversations.json"
    with pytest.raises(HarvestError, match="missing required field 'message_id'") as info:
        list(universal.parse(chatgpt))
    assert info.value.position == "entry 1"
    with pytest.raises(HarvestError, match="is a directory"):
        list(universal.parse(tmp_path))
    path = jsonl(tmp_path, OK, {**OK, "message_id": "big", "text": "x" * 2_000_001})
    with pytest.raises(HarvestError, match="limit is 2,000,000") as info:
        list(universal.parse(path))
    assert info.value.position == "line 2"


SINGLE = DATA.parent / "universal_single"


@pytest.mark.parametrize(("name", "text"), [
    ("note.jsonl", "Remember: the launch moved to May 3 and Priya owns the release notes."),
    ("message.json", "The staging database moves to the new cluster on Friday."),
])
async def test_one_message_file_is_universal(tmp_path: Path, name: str, text: str) -> None:
    """A file holding one universal message (one JSONL line, or one object) is recognised by
    ``auto`` and imported as one conversation of one turn, whatever the file is called."""
    renamed = tmp_path / "export.data"
    renamed.write_bytes((SINGLE / name).read_bytes())
    for path in (SINGLE / name, renamed):
        (item,) = universal.parse(path)
        assert [(t.role, t.speaker, t.text) for t in item.turns] == [("user", "Dana", text)]
    async with await HiveMind.open(data_dir=tmp_path / "data", embedding_provider="test") as hm:
        for path in (SINGLE / name, renamed):
            summary = await hm.harvest("auto", path)
            assert summary["source"] == "universal"
        assert summary["frames_created"] == 0  # the same message: stored once
        db = (await hm.runtime.host.reader("personal")).db
        rows = await db.fetchall("SELECT content FROM memory_frames")
        assert [r[0] for r in rows] == [f"Dana: {text}"]


def test_one_conversation_object_is_universal() -> None:
    path = SINGLE / "conversation.json"
    assert detect.detect(path).source == "universal"
    (item,) = universal.parse(path)
    assert (item.title, [(t.role, t.text) for t in item.turns]) == ("Packing list", [
        ("user", "Pack the tent and the blue stove."), ("assistant", "Added: tent, blue stove.")])
