"""Images in a ChatGPT export (mind/harvest/chatgpt.py), as real exports hold them: a DALL·E
call (the assistant's JSON to ``dalle.text2im``), its image and its note to the model; a user's
uploaded photo; a GPT-4o image generation (a JSON code call, an image without a prompt, a note).
Memories get short readable placeholders, never raw JSON, asset pointers or the notes."""

from __future__ import annotations

from pathlib import Path

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
