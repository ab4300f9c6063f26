"""URL adapter (mind/harvest/url.py) against a real HTTP server on 127.0.0.1.

The server is on loopback, which the fetcher refuses by default (tests/test_security_fetch.py),
so every test here runs with private addresses allowed (``fetch_private_addresses``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from mind.harvest import netguard
from mind.harvest import url as url_adapter
from mind.harvest.errors import HarvestError
from mind.harvest.fetch import fetch
from mind.harvest.registry import adapter
from mind.harvest.types import stable_id
from tests.support import PLAIN, PageHandler


@pytest.fixture(autouse=True)
def allow_loopback() -> Iterator[None]:
    previous = netguard.default_policy().allow_private
    netguard.configure(allow_private=True)
    try:
        yield
    finally:
        netguard.configure(allow_private=previous)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), PageHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def test_html_page_sections(server: str) -> None:
    (item,) = adapter("url")(f"{server}/page.html#fragment")
    assert (item.source, item.kind) == ("url", "document")
    assert item.title == "SQLite Notes"
    assert item.metadata["url"] == f"{server}/page.html"
    assert item.metadata["description"] == "Notes on SQLite & WAL"
    assert item.metadata["content_type"] == "text/html"
    assert item.timestamp == "2015-10-21T07:28:00.000Z"
    headings = [(t.metadata["heading"], t.metadata["level"]) for t in item.turns]
    assert headings == [("SQLite notes", 1), ("WAL mode", 2), ("Long section", 2),
                        ("Empty heading", 3)]
    first, wal, long_section, empty = item.turns
    assert first.text == "# SQLite notes\n\nIntro with bold text."
    assert "```\n# journal_mode\nPRAGMA journal_mode=WAL;\n```" in wal.text  # code kept, no split
    assert empty.text == "### Empty heading"
    assert all("Home" not in t.text and "Docs" not in t.text and "©" not in t.text
               for t in item.turns)
    # the long section is whole: every paragraph, never cut at 4000 chars
    assert len(long_section.text) > 10000
    assert all(f"Paragraph {i}: detail" in long_section.text for i in range(30))
    assert first.speaker == "127.0.0.1"


def test_ids_stable_across_fetches(server: str) -> None:
    first = list(url_adapter.parse(f"{server}/page.html"))
    second = list(url_adapter.parse(f"{server}/page.html"))
    assert first == second
    item = first[0]
    assert item.item_id == stable_id("url", f"{server}/page.html")
    assert len({t.turn_id for t in item.turns}) == len(item.turns)


def test_user_agent(server: str) -> None:
    (item,) = url_adapter.parse(f"{server}/ua")
    assert item.turns[0].text == "agent: hive-mind/0.1 (knowledge harvester)"


def test_plain_text_parts(server: str) -> None:
    (item,) = url_adapter.parse(f"{server}/notes.txt")
    assert item.title == "notes.txt"
    assert len(item.turns) > 1
    assert all(len(t.text) <= 2000 for t in item.turns)
    assert "\n\n".join(t.text for t in item.turns) == "\n\n".join(
        p.strip() for p in PLAIN.split("\n\n"))


def test_markdown_and_latin1(server: str) -> None:
    (md,) = url_adapter.parse(f"{server}/readme.md")
    assert md.title == "Readme"
    assert [t.text for t in md.turns] == ["# Readme\n\nHello.", "## Usage\n\nRun it."]
    (page,) = url_adapter.parse(f"{server}/latin1")
    assert page.title == "Café"
    assert page.turns[0].text == "crème brûlée"


def test_pdf_url(server: str) -> None:
    (item,) = url_adapter.parse(f"{server}/paper.pdf")
    assert item.source == "url"
    assert item.title == "Remote paper"
    assert item.turns[0].text == "Fetched PDF text."
    assert item.metadata["url"] == f"{server}/paper.pdf"


def test_redirect_followed(server: str) -> None:
    (item,) = url_adapter.parse(f"{server}/redirect")
    assert item.title == "SQLite Notes"
    assert item.metadata["final_url"] == f"{server}/page.html"
    assert item.item_id == stable_id("url", f"{server}/redirect")


@pytest.mark.parametrize(("path", "match"), [("/missing", "HTTP 404 Not Found"),
                                             ("/boom", "HTTP 500")])
def test_http_errors(server: str, path: str, match: str) -> None:
    with pytest.raises(HarvestError, match=match) as err:
        list(url_adapter.parse(server + path))
    assert err.value.path == server + path


def test_size_limits(server: str) -> None:
    with pytest.raises(HarvestError, match="the limit is 20,971,520"):
        list(url_adapter.parse(f"{server}/declared-huge"))
    with pytest.raises(HarvestError, match="exceeds the limit of 10,000 bytes") as err:
        fetch(f"{server}/stream-huge", max_bytes=10_000)
    assert err.value.path == f"{server}/stream-huge"
    assert len(fetch(f"{server}/stream-huge", max_bytes=60_000).body) == 50_000


def test_binary_and_empty_pages(server: str) -> None:
    with pytest.raises(HarvestError, match="binary content"):
        list(url_adapter.parse(f"{server}/binary"))
    with pytest.raises(HarvestError, match="no readable text"):
        list(url_adapter.parse(f"{server}/empty"))


def test_deadline(server: str) -> None:
    with pytest.raises(HarvestError, match=r"took longer than 0\.3 s") as err:
        fetch(f"{server}/slow", deadline=0.3)
    assert err.value.path == f"{server}/slow"


def test_connection_refused() -> None:
    with pytest.raises(HarvestError, match="fetch failed"):
        list(url_adapter.parse("http://127.0.0.1:9/nothing"))


@pytest.mark.parametrize("bad", ["ftp://example.com/file", "file:///etc/passwd", "example.com",
                                 "javascript:alert(1)", "http://"])
def test_bad_urls(bad: str) -> None:
    with pytest.raises(HarvestError) as err:
        list(url_adapter.parse(bad))
    assert err.value.path == bad


def test_path_is_not_a_url(tmp_path: Path) -> None:
    with pytest.raises(HarvestError, match="expected a URL"):
        list(url_adapter.parse(tmp_path))
