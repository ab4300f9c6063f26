"""Issue #45 finding 8: half-sent requests against a real ``serve`` process over real sockets.
Connections that never finish their headers are closed after the header deadline, those past
the connection cap at once, and a body that stops arriving gets 408 — all before the token is
ever looked at. Normal requests keep working."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.procs import free_port, spawn, stop

TOKEN = "connections-test-token"
HEADER_SECONDS = 2
CAP = 40


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[int]:
    port = free_port()
    proc = spawn(["serve", "--port", str(port)], {
        "HIVE_MIND_DATA_DIR": str(tmp_path / "data"), "HIVE_MIND_EMBEDDING_PROVIDER": "test",
        "HIVE_MIND_API_TOKEN": TOKEN, "HIVE_MIND_MAINTENANCE_ENABLED": "false",
        "HIVE_MIND_HEADER_TIMEOUT_SECONDS": str(HEADER_SECONDS),
        "HIVE_MIND_BODY_TIMEOUT_SECONDS": str(HEADER_SECONDS),
        "HIVE_MIND_MAX_CONNECTIONS": str(CAP)}, tmp_path / "serve.log")
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        yield port
    finally:
        stop(proc)
        print((tmp_path / "serve.log").read_text()[-2000:])


def closed(conn: socket.socket, wait: float) -> bool:
    """Did the server close ``conn`` (EOF or reset) within ``wait`` seconds?"""
    conn.settimeout(wait)
    try:
        return conn.recv(1024) == b""
    except TimeoutError:
        return False
    except OSError:
        return True


def read_until_closed(conn: socket.socket) -> bytes:
    """Everything the server sends on ``conn`` until it closes it (headers and body may come
    in separate packets)."""
    chunks = []
    with conn:
        while chunk := conn.recv(4096):
            chunks.append(chunk)
    return b"".join(chunks)


def half_sent(port: int) -> socket.socket:
    conn = socket.create_connection(("127.0.0.1", port), timeout=5)
    conn.sendall(b"GET /v1/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    return conn


def test_half_sent_requests_are_cut_off_and_capped(serve: int) -> None:
    port = serve
    conns = [half_sent(port) for _ in range(CAP + 20)]
    try:
        at_once = sum(closed(c, 0.05) for c in conns[CAP:])
        assert at_once >= 15  # past the cap: closed before a byte is read
        assert not any(closed(c, 0.05) for c in conns[:5])  # within it: still waiting
        time.sleep(HEADER_SECONDS + 1)
        assert all(closed(c, 3) for c in conns[:CAP])  # headers never done: all cut off
    finally:
        for conn in conns:
            conn.close()

    # a body that stops arriving: 408, not a connection held open
    conn = socket.create_connection(("127.0.0.1", port), timeout=10)
    conn.sendall(b"POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 b"Authorization: Bearer " + TOKEN.encode() + b"\r\n"
                 b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"content\"")
    answer = read_until_closed(conn)
    assert answer.startswith(b"HTTP/1.1 408") and b'"timeout"' in answer

    # the legitimate use: requests that arrive whole are answered, kept-alive ones too
    with httpx.Client(base_url=f"http://127.0.0.1:{port}",
                      headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as api:
        assert api.post("/v1/memories", json={"content": "still serving"}).status_code == 201
        time.sleep(HEADER_SECONDS + 1)  # idle on a kept-alive connection, then again
        assert api.get("/v1/stats").json()["frames"] == 1
