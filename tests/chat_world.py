"""A small chat mind through the product path (harvest → actor → cognify with the real model),
for the tests that ask it questions: tests/test_supersession.py, tests/test_catchup.py."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from hive_mind.facade import HiveMind

# (conversation, time, speaker, text); the speaker "Assistant" is the assistant's turn
Turn = tuple[str, str, str, str]


def write_export(path: Path, turns: Sequence[Turn]) -> None:
    """The turns as a ``universal`` export (one JSON object a line)."""
    with path.open("w") as out:
        for i, (conv, at, speaker, text) in enumerate(turns):
            role = "assistant" if speaker == "Assistant" else "user"
            out.write(json.dumps({"conversation_id": conv, "message_id": f"m{i}",
                                  "speaker": speaker, "role": role, "text": text,
                                  "timestamp": at}) + "\n")


@asynccontextmanager
async def chat_mind(root: Path, turns: Sequence[Turn]
                    ) -> AsyncIterator[tuple[HiveMind, dict[str, int]]]:
    """A mind under ``root`` holding the turns, all indexed, and each turn's text → frame id."""
    export = root / "chats.jsonl"
    write_export(export, turns)
    hm = await HiveMind.open(data_dir=root / "data", embedding_provider="inprocess",
                             redis_url=None)
    try:
        summary = await hm.harvest("universal", export)
        assert summary["frames_created"] == len(turns)
        await hm.wait_idle()
        hits = await hm.recall("the", limit=50, touch=False)  # nothing pending: all indexed
        assert (await hm.stats())["pending_index"] == 0 and hits
        ids = {}
        for _, _, _, text in turns:
            found = await hm.recall(text, limit=3, touch=False)
            ids[text] = next(h["id"] for h in found if h["content"].endswith(text))
        yield hm, ids
    finally:
        await hm.close()
