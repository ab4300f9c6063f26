"""What a new user meets at a terminal: the one-time model preparation is announced, the
harvest sources table keeps timestamps whole."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest

from hive_mind.cli import main
from mind.embeddings.onnx_export import PREPARING
from tests.procs import ROOT, run_with_terminal


def local_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A fresh data dir in embedded mode, whatever the caller's environment says."""
    env = {"HIVE_MIND_DATA_DIR": str(tmp_path / "data"), "HIVE_MIND_REDIS_URL": "",
           "HIVE_MIND_URL": "", "HIVE_MIND_API_TOKEN": ""}
    return {**env, **extra}


@pytest.mark.slow  # exports the real model into a fresh cache (~20 s)
@pytest.mark.skipif(not os.path.exists("/dev/ptmx"), reason="needs pseudo-terminals")
def test_the_first_command_says_the_model_is_prepared_once(tmp_path: Path) -> None:
    env = local_env(tmp_path, HIVE_MIND_EMBEDDING_CACHE_DIR=str(tmp_path / "models"),
                    HIVE_MIND_EMBEDDING_PROVIDER="inprocess")
    code, out, terminal = run_with_terminal(["save", "Biscuit is a beagle mix"], env)
    assert code == 0, terminal
    assert PREPARING in terminal and terminal.count(PREPARING) == 1
    code, out, terminal = run_with_terminal(["recall", "which breed is biscuit", "--json"],
                                            env)
    assert code == 0, terminal
    assert "beagle" in out and PREPARING not in terminal


def test_harvest_sources_keeps_timestamps_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    for key, value in local_env(tmp_path, HIVE_MIND_EMBEDDING_PROVIDER="test",
                                COLUMNS="80").items():
        monkeypatch.setenv(key, value)
    assert main(["harvest", "import", "chatgpt", str(ROOT / "examples" / "chatgpt-export"),
                 "--no-progress", "--json"]) == 0
    capsys.readouterr()
    assert main(["harvest", "sources"]) == 0
    table = capsys.readouterr().out
    assert max(len(line) for line in table.splitlines()) <= 80
    assert len(re.findall(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z", table)) == 1, table


def test_table_columns_of_timestamps_never_wrap() -> None:
    from rich.console import Console

    from hive_mind.cli.common import table

    stamp = "2026-03-05T14:02:09.123Z"
    rows = [["a" * 50, stamp, "b" * 60], ["c", None, "d"]]
    console = Console(width=72, record=True, file=io.StringIO())
    console.print(table("t", ["long", "when", "other"], rows))
    assert stamp in console.export_text()
