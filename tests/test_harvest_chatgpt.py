"""ChatGPT export adapter (mind/harvest/chatgpt.py) on realistic conversations.json fixtures."""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hive_mind.facade import HiveMind
from mind.harvest import chatgpt, inputs, jsonstream
from mind.harvest.errors import HarvestError
from mind.harvest.inputs import CountingReader
from mind.harvest.registry import adapter
from mind.harvest.types import HarvestItem, stable_id
from mind.mind import Mind
from tests.chatgpt_chain import linear_conversation
from tests.harvest_kill import kill_mid_import, resume

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
    assert dalle.text == "[Generated image: A tabby cat floating in a white spacesuit above Earth]"
    assert cat.turns[1].text == "[Image request: A tabby cat in a spacesuit]"  # not its JSON


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


# --- the split layout (exports since August 2026) ---------------------------------------------

SPLIT = DATA / "chatgpt_split"
SPLIT_TURNS = {"Sourdough timing": 5, "Garden plan": 4, "No metadata at all": 4,
               "Invoice wording": 2}


def split_zip(tmp_path: Path, folder: Path = SPLIT, name: str = "export.zip") -> Path:
    archive = tmp_path / name
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.iterdir()):
            zf.write(path, f"chatgpt-export-2026-08/{path.name}")
    return archive


def test_split_layout_folder_and_zip_read_the_same(tmp_path: Path) -> None:
    got = list(chatgpt.parse(SPLIT))
    assert [(i.kind, i.title) for i in got] == [
        ("conversation", "Sourdough timing"),  # conversation-d0000000.json: one per file
        ("instruction", "ChatGPT Custom Instructions"),  # once, though two conversations hold it
        ("conversation", "Garden plan"), ("conversation", "No metadata at all"),
        ("conversation", "Invoice wording")]
    assert {i.title: len(i.turns) for i in got if i.kind == "conversation"} == SPLIT_TURNS
    assert list(chatgpt.parse(split_zip(tmp_path))) == got
    assert got[0].position == "conversation-d0000000.json: conversation 1"
    assert got[4].position == "conversations-001.json: conversation 1"


def test_split_layout_metadata_models_and_instructions() -> None:
    items = by_title(list(chatgpt.parse(SPLIT)))
    bare = items["No metadata at all"]  # no message has a metadata key
    assert [(t.role, t.speaker, t.text) for t in bare.turns] == [
        ("user", "User", "Name a prime above 100."), ("assistant", "ChatGPT", "101 is prime."),
        ("user", "User", "And one above 1000?"), ("assistant", "ChatGPT", "1009 is prime.")]
    assert [t.metadata for t in bare.turns] == [{}, {"model_slug": "gpt-4o"}] * 2
    garden = items["Garden plan"]
    assert garden.metadata["default_model_slug"] == "gpt-5"
    assert [t.metadata.get("model_slug") for t in garden.turns] == [
        None, "gpt-5-thinking", None, "gpt-5"]  # a message's own model wins
    every_turn = "\n".join(t.text for i in items.values() for t in i.turns)
    assert "Answer briefly" not in every_turn and "balcony." not in every_turn
    instruction = next(i for i in chatgpt.parse(SPLIT) if i.kind == "instruction")
    assert instruction.turns[0].text == ("I live in Berlin and garden on a small balcony.\n\n"
                                         "Answer briefly.")


async def _counts(hm: HiveMind) -> tuple[int, int]:
    db = (await hm.reader(None)).db
    frames = await db.fetchval("SELECT count(*) FROM memory_frames")
    sessions = await db.fetchval(
        "SELECT count(*) FROM sessions WHERE gop_id LIKE 'harvest:chatgpt:%'")
    return int(frames), int(sessions)


