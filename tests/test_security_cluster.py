"""Issue #45: the cluster endpoints of a sharded deployment, attacked over real sockets — two
shard hosts (real ``serve`` apps on fixed loopback ports, real mind files), an attacker's
HTTP endpoint that records what reaches it."""

from __future__ import annotations

import asyncio
import json
import socket
import stat
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from actors.placement import parse_shards
from hive_mind.move_orders import sign_order
from hive_mind.rebalance import Rebalancer
from mind.constants import META_FENCE_EPOCH, META_FENCE_SHARD
from mind.mind import Mind
from mind.storage.schema import LATEST_VERSION
from tests.http_server import running_server, server_settings
from tests.procs import free_port
from tests.recorder import Recorder
from tests.support import refused

TOKEN = "cluster-security-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
KEY = "deployment-key-" + "k" * 32
SHARDS = ("shard-0", "shard-1")


class Pair:
    """Two shard hosts on one shard map (ports chosen before they start)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ports = {s: free_port() for s in SHARDS}
        self.map_text = ",".join(f"{s}=http://127.0.0.1:{p}" for s, p in self.ports.items())
        self.map = parse_shards(self.map_text)
        self.url = {s: f"http://127.0.0.1:{p}" for s, p in self.ports.items()}

    def owned(self, shard: str, n: int = 0) -> str:
        """The n-th workspace id ``shard`` owns."""
        found = [f"ws{i}" for i in range(200) if self.map.owner(f"workspace:ws{i}") == shard]
        return found[n]

    def data(self, shard: str) -> Path:
        return self.root / shard

    @contextmanager
    def running(self) -> Iterator[httpx.Client]:
        with ExitStack() as stack:
            for shard in SHARDS:
                settings = server_settings(self.data(shard), shards=self.map_text,
                                           host_id=shard, api_token=TOKEN, cluster_key=KEY)
                stack.enter_context(running_server(settings, port=self.ports[shard]))
            yield stack.enter_context(httpx.Client(headers=AUTH, timeout=60))


def minds(workspace: str) -> str:
    return f"/v1/cluster/minds/{quote('workspace:' + workspace, safe='')}"


def recall(c: httpx.Client, base: str, workspace: str) -> list[str]:
    r = c.post(f"{base}/v1/recall", json={"query": "alpha launch code", "workspace": workspace,
                                          "scope": "workspace"})
    assert r.status_code == 200, r.text
    return [hit["content"] for hit in r.json()["results"]]


def test_a_release_goes_only_to_a_shard_and_url_the_operator_named(tmp_path: Path) -> None:
    pair = Pair(tmp_path)
    alpha, beta = pair.owned("shard-0", 0), pair.owned("shard-0", 1)
    s0, s1 = pair.url["shard-0"], pair.url["shard-1"]
    with Recorder() as evil:
        # a departure recorded before URLs had to be authorized, naming a foreign URL
        moves = pair.data("shard-0") / "moves"
        moves.mkdir(parents=True)
        (moves / f"workspace-{beta}.departure.json").write_text(json.dumps({
            "kind": "departure", "mind_id": f"workspace:{beta}", "to": "shard-9", "epoch": 0,
            "url": evil.url, "state": "released"}))
        with pair.running() as c:
            assert c.post(f"{s0}/v1/workspaces",
                          json={"name": "Alpha", "id": alpha}).status_code == 201
            assert c.post(f"{s0}/v1/memories", json={
                "content": "the alpha launch code is 1234", "workspace": alpha}).status_code == 201
            mind = f"workspace:{alpha}"

            # the attack: a foreign URL for a shard of the map, a shard outside it, a forged
            # order, a stolen order replayed for another mind
            forged = sign_order("not-the-key-" + "x" * 32, mind, "shard-7", 0, evil.url)
            replayed = sign_order(KEY, "workspace:other", "shard-7", 0, evil.url)
            for body in ({"to": "shard-1", "epoch": 0, "url": evil.url},
                         {"to": "shard-7", "epoch": 0, "url": evil.url}, forged, replayed):
                refused(c.post(f"{s0}{minds(alpha)}/release", json=body), 403, "forbidden")
            assert recall(c, s0, alpha) == ["the alpha launch code is 1234"]
            # the old record is not followed: a retryable refusal naming the cancel
            message = refused(c.get(f"{s0}/v1/workspaces/{beta}"), 503, "fenced")
            assert "cancel the departure" in message
            assert evil.seen == []

            # legitimate: the shard of the map at the map's URL, listed with it, cancellable
            r = c.post(f"{s0}{minds(alpha)}/release", json={"to": "shard-1", "epoch": 0})
            assert r.status_code == 200 and r.json()["url"] == s1, r.text
            held = c.get(f"{s0}/v1/cluster/minds").json()["minds"]
            row = next(m for m in held if m["mind_id"] == mind and "departed" in m)
            assert row["departed"]["url"] == s1 and row["departed"]["authorized"] == "map"
            refused(c.post(f"{s0}/v1/recall", json={"query": "alpha", "workspace": alpha,
                                                    "scope": "workspace"}), 503, "fenced")
            r = c.delete(f"{s0}{minds(alpha)}/release")
            assert r.status_code == 200 and r.json()["cancelled"], r.text
            assert recall(c, s0, alpha) == ["the alpha launch code is 1234"]
            assert c.post(f"{s0}/v1/memories", json={
                "content": "after the cancel", "workspace": alpha}).status_code == 201

            # a move order signed with the deployment key may name a shard outside the map
            r = c.post(f"{s0}{minds(alpha)}/release",
                       json=sign_order(KEY, mind, "shard-2", 0, evil.url))
            assert r.status_code == 200 and r.json()["url"] == evil.url, r.text
            c.post(f"{s0}/v1/recall", json={"query": "x", "workspace": alpha,
                                            "scope": "workspace"})
            assert [s.path for s in evil.seen] == ["/v1/recall"]
            assert evil.seen[0].headers["authorization"] == AUTH["Authorization"]
            assert c.delete(f"{s0}{minds(alpha)}/release").status_code == 200
            assert recall(c, s0, alpha)[0] == "the alpha launch code is 1234"


def test_an_expected_mind_can_be_cancelled_and_leaves_no_half_workspace(tmp_path: Path
                                                                        ) -> None:
    pair = Pair(tmp_path)
    gamma = pair.owned("shard-1")
    s1 = pair.url["shard-1"]
    with pair.running() as c:
        assert c.post(f"{s1}{minds(gamma)}/expect").status_code == 200
        refused(c.post(f"{s1}/v1/workspaces", json={"name": "Gamma", "id": gamma}), 503,
                "fenced")
        listed = c.get(f"{s1}/v1/workspaces").json()["workspaces"]
        assert gamma not in [w["id"] for w in listed]  # no metadata without its mind
        assert not (pair.data("shard-1") / "workspaces" / gamma).exists()
        r = c.delete(f"{s1}{minds(gamma)}/expect")
        assert r.status_code == 200 and r.json()["cancelled"] is True
        assert c.post(f"{s1}/v1/workspaces", json={"name": "Gamma", "id": gamma}
                      ).status_code == 201
        assert c.delete(f"{s1}{minds(gamma)}/expect").json()["cancelled"] is False


def raw_put(url: str, path: str, length: int, first: bytes) -> bytes:
    """Headers announcing ``length`` bytes and only ``first`` of them sent: the answer, if
    the server gives one without waiting for the rest (5 s)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as conn:
        conn.sendall(f"PUT {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                     f"Authorization: Bearer {TOKEN}\r\n"
                     f"Content-Type: application/vnd.sqlite3\r\n"
                     f"Content-Length: {length}\r\n\r\n".encode() + first)
        answer = b""
        try:
            while chunk := conn.recv(4096):  # until the server closes or 5 s pass
                answer += chunk
                head, _, body = answer.partition(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), None)
                if length is not None and len(body) >= length:
                    break
        except (TimeoutError, ConnectionResetError):
            pass
        return answer


