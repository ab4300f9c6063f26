"""The ``hive-mind`` CLI: every command in embedded mode (in-process through ``main``), a few
real subprocesses for exit codes and the two-process save → recall, and the Redis-backed
``status`` / ``worker --check``. Bad input is one line on stderr, a non-zero exit, nothing written.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hive_mind.cli import main
from tests.conftest import REDIS_URL
from tests.explain_checks import check_explain
from tests.procs import ROOT, run_cli

TOKEN = "super-secret-token-123"


@pytest.fixture(autouse=True)
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    values = {"HIVE_MIND_DATA_DIR": str(tmp_path / "data"), "HIVE_MIND_EMBEDDING_PROVIDER": "test",
              "HF_HUB_OFFLINE": "1"}
    for key in ("HIVE_MIND_REDIS_URL", "HIVE_MIND_URL", "HIVE_MIND_API_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    yield values


class Run:
    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys

    def __call__(self, *args: str, code: int = 0) -> tuple[str, str]:
        self.capsys.readouterr()
        rc = main(list(args))
        out, err = self.capsys.readouterr()
        assert rc == code, f"exit {rc} != {code}\nstdout: {out}\nstderr: {err}"
        return out, err

    def json(self, *args: str) -> Any:
        out, _ = self(*args, "--json")
        return json.loads(out)

    def fails(self, *args: str, code: int = 2) -> str:
        out, err = self(*args, code=code)
        assert out == ""
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("hive-mind: error: "), err
        assert "Traceback" not in err
        return lines[0]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Run:
    return Run(capsys)


def frames_in(data_dir: Path) -> int:
    from mind.mind import Mind

    async def count(path: Path) -> int:
        async with await Mind.open(path, readonly=True) as mind:
            return await mind.frames.count()

    files = [data_dir / "personal.mind", *sorted(data_dir.glob("workspaces/*/*.mind"))]
    return sum(asyncio.run(count(f)) for f in files if f.exists())


# -- save / recall ----------------------------------------------------------------------------

def test_save_then_recall_json(cli: Run) -> None:
    saved = cli.json("save", "Alice moved to Lisbon to work on the Apollo project",
                     "--importance", "important")
    assert saved["id"] == 1 and saved["created"] is True and saved["workspace"] == "personal"
    assert saved["importance"] == "important" and saved["source"] == "user_stated"
    cli.json("save", "The cat sleeps on the warm windowsill")
    results = cli.json("recall", "Lisbon Apollo", "--limit", "5")
    assert isinstance(results, list) and results
    top = results[0]
    for key in ("id", "frame_type", "gop_id", "t", "content", "importance", "source",
                "created_at", "metadata", "score", "rrf", "relevance", "final", "from"):
        assert key in top
    assert top["content"].startswith("Alice moved") and top["from"] == "personal"
    assert all(0.0 <= r["score"] <= 1.0 for r in results)
    out, _ = cli("recall", "Lisbon")
    shown = cli.json("recall", "Lisbon")[0]["absolute_relevance"]
    assert "Alice moved" in out and "absolute" in out and f"{shown:.3f}" in out
    assert 0.0 <= top["absolute_relevance"] <= 1.0
    kept = cli.json("recall", "Alice moved to Lisbon Apollo project", "--min-relevance", "0.5")
    assert kept and kept[0]["content"].startswith("Alice moved")
    assert cli.json("recall", "quantum chromodynamics lattice gauge",
                    "--min-relevance", "0.5") == []
    assert cli.json("save", "Alice moved to Lisbon to work on the Apollo project")["created"] is False


def test_recall_scopes_and_fts_syntax(cli: Run) -> None:
    cli("workspace", "create", "Apollo", "--id", "apollo")
    cli("save", "personal note about rockets")
    cli("save", "workspace note about rockets", "-w", "apollo")
    assert {r["from"] for r in cli.json("recall", "rockets", "--scope", "all")} == \
        {"personal", "workspace:apollo"}
    assert [r["from"] for r in cli.json("recall", "rockets", "-w", "apollo")] == \
        ["workspace:apollo"]
    assert [r["from"] for r in cli.json("recall", "rockets", "-w", "apollo", "--scope",
                                        "current")] == ["workspace:apollo"]
    assert [r["from"] for r in cli.json("recall", "rockets")] == ["personal"]
    for query in ('"rockets AND (note OR', "NEAR(rockets note, 2) *", "rockets -note ^x: col:y",
                  "'; DROP TABLE memory_frames; --"):
        assert isinstance(cli.json("recall", query), list)
    out, _ = cli("recall", "--json", "--", "-rockets")  # a leading dash needs `--`
    assert isinstance(json.loads(out), list)
    out, _ = cli("recall", "nothing-matches-zzzqqq", "--since", "2100-01-01T00:00:00Z")
    assert "No memories found" in out


def test_recall_explain(cli: Run) -> None:
    apollo = cli.json("save", "Alice moved to Lisbon to work on the Apollo project")["id"]
    cat = cli.json("save", "The cat sleeps on the warm windowsill")["id"]
    cli("save", "Bob rides the \x1b[31mLisbon\x1b[0m tram \x07 daily")
    plain = cli.json("recall", "Lisbon Apollo")
    assert plain and all("explain" not in r for r in plain)

    results = cli.json("recall", "Lisbon Apollo", "--explain")
    assert [r["id"] for r in results] == [r["id"] for r in plain]
    by_id = {r["id"]: r for r in results}
    top = check_explain(by_id[apollo], keyword=True, vector=True)
    assert top["keyword_rank"] == 1 and results[0]["id"] == apollo
    assert check_explain(by_id[cat], keyword=False, vector=True)["keyword_rank"] is None
    for r in results:
        check_explain(r)

    keyword_only = cli.json("recall", "Lisbon Apollo", "--explain", "--lanes", "keyword")
    assert apollo in {r["id"] for r in keyword_only} and cat not in {r["id"] for r in keyword_only}
    for r in keyword_only:
        assert check_explain(r, keyword=True, vector=False)["similarity"] is None
    vector_only = cli.json("recall", "Lisbon Apollo", "--explain", "--lanes", "vector")
    for r in vector_only:
        check_explain(r, keyword=False, vector=True)
    assert "lanes" in cli.fails("recall", "x", "--lanes", "both")

    out, _ = cli("recall", "Lisbon", "--explain")
    for column in ("absolute", "kw#", "vec#", "fused", "session", "neighbour", "match",
                   "relevance"):
        assert column in out
    assert "Alice moved" in out and "final = fused × match × relevance" in out
    assert "\\x1b[31mLisbon" in out  # stored control characters are shown escaped, not raw
    for raw in ("\x1b", "\x07"):
        assert raw not in out
        assert raw not in cli("recall", "Lisbon tram")[0]


def test_two_processes_save_then_recall_by_vector(env: dict[str, str]) -> None:
    saved = run_cli("save", "--json", "Quarterly revenue grew in the Nordics", env=env)
    assert saved.returncode == 0, saved.stderr
    assert json.loads(saved.stdout)["id"] == 1
    status = run_cli("status", "--json", "--no-probe", env=env)
    mind = json.loads(status.stdout)["minds"][0]
    assert mind["pending_index"] == 0 and mind["vectors"] == 1  # indexed before exit
    found = run_cli("recall", "--json", "revenue Nordics", env=env)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)[0]["content"] == "Quarterly revenue grew in the Nordics"


# -- knowledge graph, identity, awareness ---------------------------------------------------

def test_entities_search_save_relate(cli: Run) -> None:
    alice = cli.json("entities", "save", "person", "Alice", "-p", "role=engineer")
    apollo = cli.json("entities", "save", "project", "Apollo", "--properties", '{"year": 2024}')
    assert alice["name"] == "Alice" and alice["properties"]["role"] == "engineer"
    relation = cli.json("entities", "relate", str(alice["id"]), str(apollo["id"]), "works_on",
                        "--confidence", "0.9")
    assert relation.get("relation_type", relation.get("type")) == "works_on"
    assert relation["confidence"] == 0.9
    found = cli.json("entities", "search", "Alice", "--type", "person")
    assert found[0]["id"] == alice["id"]
    assert found[0]["relations"]["outgoing"][0]["target_id"] == apollo["id"]
    out, _ = cli("entities", "search", "Apollo")
    assert "Apollo" in out
    cli.fails("entities", "save", "spaceship", "X")
    cli.fails("entities", "save", "person", "Bob", "-p", "no-equals-sign")
    cli.fails("entities", "relate", "1", "2", "r", "--confidence", "1.5")


def test_identity_get_set(cli: Run) -> None:
    assert cli.json("identity", "get")["configured"] is False
    cli.json("identity", "set", "--name", "Ada", "--role", "researcher")
    identity = cli.json("identity", "get")
    assert identity["configured"] is True and identity["name"] == "Ada"
    assert identity["role"] == "researcher"
    out, _ = cli("identity", "get")
    assert "Ada" in out
    cli.fails("identity", "set")


def test_awareness_get_set_clear(cli: Run) -> None:
    item = cli.json("awareness", "set", "task", "Write the CLI docs", "--priority", "5")
    cli.json("awareness", "set", "flag", "Redis is flaky", "--ttl-minutes", "30")
    items = cli.json("awareness", "get")
    assert {i["content"] for i in items} == {"Write the CLI docs", "Redis is flaky"}
    assert [i["category"] for i in cli.json("awareness", "get", "-c", "flag")] == ["flag"]
    cli.json("awareness", "clear", "--id", str(item["id"]))
    cli.json("awareness", "clear", "--category", "flag")
    assert cli.json("awareness", "get") == []
    out, _ = cli("awareness", "get")
    assert "No active awareness items" in out
    cli.fails("awareness", "clear")
    cli.fails("awareness", "clear", "--id", "999")
    cli.fails("awareness", "set", "mood", "happy")


# -- workspaces and maintenance -------------------------------------------------------------

def test_workspace_lifecycle(cli: Run, tmp_path: Path) -> None:
    created = cli.json("workspace", "create", "Project Apollo", "--group", "space")
    assert created["id"] == "project-apollo" and created["group"] == "space"
    cli.fails("workspace", "create", "Again", "--id", "project-apollo")  # conflict
    listed = cli.json("workspace", "list")
    assert [w["id"] for w in listed["workspaces"]] == ["project-apollo"]
    assert cli.json("workspace", "create", "Project Apollo")["id"] == "project-apollo-2"
    cli("workspace", "delete", "project-apollo-2", "--yes")
    out, _ = cli("workspace", "list")
    assert "project-apollo" in out
    assert cli.json("workspace", "update", "project-apollo", "--icon", "R")["icon"] == "R"
    assert cli.json("workspace", "get", "project-apollo")["frames"] == 0
    assert cli.json("workspace", "default", "project-apollo")["default_workspace"] == \
        "project-apollo"
    assert cli.json("workspace", "default")["default_workspace"] == "project-apollo"
    assert cli.json("workspace", "default", "--clear")["default_workspace"] is None
    cli.fails("workspace", "delete", "project-apollo")  # not interactive: needs --yes
    assert cli.json("workspace", "delete", "project-apollo", "--yes") == \
        {"deleted": "project-apollo"}
    assert cli.json("workspace", "list")["workspaces"] == []
    assert not (tmp_path / "data" / "workspaces" / "project-apollo").exists()
    cli.fails("workspace", "delete", "project-apollo", "--yes")


@pytest.mark.parametrize("kind", ["compact", "reconcile", "reembed", "dedupe"])
def test_maintenance(cli: Run, kind: str) -> None:
    cli("workspace", "create", "Ops", "--id", "ops")
    cli("save", "something to maintain", "-w", "ops")
    one = cli.json("maintenance", kind, "--workspace", "ops")
    assert one["action"] == kind and list(one["minds"]) == ["ops"]
    every = cli.json("maintenance", kind, "--all")
    assert len(every["minds"]) == 2
    personal = cli.json("maintenance", kind)
    assert len(personal["minds"]) == 1
    out, _ = cli("maintenance", kind, "--all")
    assert kind in out
    cli.fails("maintenance", kind, "--all", "--workspace", "ops")
    cli.fails("maintenance", kind, "--workspace", "nope")


# -- status, ingest, harvest ----------------------------------------------------------------

def test_status_json_and_masked_secrets(cli: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_MIND_API_TOKEN", TOKEN)
    cli("save", "one frame for status")
    report = cli.json("status")
    assert {"embedder", "queue", "minds", "config"} <= set(report)
    assert {"provider", "model", "dimensions", "degraded"} <= set(report["embedder"])
    assert report["embedder"]["provider"] == "test" and report["embedder"]["degraded"] is False
    assert {"depth", "in_progress", "dead_letters"} <= set(report["queue"])
    assert report["minds"][0]["id"] == "personal" and report["minds"][0]["frames"] == 1
    assert report["minds"][0]["pending_index"] == 0
    assert report["config"]["api_token"] == "***"
    out, _ = cli("status")
    assert TOKEN not in out and TOKEN not in json.dumps(report)
    assert "pending_index" in out and "dead_letters" in out and "test" in out


def test_status_renders_a_served_process_memory_indexes() -> None:
    """``--url`` status shows the server's in-memory indexes, one row a mind."""
    from rich.console import Console

    from hive_mind.cli.ops import render_status

    console = Console(record=True, width=200)
    render_status(console, {"mode": "embedded", "memory_indexes": {"personal": {
        "vector": {"frames": 1_000_000, "chunks": 0, "bytes": 2_338_000_000,
                   "scan": "quantized", "blocks_4bit": 30},
        "keyword": {"state": "building", "frames": 0, "bytes": 0, "error": None}}}})
    out = console.export_text()
    assert "In-memory indexes" in out and "1000000" in out.replace(",", "")
    assert "quantized" in out and "building" in out and "2,229.7" in out


