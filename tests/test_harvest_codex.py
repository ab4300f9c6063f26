"""Codex CLI adapter (mind/harvest/codex.py) on a ~/.codex tree with rollouts in both layouts
and a history file; our own MCP tools' calls are kept only as markers; round trips through the
real driver (sessions and frames counted exactly, re-imports writing nothing)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hive_mind.mcp_tools import TOOL_NAMES
from mind.harvest import codex
from mind.harvest.errors import HarvestError
from mind.harvest.own_tools import own_tool
from mind.harvest.types import HarvestItem, stable_id
from tests.harvest_roundtrip import contents, import_path, runtime, stored
from vocabulary.enums import MCP_TOOLS

TREE = Path(__file__).parent / "fixtures" / "harvest" / "codex" / "dot-codex"
S1 = "0199a1b2-0000-7000-8000-000000000001"
S2 = "5e0b7c1d-0000-4000-8000-000000000002"
S3 = "7f3e2d1c-0000-4000-8000-000000000003"
NEW = f"sessions/2025/09/14/rollout-2025-09-14T10-00-00-{S1}.jsonl"
OLD = f"sessions/2025/05/02/rollout-2025-05-02T08-30-00-{S2}.jsonl"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return Path(shutil.copytree(TREE, tmp_path / ".codex"))


@pytest.fixture
def items(root: Path) -> list[HarvestItem]:
    return list(codex.parse(root))


def test_sessions_in_order_one_item_per_rollout_then_history(items: list[HarvestItem]) -> None:
    assert [(i.position, i.metadata["session_id"], len(i.turns)) for i in items] == [
        (OLD, S2, 2), (NEW, S1, 5), ("history.jsonl: session " + S3, S3, 2)]
    assert all(i.source == "codex" and i.kind == "conversation" for i in items)
    assert [i.item_id for i in items] == [stable_id("codex", "session", s) for s in (S2, S1, S3)]


def test_current_layout_turns(items: list[HarvestItem]) -> None:
    session = items[1]
    assert session.title == "Why does the cart total round wrong for 3 items at 0.10?"
    assert session.timestamp == "2025-09-14T10:00:00.000Z"
    assert {k: session.metadata[k] for k in ("cwd", "git_branch", "cli_version",
                                             "skipped_lines")} == {
        "cwd": "/home/ann/shop", "git_branch": "main", "cli_version": "0.36.0",
        "skipped_lines": 1}
    assert [(t.role, t.speaker) for t in session.turns] == [
        ("user", "User"), ("assistant", "Codex"), ("system", "Codex (summary)"),
        ("user", "User"), ("assistant", "Codex")]
    prompt, answer, summary, second, last = session.turns
    assert prompt.text == "Why does the cart total round wrong for 3 items at 0.10?"
    assert prompt.timestamp == "2025-09-14T10:00:01.000Z"
    patch = ("*** Begin Patch\n*** Update File: src/cart.py\n@@\n-    total = round(total, 2)\n"
             "+    total = total.quantize(CENT)\n*** End Patch")
    assert answer.text.split("\n\n") == [
        "[Used recall_memory]",
        '[Tool call: shell] {"command": ["bash", "-lc", "rg -n \'round(\' src/cart.py"], '
        '"workdir": "/home/ann/shop"}',
        "The total is summed as floats, then rounded: 0.1 * 3 is 0.30000000000000004. I'll "
        "switch the cart to Decimal.",
        f"[Tool call: apply_patch] {patch}",  # under the 200-character cap
        "[Used save_memory]",
        "Done: totals now use Decimal and round half-up to the cent."]
    assert answer.metadata == {"model": "gpt-5-codex"}
    assert answer.timestamp == "2025-09-14T10:00:02.500Z"
    assert summary.text == "Summary so far: the cart now uses Decimal for totals."
    assert second.text == "Add a test for 3 x 0.10."
    assert last.text == (
        '[Tool call: local_shell] ["pytest","-q","tests/test_cart.py"]\n\n'
        '[Tool call: web_search] {"type":"search","query":"python decimal quantize half up"}'
        "\n\nAdded tests/test_cart.py::test_three_dimes; it passes.")
    text = "\n".join(t.text for t in session.turns)
    for absent in ("RECALLED MEMORY", "SAVED MEMORY", "cart rounding decision", "TOOL OUTPUT",
                   "PRIVATE REASONING", "environment_context", "AGENTS.md", "permissions"):
        assert absent not in text, absent


def test_older_layout_and_history(items: list[HarvestItem]) -> None:
    old, _, history = items
    assert [(t.role, t.text) for t in old.turns] == [
        ("user", "Rename the blog's draft folder to drafts/."),
        ("assistant", '[Tool call: shell] {"command": ["git", "mv", "draft", "drafts"]}\n\n'
                      "Renamed draft/ to drafts/ with git mv.")]
    assert old.timestamp == "2025-05-02T08:30:00.000Z" and old.turns[0].timestamp is None
    # history: only the session without a transcript; its prompts in order, epoch seconds
    assert history.title == "Codex prompts: How do I list open ports on macOS?"
    assert [(t.text, t.timestamp) for t in history.turns] == [
        ("How do I list open ports on macOS?", "2025-04-30T08:00:00.000Z"),
        ("And only the ones listening on TCP?", "2025-04-30T08:01:00.000Z")]


def test_single_files(root: Path, items: list[HarvestItem]) -> None:
    (one,) = codex.parse(root / NEW)
    assert one.turns == items[1].turns and one.item_id == items[1].item_id
    history = list(codex.parse(root / "history.jsonl"))  # alone: every session's prompts
    assert [i.metadata["session_id"] for i in history] == [S2, S3, S1]


def test_ids_survive_a_moved_codex_home(items: list[HarvestItem], tmp_path: Path) -> None:
    moved = shutil.copytree(TREE, tmp_path / "elsewhere" / "codex-home")
    (moved / "sessions" / "2025" / "09" / "14").rename(moved / "sessions" / "archived")
    again = list(codex.parse(moved))
    key = sorted((i.item_id, [t.turn_id for t in i.turns]) for i in items)
    assert sorted((i.item_id, [t.turn_id for t in i.turns]) for i in again) == key


def test_not_codex(tmp_path: Path) -> None:
    (tmp_path / "notes.jsonl").write_text('{"hello": 1}\n')
    with pytest.raises(HarvestError, match=r"no Codex sessions or history here \(found: "
                                           r"notes.jsonl\)"):
        list(codex.parse(tmp_path))
    with pytest.raises(HarvestError, match="not a Codex rollout or history file"):
        list(codex.parse(tmp_path / "notes.jsonl"))


@pytest.mark.parametrize(("name", "ours"), [
    ("recall_memory", "recall_memory"), ("mcp__hive-mind__save_memory", "save_memory"),
    ("hive-mind__recall_memory", "recall_memory"), ("memory.forget_memory", "forget_memory"),
    ("mcp__other__search", None), ("shell", None), ("recall_memory_v2", None),
    ("myrecall_memory", None), ("Bash", None),
])
def test_own_tool_names(name: str, ours: str | None) -> None:
    assert own_tool(name) == ours


def test_own_tools_are_the_servers_tools() -> None:
    assert sorted(MCP_TOOLS) == sorted(TOOL_NAMES)


async def test_round_trip_reimport_and_newer_export(root: Path, tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    try:
        first = await import_path(rt, "codex", root)
        assert (first.status, first.items, first.frames_created) == ("completed", 3, 9)
        assert await stored(rt, "codex") == (3, 9)
        written = await contents(rt, "codex")
        assert "Codex: [Used recall_memory]" in "\n".join(written)
        assert not any("RECALLED MEMORY" in c or "SAVED MEMORY" in c for c in written)
        again = await import_path(rt, "codex", root)
        assert (again.status, again.frames_created) == ("unchanged", 0)
        moved = Path(shutil.copytree(root, tmp_path / "moved" / ".codex"))
        elsewhere = await import_path(rt, "codex", moved)
        assert (elsewhere.status, elsewhere.frames_created) == ("completed", 0)
        assert elsewhere.duplicates_skipped == 9
        with (root / NEW).open("a") as f:  # the session goes on: one more exchange
            for role, kind, text in (("user", "input_text", "Now the same for taxes."),
                                     ("assistant", "output_text", "Taxes use Decimal too.")):
                f.write(json.dumps({"timestamp": "2025-09-15T09:00:00.000Z",
                                    "type": "response_item", "payload": {
                                        "type": "message", "role": role,
                                        "content": [{"type": kind, "text": text}]}}) + "\n")
        newer = await import_path(rt, "codex", root)
        assert (newer.status, newer.frames_created, newer.duplicates_skipped) == (
            "completed", 2, 9)
        assert await stored(rt, "codex") == (3, 11)
    finally:
        await rt.close()


DESKTOP = Path(__file__).parent / "data" / "harvest" / "codex"
EVENTS_ONLY = "sessions/2026/05/11/rollout-2026-05-11T13-28-45-019e1695-0000-7c83-8b39-00000000000d.jsonl"
BOTH_FORMS = "sessions/2026/02/23/rollout-2026-02-23T20-34-25-019c8bfe-0000-79e0-97d7-00000000000b.jsonl"


def test_prompts_written_only_as_events() -> None:
    """Codex Desktop writes some prompts only as ``event_msg``/``user_message``: each one is a
    turn, so the answers stay one turn per prompt, and the title is the first request."""
    (session,) = codex.parse(DESKTOP / EVENTS_ONLY)
    assert session.title == "summarize the action items for the demo from this transcript"
    assert [t.role for t in session.turns] == ["user", "assistant"] * 3
    prompts = [t for t in session.turns if t.role == "user"]
    assert prompts[0].text.endswith("## My request for Codex:\nsummarize the action items for "
                                    "the demo from this transcript")
    assert prompts[0].timestamp == "2026-05-11T10:29:40.167Z"
    assert [t.text for t in prompts[1:]] == [
        "there is a need to draft a demo scenario around budgets and analytics",
        "use the browser to look at the Analytics tab; here is a screenshot\n\n[Shared image]"]
    answers = [t.text for t in session.turns if t.role == "assistant"]
    assert answers[0].endswith("Action items for the demo: Sam drafts the governance scenario by "
                               "Friday; Lee prepares the budget slides.")
    assert answers[1] == ("Draft scenario: open Analytics, filter by project, show the monthly "
                          "budget burn-down.")
    assert answers[2].startswith("[Tool call: mcp__node_repl__js] ")
    text = "\n".join(t.text for t in session.turns)
    for absent in ("TOOL OUTPUT", "gAAAA", "base64", "You are Codex"):
        assert absent not in text, absent


def test_a_message_in_several_forms_is_taken_once() -> None:
    """Prompts as response item + event, answers as event + response item + completed item:
    each message once, in its response item's place (so ids are those it always had)."""
    (session,) = codex.parse(DESKTOP / BOTH_FORMS)
    assert session.title == "Which workflows publish the newsletter?"
    assert [(t.role, t.text) for t in session.turns] == [
        ("user", "Which workflows publish the newsletter?"),
        ("assistant", "I'll search the workflow list for the newsletter.\n\n"
                      '[Tool call: mcp__automation__search_workflows] {"query":"newsletter"}\n\n'
                      "One workflow publishes it: newsletter-weekly (id 17), every Monday at "
                      "08:00."),
        ("system", "Summary so far: newsletter-weekly (id 17) publishes the newsletter."),
        ("user", "Move it to Tuesday."),
        ("assistant", "[Tool call: apply_patch] *** Begin Patch\n*** Update File: "
                      "workflows/newsletter.yml\n@@\n-cron: 0 8 * * 1\n+cron: 0 8 * * 2\n*** End "
                      "Patch\n\nMoved: newsletter-weekly now runs on Tuesdays at 08:00.")]
    assert session.turns[0].turn_id == stable_id("codex", Path(BOTH_FORMS).name, 6)
    assert session.turns[1].metadata == {"model": "gpt-5.3-codex"}
    assert session.metadata["git_branch"] == "main"