def test_move_bodies_are_limited_and_refused_before_they_are_read(tmp_path: Path) -> None:
    """Finding 3: the move-upload limit is for a shard host's ``PUT …/snapshot`` only; a
    refusal (not sharded, not awaited) comes before the body is read."""
    big = b"x" * (11 * 1024 * 1024)
    with running_server(server_settings(tmp_path / "plain")) as url, \
            httpx.Client(timeout=60) as c:
        for method, path in (("POST", "expect"), ("PUT", "snapshot"), ("POST", "release")):
            r = c.request(method, f"{url}{minds('w')}/{path}", content=big,
                          headers={"Content-Type": "application/json"})
            refused(r, 413, "too_large")
        answer = raw_put(url, minds("w") + "/snapshot", 10**9, b"SQLite format 3\x00")
        assert answer.startswith(b"HTTP/1.1 413")
    pair = Pair(tmp_path)
    gamma = pair.owned("shard-1")
    s1 = pair.url["shard-1"]
    with pair.running() as c:
        refused(c.post(f"{s1}{minds(gamma)}/release", content=big,
                       headers={"Content-Type": "application/json"}), 413, "too_large")
        answer = raw_put(s1, minds(gamma) + "/snapshot", 10**9, b"SQLite format 3\x00")
        assert answer.startswith(b"HTTP/1.1 409") and b"not awaited" in answer
        assert not list((pair.data("shard-1") / "moves").glob(".incoming-*"))