def test_status_shows_the_encoder_backend(cli: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_MIND_EMBEDDING_PROVIDER", "inprocess")
    monkeypatch.setenv("HIVE_MIND_EMBEDDING_BACKEND", "onnx-int8")
    assert cli.json("status", "--no-probe")["embedder"]["backend"] == "onnx-int8"
    out, _ = cli("status", "--no-probe")
    assert "onnx-int8" in out
    monkeypatch.setenv("HIVE_MIND_EMBEDDING_BACKEND", "tensorflow")
    cli.fails("status", "--no-probe")  # not a backend: a clear configuration error


def test_ingest_text(cli: Run) -> None:
    if importlib.util.find_spec("hive_mind.harvest") is None:
        pytest.skip("hive_mind.harvest not available yet")
    text = "# Launch notes\n\nThe rocket launch moved to Friday.\n\n## Crew\n\nAda and Bob fly.\n"
    summary = cli.json("ingest", text, "--tag", "launch")
    assert summary.get("frames_created", 0) >= 1
    assert cli.json("recall", "rocket launch Friday")
    cli.fails("ingest", "   ")


def test_harvest_import_universal_jsonl(cli: Run, tmp_path: Path) -> None:
    if importlib.util.find_spec("hive_mind.harvest") is None:
        pytest.skip("hive_mind.harvest not available yet")
    export = tmp_path / "chat.jsonl"
    lines = [{"conversation_id": "c1", "message_id": f"m{i}", "speaker": "alice" if i % 2 else
              "bot", "role": "user" if i % 2 else "assistant", "title": "Trip planning",
              "text": f"message {i} about the trip to Kyoto", "timestamp":
              f"2024-03-0{i + 1}T10:00:00Z"} for i in range(4)]
    export.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    summary = cli.json("harvest", "import", "universal", str(export), "--progress")
    assert summary["frames_created"] == 4 and summary["pending_index"] == 0
    again = cli.json("harvest", "import", "universal", str(export))
    assert again["frames_created"] == 0  # idempotent
    hits = cli.json("recall", "Kyoto trip", "--limit", "10")
    assert len(hits) == 4 and hits[0]["metadata"].get("conversation_id") == "c1"
    sources = cli.json("harvest", "sources")
    assert "universal" in sources["available"]
    assert [s["source"] for s in sources["registered"]] == ["universal"]
    out, _ = cli("harvest", "import", "universal", str(export))
    assert "frames_created" in out
    cli.fails("harvest", "import", "nowhere-format", str(export))
    cli.fails("harvest", "import", "universal", str(tmp_path / "missing.jsonl"))


def test_harvest_exports_nothing_importable_or_damaged_fail(cli: Run) -> None:
    """A Takeout of activity markers only and a zip cut off mid-download: one line on
    stderr, a non-zero exit, nothing recorded (so a second run fails the same way instead of
    saying unchanged); the HTML My Activity page of the same product imports."""
    data = ROOT / "tests" / "data" / "harvest"
    for _ in range(2):
        line = cli.fails("harvest", "import", "auto",
                         str(data / "gemini_de" / "markers_only.json"))
        assert line.endswith("2 Gemini Apps activity records and not one prompt or answer "
                             "among them: nothing to import")
    line = cli.fails("harvest", "import", "auto",
                     str(data / "damaged" / "chatgpt-export-truncated.zip"))
    assert line.endswith("the archive is damaged (truncated at byte 1,000, before the zip's "
                         "directory): download it again")
    assert cli.json("harvest", "sources")["registered"] == []
    page = cli.json("harvest", "import", "auto", str(data / "gemini_html" / "MyActivity.html"))
    assert (page["source"], page["items"], page["frames_created"]) == ("gemini", 3, 5)


# -- bad input ------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["save", "text", "-w", "nope"],
    ["save", "text", "-w", "../x"],
    ["save", "text", "-w", "/abs"],
    ["save", "text", "-w", "a\x00b"],
    ["save", "text", "--importance", "urgent"],
    ["save", ""],
    ["save", "   \n  "],
    ["recall", "x", "--scope", "nowhere"],
    ["recall", "x", "--scope", "workspace"],
    ["recall", "x", "-w", "../etc"],
    ["recall", "x", "--limit", "0"],
    ["recall", "x", "--since", "yesterday"],
    ["recall", "x", "--profile", "fastest"],
    ["identity", "get", "-w", "../../x"],
    ["workspace", "create", "X", "--id", "../evil"],
    ["workspace", "get", "nope"],
    ["entities", "search", "x", "-w", "/abs"],
    ["no-such-command"],
    ["save"],
    ["save", "x", "--no-such-option"],
])
def test_bad_input_is_one_line_and_writes_nothing(cli: Run, args: list[str],
                                                  tmp_path: Path) -> None:
    cli.fails(*args, code=2)
    data = tmp_path / "data"
    assert not (tmp_path / "x").exists() and not (tmp_path / "evil").exists()
    assert not list((data / "workspaces").glob("*")) if (data / "workspaces").exists() else True
    if data.exists():
        assert frames_in(data) == 0