async def test_split_layout_round_trip_reimport_and_newer_export(tmp_path: Path) -> None:
    async with await HiveMind.open(data_dir=tmp_path / "data", embedding_provider="test") as hm:
        first = await hm.harvest("chatgpt", SPLIT)
        assert (first["items"], first["frames_created"]) == (5, 16)  # 15 turns + instructions
        assert await _counts(hm) == (16, 5)  # one session per conversation (and instructions)
        again = await hm.harvest("chatgpt", SPLIT)
        assert again["status"] == "unchanged" and await _counts(hm) == (16, 5)
        zipped = await hm.harvest("chatgpt", split_zip(tmp_path))  # same export, zipped
        assert (zipped["frames_created"], zipped["duplicates_skipped"]) == (0, 16)
        old = await hm.harvest("chatgpt", EXPORT)  # the classic layout, into the same mind
        assert (old["items"], old["frames_created"]) == (4, 14)

        newer = tmp_path / "newer"
        shutil.copytree(SPLIT, newer)
        doc = json.loads((newer / "conversations-001.json").read_text())
        conv = doc[0]
        conv["mapping"]["c-u2"] = {"id": "c-u2", "parent": "c-a1", "children": [], "message": {
            "id": "c-u2", "author": {"role": "user"}, "create_time": 1786010000,
            "content": {"content_type": "text", "parts": ["Make it friendlier."]}}}
        conv["mapping"]["c-a1"]["children"] = ["c-u2"]
        conv["current_node"] = "c-u2"
        (newer / "conversations-001.json").write_text(json.dumps(doc))
        update = await hm.harvest("chatgpt", split_zip(tmp_path, newer, "newer.zip"))
        assert (update["frames_created"], update["duplicates_skipped"]) == (1, 16)
        assert await _counts(hm) == (16 + 14 + 1, 5 + 4)  # the new turn joined its session


def split_export(folder: Path, conversations: int, messages: int, per_file: int) -> int:
    """A big split-layout export: ``per_file`` conversations per JSON file."""
    folder.mkdir()
    for start in range(0, conversations, per_file):
        convs = [linear_conversation(
            c, messages, lambda c, m: f"conversation {c} message {m} " + "filler " * 20,
            default_model_slug="gpt-5") for c in range(start, min(start + per_file,
                                                                 conversations))]
        (folder / f"conversations-{start // per_file:03d}.json").write_text(json.dumps(convs))
    return conversations * messages


@pytest.mark.integration
async def test_kill9_mid_import_resumes_the_split_layout(tmp_path: Path) -> None:
    src = tmp_path / "export"
    total = split_export(src, 500, 20, 50)  # 10 files, 10,000 messages = 5 batches
    data = tmp_path / "data"
    done = await kill_mid_import(data, src, "chatgpt", total=total, per_item=20, after=2000)
    resume(data, src, "chatgpt", done)
    async with await Mind.open(data / "personal.mind", readonly=True) as mind:
        assert await mind.frames.count() == total
        assert await mind.db.fetchval(
            "SELECT count(DISTINCT gop_id) FROM memory_frames") == 500


def test_branch_in_new_chat_keys_copied_turns_under_their_first_chat() -> None:
    """"Branch in new chat" copies the history under the same message ids: the copies are keyed
    under the conversation they came from (the first message of a branch names it), a branch
    of a branch under each of its two origins."""
    items = list(chatgpt.parse(DATA / "chatgpt_branches" / "conversations.json"))
    twice, once, original = items
    assert [i.title for i in items] == ["Branch · Branch · Inventory database",
                                        "Branch · Inventory database", "Inventory database"]
    assert [t.home for t in original.turns] == [None] * 4
    assert [t.home for t in once.turns] == [original.item_id] * 2 + [None] * 2
    assert [t.home for t in twice.turns] == [original.item_id] * 2 + [once.item_id] * 2 + [
        None] * 2
    assert [t.turn_id for t in twice.turns[:4]] == [t.turn_id for t in once.turns]


async def test_a_branched_message_is_recalled_once(tmp_path: Path) -> None:
    async with await HiveMind.open(data_dir=tmp_path / "data", embedding_provider="test") as hm:
        await hm.harvest("chatgpt", DATA / "chatgpt_branches" / "conversations.json")
        hits = await hm.recall("Which database should the inventory service use?", limit=5)
        contents = [h["content"] for h in hits]
        assert "User: Which database should the inventory service use?" in contents
        assert len(contents) == len(set(contents))  # no message at two ranks


def test_branch_marks_without_the_copied_message_key_every_message_alike(
        tmp_path: Path) -> None:
    """Without ``branching_from_message_id`` the marked message counts as copied: wherever the
    mark sits, each message id gets one key in every conversation that holds it."""
    export = json.loads((DATA / "chatgpt_branches" / "conversations.json").read_text())
    for conv in export:
        for node in conv["mapping"].values():
            ((node.get("message") or {}).get("metadata") or {}).pop(
                "branching_from_message_id", None)
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(export))
    keys: dict[str, set[str]] = {}
    for item in chatgpt.parse(path):
        for turn in item.turns:
            keys.setdefault(turn.turn_id, set()).add(turn.home or item.item_id)
    assert len(keys) == 8 and all(len(homes) == 1 for homes in keys.values())
