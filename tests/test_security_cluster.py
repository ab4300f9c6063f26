"""Issue #45: the cluster endpoints of a sharded deployment, attacked over real sockets — two
shard hosts (real ``serve`` apps on fixed loopback ports, real mind files), an attacker's
HTTP endpoint that records what reaches it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from urllib.parse import quote

import httpx

from actors.placement import parse_shards
from hive_mind.move_orders import sign_order
from tests.http_server import running_server, server_settings
from tests.recorder import Recorder
from tests.test_security_http import free_port, refused

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
            assert c.post(f"{s1}{minds(alpha)}/expect").status_code == 200
            r = c.post(f"{s0}{minds(alpha)}/release", json={"to": "shard-1", "epoch": 0})
            assert r.status_code == 200 and r.json()["url"] == s1, r.text
            held = c.get(f"{s0}/v1/cluster/minds").json()["minds"]
            row = next(m for m in held if m["mind_id"] == mind and "departed" in m)
            assert row["departed"]["url"] == s1 and row["departed"]["authorized"] == "map"
            refused(c.post(f"{s0}/v1/recall", json={"query": "alpha", "workspace": alpha,
                                                    "scope": "workspace"}), 503, "fenced")
            r = c.delete(f"{s0}{minds(alpha)}/release")
            assert r.status_code == 200 and r.json()["cancelled"], r.text
            assert c.delete(f"{s1}{minds(alpha)}/expect").json()["cancelled"] is True
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
