"""The harvest driver end to end on real mind files: frames, sessions, provenance, idempotent
re-import, newer exports, resume after an interruption, errors that keep earlier batches."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mind.embeddings.registry import EmbeddingConfig
from mind.harvest.errors import HarvestError
from mind.harvest.store import HarvestStore
from mind.harvest.types import HarvestItem, Turn, stable_id
from workers.harvest import HarvestOptions, harvest
from workers.runtime import EmbeddedRuntime, RuntimeConfig


def conversation(n: int, turns: int = 3, *, text: str | None = None) -> HarvestItem:
    item_id = stable_id("test", f"conv-{n}")
    return HarvestItem(
        item_id=item_id, source="universal", kind="conversation", title=f"Chat {n}",
        turns=tuple(
            Turn(turn_id=f"m{n}-{t}", role="user" if t % 2 == 0 else "assistant",
                 speaker="Alice" if t % 2 == 0 else "Bot",
                 text=text or f"conversation {n} message {t} about topic{n}",
                 timestamp=f"2024-03-{1 + n % 27:02d}T10:{t:02d}:00.000Z")
            for t in range(turns)
        ),
        timestamp="2024-03-01T00:00:00.000Z", position=f"item {n}",
        metadata={"conversation_id": f"conv-{n}"},
    )


def items(count: int, fail_at: int | None = None, **kw: object) -> Iterator[HarvestItem]:
    for n in range(count):
        if n == fail_at:
            raise HarvestError("unexpected end of data", path="export.json",
                               position=f"conversation {n}")
        yield conversation(n, **kw)  # type: ignore[arg-type]


@pytest.fixture
async def runtime(tmp_path: Path):
    rt = EmbeddedRuntime(RuntimeConfig(data_dir=tmp_path / "data",
                                       embedding=EmbeddingConfig(provider="test")))
    yield rt
    await rt.close()


@pytest.fixture
def export(tmp_path: Path) -> Path:
    path = tmp_path / "export.json"
    path.write_text("version 1")
    return path


async def run(rt: EmbeddedRuntime, export: Path, gen, **kw):  # type: ignore[no-untyped-def]
    return await harvest(rt, "personal", "universal", export, parse=lambda _t: gen,
                         options=HarvestOptions(batch_frames=kw.pop("batch", 2000)),
                         wait_idle=rt.wait_idle, **kw)


async def test_frames_sessions_and_provenance(runtime: EmbeddedRuntime, export: Path) -> None:
    summary = await run(runtime, export, items(5))
    assert summary.status == "completed"
    assert summary.items == 5 and summary.frames_created == 15
    assert summary.pending_index == 0  # waited for cognify
    mind = await runtime.host.reader("personal")
    frame_id = await mind.db.fetchval(
        "SELECT id FROM memory_frames WHERE external_id = ?",
        (f"universal:{stable_id('test', 'conv-2')}:m2-1",))
    frame = await mind.frames.get(frame_id)
    assert frame is not None
    assert frame.content == "Bot: conversation 2 message 1 about topic2"
    assert frame.created_at == "2024-03-03T10:01:00.000Z"
    assert frame.recorded_at > "2026"
    assert frame.source == "import"
    assert {k: frame.metadata[k] for k in ("source", "conversation_id", "message_id", "speaker",
                                           "role", "title")} == {
        "source": "universal", "conversation_id": "conv-2", "message_id": "m2-1",
        "speaker": "Bot", "role": "assistant", "title": "Chat 2"}
    session = await mind.sessions.get_by_gop_id(frame.gop_id)
    assert session is not None and session.summary == "Chat 2"
    gop = await mind.frames.get_gop_frames(frame.gop_id)
    assert [f.t for f in gop] == [0, 1, 2]
    assert (await mind.vectors.counts())["frame_vectors"] == 15


async def test_reimport_is_idempotent_and_newer_export_adds_only_new(
    runtime: EmbeddedRuntime, export: Path
) -> None:
    await run(runtime, export, items(4))
    again = await run(runtime, export, items(4))
    assert again.status == "unchanged" and again.frames_created == 0
    export.write_text("version 2")  # a newer export: 2 more conversations
    newer = await run(runtime, export, items(6))
    assert newer.status == "completed"
    assert newer.frames_created == 6 and newer.duplicates_skipped == 12
    mind = await runtime.host.reader("personal")
    assert await mind.frames.count() == 18
    source = await HarvestStore(mind.db).source("universal")
    assert source is not None
    assert source["items_imported"] == 10 and source["frames_created"] == 18


async def test_error_keeps_committed_batches_and_resume_continues(
    runtime: EmbeddedRuntime, export: Path
) -> None:
    with pytest.raises(HarvestError, match=r"export.json, conversation 7: unexpected end") as err:
        await run(runtime, export, items(10, fail_at=7), batch=6)
    partial = err.value.summary  # type: ignore[attr-defined]
    assert partial.status == "failed"
    mind = await runtime.host.reader("personal")
    committed = await mind.frames.count()
    assert committed == 21  # items 0-6 (batches of two items, then the last one)
    run_row = await HarvestStore(mind.db).run(partial.run_id)
    assert run_row is not None and run_row["status"] == "failed"
    assert run_row["items_done"] == 7 and "conversation 7" in run_row["error"]

    seen: list[int] = []

    def counting() -> Iterator[HarvestItem]:
        for item in items(10):
            seen.append(int(item.position.split()[1]))
            yield item

    resumed = await run(runtime, export, counting(), batch=6)
    assert resumed.resumed_from == 7
    assert resumed.items == 3 and resumed.frames_created == 9
    assert resumed.duplicates_skipped == 0  # skipped items were never re-sent
    assert await mind.frames.count() == 30
    assert (await HarvestStore(mind.db).run(partial.run_id))["status"] == "completed"


async def test_long_message_stays_whole_and_oversized_is_a_clear_error(
    runtime: EmbeddedRuntime, export: Path
) -> None:
    long_text = "word " * 6000  # 30,000 chars: chunked for embedding, never truncated
    await run(runtime, export, iter([conversation(1, turns=1, text=long_text)]))
    mind = await runtime.host.reader("personal")
    (frame,) = await mind.frames.get_recent(5)
    assert frame.content == f"Alice: {long_text}"
    assert (await mind.vectors.counts())["chunk_vectors"] > 1

    export.write_text("another")
    huge = conversation(2, turns=1, text="x" * 2_000_001)
    with pytest.raises(HarvestError, match=r"item 2: message m2-0 has 2,000,00"):
        await run(runtime, export, iter([conversation(3, turns=2), huge]))
    assert await mind.frames.count() == 3  # conversation 3 committed before the bad item


async def test_item_with_more_turns_than_one_op(runtime: EmbeddedRuntime, export: Path) -> None:
    summary = await run(runtime, export, items(3, turns=7), batch=4)
    assert summary.items == 3 and summary.frames_created == 21
    mind = await runtime.host.reader("personal")
    for n in range(3):
        gop = f"harvest:universal:{stable_id('test', f'conv-{n}')}"
        assert [f.t for f in await mind.frames.get_gop_frames(gop)] == list(range(7))


async def test_auto_sync_reharvests_stale_sources(tmp_path: Path) -> None:
    from hive_mind.facade import HiveMind

    export = tmp_path / "notes.md"
    export.write_text("# Garden\n\nThe tomatoes need water on Tuesdays.\n")
    async with await HiveMind.open(data_dir=tmp_path / "d", embedding_provider="test") as hm:
        first = await hm.harvest("markdown", export, auto_sync=True, sync_interval_hours=1)
        assert first["frames_created"] == 1
        (source,) = await hm.harvest_sources()
        assert source["auto_sync"] and source["source_path"] == str(export.resolve())
        assert (await hm.maintenance("sync"))["minds"]["personal"]["synced"] == []  # not due
        from mind.storage.db import Database

        db = await Database.open(tmp_path / "d" / "personal.mind")  # age it: a second writer
        await db.execute("UPDATE harvest_sources SET last_synced_at = '2020-01-01T00:00:00.000Z'")
        await db.close()
        export.write_text("# Garden\n\nThe tomatoes need water on Tuesdays.\n\n"
                          "## Roses\n\nPrune the roses in February.\n")
        synced = (await hm.maintenance("sync"))["minds"]["personal"]["synced"]
        assert [s["status"] for s in synced] == ["completed"]
        assert synced[0]["frames_created"] == 1  # only the new section
        hits = await hm.recall("prune roses")
        assert "February" in hits[0]["content"]


async def test_markdown_bold_terms_become_linked_entities(tmp_path: Path) -> None:
    from hive_mind.facade import HiveMind

    notes = tmp_path / "notes.md"
    notes.write_text("# Stack\n\nWe run **Kafka** behind **Envoy**.\n\n## Team\n\nAsk **Priya**.\n")
    async with await HiveMind.open(data_dir=tmp_path / "d", embedding_provider="test") as hm:
        await hm.harvest("markdown", notes)
        (kafka,) = await hm.search_entities("kafka")
        assert kafka["type"] == "concept"
        mind = await hm.reader(None)
        frames = await mind.knowledge.get_entity_frames(kafka["id"])
        assert len(frames) == 1
        frame = await mind.frames.get(frames[0])
        assert frame is not None and "Kafka" in frame.content
        assert await hm.search_entities("priya")
        seen = (await hm.search_entities("kafka"))[0]["properties"].get("seen_count", 1)
        assert (await hm.harvest("markdown", notes))["status"] == "unchanged"
        again = await hm.search_entities("kafka")
        assert again[0]["properties"].get("seen_count", 1) == seen  # nothing written twice


async def test_two_documents_with_one_name_are_both_kept(tmp_path: Path) -> None:
    from hive_mind.facade import HiveMind

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "notes.txt").write_text("Alpha team owns the billing pipeline.\n")
    (tmp_path / "b" / "notes.txt").write_text("Beta team owns the search cluster.\n")
    async with await HiveMind.open(data_dir=tmp_path / "d", embedding_provider="test") as hm:
        first = await hm.ingest(str(tmp_path / "a" / "notes.txt"), tags=[])
        second = await hm.ingest(str(tmp_path / "b" / "notes.txt"), tags=[])
        assert first["frames_created"] == 1 and second["frames_created"] == 1
        again = await hm.ingest(str(tmp_path / "b" / "notes.txt"), tags=[])
        assert again["frames_created"] == 0  # re-import: nothing new
        (tmp_path / "b" / "notes.txt").write_text("Beta team owns the search cluster and CI.\n")
        edited = await hm.ingest(str(tmp_path / "b" / "notes.txt"), tags=[])
        assert edited["frames_created"] == 1  # the edit is stored, not dropped
        contents = [r["content"] for r in await hm.recall("team owns", limit=10)]
        assert any("Alpha" in c for c in contents) and any("Beta" in c for c in contents)
        assert any("and CI" in c for c in contents)


async def test_nothing_importable_is_an_error_and_not_recorded(runtime: EmbeddedRuntime,
                                                                tmp_path: Path) -> None:
    """An input that yields no item fails (non-zero exit in the CLI) and is not recorded: the
    next run reads it again instead of calling it unchanged."""
    markers = Path(__file__).parent / "data" / "harvest" / "gemini_de" / "markers_only.json"
    store = HarvestStore((await runtime.host.reader("personal")).db)
    for _ in range(2):
        with pytest.raises(HarvestError, match="not one prompt or answer"):
            await harvest(runtime, "personal", "gemini", markers, wait_idle=runtime.wait_idle)
        with pytest.raises(HarvestError, match="nothing importable was found in it"):
            await run(runtime, markers, iter(()))
    assert await store.runs() == [] and await store.sources() == []


@pytest.mark.parametrize("name", ["chatgpt-export-truncated.zip", "chatgpt-export-corrupt.zip"])
async def test_a_damaged_zip_stores_nothing(runtime: EmbeddedRuntime, name: str) -> None:
    damaged = Path(__file__).parent / "data" / "harvest" / "damaged" / name
    # a cut-off zip is refused whatever source is named; corrupt member bytes where read
    for source in ("chatgpt", "plaintext") if "truncated" in name else ("chatgpt",):
        with pytest.raises(HarvestError, match=r"the archive is damaged \(.*\): download it "
                                               r"again"):
            await harvest(runtime, "personal", source, damaged, wait_idle=runtime.wait_idle)
    mind = await runtime.host.reader("personal")
    store = HarvestStore(mind.db)
    assert await store.runs() == [] and await store.sources() == []
    row = await mind.db.fetchone("SELECT count(*) FROM memory_frames")
    assert row is not None and row[0] == 0


BRANCHES = Path(__file__).parent / "data" / "harvest" / "chatgpt_branches"


async def _message_keys(runtime: EmbeddedRuntime) -> list[str]:
    mind = await runtime.host.reader("personal")
    rows = await mind.db.fetchall("SELECT json_extract(metadata, '$.message_id') FROM "
                                  "memory_frames ORDER BY 1")
    return [str(r[0]) for r in rows]


async def test_a_chatgpt_branch_stores_each_message_once(runtime: EmbeddedRuntime) -> None:
    """An original, its "Branch in new chat" and a branch of that branch: 8 distinct messages
    among 14 turns are 8 frames, one per message id; again, nothing."""
    export = BRANCHES / "conversations.json"
    first = await harvest(runtime, "personal", "chatgpt", export, wait_idle=runtime.wait_idle)
    assert (first.items, first.frames_created, first.duplicates_skipped) == (3, 8, 6)
    keys = await _message_keys(runtime)
    assert len(keys) == len(set(keys)) == 8
    again = await harvest(runtime, "personal", "chatgpt", export, wait_idle=runtime.wait_idle)
    assert again.status == "unchanged"
    copy = export.parent.parent / "chatgpt_branches_copy.json"
    try:  # the same export under another name: a new run, nothing new
        copy.write_bytes(export.read_bytes())
        rerun = await harvest(runtime, "personal", "chatgpt", copy, wait_idle=runtime.wait_idle)
    finally:
        copy.unlink()
    assert (rerun.frames_created, rerun.duplicates_skipped) == (0, 14)


async def test_a_chatgpt_branch_alone_then_the_whole_export(runtime: EmbeddedRuntime) -> None:
    """The branch imported first (its origin not yet exported) keeps the copied history; the
    later export with the origin adds only what is new."""
    alone = await harvest(runtime, "personal", "chatgpt", BRANCHES / "branch_only.json",
                          wait_idle=runtime.wait_idle)
    assert (alone.frames_created, alone.duplicates_skipped) == (4, 0)
    whole = await harvest(runtime, "personal", "chatgpt", BRANCHES / "conversations.json",
                          wait_idle=runtime.wait_idle)
    assert (whole.frames_created, whole.duplicates_skipped) == (4, 10)
    keys = await _message_keys(runtime)
    assert len(keys) == len(set(keys)) == 8


async def test_copies_stored_before_are_rekeyed_not_stored_again(
        runtime: EmbeddedRuntime) -> None:
    """A mind that stored a branch's copies under the branch's own keys (before copies were
    recognised) gets them re-keyed by the next import, not stored a second time."""
    from dataclasses import replace

    from mind.harvest import chatgpt

    def unkeyed(_target: object) -> Iterator[HarvestItem]:
        for item in chatgpt.parse(BRANCHES / "branch_only.json"):
            yield replace(item, turns=tuple(replace(t, home=None, metadata={
                k: v for k, v in t.metadata.items() if k != "previous_external_id"})
                for t in item.turns))

    old = await harvest(runtime, "personal", "chatgpt", BRANCHES / "branch_only.json",
                        parse=unkeyed, wait_idle=runtime.wait_idle)
    assert old.frames_created == 4
    whole = await harvest(runtime, "personal", "chatgpt", BRANCHES / "conversations.json",
                          wait_idle=runtime.wait_idle)
    assert whole.frames_created == 4
    keys = await _message_keys(runtime)
    assert len(keys) == len(set(keys)) == 8
