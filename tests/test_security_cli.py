"""Terminal escapes from stored or given text never reach the terminal raw (issue #12, item
10): human output and error lines show them escaped; ``--json`` keeps the text exact."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.procs import ROOT

ESC_TEXT = "Bob rides the \x1b[31mLisbon\x1b[0m tram \x07 daily \u202egnp.exe"


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "HIVE_MIND_DATA_DIR": str(data), "HIVE_MIND_EMBEDDING_PROVIDER": "test",
           "HF_HUB_OFFLINE": "1"}
    for key in ("HIVE_MIND_REDIS_URL", "HIVE_MIND_URL"):
        env.pop(key, None)
    return subprocess.run([sys.executable, "-m", "hive_mind", *args], cwd=ROOT, env=env,
                          capture_output=True, timeout=120)


def _raw_controls(output: bytes) -> list[str]:
    text = output.decode("utf-8")
    return [c for c in ("\x1b", "\x07", "\u202e") if c in text]


def test_recall_shows_stored_escapes_escaped_and_json_exact(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert _cli(data, "save", ESC_TEXT, "--json").returncode == 0
    human = _cli(data, "recall", "Lisbon tram")
    assert human.returncode == 0, human.stderr
    assert _raw_controls(human.stdout) == []
    assert b"\\x1b[31mLisbon" in human.stdout
    exact = _cli(data, "recall", "Lisbon tram", "--json")
    results = json.loads(exact.stdout)
    assert results[0]["content"] == ESC_TEXT


def test_error_lines_escape_what_the_caller_gave(tmp_path: Path) -> None:
    result = _cli(tmp_path / "data", "harvest", "import", "chatgpt",
                  str(tmp_path / "\x1b]0;pwned\x07\x1b[31mexport.json"))
    assert result.returncode != 0
    assert result.stderr.startswith(b"hive-mind: error: ")
    assert _raw_controls(result.stderr) == [], result.stderr
    assert b"\\x1b]0;pwned" in result.stderr
