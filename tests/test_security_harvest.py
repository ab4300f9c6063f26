"""Issue #12 items 1, 7 and 9 reproduced literally, each now failing closed.

1. A label (REST/multipart ``label``) is display-only: it never becomes the path or URL that
   ``maintenance sync`` reads again, even when the source is flagged auto-sync and due, and
   auto-sync of inline data or an upload is refused (400). Rows written by older versions
   (schema < 10) are cleared by the upgrade. A local ``harvest import --auto-sync`` of a real
   path, and a REST ``path`` with server reads on, still re-sync.
7. A failed import's error text, summary and stored rows hold neither the file's bytes nor the
   server's temp paths: the client's label (``upload:<name>``, ``inline:<name>``) instead.
9. URL credentials (``user:pass@``, ``?token=``, ``?api_key=``) are masked in ``status``, in
   ``harvest_runs`` / ``harvest_sources``, in frames and in the log; such a URL cannot be
   auto-synced.

Real parts throughout: a real ``serve`` over a socket, real mind files, the CLI as a
subprocess, a local HTTP server for the fetched URL.
"""

from __future__ import annotations

import hashlib
import json
import logging
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from hive_mind.facade import HiveMind
from hive_mind.processes import QUIET_LOGGERS, mask_logged_urls
from hive_mind.settings import Settings
from mind.errors import ValidationError
from mind.harvest import netguard
from mind.harvest.errors import HarvestError, safe_reason
from mind.harvest.registry import adapter
from mind.redact import RedactingFilter, has_secrets, mask_text, mask_url
from mind.storage.db import Database
from mind.storage.migrate import migrate
from tests.http_server import running_server, server_settings
from tests.procs import run_cli

SECRET_TEXT = "The vault combination is Zebra-4471-Quartz."
INTERNAL_TEXT = "Internal only: the payroll export lives at bucket Kestrel-8812."
PASSWD = ("root:x:0:0:root:/root:/bin/bash\n"
          "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n")
PASSWORD = "pw-Zq9xK"
TOKEN = "SECRET-tok-5531"
TMP = tempfile.gettempdir().rstrip("/") + "/"


# -- helpers -------------------------------------------------------------------------------


class Recorder(BaseHTTPRequestHandler):
    """A local web server that records every request it gets (path, Authorization header)."""

    seen: ClassVar[list[tuple[str, str]]] = []

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        type(self).seen.append((self.path, self.headers.get("Authorization", "")))
        if self.path.startswith("/missing"):
            body, status = b"no such page", 404
        else:
            body, status = INTERNAL_TEXT.encode(), 200
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def web() -> Iterator[tuple[str, list[tuple[str, str]]]]:
    seen: list[tuple[str, str]] = []
    handler = type("Handler", (Recorder,), {"seen": seen})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(autouse=True)
def restore_fetch_policy() -> Iterator[None]:
    """Opening a facade sets the process-wide fetch policy from its settings: put it back."""
    previous = netguard.default_policy().allow_private
    yield
    netguard.configure(allow_private=previous)


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "some" / "secret.txt"
    path.parent.mkdir()
    path.write_text(SECRET_TEXT, encoding="utf-8")
    return path


