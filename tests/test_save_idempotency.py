"""Issue #13: idempotent saves and a source time on save.

- A save whose commit happened just before its process died (kill -9) is retried with the same
  idempotency key after a restart: the same frame id comes back, nothing is written twice.
- Literally: a ``serve`` is killed after committing a save but before answering it; the client's
  error says the save may have been applied and names the key to retry with; the retry against
  the restarted server returns the same frame.
- Every interface passes the key (Python, HTTP body and ``Idempotency-Key`` header, MCP, CLI,
  remote client); the same key with other content is a conflict (409), never the old frame.
- ``created_at`` / ``--at``: strict ISO-8601, bounded (1900 … now + 1 day), stored as the
  frame's ``created_at`` (``recorded_at`` is now), filtered by recall's since/until.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from actors.actor import Duplicate, MindActor, Replayed
from actors.handlers import HANDLERS
from actors.host import mind_path
from hive_mind.facade import HiveMind
from hive_mind.remote import RemoteHiveMind, WriteOutcomeUnknownError
from mind.errors import ConflictError, InvalidTimestampError, ValidationError
from mind.mind import Mind
from mind.storage import idempotency
from queue_schemas import ops
from tests.http_server import running_server, server_settings
from tests.procs import ROOT, kill9, run_cli, spawn, stop

KEY = "retry-7f3c2a"
AT = "2024-05-01T12:00:00+02:00"
AT_UTC = "2024-05-01T10:00:00.000Z"


def frame_rows(data_dir: Path) -> list[tuple[int, str]]:
    """The personal mind's frames, read straight from the file (another process may own it)."""
    path = mind_path(data_dir, "personal")
    if not path.exists():
        return []
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30) as db:
        try:
            return list(db.execute("SELECT id, content FROM memory_frames ORDER BY id"))
        except sqlite3.OperationalError:  # schema not created yet
            return []


@pytest.fixture
async def hm(tmp_path: Path) -> AsyncIterator[HiveMind]:
    mind = await HiveMind.open(server_settings(tmp_path / "data"))
    assert isinstance(mind, HiveMind)
    async with mind:
        yield mind


# -- the actor's applied-op record ------------------------------------------------------------


async def test_keyed_op_replays_its_first_result_and_refuses_other_content(
        tmp_path: Path) -> None:
    actor = MindActor(await Mind.open(tmp_path / "a.mind"), HANDLERS, max_wait=0.0)
    try:
        def op(text: str) -> ops.SaveFrames:
            oid = idempotency.keyed_op_id("personal", KEY, "save", {"content": text})
            return ops.SaveFrames(op_id=oid, mind_id="personal",
                                  frames=[ops.NewFrameOp(gop_id="g", content=text, dedup=False)])

        first = await actor.submit(op("the vault code is 4411"))
        again, twice = await asyncio.gather(actor.submit(op("the vault code is 4411")),
                                            actor.submit(op("the vault code is 4411")))
        assert isinstance(again, Replayed) and isinstance(twice, Replayed)
        [frame] = await actor.mind.frames.get_gop_frames("g")
        assert first is not None and again.result["frames"][0]["id"] == frame.id  # same id
        with pytest.raises(ConflictError, match="already used for a different write"):
            await actor.submit(op("the vault code is 9999"))
        assert await actor.mind.frames.count() == 1  # dedup=False: only the key stopped them
        plain = ops.SaveFrames(mind_id="personal",
                               frames=[ops.NewFrameOp(gop_id="g", content="unkeyed")])
        await actor.submit(plain)
        assert type(await actor.submit(plain)) is Duplicate  # unkeyed ids: no stored result
    finally:
        await actor.stop()


def test_keys_are_validated_and_namespaced_per_mind() -> None:
    for bad in ("", "has space", "tab\tkey", "naïve", "x" * 256, "line\n"):
        with pytest.raises(ValidationError, match="idempotency key"):
            idempotency.validate_key(bad)
    assert idempotency.validate_key("x" * 255)
    one = idempotency.keyed_op_id("personal", KEY, "save", {"content": "a"})
    assert one == idempotency.keyed_op_id("personal", KEY, "save", {"content": "a"})
    assert one != idempotency.keyed_op_id("workspace:acme", KEY, "save", {"content": "a"})
    assert len(one) <= 200 and one.startswith("key:")


# -- a commit, then kill -9, then the retry ----------------------------------------------------

