"""Claude Code adapter (mind/harvest/claude_code.py) on a realistic ~/.claude tree."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from mind.frames.model import NewFrame
from mind.frames.sessions import SessionStore
from mind.frames.store import FrameStore
from mind.harvest import claude_code, transcript
from mind.harvest.claude_code import parse_frontmatter
from mind.harvest.errors import HarvestError
from mind.harvest.store import HarvestStore
from mind.harvest.types import PREVIOUS_KEY, HarvestItem, external_id, stable_id
from mind.storage.db import Database
from tests.harvest_roundtrip import contents, import_path, runtime, stored
from workers.harvest import harvest
from workers.runtime import EmbeddedRuntime

TREE = Path(__file__).parent / "data" / "harvest" / "claude_code" / "dot-claude"
SHOP = "projects/-home-ann-shop"
SHOP_SESSION = f"{SHOP}/5f1c9a2e-0000-4000-8000-00000000000a.jsonl"
BLOG_SESSION = "projects/-home-ann-blog/9a8b7c6d-0000-4000-8000-00000000000b.jsonl"
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def copy_tree(dest: Path) -> Path:
    """The fixture tree, with one session and one memory file converted to CRLF line ends."""
    root = dest / ".claude"
    shutil.copytree(TREE, root)
    for rel in (BLOG_SESSION, f"{SHOP}/memory/prefs.md"):
        path = root / rel
        path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    return root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return copy_tree(tmp_path)


@pytest.fixture
def items(root: Path) -> list[HarvestItem]:
    return list(claude_code.parse(root))


def by_path(items: list[HarvestItem]) -> dict[str, HarvestItem]:
    return {i.metadata["file_path"]: i for i in items}


def test_what_is_harvested_in_order(items: list[HarvestItem], root: Path) -> None:
    assert b"\r\n" in (root / BLOG_SESSION).read_bytes()
    assert [(i.kind, i.position) for i in items] == [
        ("instruction", "CLAUDE.md"),
        ("rule", "rules/style/python.md"),
        ("artifact", "plans/migration.md"),
        ("conversation", BLOG_SESSION),
        ("instruction", f"{SHOP}/CLAUDE.md"),
        ("memory", f"{SHOP}/memory/MEMORY.md"),
        ("preference", f"{SHOP}/memory/prefs.md"),  # empty.md has no body
        ("decision", f"{SHOP}/memory/testing_feedback.md"),
        ("conversation", SHOP_SESSION),
    ]
    assert all(i.source == "claude-code" for i in items)
    assert [i.title for i in items[:3]] == ["CLAUDE.md", "Rule: python", "Plan: migration"]


def test_memory_frontmatter_with_crlf(items: list[HarvestItem]) -> None:
    prefs = by_path(items)[f"{SHOP}/memory/prefs.md"]
    assert prefs.title == "Ann's editor preferences"
    assert prefs.kind == "preference"
    assert prefs.metadata["memory_type"] == "user"
    assert prefs.metadata["description"] == "how Ann likes code edits"
    (turn,) = prefs.turns
    assert turn.text == "Ann wants small, focused diffs and no reformatting of untouched lines."
    assert "\r" not in turn.text and turn.role == "document" and turn.speaker == "prefs.md"
    feedback = by_path(items)[f"{SHOP}/memory/testing_feedback.md"]
    assert feedback.title == "Integration tests hit a real database"
    assert feedback.turns[0].text.startswith("Do not mock the database")
    assert prefs.timestamp is not None and ISO.match(prefs.timestamp)  # the file's mtime


def test_session_transcript(items: list[HarvestItem]) -> None:
    session = by_path(items)[SHOP_SESSION]
    assert session.title == "Fix flaky checkout test"  # from the summary line
    assert session.item_id == stable_id("claude-code", "session",
                                        "5f1c9a2e-0000-4000-8000-00000000000a")  # sessionId
    assert session.metadata["session_id"] == "5f1c9a2e-0000-4000-8000-00000000000a"
    assert session.metadata["cwd"] == "/home/ann/shop"
    assert session.metadata["git_branch"] == "main"
    assert session.metadata["skipped_lines"] == 0
    assert [(t.role, t.speaker) for t in session.turns] == [
        ("user", "User"), ("assistant", "Claude"), ("user", "User"), ("user", "User")]
    prompt, answer, command, last = session.turns
    assert prompt.turn_id == "u-1"
    assert prompt.text == "The checkout test fails about one run in five. Can you find out why?"
    assert prompt.timestamp == "2025-06-01T10:00:05.120Z"
    # one assistant turn for everything between two prompts, tool calls as one-line markers
    assert answer.text == (
        "Let me look at the test first.\n\n"
        '[Tool call: Bash] {"command":"pytest tests/test_checkout.py -x -q",'
        '"description":"Run the checkout test"}\n\n'
        "The test depends on the wall clock: orders created just before midnight get tomorrow's"
        " date. I'll freeze time in the fixture.")
    assert answer.turn_id == stable_id("claude-code", "5f1c9a2e-0000-4000-8000-00000000000a",
                                       "a-2", "a-4")
    assert answer.timestamp == "2025-06-01T10:00:09.000Z"
    old_item = stable_id("claude-code", "session", SHOP_SESSION)  # the path-based keys
    assert answer.metadata == {
        "model": "claude-sonnet-4-20250514", PREVIOUS_KEY: external_id(
            "claude-code", old_item, stable_id("claude-code", SHOP_SESSION, "a-2", "a-4"))}
    assert prompt.metadata == {PREVIOUS_KEY: f"claude-code:{old_item}:u-1"}
    assert command.text == "/cost"
    assert last.text == "Great, go ahead and commit it."
    text = "\n".join(t.text for t in session.turns)
    for absent in ("Caveat", "PRIVATE THOUGHTS", "TOOL OUTPUT", "SIDECHAIN", "Total cost"):
        assert absent not in text


def test_crlf_session_with_broken_line(items: list[HarvestItem]) -> None:
    session = by_path(items)[BLOG_SESSION]
    assert session.metadata["skipped_lines"] == 1
    assert session.metadata["git_branch"] is None
    assert [(t.turn_id, t.role, t.text) for t in session.turns] == [
        ("b-u1", "user", "Draft a post about our move to Postgres."),
        ("b-a1", "assistant", 'Here is a first draft titled "Why we moved to Postgres".'),
        ("b-u2", "user", "Make it shorter."),
    ]
    assert session.turns[2].timestamp == "2025-06-02T07:05:00.000Z"  # +01:00 → Z
    assert session.title == "Draft a post about our move to Postgres."
    assert session.timestamp == "2025-06-02T08:00:00.000Z"


def test_ids_depend_on_relative_paths_only(items: list[HarvestItem], tmp_path: Path) -> None:
    elsewhere = list(claude_code.parse(copy_tree(tmp_path / "other-home")))
    assert [(i.item_id, [t.turn_id for t in i.turns]) for i in elsewhere] == [
        (i.item_id, [t.turn_id for t in i.turns]) for i in items]
    assert [i.turns for i in elsewhere if i.kind == "conversation"] == [
        i.turns for i in items if i.kind == "conversation"]


def test_changed_document_gets_a_new_turn_id(root: Path, items: list[HarvestItem]) -> None:
    (root / "plans" / "migration.md").write_text("# Plan\n\nSwitch reads first.\n")
    again = by_path(list(claude_code.parse(root)))["plans/migration.md"]
    before = by_path(items)["plans/migration.md"]
    assert again.item_id == before.item_id
    assert again.turns[0].turn_id != before.turns[0].turn_id


def test_single_session_file(root: Path) -> None:
    (item,) = claude_code.parse(root / SHOP_SESSION)
    assert len(item.turns) == 4 and item.kind == "conversation"


def test_not_a_claude_directory(tmp_path: Path) -> None:
    with pytest.raises(HarvestError, match="expected a Claude Code directory"):
        list(claude_code.parse(tmp_path))
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(HarvestError, match="not a directory"):
        list(claude_code.parse(tmp_path / "x.json"))


def test_parse_frontmatter() -> None:
    fields, body = parse_frontmatter("---\r\nname: 'X'\r\ntype: feedback\r\n---\r\nBody\r\n")
    assert fields == {"name": "X", "type": "feedback"} and body == "Body\n"
    assert parse_frontmatter("no frontmatter\n---\n") == ({}, "no frontmatter\n---\n")
    assert parse_frontmatter("---\nname: only\n---") == ({"name": "only"}, "")


def event(uuid: str, kind: str, content: object, ts: str = "2025-01-01T00:00:00Z") -> str:
    return json.dumps({"type": kind, "uuid": uuid, "timestamp": ts, "sessionId": "s",
                       "message": {"role": kind, "content": content}})


def test_long_assistant_run_is_split_not_truncated(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transcript, "MAX_TURN_CHARS", 100)
    project = tmp_path / ".claude" / "projects" / "p"
    project.mkdir(parents=True)
    lines = [event("u", "user", "go")] + [
        event(f"a{i}", "assistant", [{"type": "text", "text": f"{i:02d}" + "x" * 38}])
        for i in range(5)]
    (project / "s.jsonl").write_text("\n".join(lines) + "\n")
    (item,) = claude_code.parse(tmp_path / ".claude")
    texts = [t.text for t in item.turns[1:]]
    assert all(len(t) <= 100 for t in texts)
    assert "\n\n".join(texts) == "\n\n".join(f"{i:02d}" + "x" * 38 for i in range(5))
    assert len({t.turn_id for t in item.turns}) == len(item.turns)


def test_oversized_message_names_the_line(tmp_path: Path) -> None:
    project = tmp_path / ".claude" / "projects" / "p"
    project.mkdir(parents=True)
    (project / "s.jsonl").write_text(event("u1", "user", "hi") + "\n"
                                     + event("u2", "user", "x" * 2_000_001) + "\n")
    with pytest.raises(HarvestError, match="2,000,001 characters") as info:
        list(claude_code.parse(tmp_path / ".claude"))
    assert info.value.position == "s.jsonl: line 2"


def path_keyed(target: Path | str) -> Iterator[HarvestItem]:
    """The adapter as it was before sessions were keyed by ``sessionId``: item and turn ids
    from the transcript's relative path (what minds imported then hold)."""
    for item in claude_code.parse(target):
        if item.kind != "conversation":
            yield item
            continue
        turns = []
        for turn in item.turns:
            _, old_item, old_turn = turn.metadata[PREVIOUS_KEY].split(":")
            meta = {k: v for k, v in turn.metadata.items() if k != PREVIOUS_KEY}
            turns.append(replace(turn, turn_id=old_turn, metadata=meta))
        yield replace(item, item_id=old_item, turns=tuple(turns))