def test_events_before_their_response_items(tmp_path: Path) -> None:
    """The echo check counts over the whole file: an event written before the response item
    it repeats is skipped too, and an event alone is kept."""
    lines = (DESKTOP / BOTH_FORMS).read_text().splitlines(keepends=True)
    lines[5], lines[6] = lines[6], lines[5]  # the prompt's event first
    second = next(i for i, line in enumerate(lines)
                  if '"role":"user"' in line and "Move it to Tuesday." in line)
    del lines[second]  # the second prompt only as its event
    path = tmp_path / Path(BOTH_FORMS).name
    path.write_text("".join(lines))
    (session,) = codex.parse(path)
    assert [(t.role, t.text[:20]) for t in session.turns] == [
        ("user", "Which workflows publ"), ("assistant", "I'll search the work"),
        ("system", "Summary so far: news"), ("user", "Move it to Tuesday."),
        ("assistant", "[Tool call: apply_pa")]
    assert session.turns[3].turn_id == stable_id("codex", path.name, second + 1)  # the event


def test_a_session_without_prompts_is_named_by_place_and_day(tmp_path: Path) -> None:
    path = tmp_path / "rollout-2026-03-01T09-00-00-x.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (
        {"timestamp": "2026-03-01T09:00:00.000Z", "type": "session_meta",
         "payload": {"id": "x", "timestamp": "2026-03-01T09:00:00.000Z", "cwd": "/srv/app"}},
        {"timestamp": "2026-03-01T09:00:01.000Z", "type": "response_item", "payload": {
            "type": "image_generation_call", "status": "completed",
            "revised_prompt": "a lighthouse at dusk", "result": "iVBORw0KGgoAAAA"}})) + "\n")
    (session,) = codex.parse(path)
    assert session.title == "Codex session in app 2026-03-01"
    assert [t.text for t in session.turns] == ["[Generated image: a lighthouse at dusk]"]


async def test_desktop_sessions_round_trip(tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    try:
        first = await import_path(rt, "codex", DESKTOP)
        assert (first.status, first.items, first.frames_created) == ("completed", 2, 11)
        assert await stored(rt, "codex") == (2, 11)
        written = "\n".join(await contents(rt, "codex"))
        assert written.count("One workflow publishes it") == 1
        assert written.count("Which workflows publish the newsletter?") == 1
        again = await import_path(rt, "codex", DESKTOP)
        assert (again.status, again.frames_created) == ("unchanged", 0)
    finally:
        await rt.close()
