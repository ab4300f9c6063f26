"""Recognising harvest inputs by content (mind/harvest/detect.py) and ``harvest import auto``:
every harvest fixture in tests/ is detected as its own source, whatever it is named; random JSON
and archives with nothing importable are clear errors naming what was found."""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from hive_mind.facade import HiveMind
from mind.harvest import chatgpt, claude, detect
from mind.harvest.errors import HarvestError
from mind.harvest.skeleton import SNIFF_EVENTS

TESTS = Path(__file__).parent
DATA = TESTS / "data" / "harvest"
FIXTURES = TESTS / "fixtures" / "harvest"
CLAUDE_CODE = DATA / "claude_code" / "dot-claude"
CODEX = FIXTURES / "codex" / "dot-codex"

EXPECTED = [  # every harvest fixture in tests/, as given (file or folder)
    (DATA / "chatgpt" / "conversations.json", "chatgpt"),
    (DATA / "chatgpt" / "export_object.json", "chatgpt"),
    (DATA / "chatgpt", "chatgpt"),
    (DATA / "chatgpt_split", "chatgpt"),
    (DATA / "chatgpt_images", "chatgpt"),
    (DATA / "chatgpt_split" / "conversation-d0000000.json", "chatgpt"),
    (DATA / "chatgpt_split" / "conversations-001.json", "chatgpt"),
    (DATA / "chatgpt_branches", "chatgpt"),
    (DATA / "claude", "claude"),
    (DATA / "claude" / "conversations.json", "claude"),
    (DATA / "claude" / "projects.json", "claude"),
    (DATA / "claude" / "memories.json", "claude"),
    (DATA / "claude_branches", "claude"),
    (CLAUDE_CODE, "claude-code"),
    (DATA / "claude_code", "claude-code"),
    (next(CLAUDE_CODE.glob("projects/*/*.jsonl")), "claude-code"),
    (DATA / "claude_code_cleared" / "dot-claude", "claude-code"),
    (DATA / "gemini", "gemini"),
    (DATA / "gemini" / "MyActivity.json", "gemini"),
    (DATA / "gemini" / "conversations.json", "gemini"),
    (DATA / "gemini" / "history_dump.json", "gemini"),
    (DATA / "gemini_de", "gemini"),
    (DATA / "gemini_de" / "MeineAktivitäten.json", "gemini"),
    (DATA / "gemini_de" / "MeineAktivitäten.html", "gemini"),
    (DATA / "gemini_html", "gemini"),
    (DATA / "gemini_html" / "MyActivity.html", "gemini"),
    (DATA / "universal", "universal"),
    (DATA / "universal" / "chat.jsonl", "universal"),
    (DATA / "universal" / "conversations.json", "universal"),
    (DATA / "universal" / "messages.json", "universal"),
    (DATA / "universal_single" / "note.jsonl", "universal"),
    (DATA / "universal_single" / "message.json", "universal"),
    (DATA / "universal_single" / "conversation.json", "universal"),
    (DATA / "markdown" / "notes", "markdown"),
    (DATA / "markdown" / "notes" / "index.md", "markdown"),
    (DATA / "text", "plaintext"),
    (DATA / "vault", "markdown"),
    (DATA / "vault" / "clippings" / "Postgres-upgrade.html", "markdown"),  # its text, not tags
    (DATA / "text" / "meeting-notes.txt", "plaintext"),
    (CODEX, "codex"),
    (CODEX / "history.jsonl", "codex"),
    *((p, "codex") for p in sorted(CODEX.glob("sessions/**/rollout-*.jsonl"))),
    (DATA / "codex", "codex"),
    *((p, "codex") for p in sorted((DATA / "codex").glob("sessions/**/rollout-*.jsonl"))),
    (FIXTURES / "grok" / "prod-grok-backend.json", "grok"),
]


@pytest.mark.parametrize(("path", "source"), EXPECTED,
                         ids=[str(p.relative_to(TESTS)) for p, _ in EXPECTED])
def test_auto_picks_the_right_source(path: Path, source: str) -> None:
    found = detect.detect(path)
    assert found.source == source, found
    assert found.reason


