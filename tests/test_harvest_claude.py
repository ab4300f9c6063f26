"""claude.ai export adapter (mind/harvest/claude.py) on realistic export fixtures."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from mind.harvest import claude
from mind.harvest.errors import HarvestError
from mind.harvest.types import HarvestItem, stable_id

DATA = Path(__file__).parent / "data" / "harvest"
EXPORT = DATA / "claude"


@pytest.fixture(scope="module")
def items() -> list[HarvestItem]:
    return list(claude.parse(EXPORT))


def test_items_in_order(items: list[HarvestItem]) -> None:
    assert [(i.kind, i.title) for i in items] == [
        ("conversation", "Postgres index advice"),
        ("conversation", "Untitled"),  # "Empty chat" has no messages
        ("instruction", "Project instructions: Thesis"),
        ("artifact", "outline.md"),  # empty.md has no content
        ("memory", "Claude Memory — Conversations"),
        ("memory", "Claude Memory — Project p-0001"),  # p-0002's memory is blank
    ]
    assert [i.position for i in items] == [
        "conversations.json: conversation 1", "conversations.json: conversation 2",
        "projects.json: project 1", "projects.json: project 1, doc 1",
        "memories.json: memory 1", "memories.json: memory 1, project p-0001",
    ]


def test_content_blocks_artifacts_attachments(items: list[HarvestItem]) -> None:
    conv = items[0]
    assert conv.item_id == stable_id("claude", "c0a1b2c3-0001-4000-8000-000000000001")
    assert [t.turn_id for t in conv.turns] == ["m-0001", "m-0002", "m-0003", "m-0005"]
    user, answer, thanks, system = conv.turns
    assert (user.role, user.speaker) == ("user", "User")
    assert user.text == (
        "Why is my query slow? I attached the plan.\n\n[Attached: plan.txt]\n"
        "Seq Scan on orders  (cost=0.00..4350.00 rows=100000)\n  Filter: (customer_id = 42)"
        "\n\n[Shared file: screenshot.png]")
    assert (answer.role, answer.speaker) == ("assistant", "Claude")
    assert answer.text == (
        "The planner does a sequential scan because there is no index on customer_id.\n\n"
        "[Artifact: create_index.sql]\n"
        "CREATE INDEX CONCURRENTLY orders_customer_idx ON orders (customer_id);\n\n"
        "Run it during a quiet period.")
    for absent in ("SECRET THINKING", "TOOL RESULT OK", "not supported on your current device"):
        assert absent not in answer.text
    # content has no text block: the flat text is used, so the message does not vanish
    assert thanks.text == "Thanks, that fixed it!"
    # a non-human sender keeps its own role instead of becoming the assistant
    assert (system.role, system.speaker) == ("system", "System")


def test_flat_text_and_timestamps(items: list[HarvestItem]) -> None:
    conv = items[0]
    assert conv.timestamp == "2024-05-02T09:15:00.123Z"
    assert conv.turns[1].timestamp == "2024-05-02T09:15:20.500Z"
    flat = items[1]
    assert [(t.role, t.text) for t in flat.turns] == [
        ("user", "Flat text only, no content array."), ("assistant", "Flat answer.")]
    assert flat.timestamp == "2024-05-03T09:00:00.000Z"  # +02:00 normalised to Z
    assert flat.turns[1].timestamp is None


def test_projects_and_memories(items: list[HarvestItem]) -> None:
    instruction, doc, general, project = items[2:]
    assert instruction.turns[0].text == "Always cite sources in APA style."
    assert instruction.timestamp == "2024-04-01T10:00:00.000Z"
    assert doc.turns[0].text == "# Outline\n\n1. Introduction\n2. Related work on property graphs"
    assert doc.turns[0].role == "document"
    assert doc.item_id == stable_id("claude", "projdoc", "p-0001", "d-0001")
    assert doc.metadata["project_name"] == "Thesis" and doc.metadata["filename"] == "outline.md"
    assert doc.timestamp == "2024-03-02T10:00:00.000Z"
    assert general.turns[0].text.startswith("Ann is writing a master thesis")
    assert general.item_id == stable_id("claude", "memory", "conversations_memory", "acc-0001")
    assert project.turns[0].text == "Thesis deadline is in September; supervisor prefers APA."
    assert project.metadata == {"type": "project_memory", "project_uuid": "p-0001"}


def test_ids_stable_across_runs_and_inputs(tmp_path: Path, items: list[HarvestItem]) -> None:
    assert list(claude.parse(str(EXPORT))) == items
    archive = tmp_path / "data-2024-06-01.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in ("conversations.json", "projects.json", "memories.json"):
            zf.write(EXPORT / name, name)
        zf.writestr("users.json", '[{"uuid": "acc-0001"}]')
    assert list(claude.parse(archive)) == items
    single = list(claude.parse(EXPORT / "conversations.json"))
    assert single == items[:2]


def test_object_form(tmp_path: Path, items: list[HarvestItem]) -> None:
    doc = {
        "conversations": json.loads((EXPORT / "conversations.json").read_text()),
        "projects": json.loads((EXPORT / "projects.json").read_text()),
        "memories": json.loads((EXPORT / "memories.json").read_text())[0],  # a single object
    }
    path = tmp_path / "export.json"
    path.write_text(json.dumps(doc))
    got = list(claude.parse(path))
    assert [(i.item_id, i.turns) for i in got] == [(i.item_id, i.turns) for i in items]


def test_design_chats(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"design_chats": [{"uuid": "dc-1", "project": "p-9", "messages": [
        {"uuid": "d1", "sender": "human", "text": "Make the button blue"},
        {"uuid": "d2", "sender": "assistant", "content": [{"type": "text", "text": "Done."}]}]}]}))
    (item,) = claude.parse(path)
    assert item.title == "Claude Design Chat"
    assert item.metadata == {"conversation_id": "dc-1", "stream": "design_chats",
                             "project_uuid": "p-9"}
    assert [t.text for t in item.turns] == ["Make the button blue", "Done."]


def test_wrong_source_type(tmp_path: Path) -> None:
    with pytest.raises(HarvestError, match="ChatGPT export") as info:
        list(claude.parse(DATA / "chatgpt" / "conversations.json"))
    assert "expected a claude.ai export" in str(info.value)
    assert info.value.position == "entry 1"
    with pytest.raises(HarvestError, match="holds nothing importable as claude: found no files"):
        list(claude.parse(tmp_path))
    with pytest.raises(HarvestError, match="looks like source 'chatgpt'"):
        list(claude.parse(DATA / "chatgpt"))  # a folder: recognised by content, then refused


def test_truncated_and_binary(tmp_path: Path) -> None:
    data = (EXPORT / "conversations.json").read_bytes()
    cut = tmp_path / "conversations.json"
    cut.write_bytes(data[: data.index(b'"Empty chat"')])
    titles: list[str] = []
    with pytest.raises(HarvestError, match="truncated") as info:
        for item in claude.parse(cut):
            titles.append(item.title)
    assert titles == ["Postgres index advice", "Untitled"]
    assert info.value.path == str(cut) and info.value.position.startswith("entry 3, near byte")
    cut.write_bytes(b"\x00\x01\x02" * 1000)
    with pytest.raises(HarvestError, match="binary"):
        list(claude.parse(cut))


def test_whole_messages_and_size_limit(tmp_path: Path) -> None:
    big = "word " * 100_000
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([{"uuid": "c", "name": "n", "chat_messages": [
        {"uuid": "m", "sender": "human", "text": big, "attachments": [
            {"file_name": "book.txt", "extracted_content": big}]}]}]))
    (item,) = claude.parse(path)
    assert item.turns[0].text == f"{big.strip()}\n\n[Attached: book.txt]\n{big.strip()}"
    path.write_text(json.dumps([{"uuid": "c", "chat_messages": [
        {"uuid": "m1", "sender": "human", "text": "x" * 2_000_001}]}]))
    with pytest.raises(HarvestError, match="limit is 2,000,000") as info:
        list(claude.parse(path))
    assert info.value.position == "conversations.json: conversation 1, message 1"


def test_only_the_kept_branch_is_imported() -> None:
    """Retried answers and edited prompts leave their abandoned messages in ``chat_messages``:
    only the branch the user kept is imported — the named leaf's chain when the export names
    one, else the newest leaf's — and messages without parent links are all kept."""
    items = list(claude.parse(DATA / "claude_branches" / "conversations.json"))
    texts = {i.title: [t.text for t in i.turns] for i in items}
    assert texts == {
        "Sourdough starter": [
            "How often should I feed a sourdough starter?",
            "Daily at room temperature, weekly in the fridge.",
            "And how much flour each time?", "Equal weights of starter, flour and water."],
        "Trip to Lisbon": [
            "Plan a day in Lisbon.", "Morning in Alfama, afternoon in Belém.",
            "Where should I eat a vegetarian dinner?",
            "Try a vegetarian place in Príncipe Real."],
        "Naming a cat": ["Suggest a name for a grey cat.", "Smokey."],
        "Old style export": ["Give me a name for a dog.", "Biscuit."],
    }
    assert sum(len(i.turns) for i in items) == 12  # of 16 messages
    sourdough = items[0]
    assert [t.turn_id[-2:] for t in sourdough.turns] == ["01", "03", "04", "05"]