CHILD = """
import asyncio, json, sys, time
from hive_mind.facade import HiveMind
from tests.http_server import server_settings

async def main(data_dir):
    hm = await HiveMind.open(server_settings(data_dir))
    saved = await hm.save("Deploys freeze on Fridays", idempotency_key=sys.argv[2])
    print(json.dumps(saved), flush=True)
    time.sleep(600)  # never closes: killed with SIGKILL

asyncio.run(main(sys.argv[1]))
"""


async def test_same_key_after_kill9_returns_the_same_frame(tmp_path: Path) -> None:
    data = tmp_path / "data"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(data), KEY], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stderr is not None
        line = child.stdout.readline()
        assert line, child.stderr.read().decode()
        first = json.loads(line)
    finally:
        kill9(child)  # the committed save's process dies without closing anything
    assert child.returncode == -9
    async with await HiveMind.open(server_settings(data)) as hm:
        again = await hm.save("Deploys freeze on Fridays", idempotency_key=KEY)
        assert again["id"] == first["id"] and again["replayed"] is True
        assert first["replayed"] is False
        with pytest.raises(ConflictError):
            await hm.save("Deploys freeze on Mondays", idempotency_key=KEY)
        await hm.wait_idle(60)
        stats = await hm.stats()
    assert stats["frames"] == 1 and stats["pending_index"] == 0  # indexed once, after restart


# -- the literal case: serve dies after the commit, before the answer -------------------------