DAMAGED = [  # a ChatGPT export zip cut off mid-download, and one with corrupt member bytes
    (DATA / "damaged" / "chatgpt-export-truncated.zip",
     "truncated at byte 1,000, before the zip's directory"),
    (DATA / "damaged" / "chatgpt-export-corrupt.zip",
     "member conversations.json: Error -3 while decompressing data: invalid distance too far "
     "back"),
]


@pytest.mark.parametrize(("path", "reason"), DAMAGED, ids=[p.name for p, _ in DAMAGED])
def test_a_damaged_zip_is_refused_whatever_its_name(tmp_path: Path, path: Path,
                                                    reason: str) -> None:
    """Not stored as a document, not "cannot tell which export this is": the archive is
    damaged, download it again — for auto and for the source it holds."""
    expected = f"the archive is damaged ({reason}): download it again"
    for where in (path, shutil.copy(path, tmp_path / "export.crdownload")):
        with pytest.raises(HarvestError, match=re.escape(expected)) as info:
            detect.detect(where)
        assert info.value.path.endswith(Path(where).name)
        with pytest.raises(HarvestError, match=re.escape(expected)):
            list(chatgpt.parse(where))


def test_a_file_named_zip_that_is_no_zip_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "takeout-001.zip"
    page.write_text("<html><body>Your download link has expired</body></html>")
    with pytest.raises(HarvestError, match=re.escape(
            "the archive is damaged (named .zip, but it does not start like a zip archive): "
            "download it again")):
        detect.detect(page)


def test_every_fixture_is_covered() -> None:
    listed = {p.resolve() for p, _ in EXPECTED} | {p.resolve() for p, _ in DAMAGED}
    for root in (DATA, FIXTURES):
        for top in sorted(p for p in root.iterdir() if p.is_dir()):
            assert any(str(p).startswith(str(top.resolve())) for p in listed), top


@pytest.mark.parametrize(("path", "source"), [(p, s) for p, s in EXPECTED if p.is_file()][:20])
def test_names_do_not_matter(tmp_path: Path, path: Path, source: str) -> None:
    if source in ("markdown", "plaintext"):
        pytest.skip("documents are recognised by their file type")
    renamed = tmp_path / "export-part.data"
    shutil.copy(path, renamed)
    assert detect.detect(renamed).source == source
    archive = tmp_path / "download (3).zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(path, "some/folder/blob-0001")
        zf.writestr("readme.html", "<html>hello</html>")
    assert detect.detect(archive).source == source


def test_random_json_is_refused_naming_sources(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps({"name": "hive", "version": 3, "tags": ["a", "b"]}))
    with pytest.raises(HarvestError, match="cannot tell which export this is") as info:
        detect.detect(path)
    text = str(info.value)
    assert "conversations.json (JSON object: name, version, tags)" in text
    for source in ("chatgpt", "claude", "gemini", "grok", "universal"):
        assert f"--source {source}" in text
    lines = tmp_path / "log.jsonl"
    lines.write_text('{"level": "info", "msg": "a"}\n{"level": "warn", "msg": "b"}\n')
    with pytest.raises(HarvestError, match="--source claude-code, --source codex") as info:
        detect.detect(lines)
    assert "JSON Lines: level, msg" in str(info.value)
    binary = tmp_path / "image.bin"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(3000))
    with pytest.raises(HarvestError, match=r"image\.bin \(binary\)"):
        detect.detect(binary)
    with pytest.raises(HarvestError, match="no such file"):
        detect.detect(tmp_path / "missing.zip")


def test_keys_shown_are_structural_names_only(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"sk-live secret value!": 1, "a" * 60: 2, "ok_key": 3}))
    with pytest.raises(HarvestError) as info:
        detect.detect(path)
    assert "secret" not in str(info.value) and "a" * 40 not in str(info.value)
    assert "(JSON object: …, …, ok_key)" in str(info.value)


