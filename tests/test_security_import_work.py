"""Issue #45 finding 5: the work an import may do is bounded by what it is, not by what its
input asks for. Real files throughout (zips, PDFs, exports written to disk), a real ``serve``
for the uploads; the only instrument is a count of ``zipfile.ZipFile`` openings."""

from __future__ import annotations

import asyncio
import io
import json
import zipfile
import zlib
from pathlib import Path

import httpx
import pytest

from hive_mind import harvest as front
from hive_mind.facade import HiveMind
from mind.harvest import budget, chatgpt, detect, pdf
from mind.harvest.errors import HarvestError
from tests.chatgpt_chain import linear_conversation
from tests.http_server import running_server, server_settings


def many_members(path: Path, members: int) -> Path:
    """A zip of ``members`` small JSON files that are no export, and one ChatGPT export."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for n in range(members):
            zf.writestr(f"data/settings-{n}.json", json.dumps({"n": n, "theme": "dark"}))
        zf.writestr("conversations.json", json.dumps(
            [linear_conversation(1, 4, lambda c, m: f"turn {m} of the zip")]))
    return path


def test_a_zip_is_opened_once_per_import_however_many_members(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """10,000 members: detection and the adapter each read the central directory once (it
    was once per member opened: 3,001 times, 124 s)."""
    archive = many_members(tmp_path / "export.zip", 10_000)
    opened: list[str] = []
    real_init = zipfile.ZipFile.__init__

    def counting(self: zipfile.ZipFile, file: object, *args: object, **kwargs: object) -> None:
        opened.append(str(file))
        real_init(self, file, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(zipfile.ZipFile, "__init__", counting)
    assert detect.detect(archive).source == "chatgpt"
    assert len(opened) == 1
    turns = [t.text for item in chatgpt.parse(archive) for t in item.turns]
    assert turns == [f"turn {m} of the zip" for m in range(4)]
    assert len(opened) == 2


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_long_conversation_chain_is_walked_in_linear_time(tmp_path: Path) -> None:
    """A 100,000-node chain: the kept branch was found with a list membership test per node
    (quadratic: minutes); now a set."""
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([linear_conversation(1, 100_000, lambda c, m: f"t{m}")]))
    (item,) = chatgpt.parse(export)
    assert len(item.turns) == 100_000 and item.turns[-1].text == "t99999"


def pdf_sharing_one_stream(pages: int, ops: int, distinct: bool = False,
                           text: bytes = b"ab") -> bytes:
    """``pages`` pages that all draw one content stream of ``ops`` text operators showing
    ``text`` (or, with ``distinct``, each its own copy of it)."""
    from pypdf import PdfWriter
    from pypdf.generic import DictionaryObject, NameObject, StreamObject

    writer = PdfWriter()
    font = writer._add_object(DictionaryObject({
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica")}))
    content = b"BT /F1 12 Tf 10 10 Td " + (b"(" + text + b") Tj ") * ops + b"ET"

    def stream() -> object:
        obj = StreamObject()
        obj._data = zlib.compress(content, 9)
        obj[NameObject("/Filter")] = NameObject("/FlateDecode")
        return writer._add_object(obj)

    shared = stream()
    for _ in range(pages):
        page = writer.add_blank_page(200, 200)
        page[NameObject("/Contents")] = stream() if distinct else shared
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_pdf_pages_sharing_a_content_stream_are_read_once(tmp_path: Path) -> None:
    """50 pages drawing one stream of 20,000 operators (9 KB; 11 s and 700 parts of the same
    text before): its text once; a PDF whose distinct streams pass the content budget is
    refused; through a real ``serve`` upload as through the adapter."""
    bomb = pdf_sharing_one_stream(50, 20_000)
    assert len(bomb) < 10_000
    item = pdf.parse_bytes(bomb, name="shared.pdf", key="k", fallback_title="shared")
    assert sum(len(t.text) for t in item.turns) < 50_000
    assert item.metadata["pages"] == 50
    heavy = pdf_sharing_one_stream(2, 17_000, distinct=True, text=b"a" * 1000)  # 2 x 17 MB
    with pytest.raises(HarvestError, match="bytes of content"):
        pdf.parse_bytes(heavy, name="heavy.pdf", key="h", fallback_title="heavy")
    with running_server(server_settings(tmp_path / "data")) as url, \
            httpx.Client(base_url=url, timeout=120) as api:
        r = api.post("/v1/ingest/upload", data={"type_hint": "pdf"},
                     files={"file": ("shared.pdf", bomb, "application/pdf")})
        assert r.status_code == 200 and r.json()["frames_created"] == len(item.turns), r.text


async def test_an_import_past_its_deadline_stops_keeps_its_work_and_resumes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([linear_conversation(c, 2, lambda c, m: f"c{c} t{m}")
                                  for c in range(3)]))
    async with await HiveMind.open(server_settings(tmp_path / "data")) as hm:
        monkeypatch.setattr(budget, "IMPORT_SECONDS", 0.0)
        with pytest.raises(HarvestError, match="took longer than 0 s"):
            await hm.harvest("chatgpt", export)
        monkeypatch.setattr(budget, "IMPORT_SECONDS", 1800.0)
        done = await hm.harvest("chatgpt", export)
        assert (done["status"], done["frames_created"]) == ("completed", 6)


async def test_imports_beyond_the_slots_wait_and_beyond_the_queue_are_refused() -> None:
    held = [front.import_slot() for _ in range(front.MAX_CONCURRENT_IMPORTS)]
    for slot in held:
        await slot.__aenter__()
    waiting = [asyncio.ensure_future(_one_import()) for _ in range(front.MAX_WAITING_IMPORTS)]
    await asyncio.sleep(0.05)
    assert not any(w.done() for w in waiting)
    with pytest.raises(front.ImportsBusyError):
        async with front.import_slot():
            pass
    for slot in held:
        await slot.__aexit__(None, None, None)
    assert await asyncio.gather(*waiting) == [True] * front.MAX_WAITING_IMPORTS


async def _one_import() -> bool:
    async with front.import_slot():
        await asyncio.sleep(0)
    return True
