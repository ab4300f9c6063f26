"""Issue #45: tokens scoped to workspaces, through HTTP, MCP over HTTP and a gateway with two
shards — real servers over real sockets, real mind files, the CLI as a subprocess.

A scoped token opens the workspaces it names and nothing else: another workspace's memories
never reach its caller (one-mind calls refused, scope-wide recall and listings narrowed on
every shard), a read-only one writes nothing, an expired or revoked one opens nothing, and the
calls over the deployment stay the admin's. The admin token works as before."""

from __future__ import annotations

import json
import stat
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from actors.placement import parse_shards
from hive_mind.tokens import TOKENS_FILE
from tests.http_server import running_server, server_settings
from tests.procs import free_port, run_cli
from tests.support import mcp_call, refused

ADMIN = "scoped-tokens-admin-token"
ADMIN_AUTH = {"Authorization": f"Bearer {ADMIN}"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def cli(data: Path, *args: str) -> dict[str, Any]:
    done = run_cli(*args, "--json", data=data, clean=True)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def seed(c: httpx.Client, url: str, workspaces: list[str]) -> None:
    """As the admin: each workspace, and one memory each (and the personal mind's)."""
    for ws in workspaces:
        assert c.post(f"{url}/v1/workspaces", headers=ADMIN_AUTH,
                      json={"name": ws, "id": ws}).status_code == 201
        assert c.post(f"{url}/v1/memories", headers=ADMIN_AUTH, json={
            "content": f"the {ws} launch code is secret-{ws}", "workspace": ws}
        ).status_code == 201
    c.post(f"{url}/v1/memories", headers=ADMIN_AUTH,
           json={"content": "the personal launch code is secret-personal"})


def recalled(c: httpx.Client, url: str, token: str) -> set[str]:
    r = c.post(f"{url}/v1/recall", headers=bearer(token),
               json={"query": "launch code secret", "scope": "all", "limit": 50})
    assert r.status_code == 200, r.text
    return {hit["from"] for hit in r.json()["results"]}


def test_a_scoped_token_opens_its_workspaces_only_over_http_and_mcp(tmp_path: Path) -> None:
    data = tmp_path / "data"
    made = cli(data, "token", "create", "--workspace", "acme", "--label", "acme agent")
    reader = cli(data, "token", "create", "-w", "acme", "-w", "beta", "--read-only")
    stale = cli(data, "token", "create", "-w", "acme", "--expires", "2020-01-01T00:00:00Z")
    token = made["token"]
    stored = (data / TOKENS_FILE).read_text()
    assert token not in stored and reader["token"] not in stored  # hashes only
    assert stat.S_IMODE((data / TOKENS_FILE).stat().st_mode) == 0o600
    with running_server(server_settings(data, api_token=ADMIN)) as url, \
            httpx.Client(timeout=60) as c:
        seed(c, url, ["acme", "beta"])
        assert c.post(f"{url}/v1/memories", headers=bearer(token), json={
            "content": "acme's agent notes the deploy", "workspace": "acme"}).status_code == 201
        for body in ({"content": "x", "workspace": "beta"}, {"content": "x"}):
            refused(c.post(f"{url}/v1/memories", headers=bearer(token), json=body), 403,
                    "forbidden")
        assert recalled(c, url, token) == {"workspace:acme"}
        assert recalled(c, url, ADMIN) == {"workspace:acme", "workspace:beta", "personal"}
        listed = c.get(f"{url}/v1/workspaces", headers=bearer(token)).json()
        assert [w["id"] for w in listed["workspaces"]] == ["acme"] and listed["personal"] is None
        refused(c.get(f"{url}/v1/workspaces/beta", headers=bearer(token)), 403, "forbidden")
        refused(c.post(f"{url}/v1/recall", headers=bearer(token), json={
            "query": "launch", "scope": "workspace", "workspace": "beta"}), 403, "forbidden")
        exported = c.get(f"{url}/v1/export", headers=bearer(token), params={"workspace": "acme"})
        assert exported.status_code == 200 and b"deploy" in exported.content
        for params in ({"workspace": "beta"}, {}):  # another workspace, the personal mind
            refused(c.get(f"{url}/v1/export", headers=bearer(token), params=params), 403,
                    "forbidden")
            refused(c.get(f"{url}/v1/export/page", headers=bearer(token), params=params), 403,
                    "forbidden")
        refused(c.get(f"{url}/v1/export", params={"workspace": "acme"}), 401, "unauthorized")
        for method, path in (("GET", "/v1/status"), ("GET", "/v1/jobs"), ("GET", "/metrics"),
                             ("GET", "/v1/tokens"), ("DELETE", "/v1/workspaces/acme"),
                             ("POST", "/v1/maintenance/compact")):
            refused(c.request(method, f"{url}{path}", headers=bearer(token)), 403, "forbidden")
        assert c.get(f"{url}/v1/tokens/self", headers=bearer(token)).json()["minds"] == [
            "workspace:acme"]

        # read-only: reads both its workspaces, writes nothing
        assert recalled(c, url, reader["token"]) == {"workspace:acme", "workspace:beta"}
        refused(c.post(f"{url}/v1/memories", headers=bearer(reader["token"]), json={
            "content": "x", "workspace": "acme"}), 403, "forbidden")
        # expired, then revoked: nothing
        refused(c.get(f"{url}/v1/workspaces", headers=bearer(stale["token"])), 401,
                "unauthorized")

        # MCP over HTTP: the same scope, per message
        text = asyncio_run(mcp_call(url, "recall_memory", {
            "query": "launch code secret", "scope": "all", "limit": 50}, bearer(token)))
        assert "secret-acme" in text and "secret-beta" not in text
        assert "secret-personal" not in text
        denied = asyncio_run(mcp_call(url, "save_memory", {
            "content": "x", "workspace": "beta"}, bearer(token), ok=False))
        assert "forbidden" in denied

        assert c.delete(f"{url}/v1/tokens/{made['id']}", headers=ADMIN_AUTH).status_code == 200
        refused(c.get(f"{url}/v1/workspaces", headers=bearer(token)), 401, "unauthorized")


def asyncio_run(coro: Any) -> Any:
    import asyncio

    return asyncio.run(coro)


def test_a_scoped_token_across_a_gateway_and_two_shards(tmp_path: Path) -> None:
    ports = {s: free_port() for s in ("shard-0", "shard-1")}
    shard_map = ",".join(f"{s}=http://127.0.0.1:{p}" for s, p in ports.items())
    shards = parse_shards(shard_map)
    names = [f"ws{i}" for i in range(40)]
    on = {s: [n for n in names if shards.owner(f"workspace:{n}") == s][:2]
          for s in ("shard-0", "shard-1")}
    mine = [on["shard-0"][0], on["shard-1"][0]]  # one on each shard
    others = [on["shard-0"][1], on["shard-1"][1]]
    with ExitStack() as stack:
        for shard, port in ports.items():
            stack.enter_context(running_server(server_settings(
                tmp_path / shard, shards=shard_map, host_id=shard, api_token=ADMIN),
                port=port))
        gw = stack.enter_context(running_server(server_settings(
            tmp_path / "gateway", shards=shard_map, gateway=True, api_token=ADMIN)))
        c = stack.enter_context(httpx.Client(timeout=60))
        seed(c, gw, mine + others)
        made = c.post(f"{gw}/v1/tokens", headers=ADMIN_AUTH, json={"workspaces": mine})
        assert made.status_code == 201, made.text
        token = made.json()["token"]
        for shard in ports:  # installed on every shard, hashed
            assert token not in (tmp_path / shard / TOKENS_FILE).read_text()

        assert recalled(c, gw, token) == {f"workspace:{w}" for w in mine}
        listed = c.get(f"{gw}/v1/workspaces", headers=bearer(token)).json()["workspaces"]
        assert sorted(w["id"] for w in listed) == sorted(mine)
        for ws in mine:  # forwarded to each owner, which checks the token itself
            assert c.post(f"{gw}/v1/memories", headers=bearer(token), json={
                "content": f"through the gateway into {ws}", "workspace": ws}
            ).status_code == 201
        for ws in mine:  # an export streamed from its owner through the gateway
            exported = c.get(f"{gw}/v1/export", headers=bearer(token), params={
                "workspace": ws, "format": "json"})
            assert exported.status_code == 200, exported.text
            assert exported.json()["mind"] == f"workspace:{ws}"
            assert f"through the gateway into {ws}" in exported.text
        for ws in others:
            refused(c.get(f"{gw}/v1/export", headers=bearer(token), params={"workspace": ws}),
                    403, "forbidden")
            refused(c.post(f"{gw}/v1/memories", headers=bearer(token), json={
                "content": "x", "workspace": ws}), 403, "forbidden")
            owner = f"http://127.0.0.1:{ports[shards.owner(f'workspace:{ws}')]}"
            refused(c.get(f"{owner}/v1/workspaces/{ws}", headers={
                **bearer(token), "X-Hive-Mind-Forwarded": "1"}), 403, "forbidden")
        text = asyncio_run(mcp_call(gw, "recall_memory", {
            "query": "launch code secret", "scope": "all", "limit": 50}, bearer(token)))
        assert all(f"secret-{w}" in text for w in mine)
        assert not any(f"secret-{w}" in text for w in others) and "personal" not in text

        assert c.delete(f"{gw}/v1/tokens/{made.json()['id']}",
                        headers=ADMIN_AUTH).status_code == 200
        for port in ports.values():  # revoked on every shard
            refused(c.get(f"http://127.0.0.1:{port}/v1/workspaces", headers=bearer(token)),
                    401, "unauthorized")


@pytest.fixture(autouse=True)
def _no_env_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HIVE_MIND_API_TOKEN", raising=False)
