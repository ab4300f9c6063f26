"""Images in a ChatGPT export (mind/harvest/chatgpt.py), as real exports hold them: a DALL·E
call (the assistant's JSON to ``dalle.text2im``), its image and its note to the model; a user's
uploaded photo; a GPT-4o image generation (a JSON code call, an image without a prompt, a note).
Memories get short readable placeholders, never raw JSON, asset pointers or the notes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hive_mind.cli import main
from mind.harvest import chatgpt
from tests.harvest_roundtrip import contents, import_path, runtime, stored

EXPORT = Path(__file__).parent / "data" / "harvest" / "chatgpt_images" / "conversations.json"


def test_image_turns_are_short_placeholders() -> None:
    items = list(chatgpt.parse(EXPORT))
    assert [(i.kind, i.title) for i in items] == [
        ("conversation", "Lighthouse painting"), ("instruction", "ChatGPT Custom Instructions"),
        ("conversation", "Plant identification")]
    lighthouse, _, plant = items
    assert [(t.turn_id, t.role, t.text) for t in lighthouse.turns] == [
        ("u1", "user", "Paint a lighthouse at dusk in watercolor."),
        ("a1", "assistant", "[Image request: A watercolor lighthouse at dusk]"),
        ("t1", "tool", "[Generated image: A watercolor painting of a lighthouse at dusk, warm "
                       "light on the water]"),
        ("a2", "assistant", "Here is the lighthouse at dusk, painted in soft watercolor.")]
    assert [(t.turn_id, t.role, t.text) for t in plant.turns] == [
        ("v1", "user", "[Shared image]\nWhat plant is this?\n[Attached: IMG_2041.jpeg]"),
        ("b1", "assistant", "That is a Monstera deliciosa; it likes bright, indirect light."),
        ("v2", "user", "make it a cartoon"),
        ("b2", "assistant", "[Image request: A cartoon Monstera deliciosa in a terracotta pot]"),
        ("g1", "tool", "[Generated image]")]


async def test_no_raw_json_or_tool_notes_are_stored(tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    try:
        summary = await import_path(rt, "chatgpt", EXPORT)
        assert (summary.items, summary.frames_created) == (3, 10)
        assert await stored(rt, "chatgpt") == (3, 10)
        text = "\n".join(await contents(rt, "chatgpt"))
        for noise in ("{", "asset_pointer", "file-service://", "sediment://", "DALL·E displayed",
                      "GPT-4o returned", "do not say or show ANYTHING", "1024x1024"):
            assert noise not in text, noise
    finally:
        await rt.close()


def test_the_summary_counts_conversations_for_people(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Three items are two conversations and one instruction: people see those counts and no
    run id or content hash; ``--json`` keeps every key, with the items by kind."""
    monkeypatch.setenv("HIVE_MIND_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HIVE_MIND_EMBEDDING_PROVIDER", "test")
    for key in ("HIVE_MIND_REDIS_URL", "HIVE_MIND_URL", "HIVE_MIND_API_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    assert main(["harvest", "import", "chatgpt", str(EXPORT), "--no-progress"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip()
            for line in out.splitlines() if line.count("│") == 3}
    assert (rows["conversations"], rows["instructions"], rows["frames_created"]) == (
        "2", "1", "10")
    for machine in ("items", "kinds", "run_id", "content_hash"):
        assert machine not in rows, machine
    copy = tmp_path / "again.json"
    copy.write_bytes(EXPORT.read_bytes())
    assert main(["harvest", "import", "chatgpt", str(copy), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["items"], summary["kinds"], summary["frames_created"]) == (
        3, {"conversation": 2, "instruction": 1}, 0)
    assert len(summary["run_id"]) == 32 and summary["content_hash"]