async def fenced_copy(path: Path, shard: str, version: int | None = None) -> Path:
    """A mind file fenced for ``shard``; ``version``: its recorded schema version instead."""
    async with await Mind.open(path) as m:
        await m.db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                               [(META_FENCE_SHARD, shard), (META_FENCE_EPOCH, "0")])
        if version is not None:
            await m.db.execute("INSERT INTO schema_migrations(version, name) VALUES (?, 'x')",
                               (version,))
    return path


@pytest.mark.slow
def test_admit_takes_only_an_awaited_mind_file_with_checked_metadata(tmp_path: Path) -> None:
    """Finding 4: no admit without ``expect``; metadata held to the workspace rules; a copy
    this host cannot open (a newer schema) or that is not SQLite refused with no server path;
    the admitted file owner-only."""
    pair = Pair(tmp_path)
    gamma = pair.owned("shard-1")
    s1 = pair.url["shard-1"]
    good = asyncio.run(fenced_copy(tmp_path / "good.mind", "shard-1"))
    newer = asyncio.run(fenced_copy(tmp_path / "newer.mind", "shard-1", LATEST_VERSION + 5))
    put = {"headers": {"Content-Type": "application/vnd.sqlite3"}}
    with pair.running() as c:
        snapshot = f"{s1}{minds(gamma)}/snapshot"
        refused(c.put(snapshot, content=good.read_bytes(), **put), 409, "conflict")
        for metadata in ('{"name": "evil\\u202eexe.txt"}', '{"name": ""}', "[1]", "not json",
                         '{"name": "' + "n" * 300 + '"}'):
            r = c.post(f"{s1}{minds(gamma)}/expect", json={"metadata": metadata})
            refused(r, 400, "invalid")
        r = c.post(f"{s1}{minds(gamma)}/expect", json={"metadata": json.dumps(
            {"id": "other", "name": "Gamma", "group": "ops", "extra": "x" * 1000})})
        assert r.status_code == 200, r.text
        refused(c.put(snapshot, content=b"junk" * 1000, **put), 400, "invalid")
        message = refused(c.put(snapshot, content=newer.read_bytes(), **put), 400, "invalid")
        assert "not a mind file this host can open" in message
        assert str(tmp_path) not in message and "moves" not in message
        assert c.get(f"{s1}/v1/workspaces").status_code == 200
        r = c.put(snapshot, content=good.read_bytes(), **put)
        assert r.status_code == 200 and r.json()["admitted"], r.text
        listed = {w["id"]: w for w in c.get(f"{s1}/v1/workspaces").json()["workspaces"]}
        assert (listed[gamma]["name"], listed[gamma]["group"]) == ("Gamma", "ops")
        assert "extra" not in listed[gamma]
    placed = pair.data("shard-1") / "workspaces" / gamma
    assert stat.S_IMODE((placed / "workspace.mind").stat().st_mode) == 0o600
    assert stat.S_IMODE((placed / "workspace.json").stat().st_mode) == 0o600


@pytest.mark.slow
async def test_a_moved_mind_leaves_no_copy_behind_and_retire_needs_the_arrival(
        tmp_path: Path) -> None:
    """Finding 10: a retired copy stayed under ``moves/`` forever, out of reach of every later
    ``forget``; and retire deleted nothing but moved the only copy aside even when the new
    owner never admitted it. Now: a real rebalance onto a new shard leaves no copy on the old
    host (a forget on the new owner reaches every file there is), and a retire before the
    arrival is refused and the release can be cancelled."""
    ports = {s: free_port() for s in SHARDS}
    url = {s: f"http://127.0.0.1:{p}" for s, p in ports.items()}
    old_map, new_map = f"shard-0={url['shard-0']}", ",".join(f"{s}={url[s]}" for s in SHARDS)
    new = parse_shards(new_map)
    moving = next(f"ws{i}" for i in range(200) if new.owner(f"workspace:ws{i}") == "shard-1")
    staying = next(f"ws{i}" for i in range(200) if new.owner(f"workspace:ws{i}") == "shard-0")
    secret = "the moving workspace's vault code is Heron-5120"
    with ExitStack() as stack:
        for shard, shard_map in (("shard-0", old_map), ("shard-1", new_map)):
            settings = server_settings(tmp_path / shard, shards=shard_map, host_id=shard,
                                       api_token=TOKEN, cluster_key=KEY)
            stack.enter_context(running_server(settings, port=ports[shard]))
        c = stack.enter_context(httpx.Client(headers=AUTH, timeout=60))
        for ws in (moving, staying):
            assert c.post(f"{url['shard-0']}/v1/workspaces", json={"name": ws, "id": ws}
                          ).status_code == 201
        r = c.post(f"{url['shard-0']}/v1/memories", json={"content": secret, "workspace": moving})
        frame = r.json()["id"]

        # retire before the new owner holds it: refused, the copy stays, the release cancels
        cut = f"{url['shard-0']}{minds(staying)}"
        order = sign_order(KEY, f"workspace:{staying}", "shard-1", 0, url["shard-1"])
        assert c.post(f"{cut}/release", json=order).status_code == 200
        refused(c.post(f"{cut}/retire"), 409, "conflict")
        assert (tmp_path / "shard-0" / "workspaces" / staying / "workspace.mind").exists()
        assert c.delete(f"{cut}/release").status_code == 200

        tool = Rebalancer(server_settings(tmp_path / "op", api_token=TOKEN, cluster_key=KEY),
                          new, parse_shards(old_map))
        try:
            report = await tool.run(await tool.plan())
        finally:
            await tool.close()
        assert report["moved"] == [f"workspace:{moving}"], report
        assert _holding(tmp_path / "shard-0", secret) == []
        assert c.delete(f"{url['shard-0']}/v1/memories/{frame}",
                        params={"workspace": moving}).status_code == 200  # forwarded
    assert _holding(tmp_path / "shard-1", secret) == []
    assert _holding(tmp_path / "shard-0", secret) == []


