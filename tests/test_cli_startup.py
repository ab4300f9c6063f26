"""What a one-shot CLI command loads and does before it answers (issue #14: "a CLI that answers
in a second"). A fresh interpreter runs the entry point as the console script does and reports
its ``sys.modules``: ``recall`` and ``save`` with the test embedder load none of the server,
queue, MCP, model or harvest code, and a save beside another process writing the mind no vector
code at all; the command tree built is only the named command's group;
the startup pauses the collector and freezes what it built, and only in a real CLI process.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hive_mind.cli import command, main
from hive_mind.cli.app import GROUPS, invoked
from mind.storage.writer_locks import WriterLocks
from tests.procs import ROOT

# what an embedded recall or save must not import: servers, the Redis queue, MCP, the model
# runtime (the test embedder has none), harvest and ingest code, the other commands' modules
HEAVY = ("fastapi", "starlette", "uvicorn", "arq", "redis", "mcp", "torch",
         "sentence_transformers", "transformers", "hive_mind.server", "hive_mind.api",
         "hive_mind.mcp_server", "hive_mind.remote", "hive_mind.harvest", "workers.harvest",
         "workers.host_runtime", "workers.distributed", "workers.scheduler", "mind.harvest.fetch",
         "hive_mind.cli.ops", "hive_mind.cli.harvest")

PROBE = """
import gc, json, sys
from hive_mind.cli import main
code = main(sys.argv[1:], process=True)
sys.stderr.write("\\nPROBE " + json.dumps({"code": code, "modules": sorted(sys.modules),
                                           "frozen": gc.get_freeze_count(),
                                           "enabled": gc.isenabled()}) + "\\n")
"""


def probe(tmp_path: Path, *args: str) -> dict[str, Any]:
    """Run the CLI once in a fresh interpreter (embedded, test embedder): what it loaded."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HIVE_MIND_REDIS_URL", "HIVE_MIND_URL")}
    env.update(HIVE_MIND_DATA_DIR=str(tmp_path / "data"), HIVE_MIND_EMBEDDING_PROVIDER="test",
               HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    line = next(x for x in done.stderr.splitlines() if x.startswith("PROBE "))
    report: dict[str, Any] = json.loads(line.removeprefix("PROBE "))
    assert report["code"] == 0, done.stderr
    report["stdout"] = done.stdout
    return report


def loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return sorted({m for m in modules for n in names if m == n or m.startswith(n + ".")})


def test_save_then_recall_load_nothing_heavy(tmp_path: Path) -> None:
    saved = probe(tmp_path, "save", "The Q3 budget review moved to Thursday", "--json")
    assert json.loads(saved["stdout"])["created"] is True
    recalled = probe(tmp_path, "recall", "budget", "--json")
    results = json.loads(recalled["stdout"])
    assert [r["content"] for r in results] == ["The Q3 budget review moved to Thursday"]
    for report in (saved, recalled):
        assert loaded(report["modules"], HEAVY) == []
        assert "hive_mind.cli.memory" in report["modules"]  # the probe does see our modules


def test_a_save_beside_a_process_writing_the_mind_loads_no_vector_code(tmp_path: Path) -> None:
    """Another process keeps the mind's writer open (an import): the save's frame is indexed
    there (actors.handoff), so the CLI loads no embedder, no search, nor numpy."""
    (tmp_path / "data").mkdir(mode=0o700)
    keeper = WriterLocks(tmp_path / "data" / "personal.mind")  # that process's writer
    try:
        saved = probe(tmp_path, "save", "handed to the importing process", "--json")
    finally:
        keeper.close()
    assert json.loads(saved["stdout"])["created"] is True
    assert loaded(saved["modules"], (
        "numpy", "onnxruntime", "tokenizers", "mind.embeddings.inprocess",
        "mind.embeddings.testing", "mind.retrieval.search", "mind.retrieval.keyword_index",
        "mind.retrieval.vector_index", "workers.cognify")) == []


def test_recall_does_not_load_http_client_nor_rich(tmp_path: Path) -> None:
    """Only human output draws with rich (imported by the drawing helpers)."""
    probe(tmp_path, "save", "a note", "--json")
    modules = probe(tmp_path, "recall", "note", "--json")["modules"]
    assert loaded(modules, ("httpx", "rich")) == []


def test_cli_process_freezes_its_startup_and_keeps_collecting(tmp_path: Path) -> None:
    report = probe(tmp_path, "recall", "anything", "--json")
    assert report["frozen"] > 10_000  # the modules, classes and schemas the startup built
    assert report["enabled"] is True  # collection resumed for the command's own garbage


def test_a_call_of_main_in_another_process_leaves_the_collector_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HIVE_MIND_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HIVE_MIND_EMBEDDING_PROVIDER", "test")
    frozen = gc.get_freeze_count()
    assert main(["recall", "anything", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert gc.get_freeze_count() == frozen
    assert gc.isenabled()


@pytest.mark.parametrize(("args", "named"), [
    (["recall", "budget", "--json"], "recall"),
    (["save", "--help"], "save"),
    (["--data-dir", "recall", "save", "x"], "save"),  # an option's value is not the command
    (["--data-dir=/tmp/x", "--debug", "status"], "status"),
    (["--log-level", "DEBUG", "--embedding-provider", "test", "harvest", "import"], "harvest"),
    (["entities", "search", "x"], "entities"),
    ([], None),
    (["--debug"], None),
    (["-h", "recall"], None),  # help of the whole tree
    (["--help", "recall"], None),
    (["--", "recall"], None),
    (["recal"], None),  # not a command: click reports it against the whole tree
])
def test_the_command_a_line_names(args: list[str], named: str | None) -> None:
    assert invoked(args) == named


def test_a_command_line_builds_only_its_group() -> None:
    whole: Any = command()
    every = [name for names, _ in GROUPS for name in names]
    assert sorted(whole.list_commands(None)) == sorted(every)
    part: Any = command(["--debug", "recall", "budget"])
    assert list(part.list_commands(None)) == ["save", "recall", "ingest", "session"]
    assert list(command(["entities", "search", "x"]).list_commands(None)) == [  # type: ignore[attr-defined]
        "entities"]
    assert len(list(command(["recal"]).list_commands(None))) == len(every)  # type: ignore[attr-defined]


def test_help_and_errors_still_see_the_whole_tree(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_MIND_DATA_DIR", str(tmp_path / "data"))
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for names, _ in GROUPS for name in names)
    assert main(["recal", "budget"]) == 2
    assert "No such command" in capsys.readouterr().err
    assert main(["recall", "--help"]) == 0
    assert "--profile" in capsys.readouterr().out
