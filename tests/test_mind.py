from __future__ import annotations

from pathlib import Path

import pytest

from mind.errors import StorageError
from mind.mind import Mind


async def test_open_creates_migrates_and_reopens(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "personal.mind"
    async with await Mind.open(path) as mind:
        session = await mind.sessions.create()
        saved = await mind.frames.create_i_frame(session.gop_id, "Alice prefers tea")
        entity, created = await mind.knowledge.upsert_entity("person", "Alice")
        await mind.knowledge.link_entity_to_frame(entity.id, saved.frame.id)
        await mind.identity.set(name="Hive")
        await mind.awareness.add("task", "finish the report")
        stats = await mind.stats()
        assert created and stats["frames"]["total"] == 1 and stats["entities"] == 1
        assert stats["pending_index"] == 1
    async with await Mind.open(path) as again:
        frame = await again.frames.get(saved.frame.id)
        assert frame is not None and frame.content == "Alice prefers tea"
        assert [e.name for e in await again.knowledge.get_frame_entities(frame.id)] == ["Alice"]
        assert (await again.identity.get()).name == "Hive"
        assert [i.content for i in await again.awareness.get_all()] == ["finish the report"]


async def test_reader_sees_writer_commits_and_cannot_write(tmp_path: Path) -> None:
    path = tmp_path / "m.mind"
    async with await Mind.open(path) as writer, await Mind.open(path, readonly=True) as reader:
        await writer.frames.create_i_frame("g", "visible after commit")
        assert await reader.frames.count() == 1
        with pytest.raises(StorageError):
            await reader.frames.create_i_frame("g", "readers never write")
        assert await writer.frames.count() == 1