def error_of(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code, error
    return str(error["message"])


async def open_mind(data: Path, **overrides: Any) -> Any:
    return await HiveMind.open(data_dir=data, embedding_provider="test", redis_url=None,
                               url=None, **overrides)


async def make_all_due(data: Path, *, force_auto_sync: bool = False) -> None:
    """Age every source past its interval (and, for the worst case, flag it auto-sync)."""
    db = await Database.open(data / "personal.mind")
    try:
        await db.execute("UPDATE harvest_sources SET last_synced_at = "
                         "'2020-01-01T00:00:00.000Z'")
        if force_auto_sync:
            await db.execute("UPDATE harvest_sources SET auto_sync = 1, sync_interval_hours = 1")
    finally:
        await db.close()


async def sync(data: Path, **overrides: Any) -> list[dict[str, Any]]:
    """What ``hive-mind maintenance sync`` and the nightly ``harvest_sync`` job run."""
    async with await open_mind(data, **overrides) as hm:
        result = await hm.maintenance("sync")
    synced: list[dict[str, Any]] = result["minds"]["personal"]["synced"]
    return synced


async def rows(data: Path) -> dict[str, list[dict[str, Any]]]:
    db = await Database.open(data / "personal.mind")
    try:
        out = {}
        for table in ("harvest_runs", "harvest_sources", "memory_frames", "sessions"):
            out[table] = [dict(r) for r in await db.fetchall(f"SELECT * FROM {table}")]
        return out
    finally:
        await db.close()


def text_of(found: dict[str, list[dict[str, Any]]]) -> str:
    return json.dumps(found, default=str)


def cli(*args: str, data: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, data=data, env=env, clean=True, timeout=180)


# -- item 1: a label is display-only -------------------------------------------------------


async def test_labels_never_become_paths_that_sync_reads(
    tmp_path: Path, secret: Path, web: tuple[str, list[tuple[str, str]]],
) -> None:
    data = tmp_path / "data"
    base, seen = web
    internal = f"{base}/internal"
    # server reads off, private addresses fetchable: the worst case for a label URL
    settings = server_settings(data, api_server_reads=False, fetch_private_addresses=True)
    with running_server(settings) as url, httpx.Client(base_url=url, timeout=60) as api:
        # the request from the issue, literally: refused before anything is imported
        attack = api.post("/v1/harvest", json={
            "source": "plaintext", "data": "harmless", "label": str(secret),
            "auto_sync": True, "sync_interval_hours": 1})
        assert "auto_sync" in error_of(attack, 400, "invalid")
        upload_attack = api.post(
            "/v1/harvest/upload", files={"file": ("notes.md", b"# harmless", "text/markdown")},
            data={"source": "markdown", "label": str(secret), "auto_sync": "true",
                  "sync_interval_hours": "1"})
        error_of(upload_attack, 400, "invalid")
        url_attack = api.post("/v1/harvest", json={
            "source": "url", "data": "harmless", "label": internal, "auto_sync": True})
        error_of(url_attack, 400, "invalid")
        assert api.get("/v1/stats").json()["frames"] == 0

        # without auto_sync the imports go through, the label shown as given
        inline = api.post("/v1/harvest", json={"source": "plaintext", "data": "harmless",
                                               "label": str(secret)})
        assert inline.status_code == 200, inline.text
        assert inline.json()["path"] == str(secret)
        upload = api.post(
            "/v1/harvest/upload", files={"file": ("notes.md", b"# harmless", "text/markdown")},
            data={"source": "markdown", "label": str(secret)})
        assert upload.status_code == 200, upload.text
        url_label = api.post("/v1/harvest", json={"source": "url", "data": "harmless",
                                                  "label": internal})
        error_of(url_label, 422, "harvest_input")  # inline data is no URL: a failed run
        sources = {s["source"]: s for s in api.get("/v1/harvest/sources").json()["sources"]}
    assert set(sources) == {"plaintext", "markdown", "url"}
    for row in sources.values():
        assert row["source_path"] is None and row["auto_sync"] is False
    assert sources["plaintext"]["display_name"] == str(secret)
    assert sources["url"]["display_name"] == internal

    # even flagged auto-sync and due, sync has nothing it may read again
    await make_all_due(data, force_auto_sync=True)
    synced = await sync(data, fetch_private_addresses=True)
    assert sorted((s["source"], s["status"]) for s in synced) == [
        ("markdown", "skipped"), ("plaintext", "skipped"), ("url", "skipped")]
    assert seen == []  # the label URL was never fetched
    found = await rows(data)
    secret_hash = hashlib.sha256(secret.read_bytes()).hexdigest()
    assert all(r["content_hash"] != secret_hash for r in found["harvest_runs"])  # never hashed
    assert "Zebra-4471" not in text_of(found) and "Kestrel" not in text_of(found)
    async with await open_mind(data) as hm:
        hits = await hm.recall("vault combination Zebra Quartz")
    assert not any("Zebra" in h["content"] for h in hits)


async def test_rows_from_older_versions_are_not_trusted(tmp_path: Path, secret: Path) -> None:
    """A file written before schema 10 may hold a label as ``source_path``: the upgrade moves
    it to ``display_name``, and sync skips the source until it is imported again by path."""
    data = tmp_path / "data"
    data.mkdir()
    db = await Database.open(data / "personal.mind")
    try:
        await migrate(db, target=9)
        await db.execute(
            "INSERT INTO harvest_sources(source, display_name, source_path, auto_sync, "
            "sync_interval_hours, last_synced_at) VALUES ('plaintext', 'plaintext', ?, 1, 1, "
            "'2020-01-01T00:00:00.000Z')", (str(secret),))
    finally:
        await db.close()
    synced = await sync(data)
    assert [(s["source"], s["status"]) for s in synced] == [("plaintext", "skipped")]
    assert "harvest import" in synced[0]["reason"]
    found = await rows(data)
    (source,) = found["harvest_sources"]
    assert source["source_path"] is None and source["display_name"] == str(secret)
    assert found["memory_frames"] == [] and found["harvest_runs"] == []


def test_cli_auto_sync_of_a_real_path_still_resyncs(tmp_path: Path) -> None:
    data = tmp_path / "data"
    notes = tmp_path / "garden.md"
    notes.write_text("# Garden\n\nThe tomatoes need water on Tuesdays.\n", encoding="utf-8")
    first = cli("harvest", "import", "markdown", str(notes), "--auto-sync",
                "--interval-hours", "1", "--json", data=data)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["frames_created"] == 1
    notes.write_text("# Garden\n\nThe tomatoes need water on Tuesdays.\n\n## Roses\n\n"
                     "Prune the roses in February.\n", encoding="utf-8")
    import asyncio

    asyncio.run(make_all_due(data))
    synced = cli("maintenance", "sync", "--json", data=data)
    assert synced.returncode == 0, synced.stderr
    (run,) = json.loads(synced.stdout)["minds"]["personal"]["synced"]
    assert run["status"] == "completed" and run["frames_created"] == 1  # the new section
    found = asyncio.run(rows(data))
    (source,) = found["harvest_sources"]
    assert source["source_path"] == str(notes.resolve()) and source["auto_sync"] == 1
    assert any("Prune the roses" in f["content"] for f in found["memory_frames"])


async def test_rest_path_with_a_label_is_read_again(tmp_path: Path) -> None:
    """A client allowed server reads names the path itself: that path (not the label) syncs."""
    data = tmp_path / "data"
    notes = tmp_path / "runbook.md"
    notes.write_text("# Runbook\n\nRestart Vega with the blue button.\n", encoding="utf-8")
    with running_server(server_settings(data)) as url, \
            httpx.Client(base_url=url, timeout=60) as api:
        done = api.post("/v1/harvest", json={"source": "markdown", "path": str(notes),
                                             "label": "Team runbook", "auto_sync": True,
                                             "sync_interval_hours": 1})
        assert done.status_code == 200, done.text
        (row,) = api.get("/v1/harvest/sources").json()["sources"]
    assert row["display_name"] == "Team runbook" and row["auto_sync"] is True
    assert row["source_path"] == str(notes.resolve())
    notes.write_text("# Runbook\n\nRestart Vega with the blue button.\n\n## Logs\n\n"
                     "Logs rotate at midnight.\n", encoding="utf-8")
    await make_all_due(data)
    (synced,) = await sync(data)
    assert synced["status"] == "completed" and synced["frames_created"] == 1


async def test_python_caller_label_means_a_private_copy(tmp_path: Path) -> None:
    """The facade's ``label`` (used by MCP ``data``) marks a temp copy: no auto-sync."""
    copy = tmp_path / "copy.jsonl"
    copy.write_text(json.dumps({"conversation_id": "c", "message_id": "m", "speaker": "Ada",
                                "text": "hello"}) + "\n", encoding="utf-8")
    async with await open_mind(tmp_path / "data") as hm:
        with pytest.raises(ValidationError, match="auto_sync needs a path"):
            await hm.harvest("universal", copy, label="inline:chat", auto_sync=True)
        with pytest.raises(ValidationError, match="auto_sync needs a file"):
            await hm.harvest("plaintext", "just some raw text", auto_sync=True)
        summary = await hm.harvest("universal", copy, label="inline:chat")
        assert summary["path"] == "inline:chat"
        (source,) = await hm.harvest_sources()
    assert source["display_name"] == "inline:chat" and source["source_path"] is None


# -- item 7: no file bytes, no temp paths ---------------------------------------------------


def test_failed_imports_echo_neither_bytes_nor_temp_paths(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with running_server(server_settings(data, api_server_reads=False)) as url, \
            httpx.Client(base_url=url, timeout=60) as api:
        upload = api.post("/v1/harvest/upload", data={"source": "chatgpt"},
                          files={"file": ("passwd.json", PASSWD.encode(), "application/json")})
        messages = [error_of(upload, 422, "harvest_input")]
        assert messages[0].startswith("upload:passwd.json")
        assert "found text" in messages[0]  # says what kind of data, not which
        inline = api.post("/v1/harvest", json={"source": "claude", "data": PASSWD,
                                               "filename": "conversations.json"})
        messages.append(error_of(inline, 422, "harvest_input"))
        assert messages[1].startswith("inline:conversations.json")
        pdf = api.post("/v1/ingest/upload", data={"type_hint": "pdf"},
                       files={"file": ("report.pdf", PASSWD.encode(), "application/pdf")})
        messages.append(error_of(pdf, 422, "harvest_input"))
        assert messages[2].startswith("upload:report.pdf")
        # successful text ingests are recorded under their labels too
        text = api.post("/v1/ingest", json={"content": "Lyra owns billing.\nAsk Priya."})
        assert text.status_code == 200, text.text
        doc = api.post("/v1/ingest/upload", data={"type_hint": "plaintext"},
                       files={"file": ("notes.txt", b"The Orion launch slipped.", "text/plain")})
        assert doc.status_code == 200, doc.text
        sources = api.get("/v1/harvest/sources").json()["sources"]
    for message in messages:
        assert "root:x" not in message and "/bin/bash" not in message
        assert TMP not in message and "hive-mind-upload" not in message
    import asyncio

    found = asyncio.run(rows(data))
    stored = text_of({"runs": found["harvest_runs"], "sources": found["harvest_sources"],
                      "api": sources})
    assert "root:x" not in stored and "/bin/bash" not in stored
    assert TMP not in stored and "hive-mind-upload" not in stored
    assert "hive-mind-ingest" not in stored
    paths = {r["source_path"] for r in found["harvest_runs"]}
    assert paths == {"upload:passwd.json", "inline:conversations.json", "upload:report.pdf",
                     "inline:text", "upload:notes.txt"}
    errors = [r["error"] for r in found["harvest_runs"] if r["status"] == "failed"]
    assert len(errors) == 3 and all(e.startswith(("upload:", "inline:")) for e in errors)


@pytest.mark.parametrize("source", ["chatgpt", "claude", "gemini", "universal"])
@pytest.mark.parametrize("content", [
    PASSWD,
    '{"conversations": [{"title": "x", "SECRET-key-9": 1} Zebra-4471]}',
    '[{"SECRET-key-9": "Zebra-4471"}]',
    '{"SECRET-key-9": "Zebra-4471"}',
    '42 Zebra-4471',
])
def test_adapter_errors_never_quote_the_file(tmp_path: Path, source: str, content: str) -> None:
    path = tmp_path / "export.json"
    path.write_text(content, encoding="utf-8")
    try:
        list(adapter(source)(path))
    except HarvestError as exc:
        message = str(exc)
    else:
        return  # read as an (empty) export of this kind: nothing to echo
    for excerpt in ("root:x", "bin/bash", "SECRET-key", "Zebra"):
        assert excerpt not in message, message


@pytest.mark.parametrize(("raw", "expected"), [
    (b"lexical error: invalid char in json text.\n  root:x:0:0", "lexical error: invalid char "
                                                                  "in json text."),
    ("Invalid Elementary Object starting with b'root:x:0' @12", "Invalid Elementary Object "
                                                                "starting with … @12"),
    ("Unexpected symbol 'Zebra' at 40", "Unexpected symbol … at 40"),
    ("", "ValueError"),
])
def test_library_reasons_lose_their_quoted_excerpts(raw: str | bytes, expected: str) -> None:
    assert safe_reason(ValueError(raw) if raw else ValueError()) == expected


# -- item 9: secrets in URLs ----------------------------------------------------------------


@pytest.mark.parametrize(("url", "masked"), [
    ("https://x.example/v1?api_key=SECRET", "https://x.example/v1?api_key=***"),
    ("http://user:pw@127.0.0.1:8080/doc?token=SECRET&page=2",
     "http://***@127.0.0.1:8080/doc?token=***&page=2"),
    ("redis://:pw@cache:6379/0", "redis://***@cache:6379/0"),
    ("https://ghp_abc@github.com/org/repo.git", "https://***@github.com/org/repo.git"),
    ("https://s3.example/b/k?X-Amz-Credential=AK&X-Amz-Signature=ff&versionId=3",
     "https://s3.example/b/k?X-Amz-Credential=***&X-Amz-Signature=***&versionId=3"),
    ("https://a.example/cb#access_token=abc&state=1", "https://a.example/cb#access_token=***&state=1"),
    ("https://a.example/x?apikey=1;sig=2;q=3", "https://a.example/x?apikey=***;sig=***;q=3"),
    ("https://a.example/x?auth=1&password=2&client_secret=3&key=4",
     "https://a.example/x?auth=***&password=***&client_secret=***&key=***"),
    ("https://medium.com/@ada/post?page=2", "https://medium.com/@ada/post?page=2"),
    ("http://localhost:11434", "http://localhost:11434"),
    ("not a url", "not a url"),
])
def test_mask_url(url: str, masked: str) -> None:
    assert mask_url(url) == masked
    assert has_secrets(url) == (url != masked)
    assert mask_text(f"fetch of {url}: HTTP 404.") == f"fetch of {masked}: HTTP 404."


def test_status_shows_no_url_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"HIVE_MIND_OPENAI_URL": "https://x.example/v1?api_key=SECRET-k1",
           "HIVE_MIND_OLLAMA_URL": f"http://admin:{PASSWORD}@127.0.0.1:11434",
           "HIVE_MIND_OPENAI_API_KEY": "sk-SECRET-k2"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    config = Settings(data_dir=tmp_path / "data").redacted()
    assert config["openai_url"] == "https://x.example/v1?api_key=***"
    assert config["ollama_url"] == "http://***@127.0.0.1:11434"
    assert config["openai_api_key"] == "***"
    done = cli("status", "--json", "--no-probe", data=tmp_path / "data", **env)
    assert done.returncode == 0, done.stderr
    shown = done.stdout + done.stderr
    assert "SECRET-k" not in shown and PASSWORD not in shown
    assert json.loads(done.stdout)["config"]["openai_url"] == "https://x.example/v1?api_key=***"


@pytest.fixture
def log_config() -> Iterator[None]:
    """What ``configure_logging`` installs, removed again afterwards."""
    levels = {name: logging.getLogger(name).level for name in QUIET_LOGGERS}
    mask_logged_urls()
    yield
    for name, level in levels.items():
        logger = logging.getLogger(name)
        logger.setLevel(level)
        for f in [f for f in logger.filters if isinstance(f, RedactingFilter)]:
            logger.removeFilter(f)
    for handler in logging.getLogger().handlers:
        for f in [f for f in handler.filters if isinstance(f, RedactingFilter)]:
            handler.removeFilter(f)


async def test_url_credentials_are_never_stored_or_logged(
    tmp_path: Path, web: tuple[str, list[tuple[str, str]]], caplog: pytest.LogCaptureFixture,
    log_config: None,
) -> None:
    base, seen = web
    host = base.removeprefix("http://")
    good = f"http://reader:{PASSWORD}@{host}/doc?token={TOKEN}&page=1"
    missing = f"http://reader:{PASSWORD}@{host}/missing?api_key={TOKEN}"
    caplog.set_level(logging.INFO)
    logging.getLogger("httpx").warning("HTTP Request: GET %s", good)  # masked if it did log
    data = tmp_path / "data"
    async with await open_mind(data, fetch_private_addresses=True) as hm:
        with pytest.raises(ValidationError, match="credentials"):
            await hm.harvest("url", good, auto_sync=True)
        assert seen == []  # refused before fetching
        done = await hm.ingest(good)
        assert done["source_type"] == "url" and done["frames_created"] >= 1
        with pytest.raises(HarvestError) as failed:
            await hm.ingest(missing)
        assert PASSWORD not in str(failed.value) and TOKEN not in str(failed.value)
        hits = await hm.recall("payroll export bucket Kestrel")
        sources = await hm.harvest_sources()
    assert any("Kestrel-8812" in h["content"] for h in hits)  # the legitimate use works
    assert [p for p, _ in seen] == [f"/doc?token={TOKEN}&page=1", f"/missing?api_key={TOKEN}"]
    found = await rows(data)
    stored = text_of({**found, "api": sources})
    assert PASSWORD not in stored and TOKEN not in stored
    (source,) = found["harvest_sources"]
    assert source["source_path"] is None  # nothing to re-fetch: the secret is not kept
    assert source["display_name"] == f"http://***@{host}/missing?api_key=***"
    assert {r["source_path"] for r in found["harvest_runs"]} == {
        f"http://***@{host}/doc?token=***&page=1", f"http://***@{host}/missing?api_key=***"}
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "HTTP Request: GET http://***@" in logged
    assert PASSWORD not in logged and TOKEN not in logged
