"""ChatGPT export adapter (mind/harvest/chatgpt.py) on realistic conversations.json fixtures."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mind.harvest import chatgpt, inputs, jsonstream
from mind.harvest.errors import HarvestError
from mind.harvest.inputs import CountingReader
from mind.harvest.registry import adapter
from mind.harvest.types import HarvestItem, stable_id

DATA = Path(__file__).parent / "data" / "harvest"
EXPORT = DATA / "chatgpt" / "conversations.json"


def by_title(items: list[HarvestItem]) -> dict[str, HarvestItem]:
    return {i.title: i for i in items if i.kind == "conversation"}


def all_text(items: list[HarvestItem]) -> str:
    return "\n".join(t.text for i in items for t in i.turns)


@pytest.fixture(scope="module")
def items() -> list[HarvestItem]:
    return list(chatgpt.parse(EXPORT))


def test_kept_branch_only_in_order(items: list[HarvestItem]) -> None:
    trip = by_title(items)["Lisbon trip"]
    assert [t.turn_id for t in trip.turns] == ["u-1", "a-1", "u-2", "a-code", "tool-1", "a-3"]
    text = all_text(items)
    for gone in ("REGENERATED AWAY", "EDITED AWAY", "ABANDONED BRANCH", "INTERNAL REASONING",
                 "You are ChatGPT", "OLDER LEAF"):
        assert gone not in text


def test_roles_speakers_text_and_metadata(items: list[HarvestItem]) -> None:
    trip = by_title(items)["Lisbon trip"]
    turns = {t.turn_id: t for t in trip.turns}
    assert (turns["u-1"].role, turns["u-1"].speaker) == ("user", "User")
    assert turns["u-1"].text == "Plan a three day trip to Lisbon for me.\n[Attached: flights.pdf]"
    assert (turns["a-1"].role, turns["a-1"].speaker) == ("assistant", "ChatGPT")
    assert turns["a-1"].text == "Day 1: Alfama and the castle.\nDay 2: Belém. Day 3: Sintra."
    assert turns["a-1"].metadata == {"model_slug": "gpt-4o"}
    assert turns["a-code"].text == "```python\nhours = 3 * (18 - 9)\nprint(hours)\n```"
    tool = turns["tool-1"]
    assert (tool.role, tool.speaker, tool.text) == ("tool", "Tool (python)", "27")
    assert tool.metadata == {"tool": "python"}
    assert trip.item_id == stable_id("chatgpt", "6630f2a0-1111-4c3e-9b1a-000000000001")
    assert trip.metadata == {"conversation_id": "6630f2a0-1111-4c3e-9b1a-000000000001",
                             "default_model_slug": "gpt-4o"}
    assert trip.position == "conversations.json: conversation 1"
    assert trip.source == "chatgpt"


def test_timestamps(items: list[HarvestItem]) -> None:
    trip = by_title(items)["Lisbon trip"]
    assert trip.timestamp == "2024-05-01T08:00:00.500Z"
    assert trip.turns[0].timestamp == "2024-05-01T08:01:00.250Z"
    cat = by_title(items)["Cat picture"]
    assert cat.turns[0].timestamp is None  # create_time null
    assert cat.timestamp == "2024-05-01T21:46:50.000Z"  # no create_time: the first turn's time


def test_missing_current_node_uses_newest_leaf_and_images(items: list[HarvestItem]) -> None:
    cat = by_title(items)["Cat picture"]
    assert [t.turn_id for t in cat.turns] == ["u2-1", "dalle-call", "dalle-out", "a2-new"]
    assert cat.turns[0].text == "[Shared image]\nDraw my cat as an astronaut."
    dalle = cat.turns[2]
    assert dalle.role == "tool" and dalle.speaker == "Tool (dalle.text2im)"
    assert dalle.text == "[Shared image: A tabby cat floating in a white spacesuit above Earth]"


def test_instructions_once_hidden_and_empty_skipped(items: list[HarvestItem]) -> None:
    kinds = [(i.kind, i.title) for i in items]
    assert kinds == [("instruction", "ChatGPT Custom Instructions"),
                     ("conversation", "Lisbon trip"), ("conversation", "Cat picture"),
                     ("conversation", "Untitled")]  # "Only hidden stuff" has nothing to keep
    instruction = items[0]
    assert "vegetarian software engineer in Berlin" in instruction.turns[0].text
    assert "Be concise." in instruction.turns[0].text
    assert instruction.turns[0].role == "document"


def test_nulls_unknown_types_and_browsing(items: list[HarvestItem]) -> None:
    untitled = by_title(items)["Untitled"]
    assert [(t.role, t.speaker, t.text) for t in untitled.turns] == [
        ("user", "User", "Search the web for the Lisbon tram schedule"),
        ("tool", "Tool (browser)", "Tram 28 runs every 10 minutes."),
        ("assistant", "ChatGPT", "Tram 28 comes every ten minutes."),
    ]
    assert untitled.position == "conversations.json: conversation 5"


def test_ids_are_stable_across_runs(items: list[HarvestItem]) -> None:
    assert list(chatgpt.parse(EXPORT)) == items
    assert list(adapter("chatgpt")(str(EXPORT))) == items


def test_object_form_with_instructions_and_memories() -> None:
    got = list(chatgpt.parse(DATA / "chatgpt" / "export_object.json"))
    assert [i.kind for i in got] == ["conversation", "instruction", "memory", "memory"]
    assert [t.text for t in got[0].turns] == ["What is 2+2?", "4"]
    assert got[1].turns[0].text == ("about_user_message: I live in Berlin and write Python.\n"
                                    "about_model_message: Answer in English.")
    assert got[2].turns[0].text == "Prefers vegetarian restaurants."
    assert got[2].timestamp == "2024-04-01T10:00:00.000Z"
    assert got[3].turns[0].text == "Has a cat named Miso." and got[3].timestamp is None
    assert got[2].item_id != got[3].item_id
    assert got[2].position == "export_object.json: memory 1"


def test_zip_export_and_directory(tmp_path: Path, items: list[HarvestItem]) -> None:
    archive = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("chat.html", "<html>not parsed</html>")
        zf.writestr("user.json", '{"id": "user-1"}')
        zf.write(EXPORT, "conversations.json")
    assert list(chatgpt.parse(archive)) == items
    unpacked = tmp_path / "unpacked"
    unpacked.mkdir()
    (unpacked / "conversations.json").write_bytes(EXPORT.read_bytes())
    assert list(chatgpt.parse(unpacked)) == items


def test_zip_bomb_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inputs, "MAX_ZIP_RATIO", 20)
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("conversations.json", "[" + " " * 500_000 + "]")
    with pytest.raises(HarvestError, match="zip bomb") as info:
        list(chatgpt.parse(archive))
    assert info.value.path == str(archive)


def test_zip_member_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(EXPORT, "conversations.json")
    monkeypatch.setattr(inputs, "MAX_MEMBER_BYTES", 1000)
    with pytest.raises(HarvestError, match="a zip bomb"):
        list(chatgpt.parse(archive))


def test_truncated_export_names_file_and_position(tmp_path: Path) -> None:
    data = EXPORT.read_bytes()
    cut = tmp_path / "conversations.json"
    cut.write_bytes(data[: data.index(b'"title": "Only hidden stuff"')])
    got: list[str] = []
    with pytest.raises(HarvestError, match="truncated") as info:
        for item in chatgpt.parse(cut):
            got.append(item.title)
    assert got == ["ChatGPT Custom Instructions", "Lisbon trip", "Cat picture"]
    assert info.value.path == str(cut)
    assert info.value.position.startswith("conversation 4, near byte ")


def test_binary_garbage(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(2000))
    with pytest.raises(HarvestError, match="binary"):
        list(chatgpt.parse(path))


def test_wrong_source_type() -> None:
    with pytest.raises(HarvestError, match=r"claude\.ai export") as info:
        list(chatgpt.parse(DATA / "claude" / "conversations.json"))
    assert "expected a ChatGPT export" in str(info.value)
    with pytest.raises(HarvestError, match="universal"):
        list(chatgpt.parse(DATA / "universal" / "messages.json"))
    with pytest.raises(HarvestError, match="holds nothing importable as chatgpt") as info:
        list(chatgpt.parse(DATA / "claude_code"))
    assert "looks like source 'claude-code'" in str(info.value)
    assert "dot-claude/CLAUDE.md (text)" in str(info.value)  # what it found, named


def test_object_without_conversations(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text('{"history": []}')
    with pytest.raises(HarvestError, match="no 'conversations' array"):
        list(chatgpt.parse(path))


def conversation(conv_id: str, text: str) -> dict[str, object]:
    return {"id": conv_id, "title": conv_id, "create_time": 1714550400, "current_node": "m",
            "mapping": {"m": {"id": "m", "parent": None, "children": [], "message": {
                "id": "m", "author": {"role": "user"}, "create_time": 1714550400,
                "content": {"content_type": "text", "parts": [text]}}}}}


def test_oversized_message_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conversation("small", "hi"),
                                conversation("huge", "x" * 2_000_001)]))
    with pytest.raises(HarvestError, match="2,000,001 characters") as info:
        list(chatgpt.parse(path))
    assert info.value.position == "conversations.json: conversation 2, message m"
    exactly = tmp_path / "ok" / "conversations.json"
    exactly.parent.mkdir()
    exactly.write_text(json.dumps([conversation("max", "y" * 2_000_000)]))
    assert len(next(chatgpt.parse(exactly)).turns[0].text) == 2_000_000  # never truncated


def test_parse_streams_a_large_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "conversations.json"
    with path.open("w") as fh:
        fh.write("[")
        for i in range(50_000):
            fh.write(("," if i else "") + json.dumps(conversation(f"c{i}", f"message {i}")))
        fh.write("]")
    readers: list[CountingReader] = []
    real = inputs.open_binary

    @contextmanager
    def recording(p: Path) -> Iterator[CountingReader]:
        with real(p) as reader:
            readers.append(reader)
            yield reader

    monkeypatch.setattr(jsonstream, "open_binary", recording)
    stream = chatgpt.parse(path)
    first = next(stream)
    assert first.title == "c0" and first.turns[0].text == "message 0"
    size = path.stat().st_size
    assert size > 10_000_000
    assert max(r.position for r in readers) < size // 20
    stream.close()