def _holding(root: Path, text: str) -> list[str]:
    needle = text.encode()
    return [str(p) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


async def _newer_workspace(data: Path, slug: str) -> None:
    folder = data / "workspaces" / slug
    folder.mkdir(parents=True)
    (folder / "workspace.json").write_text(json.dumps({"id": slug, "name": slug}))
    async with await Mind.open(folder / "workspace.mind") as m:
        await m.db.execute("INSERT INTO schema_migrations(version, name) VALUES (?, 'x')",
                           (LATEST_VERSION + 5,))


def test_errors_name_no_server_path_and_pass_on_no_upstream_page(tmp_path: Path) -> None:
    """Finding 11: a storage error named the server's path to the mind file; an owner's reply
    that was not hive-mind's error JSON reached the caller as ``500 http_500`` with 300
    characters of it (an internal page, through a forwarding host). Now the file is named by
    its mind, and such a reply is a bare 502 ``upstream_error``."""
    data = tmp_path / "plain"
    asyncio.run(_newer_workspace(data, "acme"))
    with running_server(server_settings(data)) as url, httpx.Client(timeout=60) as c:
        r = c.post(f"{url}/v1/memories", json={"content": "x", "workspace": "acme"})
        assert r.status_code >= 400 and "workspace acme" in r.text, r.text
        assert str(tmp_path) not in r.text and "workspace.mind" not in r.text

    page = b"<html>admin console: the database password is hunter2</html>"
    with Recorder(status=500, body=page, content_type="text/html") as inside:
        shard_map = f"shard-0=http://127.0.0.1:{free_port()},shard-1={inside.url}"
        owned = next(f"ws{i}" for i in range(200)
                     if parse_shards(shard_map).owner(f"workspace:ws{i}") == "shard-1")
        settings = server_settings(tmp_path / "s0", shards=shard_map, host_id="shard-0",
                                   api_token=TOKEN)
        with running_server(settings) as url, httpx.Client(headers=AUTH, timeout=60) as c:
            message = refused(c.get(f"{url}/v1/workspaces/{owned}"), 502, "upstream_error")
            assert "hunter2" not in message and "admin console" not in message
            assert [s.path for s in inside.seen] == [f"/v1/workspaces/{owned}"]


def test_one_authorization_header_and_a_readiness_probe_that_does_not_write(
        tmp_path: Path) -> None:
    """Finding 12: auth read the first ``Authorization`` header while forwarding sent the last,
    so a request could pass with one credential and travel with another; ``/readyz`` (no
    token) created and deleted a file in the data dir on every call."""
    with Recorder() as other:
        shard_map = f"shard-0=http://127.0.0.1:{free_port()},shard-1={other.url}"
        owned = next(f"ws{i}" for i in range(200)
                     if parse_shards(shard_map).owner(f"workspace:ws{i}") == "shard-1")
        data = tmp_path / "s0"
        settings = server_settings(data, shards=shard_map, host_id="shard-0", api_token=TOKEN)
        with running_server(settings) as url, httpx.Client(timeout=60) as c:
            two = [("Authorization", f"Bearer {TOKEN}"), ("Authorization", "Bearer stolen")]
            refused(c.get(f"{url}/v1/workspaces/{owned}", headers=two), 401, "unauthorized")
            assert other.seen == []
            c.get(f"{url}/v1/workspaces/{owned}", headers=AUTH)  # one: forwarded with it
            assert [s.headers["authorization"] for s in other.seen] == [AUTH["Authorization"]]

            assert c.get(f"{url}/readyz").status_code == 200
            before = data.stat().st_mtime_ns
            time.sleep(0.05)
            for _ in range(20):
                assert c.get(f"{url}/readyz").status_code == 200
            assert data.stat().st_mtime_ns == before  # no file made and removed per call
