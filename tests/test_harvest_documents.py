"""Document adapters: markdown, plaintext and PDF (mind/harvest/{markdown,plaintext,pdf}.py)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from mind.harvest import markdown, pdf, plaintext
from mind.harvest.errors import HarvestError
from mind.harvest.plaintext import split_parts
from mind.harvest.types import content_ids, stable_id
from tests.support import make_pdf

DATA = Path(__file__).parent / "data" / "harvest"
NOTES = DATA / "markdown" / "notes"
MEETING = DATA / "text" / "meeting-notes.txt"


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


# -- a real, minimal PDF writer (text content streams, computed xref offsets) -------------------


# -- plaintext -----------------------------------------------------------------------------------
def test_split_parts_packs_paragraphs() -> None:
    text = "\n\n".join(f"Paragraph {i}. " + "word " * 50 for i in range(30))
    parts = split_parts(text, 2000)
    assert all(len(p) <= 2000 for p in parts)
    assert len(parts) > 1
    assert "\n\n".join(parts) == "\n\n".join(p.strip() for p in text.split("\n\n"))


def test_oversized_paragraph_split_not_truncated() -> None:
    sentences = " ".join(f"Sentence {i} talks about topic {i % 7}." for i in range(400))
    lines = "\n".join(f"log line {i}: status ok" for i in range(300))
    blob = "x" * 4500  # no boundary at all: hard slices, still nothing lost
    text = f"Intro.\n\n{sentences}\n\n{lines}\n\n{blob}"
    parts = split_parts(text, 2000)
    assert all(len(p) <= 2000 for p in parts)
    assert _squash("".join(parts)) == _squash(text)
    # sentence boundaries respected: every part of the sentence paragraph ends a sentence
    sentence_parts = [p for p in parts if "Sentence" in p]
    assert all(p.endswith(".") for p in sentence_parts)
    line_parts = [p for p in parts if p.startswith("log line")]
    assert all(p.endswith("status ok") for p in line_parts)


@pytest.mark.parametrize("text", ["", "   \n\n \t\n"])
def test_split_parts_blank(text: str) -> None:
    assert split_parts(text) == []


def test_plaintext_file() -> None:
    (item,) = plaintext.parse(MEETING)
    assert (item.source, item.kind, item.title) == ("plaintext", "document", "meeting-notes")
    (turn,) = item.turns
    assert turn.role == "document" and turn.speaker == "meeting-notes.txt"
    assert turn.text == MEETING.read_text().strip()
    assert item.timestamp is not None and item.timestamp.endswith("Z")
    assert item.metadata["file_path"] == "meeting-notes.txt"


def test_plaintext_long_file_ids_stable(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    body = "\n\n".join(("Line of a very long paragraph. " * 120).strip() for _ in range(5))
    path.write_text(body)
    first, second = list(plaintext.parse(path)), list(plaintext.parse(str(path)))
    assert first == second
    (item,) = first
    assert len(item.turns) > 5
    assert _squash("".join(t.text for t in item.turns)) == _squash(body)
    assert [t.metadata["part"] for t in item.turns] == list(range(1, len(item.turns) + 1))
    assert len({t.turn_id for t in item.turns}) == len(item.turns)


def test_plaintext_raw_string_and_directory(tmp_path: Path) -> None:
    (raw,) = plaintext.parse("First line is the title\n\nand a body.")
    assert raw.title == "First line is the title"
    assert raw.timestamp is None
    (again,) = plaintext.parse("First line is the title\n\nand a body.")
    assert raw.item_id == again.item_id
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "two.txt").write_text("two")
    (tmp_path / "one.txt").write_text("one")
    (tmp_path / "empty.txt").write_text("  \n")
    (tmp_path / "skip.md").write_text("# not text")
    items = list(plaintext.parse(tmp_path))
    assert [i.metadata["file_path"] for i in items] == ["b/two.txt", "one.txt"]


def test_plaintext_binary_and_missing(tmp_path: Path) -> None:
    path = tmp_path / "blob.txt"
    path.write_bytes(os.urandom(64) + b"\x00" * 64)
    with pytest.raises(HarvestError, match="binary") as err:
        list(plaintext.parse(path))
    assert err.value.path == str(path)
    with pytest.raises(HarvestError, match="no such file"):
        list(plaintext.parse("missing-notes.txt"))
    with pytest.raises(HarvestError, match="no text files"):
        list(plaintext.parse(_empty_dir(tmp_path)))


def _empty_dir(root: Path) -> Path:
    empty = root / "empty-dir"
    empty.mkdir()
    return empty


# -- markdown ------------------------------------------------------------------------------------
def test_markdown_directory() -> None:
    items = list(markdown.parse(NOTES))
    # sorted, recursive, dot-dirs skipped, *.txt ignored
    assert [i.metadata["file_path"] for i in items] == ["index.md", "projects/alpha.md"]
    index, alpha = items

    assert index.title == "Engineering notes"
    assert [(t.metadata["heading"], t.metadata["level"]) for t in index.turns] == [
        ("", 0), ("Engineering notes", 1), ("Decisions", 2), ("Open questions", 2),
        ("Backups", 3),
    ]
    preamble, eng, decisions, open_q, backups = index.turns
    assert preamble.text == "Personal knowledge base. Maintained by **Ada Lovelace**."
    assert eng.text == "# Engineering notes\n\nWe store everything in **SQLite** with **WAL** enabled."
    assert open_q.text == "## Open questions"  # heading-only section kept
    assert "# not a heading: a shell comment" in backups.text  # fenced code does not split
    assert backups.text.endswith("```")
    assert index.metadata["entities"] == ["Ada Lovelace", "SQLite", "WAL", "sqlite-vec"]
    assert decisions.metadata["entities"] == ["sqlite-vec"]
    assert all(t.role == "document" and t.speaker == "index.md" for t in index.turns)
    assert (index.source, index.kind) == ("markdown", "document")

    assert alpha.title == "Project Alpha"  # from front matter
    assert alpha.metadata["frontmatter"] == "title: Project Alpha\ntags: [alpha, roadmap]"
    assert [t.metadata["heading"] for t in alpha.turns] == ["Alpha", "Milestones"]
    assert alpha.metadata["entities"] == ["Grace Hopper"]


def test_markdown_content_whole_and_ids_stable() -> None:
    first = list(markdown.parse(NOTES))
    second = list(markdown.parse(str(NOTES)))
    assert first == second
    index = first[0]
    source = (NOTES / "index.md").read_text()
    assert _squash("".join(t.text for t in index.turns)) == _squash(source)
    ids = [t.turn_id for i in first for t in i.turns] + [i.item_id for i in first]
    assert len(set(ids)) == len(ids)
    assert index.item_id == stable_id("markdown", "index.md")
    decisions = index.turns[2]
    assert decisions.turn_id == content_ids("markdown", "index.md",
                                            [("Decisions", decisions.text)])[0]


def test_markdown_long_section_never_truncated() -> None:
    body = "\n\n".join(f"Paragraph {i} " + "lorem ipsum " * 80 for i in range(20))
    (item,) = markdown.parse(f"# Long\n\n{body}\n\n## After\n\nshort")
    assert len(item.turns[0].text) > 15000
    assert item.turns[0].text == f"# Long\n\n{body}".rstrip()  # only trailing blanks trimmed
    assert item.turns[1].text == "## After\n\nshort"


def test_markdown_giant_section_split_into_continuations(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(markdown, "MAX_SECTION_CHARS", 5000)
    body = "\n\n".join(f"Para {i} " + "words " * 100 for i in range(20))
    (item,) = markdown.parse(f"# Huge\n\n{body}\n\n## Small\n\nok")
    huge = [t for t in item.turns if t.metadata["heading"] == "Huge"]
    assert len(huge) > 2
    assert all(len(t.text) <= 5000 for t in huge)
    assert [t.metadata["part"] for t in huge] == list(range(1, len(huge) + 1))
    assert _squash("".join(t.text for t in huge)) == _squash(f"# Huge{body}")
    key = plaintext.content_key(f"# Huge\n\n{body}\n\n## Small\n\nok")
    assert huge[0].turn_id == content_ids("markdown", key, [("Huge", huge[0].text)])[0]
    assert len({t.turn_id for t in item.turns}) == len(item.turns)
    assert item.turns[-1].text == "## Small\n\nok"


def test_markdown_raw_string_no_headings() -> None:
    (item,) = markdown.parse("just a thought\nwith **two** lines")
    assert item.title == "Markdown notes"
    assert [t.metadata["level"] for t in item.turns] == [0]
    assert item.turns[0].text == "just a thought\nwith **two** lines"
    assert item.metadata["entities"] == ["two"]
    assert item.timestamp is None
    assert list(markdown.parse("  \n\n ")) == []


def test_markdown_leading_rule_is_not_front_matter() -> None:
    text = "---\nA horizontal rule, then prose: not YAML.\n---\n# Heading\n\nbody"
    (item,) = markdown.parse(text)
    assert "frontmatter" not in item.metadata
    assert item.turns[0].text == "---\nA horizontal rule, then prose: not YAML.\n---"
    assert item.turns[1].text == "# Heading\n\nbody"


def test_markdown_crlf(tmp_path: Path) -> None:
    path = tmp_path / "win.md"
    path.write_bytes(b"# Title\r\n\r\nbody\r\n## Two\r\nmore\r\n")
    (item,) = markdown.parse(path)
    assert [t.text for t in item.turns] == ["# Title\n\nbody", "## Two\nmore"]


def test_markdown_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    with pytest.raises(HarvestError, match="binary") as err:
        list(markdown.parse(bad))
    assert err.value.path == str(bad)
    with pytest.raises(HarvestError, match="no such file"):
        list(markdown.parse(tmp_path / "missing.md"))
    with pytest.raises(HarvestError, match="no such file"):
        list(markdown.parse("notes/missing.md"))
    with pytest.raises(HarvestError, match="no markdown files"):
        list(markdown.parse(_empty_dir(tmp_path)))


# -- PDF -----------------------------------------------------------------------------------------
def test_pdf_pages_title_author(tmp_path: Path) -> None:
    path = tmp_path / "paper.pdf"
    path.write_bytes(make_pdf(
        [["Attention is all you need (really).", "Second line on page one."],
         ["Page two: results."]],
        title="Transformers", author="A. Vaswani", created="D:20170612093000Z",
    ))
    (item,) = pdf.parse(path)
    assert (item.source, item.kind, item.title) == ("pdf", "document", "Transformers")
    assert item.metadata["author"] == "A. Vaswani"
    assert item.metadata["pages"] == 2
    assert item.timestamp == "2017-06-12T09:30:00.000Z"
    (turn,) = item.turns
    assert "Attention is all you need (really)." in turn.text
    assert "Page two: results." in turn.text
    assert (turn.metadata["page_start"], turn.metadata["page_end"]) == (1, 2)
    assert turn.speaker == "paper.pdf"
    (again,) = pdf.parse(str(path))
    assert again == item


def test_pdf_long_text_split_by_pages_not_truncated(tmp_path: Path) -> None:
    pages = [[f"Page {p} line {i} says something distinct." for i in range(60)] for p in range(1, 6)]
    path = tmp_path / "long-report.pdf"
    path.write_bytes(make_pdf(pages))
    (item,) = pdf.parse(path)
    assert item.title == "long-report"  # no metadata title: the file stem
    assert "author" not in item.metadata
    assert len(item.turns) > 1
    assert all(len(t.text) <= pdf.PART_CHARS for t in item.turns)
    joined = "".join(t.text for t in item.turns)
    assert _squash(joined) == _squash("".join(ln for page in pages for ln in page))
    starts = [t.metadata["page_start"] for t in item.turns]
    assert starts == sorted(starts) and starts[0] == 1 and item.turns[-1].metadata["page_end"] == 5


def test_pdf_errors(tmp_path: Path) -> None:
    scanned = tmp_path / "scan.pdf"
    scanned.write_bytes(make_pdf([[], []]))
    with pytest.raises(HarvestError, match="no extractable text") as err:
        list(pdf.parse(scanned))
    assert err.value.path == str(scanned)

    corrupt = tmp_path / "corrupt.pdf"
    corrupt.write_bytes(make_pdf([["hello"]])[:300])
    with pytest.raises(HarvestError, match="PDF") as err:
        list(pdf.parse(corrupt))
    assert err.value.path == str(corrupt)

    fake = tmp_path / "fake.pdf"
    fake.write_text("just text")
    with pytest.raises(HarvestError, match="not a PDF"):
        list(pdf.parse(fake))

    with pytest.raises(HarvestError, match="no such file"):
        list(pdf.parse(tmp_path / "missing.pdf"))


def test_pdf_encrypted(tmp_path: Path) -> None:
    from pypdf import PdfWriter

    plain = tmp_path / "plain.pdf"
    plain.write_bytes(make_pdf([["secret plans"]]))
    locked = tmp_path / "locked.pdf"
    writer = PdfWriter(clone_from=plain)
    writer.encrypt("hunter2", algorithm="RC4-128")
    writer.write(locked)
    with pytest.raises(HarvestError, match="encrypted") as err:
        list(pdf.parse(locked))
    assert err.value.path == str(locked)

    owner_only = tmp_path / "owner-only.pdf"  # empty user password: readable
    writer = PdfWriter(clone_from=plain)
    writer.encrypt("", owner_password="owner", algorithm="RC4-128")
    writer.write(owner_only)
    (item,) = pdf.parse(owner_only)
    assert item.turns[0].text == "secret plans"


def test_pdf_directory(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.pdf").write_bytes(make_pdf([["zed"]]))
    (tmp_path / "a.pdf").write_bytes(make_pdf([["ay"]]))
    items = list(pdf.parse(tmp_path))
    assert [i.metadata["file_path"] for i in items] == ["a.pdf", "b/z.pdf"]


def test_section_ids_follow_content_so_edits_and_namesakes_are_kept(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "notes.md").write_text("# Team\n\nAlpha owns billing.\n\n## Oncall\n\nAda.\n")
    (b / "notes.md").write_text("# Team\n\nBeta owns search.\n\n## Oncall\n\nAda.\n")
    (first,) = markdown.parse(a / "notes.md")
    (namesake,) = markdown.parse(b / "notes.md")
    assert first.item_id == namesake.item_id  # same key (the file name) ...
    assert first.turns[0].turn_id != namesake.turns[0].turn_id  # ... other text, other id
    assert first.turns[1].turn_id == namesake.turns[1].turn_id  # identical section: same id
    (a / "notes.md").write_text("# Team\n\nAlpha owns billing and invoices.\n\n## Oncall\n\nAda.\n")
    (edited,) = markdown.parse(a / "notes.md")
    assert edited.turns[0].turn_id != first.turns[0].turn_id  # the edit is new content
    assert edited.turns[1].turn_id == first.turns[1].turn_id  # the rest re-imports as nothing
    twice = list(plaintext.parse("Same line.\n\n" + "x" * 2100 + "\n\nSame line."))
    assert len({t.turn_id for t in twice[0].turns}) == len(twice[0].turns)  # repeats stay apart
