"""Issue #45: imports a client uploads cannot make ``serve`` build what they inflate to.

Real parts: a real ``serve`` process over a socket, multipart uploads, its peak resident
memory read from ``/proc`` (``VmHWM``). The attacks: a zip of ~70 KB whose members each inflate
~170× to ``[[[],[],…]]`` (one first element of a million empty lists: import detection built it
whole, for every member, twice), and an upload of the same shape as plain JSON for an adapter
that streams items (``ijson.items`` built the one item whole).
"""

from __future__ import annotations

import io
import random
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.procs import ROOT, eventually, free_port, spawn, stop

GROK = ROOT / "tests" / "fixtures" / "harvest" / "grok" / "prod-grok-backend.json"
MB = 1024 * 1024
GROWTH_LIMIT = 120 * MB  # peak memory the attacks together may add to a warmed-up serve


def nested_lists(n: int, seed: int) -> bytes:
    """``[[[],[],…]]`` with a space now and then: compresses ~170×, under the zip ratio limit
    of 200 that a member may inflate."""
    rnd = random.Random(seed)
    out = bytearray(b"[[")
    for _ in range(n):
        out += b"[],"
        if rnd.random() < 0.01:
            out += b" "
    out += b"[]]]"
    return bytes(out)


def bomb_zip(members: int = 4, lists: int = 1_000_000) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for m in range(members):
            zf.writestr(f"conversations-{m}.json", nested_lists(lists, m))
    return buf.getvalue()


def peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[tuple[httpx.Client, int]]:
    port = free_port()
    proc = spawn(["serve", "--port", str(port)], {
        "HIVE_MIND_DATA_DIR": str(tmp_path / "data"), "HIVE_MIND_EMBEDDING_PROVIDER": "test",
        "HIVE_MIND_MAINTENANCE_ENABLED": "false"}, tmp_path / "serve.log")
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=300) as client:
            async def up() -> bool:
                try:
                    return client.get("/readyz").status_code == 200
                except httpx.HTTPError:
                    return False

            import asyncio

            asyncio.run(eventually(up, 90, "serve ready"))
            yield client, proc.pid
    except BaseException:
        print((tmp_path / "serve.log").read_text()[-3000:])
        raise
    finally:
        stop(proc)


def upload(client: httpx.Client, source: str, name: str, data: bytes) -> httpx.Response:
    return client.post("/v1/harvest/upload", data={"source": source},
                       files={"file": (name, data, "application/octet-stream")})


def test_inflated_uploads_are_refused_before_memory_grows(
        serve: tuple[httpx.Client, int]) -> None:
    client, pid = serve
    warm = upload(client, "auto", "grok.json", GROK.read_bytes())  # the legitimate use
    assert warm.status_code == 200 and warm.json()["source"] == "grok", warm.text
    baseline = peak_rss(pid)

    bomb = bomb_zip()
    assert len(bomb) < 100_000
    for source in ("auto", "chatgpt", "claude"):
        r = upload(client, source, "export.zip", bomb)
        assert r.status_code == 422 and r.json()["error"]["code"] == "harvest_input", r.text
    flat = nested_lists(3_000_000, 0)  # 9 MB, under the request limit
    r = upload(client, "universal", "messages.json", flat)
    assert r.status_code == 422, r.text
    assert "one item holds more than" in r.json()["error"]["message"]

    grown = peak_rss(pid) - baseline
    assert grown < GROWTH_LIMIT, f"serve's peak memory grew {grown / MB:.0f} MB"
    again = upload(client, "auto", "grok.json", GROK.read_bytes())
    assert again.status_code == 200 and again.json()["status"] == "unchanged", again.text