def test_runtime_failures_exit_1(cli: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_MIND_REDIS_URL", "redis://127.0.0.1:1/0")
    line = cli.fails("save", "needs redis", code=1)
    assert "Redis" in line or "redis" in line
    monkeypatch.delenv("HIVE_MIND_REDIS_URL")
    monkeypatch.setenv("HIVE_MIND_BATCHER_MAX_ITEMS", "zero")
    assert "HIVE_MIND_BATCHER_MAX_ITEMS" in cli.fails("status", code=2)


def test_help_everywhere(cli: Run) -> None:
    out, _ = cli("--help")
    assert "recall" in out and "maintenance" in out
    for group in ("harvest", "entities", "identity", "awareness", "workspace", "maintenance"):
        out, _ = cli(group, "--help")
        assert "--help" in out
    out, _ = cli("recall", "--help")
    assert "--scope" in out and "--json" in out


def test_subprocess_exit_codes_and_clean_errors(env: dict[str, str]) -> None:
    bad = run_cli("recall", "x", "--scope", "nowhere", env=env)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.startswith("hive-mind: error: ") and len(bad.stderr.splitlines()) == 1
    unknown = run_cli("save", "x", "--workspace", "ghost", env=env)
    assert unknown.returncode == 2 and "ghost" in unknown.stderr
    assert "create it with `hive-mind workspace create ghost`" in unknown.stderr
    assert "Traceback" not in unknown.stderr and len(unknown.stderr.splitlines()) == 1
    ok = run_cli("workspace", "list", "--json", env=env)
    assert ok.returncode == 0 and json.loads(ok.stdout)["workspaces"] == []


# -- against Redis --------------------------------------------------------------------------

@pytest.fixture
def redis_db() -> Iterator[str]:
    from workers.queue import connect

    async def flush() -> None:
        pool = await connect(REDIS_URL)
        try:
            await pool.flushdb()
        finally:
            await pool.aclose()

    try:
        asyncio.run(flush())
    except Exception as exc:
        pytest.skip(f"no Redis at {REDIS_URL}: {exc}")
    yield REDIS_URL
    asyncio.run(flush())


def test_status_against_redis(cli: Run, redis_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_MIND_REDIS_URL", redis_db)
    report = cli.json("status", "--no-probe")
    assert report["mode"] == "distributed"
    assert report["queue"]["depth"] == 0 and report["queue"]["dead_letters"] == 0
    assert {"in_progress", "queues", "dead_letters_by_mind"} <= set(report["queue"])
    out, _ = cli("--redis-url", redis_db, "status", "--no-probe")
    assert "distributed" in out


def test_worker_check(cli: Run, redis_db: str) -> None:
    out, _ = cli("--redis-url", redis_db, "worker", "--check")
    assert out.startswith("hive-mind worker: ok") and len(out.splitlines()) == 1
    report = cli.json("--redis-url", redis_db, "worker", "--check")
    assert report["ok"] is True and report["embedder"]["provider"] == "test"
    line = cli.fails("--redis-url", "redis://127.0.0.1:1/0", "worker", "--check", code=1)
    assert "127.0.0.1:1" in line
    cli.fails("worker", "--check", code=1)  # no Redis configured


def test_worker_check_subprocess_closed_port(env: dict[str, str]) -> None:
    done = run_cli("--redis-url", "redis://127.0.0.1:1/0", "worker", "--check", env=env)
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


# -- client mode ----------------------------------------------------------------------------

def test_client_mode_against_a_running_serve(env: dict[str, str], tmp_path: Path) -> None:
    import socket
    import time

    from tests.procs import spawn, stop

    if importlib.util.find_spec("hive_mind.server") is None:
        pytest.skip("hive_mind.server not available yet")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = spawn(["serve", "--port", str(port)], env, tmp_path / "serve.log")
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            probe = run_cli("--url", url, "workspace", "list", "--json", env=env)
            if probe.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert probe.returncode == 0, probe.stderr + (tmp_path / "serve.log").read_text()
        saved = run_cli("--url", url, "save", "--json", "remote memory", env=env)
        assert saved.returncode == 0 and json.loads(saved.stdout)["id"] == 1
        found = run_cli("--url", url, "recall", "--json", "remote memory", env=env)
        assert json.loads(found.stdout)[0]["from"] == "personal"
        ghost = run_cli("--url", url, "save", "x", "-w", "ghost", env=env)
        assert ghost.returncode == 2 and len(ghost.stderr.splitlines()) == 1
        assert "hive-mind workspace create ghost" in ghost.stderr
    finally:
        stop(server)
    down = run_cli("--url", url, "status", env=env)
    assert down.returncode == 1 and down.stderr.startswith("hive-mind: error: ")
