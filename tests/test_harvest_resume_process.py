"""kill -9 in the middle of a real import, then run it again: it resumes after the last
committed batch and every message ends up exactly once (and indexed)."""

from __future__ import annotations

import json
from pathlib import Path

from mind.mind import Mind
from tests.harvest_kill import kill_mid_import, resume


def export(path: Path, conversations: int, messages: int) -> int:
    with path.open("w") as fh:
        for c in range(conversations):
            for m in range(messages):
                fh.write(json.dumps({
                    "conversation_id": f"c{c}", "message_id": f"m{m}", "title": f"Chat {c}",
                    "speaker": "Alice" if m % 2 == 0 else "Bot",
                    "text": f"conversation {c} message {m} " + "filler words " * 20,
                    "timestamp": f"2024-01-{1 + c % 28:02d}T10:{m % 60:02d}:00Z"}) + "\n")
    return conversations * messages


async def test_kill9_mid_import_then_resume(tmp_path: Path) -> None:
    src = tmp_path / "export.jsonl"
    total = export(src, 500, 20)  # 10,000 messages = 5 batches of 2,000
    data = tmp_path / "data"
    done = await kill_mid_import(data, src, "universal", total=total, per_item=20, after=2000)
    resume(data, src, "universal", done)

    async with await Mind.open(data / "personal.mind", readonly=True) as mind:
        assert await mind.frames.count() == total
        distinct = await mind.db.fetchval("SELECT count(DISTINCT external_id) FROM memory_frames")
        assert distinct == total
        assert (await mind.vectors.counts())["frame_vectors"] == total
        assert await mind.outbox.count() == 0
