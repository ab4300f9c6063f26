"""Issue #12 items 2, 3 and 8 against a real ``serve`` over a real socket: no auth-less exposed
binds, the Host/Origin guard (DNS rebinding, cross-site writes) on every route, and tokens an
HTTP header can carry. Servers here only ever listen on 127.0.0.1; an exposed bind is what the
app is *told* (``running_server(..., bind_host=...)``) or what a refused process never binds."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from hive_mind.api.exposure import check_exposure
from hive_mind.api.guard import host_name, host_policy
from hive_mind.settings import Settings, load_settings
from mind.errors import ConfigurationError
from tests.http_server import running_server, server_settings
from tests.procs import ROOT
from tests.support import refused

TOKEN = "s3cret-Token_for.tests~"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "MCP-Protocol-Version": "2025-06-18"}
MCP_INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "1"}}}


def frames(client: httpx.Client) -> int:
    response = client.get("/v1/stats")
    assert response.status_code == 200, response.text
    return int(response.json()["frames"])


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def local(data: Path) -> Iterator[tuple[httpx.Client, int]]:
    """The default local setup: loopback, no token, server reads on."""
    with running_server(server_settings(data)) as url, \
            httpx.Client(base_url=url, timeout=60) as client:
        yield client, port_of(url)


# -- item 2: no auth-less exposed binds ---------------------------------------------------------


def test_empty_token_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_MIND_API_TOKEN", "")
    assert load_settings().security.api_token is None
    assert Settings(api_token=SecretStr("   ")).security.api_token is None
    with pytest.raises(ConfigurationError, match="HIVE_MIND_API_TOKEN"):
        check_exposure(load_settings(), "0.0.0.0")


@pytest.mark.parametrize("bind", ["0.0.0.0", "::", "[::]", "", "10.0.0.5", "192.168.1.20",
                                  "fd00::1", "memory.example", "localhost.example"])
def test_exposed_bind_needs_a_token(bind: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        check_exposure(Settings(api_token=None), bind)
    assert "HIVE_MIND_API_TOKEN" in str(caught.value)
    assert "--insecure-no-auth" in str(caught.value)
    assert check_exposure(Settings(api_token=SecretStr(TOKEN)), bind) is None
    warning = check_exposure(Settings(api_insecure_no_auth=True), bind)
    assert warning is not None and "WITHOUT authentication" in warning


@pytest.mark.parametrize("bind", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
def test_loopback_bind_needs_no_token(bind: str) -> None:
    assert check_exposure(Settings(api_token=None), bind) is None


def test_create_app_refuses_an_exposed_bind_without_token(data: Path) -> None:
    from hive_mind.api import create_app

    with pytest.raises(ConfigurationError, match="HIVE_MIND_API_TOKEN"):
        create_app(server_settings(data), bind_host="0.0.0.0")
    assert not data.exists()  # refused before anything opened


def _refused_process(args: list[str], data: Path, port: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HIVE_MIND_DATA_DIR": str(data), "HIVE_MIND_EMBEDDING_PROVIDER": "test",
           "HIVE_MIND_API_TOKEN": "", "HF_HUB_OFFLINE": "1"}
    for key in ("HIVE_MIND_REDIS_URL", "HIVE_MIND_URL", "HIVE_MIND_API_INSECURE_NO_AUTH"):
        env.pop(key, None)
    done = subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env, text=True,
                          capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    with socket.socket() as probe:  # nothing listens on the port it was given
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    return done


@pytest.mark.parametrize("module", ["hive_mind", "hive_mind.server"])
def test_serve_on_0000_without_token_exits_before_binding(module: str, tmp_path: Path) -> None:
    port = free_port()
    args = [module, "serve"] if module == "hive_mind" else [module]
    done = _refused_process([*args, "--host", "0.0.0.0", "--port", str(port)],
                            tmp_path / "data", port)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "HIVE_MIND_API_TOKEN" in done.stderr and "--insecure-no-auth" in done.stderr
    assert "Traceback" not in done.stderr
    assert "Uvicorn running" not in done.stdout + done.stderr
    assert not (tmp_path / "data").exists()  # no mind host was opened either


def test_insecure_no_auth_is_loud_in_json(tmp_path: Path) -> None:
    """The override is reported in ``--json``; the data dir is a file, so the process fails
    opening the minds — before it could bind 0.0.0.0 in a test."""
    port = free_port()
    blocker = tmp_path / "data"
    blocker.write_text("not a directory", encoding="utf-8")
    done = _refused_process(["hive_mind", "serve", "--host", "0.0.0.0", "--port", str(port),
                             "--insecure-no-auth", "--json"], blocker, port)
    assert done.returncode != 0
    report = json.loads(done.stdout)["serve"]
    assert report["host"] == "0.0.0.0" and "WITHOUT authentication" in report["warning"]


def test_insecure_no_auth_serves_and_logs_a_warning(
        data: Path, caplog: pytest.LogCaptureFixture) -> None:
    settings = server_settings(data, api_insecure_no_auth=True)
    with caplog.at_level(logging.WARNING, logger="hive_mind.api.app"), \
            running_server(settings, bind_host="0.0.0.0") as url, \
            httpx.Client(base_url=url, timeout=60) as client:
        assert client.get("/v1/stats").status_code == 200  # no token asked
        # no token, so no Host is trusted on the wildcard: rebinding is still refused
        refused(client.get("/v1/stats", headers={"Host": "attacker.example"}), 421,
                "invalid_host")
    assert any("WITHOUT authentication" in r.getMessage() for r in caplog.records)


# -- item 8: tokens an HTTP header can carry ----------------------------------------------------


@pytest.mark.parametrize("token", ["pässwort", "tøken-123", "with space", "tab\there", "日本"])
def test_token_must_be_printable_ascii(token: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Settings(api_token=SecretStr(token))
    assert "printable ASCII" in str(caught.value) and token not in str(caught.value)


def test_non_ascii_token_refused_at_start(tmp_path: Path) -> None:
    env = {**os.environ, "HIVE_MIND_DATA_DIR": str(tmp_path / "data"),
           "HIVE_MIND_API_TOKEN": "pässwort", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "hive_mind", "serve", "--port", "0"], cwd=ROOT,
                          env=env, text=True, capture_output=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "HIVE_MIND_API_TOKEN must be printable ASCII" in done.stderr
    assert "pässwort" not in done.stderr


def test_token_whitespace_is_trimmed_and_raw_bytes_compared(data: Path) -> None:
    settings = server_settings(data, api_token=f"  {TOKEN}\n")  # a secret file's newline
    with running_server(settings) as url, httpx.Client(base_url=url, timeout=60) as client:
        assert client.get("/v1/stats", headers=AUTH).status_code == 200
        refused(client.get("/v1/stats"), 401, "unauthorized")
        # non-ASCII bytes in the header: a clean 401, never a 500
        raw = {b"Authorization": f"Bearer {TOKEN}".encode() + "ä".encode()}
        refused(client.get("/v1/stats", headers=raw), 401, "unauthorized")
        latin = {b"Authorization": b"Bearer p\xe4sswort"}
        refused(client.get("/v1/stats", headers=latin), 401, "unauthorized")


# -- item 3: the Host/Origin guard ----------------------------------------------------------------


def test_rebinding_harvest_of_etc_passwd_is_refused(local: tuple[httpx.Client, int],
                                                    tmp_path: Path) -> None:
    client, port = local
    attack = {"source": "plaintext", "path": "/etc/passwd"}
    message = refused(client.post("/v1/harvest", json=attack,
                                  headers={"Host": "attacker.example"}), 421, "invalid_host")
    assert "HIVE_MIND_API_ALLOWED_HOSTS" in message
    refused(client.post("/v1/harvest", json=attack,
                        headers={"Host": f"attacker.example:{port}"}), 421, "invalid_host")
    refused(client.post("/v1/harvest", json=attack,
                        headers={"Origin": "http://attacker.example"}), 403, "forbidden_origin")
    refused(client.post("/v1/harvest", json=attack,
                        headers={"Host": "attacker.example", "Origin": "http://attacker.example"}),
            421, "invalid_host")
    assert frames(client) == 0
    assert client.get("/v1/harvest/sources").json()["count"] == 0
    hits = client.post("/v1/recall", json={"query": "root"}).json()["results"]
    assert hits == []

    # the legitimate request: our own Host (with and without port), our own origin, no origin
    notes = tmp_path / "notes.txt"
    notes.write_text("The Altair relay restarts at dawn.", encoding="utf-8")
    for headers in ({"Host": f"127.0.0.1:{port}", "Origin": f"http://127.0.0.1:{port}"},
                    {"Host": "localhost"}, {}):
        done = client.post("/v1/harvest", json={"source": "plaintext", "path": str(notes)},
                           headers=headers)
        assert done.status_code == 200, done.text
    hits = client.post("/v1/recall", json={"query": "Altair relay"}).json()["results"]
    assert any("Altair" in h["content"] for h in hits)


def test_cross_origin_multipart_uploads_are_refused(local: tuple[httpx.Client, int]) -> None:
    client, port = local
    evil = {"Origin": "http://evil.example"}
    upload = {"file": ("notes.txt", b"Plant: the admin password is hunter2.", "text/plain")}
    refused(client.post("/v1/ingest/upload", data={"type_hint": "plaintext"}, files=upload,
                        headers=evil), 403, "forbidden_origin")
    refused(client.post("/v1/harvest/upload", data={"source": "plaintext"}, files=upload,
                        headers=evil), 403, "forbidden_origin")
    # what a browser sends when a page cannot say (sandboxed iframe, file://): Origin null
    refused(client.post("/v1/ingest/upload", data={"type_hint": "plaintext"}, files=upload,
                        headers={"Origin": "null"}), 403, "forbidden_origin")
    refused(client.post("/v1/ingest/upload", data={"type_hint": "plaintext"}, files=upload,
                        headers={"Sec-Fetch-Site": "cross-site"}), 403, "forbidden_origin")
    assert frames(client) == 0

    mine = {"Origin": f"http://127.0.0.1:{port}", "Sec-Fetch-Site": "same-origin"}
    done = client.post("/v1/ingest/upload", data={"type_hint": "plaintext"}, files=upload,
                       headers=mine)
    assert done.status_code == 200, done.text
    assert frames(client) >= 1


def test_every_route_is_guarded_incl_health_and_mcp(local: tuple[httpx.Client, int]) -> None:
    client, port = local
    for path in ("/healthz", "/readyz", "/openapi.json", "/docs", "/v1/stats", "/nope"):
        refused(client.get(path, headers={"Host": "attacker.example"}), 421, "invalid_host")
        refused(client.get(path, headers={"Origin": "https://attacker.example"}), 403,
                "forbidden_origin")
    headers = {**MCP_HEADERS, "Host": "attacker.example"}
    refused(client.post("/mcp", json=MCP_INIT, headers=headers), 421, "invalid_host")
    headers = {**MCP_HEADERS, "Origin": "http://attacker.example"}
    refused(client.post("/mcp", json=MCP_INIT, headers=headers), 403, "forbidden_origin")
    # the SDK's own check would refuse "localhost" without a port; ours allows it, and only
    # ours decides
    for extra in ({}, {"Host": "localhost"}, {"Host": f"[::1]:{port}"},
                  {"Origin": f"http://localhost:{port}"}):
        answered = client.post("/mcp", json=MCP_INIT, headers={**MCP_HEADERS, **extra})
        assert answered.status_code == 200, (extra, answered.text)
        assert answered.json()["result"]["serverInfo"]
    assert client.get("/healthz").json() == {"status": "ok"}


def test_mcp_is_guarded_on_an_exposed_bind(data: Path) -> None:
    """The SDK protected /mcp only on an exact loopback bind; here it is a LAN address."""
    settings = server_settings(data, api_token=TOKEN)
    with running_server(settings, bind_host="10.0.0.5") as url, \
            httpx.Client(base_url=url, timeout=60, headers=AUTH) as client:
        for host in ("attacker.example", "10.0.0.6:8765"):
            refused(client.post("/mcp", json=MCP_INIT, headers={**MCP_HEADERS, "Host": host}),
                    421, "invalid_host")
        refused(client.post("/mcp", json=MCP_INIT,
                            headers={**MCP_HEADERS, "Origin": "http://evil.example"}),
                403, "forbidden_origin")
        for host in ("10.0.0.5:8765", f"127.0.0.1:{port_of(url)}"):
            answered = client.post("/mcp", json=MCP_INIT, headers={**MCP_HEADERS, "Host": host})
            assert answered.status_code == 200, answered.text


def test_guard_runs_before_auth_and_the_size_limit(data: Path) -> None:
    settings = server_settings(data, api_token=TOKEN, max_request_bytes=1024)
    with running_server(settings) as url, httpx.Client(base_url=url, timeout=60) as client:
        foreign = {"Host": "attacker.example"}
        refused(client.get("/v1/stats", headers=foreign), 421, "invalid_host")  # not 401
        refused(client.post("/v1/memories", content=b"x" * 4096,
                            headers={**foreign, **AUTH}), 421, "invalid_host")  # not 413
        refused(client.get("/v1/stats"), 401, "unauthorized")
        assert client.get("/v1/stats", headers=AUTH).status_code == 200


def test_wildcard_bind_with_token_takes_any_host_but_not_foreign_origins(data: Path) -> None:
    settings = server_settings(data, api_token=TOKEN)
    with running_server(settings, bind_host="0.0.0.0") as url, \
            httpx.Client(base_url=url, timeout=60) as client:
        # a container behind a service name / any address: auth is the rebinding defence
        for host in ("hive-mind:8765", "10.1.2.3:8765", "attacker.example"):
            assert client.get("/v1/stats", headers={**AUTH, "Host": host}).status_code == 200
            refused(client.get("/v1/stats", headers={"Host": host}), 401, "unauthorized")
        same_origin = {**AUTH, "Host": "10.1.2.3:8765", "Origin": "http://10.1.2.3:8765"}
        assert client.post("/v1/memories", json={"content": "same origin"},
                           headers=same_origin).status_code == 201
        cross = {**AUTH, "Host": "10.1.2.3:8765", "Origin": "http://evil.example"}
        refused(client.post("/v1/memories", json={"content": "planted"}, headers=cross), 403,
                "forbidden_origin")
        assert client.get("/v1/stats", headers=AUTH).json()["frames"] == 1


def test_configured_hosts_and_origins(data: Path) -> None:
    settings = server_settings(data, api_allowed_hosts="memory.example, [fd00::7]",
                               api_allowed_origins="https://app.example")
    with running_server(settings) as url, httpx.Client(base_url=url, timeout=60) as client:
        for host in ("memory.example", "MEMORY.example.:443", "[fd00::7]:8765"):
            assert client.get("/v1/stats", headers={"Host": host}).status_code == 200, host
        refused(client.get("/v1/stats", headers={"Host": "other.example"}), 421, "invalid_host")
        for origin in ("https://memory.example", "https://app.example"):
            ok = client.get("/v1/stats", headers={"Origin": origin,
                                                  "Sec-Fetch-Site": "same-site"})
            assert ok.status_code == 200, origin
        # a listed origin may be cross-site; an allowed host name alone may not
        listed = {"Origin": "https://app.example", "Sec-Fetch-Site": "cross-site"}
        assert client.get("/v1/stats", headers=listed).status_code == 200
        unlisted = {"Origin": "https://memory.example", "Sec-Fetch-Site": "cross-site"}
        refused(client.get("/v1/stats", headers=unlisted), 403, "forbidden_origin")
        for origin in ("https://app.example.evil", "ftp://memory.example", "https://app.example/x",
                       "memory.example"):
            refused(client.get("/v1/stats", headers={"Origin": origin}), 403, "forbidden_origin")
    anything = server_settings(data, api_allowed_hosts="*")
    with running_server(anything) as url, httpx.Client(base_url=url, timeout=60) as client:
        assert client.get("/v1/stats", headers={"Host": "whatever.example"}).status_code == 200
        refused(client.get("/v1/stats", headers={"Origin": "http://evil.example"}), 403,
                "forbidden_origin")


def test_remote_client_gets_the_guard_errors_as_exceptions() -> None:
    from hive_mind.api.codes import ForbiddenOriginError, InvalidHostError, exception_for

    assert isinstance(exception_for("invalid_host", "m", 421), InvalidHostError)
    assert isinstance(exception_for("forbidden_origin", "m", 403), ForbiddenOriginError)


HOST_NAMES: list[tuple[str, str | None]] = [
    ("127.0.0.1:8765", "127.0.0.1"), ("LOCALHOST", "localhost"), ("localhost.:80", "localhost"),
    ("[::1]:8765", "::1"), ("[::1]", "::1"), ("::1", "::1"), ("Memory.Example", "memory.example"),
    ("", None), ("evil.example@127.0.0.1", None), ("a b", None), ("host:port", None),
    ("[::1]x", None), ("[::1", None), ("127.0.0.1:", None), ("a..b", None), ("[evil]:80", None),
]


@pytest.mark.parametrize(("authority", "name"), HOST_NAMES)
def test_host_name_parsing(authority: str, name: str | None) -> None:
    assert host_name(authority) == name


POLICIES: list[tuple[dict[str, Any], str, list[str], list[str]]] = [
    ({}, "127.0.0.1", ["localhost:1", "127.0.0.1", "[::1]:2"], ["attacker.example", "10.0.0.5"]),
    ({}, "localhost", ["localhost", "127.0.0.1:9"], ["localhost.attacker.example"]),
    ({"api_token": TOKEN}, "10.0.0.5", ["10.0.0.5:8765", "localhost"], ["10.0.0.6"]),
    ({"api_token": TOKEN}, "0.0.0.0", ["anything.example", "10.0.0.6"], [""]),
    ({"api_insecure_no_auth": True}, "::", ["::1", "localhost"], ["10.0.0.6", "x.example"]),
    ({"api_insecure_no_auth": True, "api_allowed_hosts": "lan.example"}, "0.0.0.0",
     ["lan.example:8765"], ["x.example"]),
]


@pytest.mark.parametrize(("values", "bind", "allowed", "denied"), POLICIES)
def test_host_policy_from_bind_address(values: dict[str, Any], bind: str, allowed: list[str],
                                       denied: list[str]) -> None:
    policy = host_policy(Settings(**values), bind)
    assert all(policy.host_ok(h) for h in allowed), allowed
    assert not any(policy.host_ok(h) for h in denied), denied
    assert not policy.host_ok(None)


def test_every_deploy_file_requires_a_token() -> None:
    yaml = pytest.importorskip("yaml")
    deploy = ROOT / "deploy"
    compose = yaml.safe_load((deploy / "compose.yaml").read_text(encoding="utf-8"))
    host = compose["services"]["host"]
    assert "0.0.0.0" in host["command"]
    assert host["environment"]["HIVE_MIND_API_TOKEN"].startswith("${HIVE_MIND_API_TOKEN:?")
    docs = list(yaml.safe_load_all((deploy / "k8s" / "hive-mind.yaml").read_text("utf-8")))
    container = docs[0]["spec"]["template"]["spec"]["containers"][0]
    token = next(e for e in container["env"] if e["name"] == "HIVE_MIND_API_TOKEN")
    assert token["valueFrom"]["secretKeyRef"].get("optional") is False
    assert not any(e.get("name") == "HIVE_MIND_API_INSECURE_NO_AUTH" for e in container["env"])
    unit = (deploy / "hive-mind-serve.service").read_text(encoding="utf-8").splitlines()
    assert "EnvironmentFile=/etc/hive-mind/env" in unit  # no "-": a missing file fails the unit
    assert any(line.startswith("ExecStartPre=") and "HIVE_MIND_API_TOKEN" in line
               for line in unit)
    started = [host["command"], container["args"],
               [line for line in unit if line.startswith("ExecStart=")]]
    assert not any("--insecure-no-auth" in " ".join(args) for args in started)