def test_archive_with_nothing_importable_lists_what_it_holds(tmp_path: Path) -> None:
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("user.json", json.dumps({"id": "u1", "email": "a@b.c"}))
        zf.writestr("message_feedback.json", "[]")
        zf.writestr("chat.html", "<html></html>")
    for parse in (chatgpt.parse, claude.parse):
        with pytest.raises(HarvestError, match="holds nothing importable as") as info:
            list(parse(archive))
        text = str(info.value)
        assert "found 3 files: message_feedback.json (empty JSON array); " \
               "user.json (JSON object: id, email); chat.html (text)" in text
    with pytest.raises(HarvestError, match="cannot tell which export"):
        detect.detect(archive)


def test_mixed_directory_names_the_other_sources(tmp_path: Path) -> None:
    shutil.copytree(DATA / "chatgpt_split", tmp_path / "export")
    shutil.copy(DATA / "universal" / "chat.jsonl", tmp_path / "export" / "zz.jsonl")
    found = detect.detect(tmp_path / "export")
    assert found.source == "chatgpt" and found.others == {"universal": 1}
    assert "3 of 8 files in the directory" in found.reason and "also 1 file of universal" in \
        found.reason


async def test_harvest_auto_says_what_it_chose(tmp_path: Path) -> None:
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted((DATA / "chatgpt_split").iterdir()):
            zf.write(path, f"Export 2026-08/{path.name}")
    async with await HiveMind.open(data_dir=tmp_path / "data", embedding_provider="test") as hm:
        summary = await hm.harvest("auto", str(archive))
        assert summary["source"] == "chatgpt"
        assert summary["detected"].startswith("auto: chatgpt (3 of 7 files in the zip: ChatGPT")
        assert summary["frames_created"] == 16
        universal = await hm.harvest("auto", DATA / "universal" / "chat.jsonl")
        assert universal["source"] == "universal" and universal["detected"]
        plain = await hm.harvest("chatgpt", DATA / "chatgpt" / "conversations.json")
        assert "detected" not in plain
        with pytest.raises(HarvestError, match="--source chatgpt"):
            bad = tmp_path / "random.json"
            bad.write_text('[{"x": 1}]')
            await hm.harvest("auto", bad)


def big_conversation(nodes: int, mapping_first: bool) -> dict[str, object]:
    """A ChatGPT conversation whose mapping alone is far past a sniff's event allowance."""
    mapping = {f"n{i}": {"id": f"n{i}", "parent": f"n{i - 1}" if i else None,
                         "children": [f"n{i + 1}"], "message": {
                             "author": {"role": "user" if i % 2 else "assistant"},
                             "content": {"content_type": "text", "parts": [f"turn {i}"]},
                             "create_time": 1_700_000_000 + i}} for i in range(nodes)}
    head = {"mapping": mapping} if mapping_first else {"title": "Long one"}
    tail = {"title": "Long one"} if mapping_first else {"mapping": mapping}
    return {**head, "create_time": 1_700_000_000, **tail, "current_node": f"n{nodes - 1}"}


@pytest.mark.slow
def test_exports_past_the_sniff_allowance_are_still_recognised(tmp_path: Path) -> None:
    """The sniff stops after its events (issue #45), yet a conversation larger than that is
    still its source's: an export whose first conversation is huge, the split layout's
    one-conversation file (title first, as ChatGPT writes it), and, within the allowance, one
    with the mapping before the keys that name it."""
    nodes = 15_000
    assert nodes * 25 > SNIFF_EVENTS
    whole, split = tmp_path / "conversations.json", tmp_path / "split"
    whole.write_text(json.dumps([big_conversation(nodes, False)]), encoding="utf-8")
    split.mkdir()
    (split / "conversation-1.json").write_text(json.dumps(big_conversation(nodes, False)))
    (split / "conversation-2.json").write_text(json.dumps(big_conversation(5_000, True)))
    assert detect.detect(whole).source == "chatgpt"
    assert len(detect.json_sources(split, "chatgpt", "x")) == 2
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(whole, "conversations.json")
    assert detect.detect(archive).source == "chatgpt"
    assert sum(len(item.turns) for item in chatgpt.parse(archive)) == nodes