async def external_ids(rt: EmbeddedRuntime) -> set[str]:
    db = (await rt.host.reader("personal")).db
    rows = await db.fetchall("SELECT external_id, metadata FROM memory_frames")
    assert not any(PREVIOUS_KEY in str(r[1]) for r in rows)  # never stored
    return {str(r[0]) for r in rows}


async def test_path_keyed_import_is_rekeyed_not_duplicated(root: Path, tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    try:
        old = await harvest(rt, "personal", "claude-code", root, parse=path_keyed)
        assert (old.status, old.items, old.frames_created) == ("completed", 9, 14)
        before = await external_ids(rt)
        sessions_before = await sessions(rt)
        assert all(n > 0 for _, n, _ in sessions_before.values())
        session_old = stable_id("claude-code", "session", SHOP_SESSION)
        assert f"claude-code:{session_old}:u-1" in before
        upgraded = copy_tree(tmp_path / "upgraded")  # same files, read by the new adapter
        again = await import_path(rt, "claude-code", upgraded)
        assert (again.status, again.frames_created, again.duplicates_skipped) == (
            "completed", 0, 14)
        after = await external_ids(rt)
        session_new = stable_id("claude-code", "session", "5f1c9a2e-0000-4000-8000-00000000000a")
        assert f"claude-code:{session_new}:u-1" in after and len(after) == 14
        assert not any(session_old in key for key in after)
        assert await stored(rt, "claude-code") == (9, 14)
        # the frames moved to the new key's session, with their title; the old row is gone
        # and no session is left empty
        old_gop, new_gop = (f"harvest:claude-code:{s}" for s in (session_old, session_new))
        sessions_after = await sessions(rt)
        assert old_gop not in sessions_after and sessions_after[new_gop][:2] == (
            "Fix flaky checkout test", 4)
        assert sessions_before[old_gop][:2] == sessions_after[new_gop][:2]
        assert sorted(v[:2] for v in sessions_after.values()) == sorted(
            v[:2] for v in sessions_before.values())  # same sessions, none empty
        # order kept: the turns of each session by t, as they were
        assert sessions_after[new_gop][2] == sessions_before[old_gop][2]
        again = await import_path(rt, "claude-code", copy_tree(tmp_path / "third"))
        assert (again.frames_created, await sessions(rt)) == (0, sessions_after)
    finally:
        await rt.close()


async def test_rekey_merges_old_sessions_into_the_new_one_in_order(db: Database) -> None:
    """Two legacy sessions whose turns now belong to one conversation (one ``sessionId`` in two
    transcript files): the frames move in turn order, numbered after each other, and both old
    rows go; a turn without a stored previous key is written after them."""
    store = FrameStore(db)
    await store.insert_many([NewFrame("harvest:x:old-a", f"a{n}", external_id=f"x:a:{n}")
                             for n in (1, 2)] + [NewFrame("harvest:x:old-b", "b1",
                                                          external_id="x:b:1")])
    await SessionStore(db).title_untitled({"harvest:x:old-a": "The chat"})
    moved = [("x:a:1", "x:n:1"), ("x:a:2", "x:n:2"), ("x:b:1", "x:n:3"), ("x:gone", "x:n:4")]
    async with db.transaction():
        frames = await HarvestStore(db).adopt_previous_keys([
            NewFrame("harvest:x:new", new[-1], external_id=new, metadata={PREVIOUS_KEY: prev})
            for prev, new in moved])
        results = await store.insert_many(frames)
    assert [r.created for r in results] == [False, False, False, True]
    rows = await db.fetchall("SELECT s.gop_id, s.summary, f.external_id, f.t, f.content FROM "
                             "sessions s LEFT JOIN memory_frames f USING (gop_id) ORDER BY f.t")
    assert [tuple(r) for r in rows] == [
        ("harvest:x:new", "The chat", "x:n:1", 0, "a1"),
        ("harvest:x:new", "The chat", "x:n:2", 1, "a2"),
        ("harvest:x:new", "The chat", "x:n:3", 2, "b1"),
        ("harvest:x:new", "The chat", "x:n:4", 3, "4")]


async def sessions(rt: EmbeddedRuntime) -> dict[str, tuple[str | None, int, str]]:
    """Every session: its title, how many frames it holds and their ids in ``t`` order."""
    db = (await rt.host.reader("personal")).db
    rows = await db.fetchall(
        "SELECT s.gop_id, s.summary, count(f.id), "
        "coalesce(group_concat(f.id, ' ' ORDER BY f.t), '') FROM sessions s "
        "LEFT JOIN memory_frames f ON f.gop_id = s.gop_id GROUP BY s.gop_id")
    return {str(r[0]): (r[1], int(r[2]), str(r[3])) for r in rows}


async def test_moved_project_directory_writes_no_session_again(root: Path,
                                                               tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    try:
        first = await import_path(rt, "claude-code", root)
        assert (first.items, first.frames_created) == (9, 14)
        (root / SHOP).rename(root / "projects" / "-home-ann-work-shop")  # the project moved
        (root / "projects" / "-home-ann-blog").rename(root / "projects" / "-srv-blog")
        moved = await import_path(rt, "claude-code", root)
        # both sessions (5 frames) are known by their sessionId; the shop project's own
        # documents (CLAUDE.md and 3 memories) are keyed by their path and come again
        assert (moved.status, moved.frames_created, moved.duplicates_skipped) == (
            "completed", 4, 10)
        db = (await rt.host.reader("personal")).db
        rows = await db.fetchall("SELECT metadata FROM memory_frames ORDER BY id DESC LIMIT 4")
        assert all('"kind": "conversation"' not in str(r[0]) for r in rows)
    finally:
        await rt.close()


async def test_own_mcp_tool_calls_are_markers_only(tmp_path: Path) -> None:
    project = tmp_path / ".claude" / "projects" / "p"
    project.mkdir(parents=True)
    lines = [
        event("u1", "user", "What did we decide about the cache?"),
        event("a1", "assistant", [{"type": "tool_use", "id": "t1",
                                   "name": "mcp__hive-mind__recall_memory",
                                   "input": {"query": "SECRET QUERY cache decision"}}]),
        event("u2", "user", [{"type": "tool_result", "tool_use_id": "t1",
                              "content": [{"type": "text", "text": "RECALLED: use Redis"}]}]),
        event("a2", "assistant", [{"type": "text", "text": "We chose Redis for the cache."},
                                  {"type": "tool_use", "id": "t2",
                                   "name": "mcp__memory__save_memory",
                                   "input": {"content": "SAVED: cache is Redis"}},
                                  {"type": "tool_use", "id": "t3", "name": "Read",
                                   "input": {"file_path": "cache.py"}}]),
    ]
    (project / "s.jsonl").write_text("\n".join(lines) + "\n")
    (item,) = claude_code.parse(tmp_path / ".claude")
    assert [(t.role, t.text) for t in item.turns] == [
        ("user", "What did we decide about the cache?"),
        ("assistant", "[Used recall_memory]\n\nWe chose Redis for the cache.\n\n"
                      '[Used save_memory]\n\n[Tool call: Read] {"file_path":"cache.py"}')]
    rt = runtime(tmp_path)
    try:
        summary = await import_path(rt, "claude-code", tmp_path / ".claude")
        assert summary.frames_created == 2
        stored_text = "\n".join(await contents(rt, "claude-code"))
        assert "[Used recall_memory]" in stored_text
        for absent in ("SECRET QUERY", "RECALLED", "SAVED"):
            assert absent not in stored_text
    finally:
        await rt.close()


CLEARED = Path(__file__).parent / "data" / "harvest" / "claude_code_cleared" / "dot-claude"
CLEARED_SESSION = "projects/-Users-sam-site/3fb74381-0000-4000-8000-00000000000a.jsonl"
EARLIER_SESSION = "projects/-Users-sam-site/d06f21d6-0000-4000-8000-00000000000b.jsonl"


def test_summaries_of_other_sessions_do_not_name_this_one() -> None:
    """After ``/clear`` a transcript opens with "Conversation Cleared" and carries the
    summaries of other sessions: none of their leaves is here, so the first prompt names it;
    the summary whose leaf is in the earlier session names that one."""
    titles = {i.position: i.title for i in claude_code.parse(CLEARED)}
    assert titles == {CLEARED_SESSION: "show tools",
                      EARLIER_SESSION: "Blog deploy pipeline overview"}


def test_a_summary_written_into_another_transcript_names_its_session(tmp_path: Path) -> None:
    """Claude Code writes a session's summary into the transcript open at the time: the
    earlier session, its own file holding no summary, takes the one the later file holds."""
    root = Path(shutil.copytree(CLEARED, tmp_path / ".claude"))
    earlier = root / EARLIER_SESSION
    lines = earlier.read_text().splitlines(keepends=True)
    earlier.write_text("".join(line for line in lines if '"type":"summary"' not in line))
    titles = {i.position: i.title for i in claude_code.parse(root)}
    assert titles == {CLEARED_SESSION: "show tools",
                      EARLIER_SESSION: "Blog deploy pipeline overview"}
    (alone,) = claude_code.parse(earlier)  # one file on its own: only what it holds
    assert alone.title == "how does the blog get deployed?"


def test_a_title_the_user_set_wins(tmp_path: Path) -> None:
    root = Path(shutil.copytree(CLEARED, tmp_path / ".claude"))
    with (root / CLEARED_SESSION).open("a") as f:
        for owner, title in (("3fb74381-0000-4000-8000-00000000000a", "Tool tour"),
                             ("someone-else", "Not this one")):
            f.write(json.dumps({"type": "custom-title", "customTitle": title,
                                "sessionId": owner}) + "\n")
    titles = {i.position: i.title for i in claude_code.parse(root)}
    assert titles[CLEARED_SESSION] == "Tool tour"


async def test_cleared_sessions_round_trip(tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    try:
        first = await import_path(rt, "claude-code", CLEARED)
        assert (first.status, first.items, first.frames_created) == ("completed", 2, 6)
        db = (await rt.host.reader("personal")).db
        rows = await db.fetchall("SELECT summary FROM sessions ORDER BY summary")
        assert [r[0] for r in rows] == ["Blog deploy pipeline overview", "show tools"]
    finally:
        await rt.close()
