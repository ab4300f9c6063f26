"""``ingest`` of a folder (hive_mind/harvest.py, mind/harvest/folder.py): a notes vault's
markdown, HTML, text and PDF files each read by their own adapter, and what was skipped said
with its reason; a folder with nothing to read is an error naming what it holds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hive_mind.cli import main
from hive_mind.facade import HiveMind
from mind.harvest.errors import HarvestError

VAULT = Path(__file__).parent / "data" / "harvest" / "vault"
SKIPPED = [
    "1 .csv file (projects/budget.csv): not a document type ingest reads (md, txt, pdf and html)",
    "1 .png file (attachments/diagram.png): not a document type ingest reads (md, txt, pdf and "
    "html)",
    "1 hidden (.obsidian/): hidden files and folders are not read"]


def test_the_plan_of_a_vault() -> None:
    from mind.harvest import folder

    layout = folder.plan(VAULT)
    assert layout.files == {"markdown": 5, "plaintext": 1, "pdf": 1}
    assert list(layout.skipped) == SKIPPED


async def test_a_vault_is_ingested_by_each_file_type(tmp_path: Path) -> None:
    async with await HiveMind.open(data_dir=tmp_path / "data", embedding_provider="test") as hm:
        summary = await hm.ingest(str(VAULT))
        assert {k: summary[k] for k in ("source_type", "items_parsed", "frames_created",
                                        "status", "files", "skipped")} == {
            "source_type": "folder", "items_parsed": 7, "frames_created": 10,
            "status": "completed", "files": {"markdown": 5, "plaintext": 1, "pdf": 1},
            "skipped": SKIPPED}
        db = (await hm.runtime.host.reader("personal")).db
        rows = await db.fetchall("SELECT content FROM memory_frames ORDER BY id")
        text = "\n".join(str(r[0]) for r in rows)
        for kept in ("The public launch moved to **May 3**", "Run pg_upgrade --check first",
                     "chapter 5 on replication", "from 08:00 to 18:00 on May 3"):
            assert kept in text, kept
        for dropped in ("window.analytics", "<p>", "© 2026", "alwaysUpdateLinks", "venue,1200"):
            assert dropped not in text, dropped
        again = await hm.ingest(str(VAULT))
        assert (again["status"], again["frames_created"]) == ("unchanged", 0)


async def test_a_file_it_cannot_read_is_left_out_with_its_reason(tmp_path: Path) -> None:
    """A damaged PDF sorted before a good one, and a .txt file that holds binary data: both
    are reported, and every other file of their types is still ingested."""
    notes = Path(shutil.copytree(VAULT, tmp_path / "notes"))
    (notes / "projects" / "Scan.pdf").write_bytes(b"%PDF-1.4\ngarbage, not a PDF\n")
    (notes / "export.txt").write_bytes(b"ab\x00\x01\x02\xff\xfe binary")
    async with await HiveMind.open(data_dir=tmp_path / "data", embedding_provider="test") as hm:
        summary = await hm.ingest(str(notes))
    assert (summary["items_parsed"], summary["frames_created"], summary["status"]) == (
        7, 10, "completed")
    assert summary["files"] == {"markdown": 5, "plaintext": 2, "pdf": 2}
    assert summary["skipped"][:2] == [
        "export.txt: binary data, not text",
        "projects/Scan.pdf: corrupt PDF (Stream has ended unexpectedly)"]
    assert summary["skipped"][2:] == SKIPPED


async def test_a_folder_with_no_documents_says_what_it_holds(tmp_path: Path) -> None:
    chats = tmp_path / "exports"
    chats.mkdir()
    (chats / "chat.jsonl").write_text('{"conversation_id": "c", "text": "hi"}\n')
    (chats / "photo.jpg").write_bytes(b"\xff\xd8\xff")
    async with await HiveMind.open(data_dir=tmp_path / "data", embedding_provider="test") as hm:
        with pytest.raises(HarvestError) as info:
            await hm.ingest(str(chats))
    assert info.value.reason == (
        "no documents to ingest (md, txt, pdf and html) in this folder: 1 .jpg file (photo.jpg): "
        "not a document type ingest reads (md, txt, pdf and html); 1 .jsonl file (chat.jsonl): "
        "not a document type ingest reads (md, txt, pdf and html); a chat export is imported "
        "with `hive-mind harvest import auto PATH`")


def test_cli_ingest_of_a_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HIVE_MIND_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HIVE_MIND_EMBEDDING_PROVIDER", "test")
    for key in ("HIVE_MIND_REDIS_URL", "HIVE_MIND_URL", "HIVE_MIND_API_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    notes = Path(shutil.copytree(VAULT, tmp_path / "notes"))
    (notes / "reading-list.txt").unlink()
    assert main(["ingest", str(notes), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["files"], summary["frames_created"]) == (
        {"markdown": 5, "pdf": 1}, 9)
    assert main(["ingest", str(notes)]) == 0
    out = capsys.readouterr().out
    assert "hidden files and folders are not read" in out and "unchanged" in out


async def test_one_html_page_is_read_as_its_text(tmp_path: Path) -> None:
    """``ingest page.html`` and ``harvest import auto page.html`` store the page's text cut at
    its headings, titled by its <title>, never its markup."""
    page = VAULT / "clippings" / "Postgres-upgrade.html"
    async with await HiveMind.open(data_dir=tmp_path / "data", embedding_provider="test") as hm:
        ingested = await hm.ingest(str(page))
        assert (ingested["source_type"], ingested["frames_created"]) == ("markdown", 2)
        auto = await hm.harvest("auto", str(page), workspace=None)
        assert (auto["source"], auto["frames_created"]) == ("markdown", 0)  # the same turns
        db = (await hm.runtime.host.reader("personal")).db
        rows = await db.fetchall("SELECT content FROM memory_frames ORDER BY id")
    assert [str(r[0]).split("\n")[0] for r in rows] == [
        "# Upgrading Postgres with pg_upgrade", "Upgrading Postgres with pg_upgrade"]
    text = "\n".join(str(r[0]) for r in rows)
    assert "## Link mode" in text and "<" not in text and "analytics" not in text