@pytest.fixture
def silent_embedder() -> Iterator[str]:
    """An embedding API that accepts connections and never answers (a hung provider): a save
    with wait=True commits, then waits for its indexing — the window in which the host dies."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stopping = threading.Event()

    def accept() -> None:
        while not stopping.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stopping.set()
        listener.close()
        for conn in held:
            conn.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_serve(data: Path, log: Path, **env: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = spawn(["serve", "--port", str(port)],
                 {"HIVE_MIND_DATA_DIR": str(data), "HIVE_MIND_EMBEDDING_PROVIDER": "test",
                  **env}, log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    stop(proc)
    raise AssertionError("serve did not start: " + log.read_text())


async def test_save_acknowledged_by_nobody_is_retried_exactly_once(
        tmp_path: Path, silent_embedder: str) -> None:
    data, log = tmp_path / "data", tmp_path / "serve.log"
    server, url = start_serve(data, log, HIVE_MIND_EMBEDDING_PROVIDER="openai",
                              HIVE_MIND_OPENAI_URL=silent_embedder,
                              HIVE_MIND_OPENAI_API_KEY="sk-test")
    try:
        client = RemoteHiveMind(server_settings(tmp_path / "client", url=url))
        async with client:  # no key given: the client sends one of its own
            pending = asyncio.ensure_future(
                client.save("The release train leaves at 9", wait=True))
            deadline = time.monotonic() + 60
            while not frame_rows(data) and time.monotonic() < deadline and not pending.done():
                await asyncio.sleep(0.05)
            assert frame_rows(data), "the save was never committed"
            assert not pending.done()  # committed, not answered: the host dies now
            kill9(server)
            with pytest.raises(WriteOutcomeUnknownError) as lost:
                await pending
    finally:
        kill9(server)
    message = str(lost.value)
    assert "may have been applied" in message and "--idempotency-key" in message
    named = re.search(r"--idempotency-key (\S+)", message)
    assert named is not None
    server, url = start_serve(data, log)
    try:
        async with RemoteHiveMind(server_settings(tmp_path / "client", url=url)) as client:
            again = await client.save("The release train leaves at 9",
                                      idempotency_key=named.group(1))
    finally:
        stop(server)
    assert again["replayed"] is True
    assert frame_rows(data) == [(again["id"], "The release train leaves at 9")]


# -- every interface passes the key -----------------------------------------------------------


@pytest.fixture
def api(tmp_path: Path) -> Iterator[httpx.Client]:
    with running_server(server_settings(tmp_path / "data")) as url, \
            httpx.Client(base_url=url, timeout=60) as client:
        yield client


def test_http_body_field_and_header(api: httpx.Client, tmp_path: Path) -> None:
    body = {"content": "Quarterly review moved to Thursday", "idempotency_key": KEY,
            "created_at": AT}
    first = api.post("/v1/memories", json=body)
    assert first.status_code == 201, first.text
    again = api.post("/v1/memories", json=body)
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"] and again.json()["replayed"] is True
    assert first.json()["replayed"] is False and "Idempotent-Replayed" not in first.headers
    assert first.json()["created_at"] == AT_UTC

    other = api.post("/v1/memories", json={**body, "content": "Quarterly review cancelled"})
    assert other.status_code == 409 and other.json()["error"]["code"] == "conflict"
    assert "idempotency key" in other.json()["error"]["message"]

    header = {"Idempotency-Key": "header-key-1"}
    by_header = api.post("/v1/memories", json={"content": "Budget due May 3"}, headers=header)
    replay = api.post("/v1/memories", json={"content": "Budget due May 3"}, headers=header)
    assert by_header.status_code == 201 and replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json()["id"] == by_header.json()["id"]
    both = api.post("/v1/memories", headers=header,
                    json={"content": "Budget due May 3", "idempotency_key": "another-key"})
    assert both.status_code == 400 and "differ" in both.json()["error"]["message"]
    for bad in ({"idempotency_key": "has space"}, {"idempotency_key": "k" * 256},
                {"idempotency_key": ""}):
        refused = api.post("/v1/memories", json={"content": "x", **bad})
        assert refused.status_code == 422, refused.text
    refused = api.post("/v1/memories", json={"content": "x"}, headers={"Idempotency-Key": "a b"})
    assert refused.status_code == 422
    assert api.get("/v1/stats").json()["frames"] == 2


def test_http_awareness_item_is_added_once(api: httpx.Client) -> None:
    body = {"category": "task", "content": "Renew the TLS certificate", "ttl_minutes": 60}
    first = api.post("/v1/awareness", json=body, headers={"Idempotency-Key": KEY})
    again = api.post("/v1/awareness", json={**body, "idempotency_key": KEY})
    assert first.status_code == again.status_code == 201, first.text + again.text
    assert again.headers["Idempotent-Replayed"] == "true" and again.json()["replayed"] is True
    assert {**again.json(), "replayed": False} == first.json()  # the first item, as it was
    other = api.post("/v1/awareness", json={**body, "priority": 9, "idempotency_key": KEY})
    assert other.status_code == 409
    assert api.get("/v1/awareness").json()["count"] == 1
    unkeyed = [api.post("/v1/awareness", json={"category": "flag", "content": "CI is red"})
               for _ in range(2)]
    assert [r.json()["replayed"] for r in unkeyed] == [False, False]
    assert api.get("/v1/awareness").json()["count"] == 3  # no key: each call adds an item


def test_http_created_at_is_strict_and_bounded(api: httpx.Client) -> None:
    soon = (datetime.now(UTC) + timedelta(hours=20)).isoformat()
    later = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    for value, fragment in (("yesterday", "invalid timestamp"), ("2024-05-01", "invalid"),
                            ("2024-05-01T12:00:00", "invalid"), ("1899-12-31T23:00:00Z", "1900"),
                            (later, "future"), ("2024-02-30T00:00:00Z", "day is out of range")):
        refused = api.post("/v1/memories", json={"content": "when?", "created_at": value})
        assert refused.status_code == 400, (value, refused.text)
        assert refused.json()["error"]["code"] == "invalid_timestamp"
        assert fragment in refused.json()["error"]["message"], refused.json()
    accepted = api.post("/v1/memories", json={"content": "clock skew", "created_at": soon})
    assert accepted.status_code == 201, accepted.text
    assert api.get("/v1/stats").json()["frames"] == 1


async def test_remote_client_passes_key_and_time(tmp_path: Path) -> None:
    with running_server(server_settings(tmp_path / "data")) as url:
        async with RemoteHiveMind(server_settings(tmp_path / "client", url=url)) as client:
            first = await client.save("Invoices go out on the 5th", idempotency_key=KEY,
                                      created_at=AT)
            again = await client.save("Invoices go out on the 5th", idempotency_key=KEY,
                                      created_at=AT_UTC)  # the same instant, written otherwise
            assert (again["id"], again["replayed"]) == (first["id"], True)
            assert first["created_at"] == AT_UTC
            with pytest.raises(ConflictError):
                await client.save("Invoices go out on the 6th", idempotency_key=KEY)
            with pytest.raises(InvalidTimestampError):
                await client.save("x", created_at="next tuesday")
            plain = await client.save("no key given: one is sent anyway")
            assert plain["replayed"] is False
            assert (await client.stats())["frames"] == 2


def test_mcp_save_memory_takes_key_and_time(tmp_path: Path) -> None:
    from tests.support import mcp_stdio_session

    async def run() -> tuple[Any, ...]:
        data = tmp_path / "data"
        data.mkdir()
        with open(tmp_path / "mcp.log", "w") as errlog:
            async with mcp_stdio_session(data, errlog) as session:
                args = {"content": "The office closes Dec 24", "idempotency_key": KEY,
                        "created_at": AT}
                first = await session.call_tool("save_memory", args)
                again = await session.call_tool("save_memory", args)
                other = await session.call_tool("save_memory",
                                                {**args, "content": "The office stays open"})
                bad = await session.call_tool("save_memory",
                                              {"content": "x", "created_at": "soon"})
                item = {"category": "pending", "content": "Reply to Dana",
                        "idempotency_key": "aware-1"}
                added = [await session.call_tool("set_awareness", item) for _ in range(2)]
                listed = await session.call_tool("get_awareness", {})
                return first, again, other, bad, (added, listed)

    first, again, other, bad, (added, listed) = asyncio.run(run())
    one, two = (json.loads(r.content[0].text) for r in added)
    assert (two["id"], two["replayed"], one["replayed"]) == (one["id"], True, False)
    assert len(json.loads(listed.content[0].text)) == 1
    saved = json.loads(first.content[0].text)
    replay = json.loads(again.content[0].text)
    assert saved["created_at"] == AT_UTC and saved["replayed"] is False
    assert replay["id"] == saved["id"] and replay["replayed"] is True
    assert other.is_error and other.content[0].text.startswith("conflict: ")
    assert bad.is_error and bad.content[0].text.startswith("invalid_timestamp: ")
    assert [c for _, c in frame_rows(tmp_path / "data")] == ["The office closes Dec 24"]


def cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, data=data)


def test_cli_save_key_and_at_round_trip_through_recall(tmp_path: Path) -> None:
    data = tmp_path / "data"
    save = ("save", "--json", "Kickoff with the Lisbon team", "--at", AT,
            "--idempotency-key", KEY)
    first, again = cli(data, *save), cli(data, *save)
    assert first.returncode == 0 and again.returncode == 0, first.stderr + again.stderr
    one, two = json.loads(first.stdout), json.loads(again.stdout)
    assert (two["id"], two["replayed"], one["replayed"]) == (one["id"], True, False)
    assert one["created_at"] == AT_UTC and one["recorded_at"] > "2025"
    cli(data, "save", "--json", "Kickoff retro with the Lisbon team")  # created now

    def recall(*window: str) -> list[str]:
        done = cli(data, "recall", "--json", "Lisbon kickoff", *window)
        assert done.returncode == 0, done.stderr
        return [r["created_at"] for r in json.loads(done.stdout)]

    assert recall("--since", "2024-05-01", "--until", "2024-05-01") == [AT_UTC]
    assert AT_UTC not in recall("--since", "2024-05-02")
    assert len(recall()) == 2

    aware = ("awareness", "set", "--json", "task", "Book the Lisbon flights",
             "--idempotency-key")
    reused = cli(data, *aware, KEY)  # a key names one write in a mind, whatever its kind
    assert reused.returncode == 2 and "idempotency key" in reused.stderr
    first_item, second_item = (json.loads(cli(data, *aware, "aware-1").stdout) for _ in "12")
    assert (second_item["id"], second_item["replayed"]) == (first_item["id"], True)

    conflict = cli(data, "save", "Kickoff moved", "--idempotency-key", KEY)
    assert conflict.returncode == 2 and "idempotency key" in conflict.stderr
    for bad in (("--at", "tomorrow"), ("--at", "3000-01-01T00:00:00Z"),
                ("--idempotency-key", "two words")):
        refused = cli(data, "save", "x", *bad)
        assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1, refused.stderr
        assert refused.stderr.startswith("hive-mind: error: ")


# -- the source time in the engine ------------------------------------------------------------


async def test_created_at_is_the_source_time_and_recorded_at_now(hm: HiveMind) -> None:
    before = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    old = await hm.save("Moved into the Baker Street office", created_at="2019-03-04T05:06:07Z",
                        wait=True)
    new = await hm.save("Moved the servers into the Baker Street rack", wait=True)
    assert old["created_at"] == "2019-03-04T05:06:07.000Z" and old["recorded_at"] >= before
    assert new["created_at"] >= before
    window = await hm.recall("Baker Street", until="2019-12-31")
    assert [r["id"] for r in window] == [old["id"]]
    assert [r["id"] for r in await hm.recall("Baker Street", since="2020-01-01")] == [new["id"]]
