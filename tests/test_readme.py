"""README stays true to the code: the two commands come first, it stays short, its links lead
to files that exist, the make targets it describes do what it says (the Makefile), and its CLI
tour runs as written."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.procs import ROOT, free_port

README = (ROOT / "README.md").read_text(encoding="utf-8")
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
CLAUDE_CODE_TREE = ROOT / "tests" / "data" / "harvest" / "claude_code" / "dot-claude"
DOCS = ("architecture", "configuration", "cli", "http", "mcp", "operations", "performance",
        "security")


def test_readme_starts_with_the_two_commands() -> None:
    block = README.split("```", 2)[1]
    commands = [line.split()[0:2] for line in block.strip().splitlines()]
    assert commands == [["make", "run"], ["make", "test"]]


def test_readme_is_short_and_links_to_the_docs() -> None:
    assert len(README.splitlines()) <= 160
    links = re.findall(r"\]\(([^)#\s]+)\)", README)
    assert [link for link in links if not (ROOT / link).exists()] == []
    assert [d for d in DOCS if f"docs/{d}.md" not in links] == []


def _recipe(target: str) -> str:
    match = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n?)*)", MAKEFILE, re.M)
    assert match, f"no make target {target}"
    return match.group(1)


def test_the_make_targets_it_describes_do_what_it_says() -> None:
    rows = re.findall(r"^\| `make ([\w-]+)` \| (.+) \|$", README, re.M)
    assert {"run", "test", "test-fast", "lint", "bench"} <= {target for target, _ in rows}
    for target, says in rows:
        recipe = _recipe(target)
        named = set(re.findall(r"\b(ruff|mypy|pytest)\b", recipe))
        named |= set(re.findall(r"-m (bench(?:\.\w+)+)", recipe))
        assert [tool for tool in named if tool not in says] == [], target


def tour_block(heading: str, language: str) -> str:
    """The README tour's code block under ``### heading``."""
    section = README.split(f"### {heading}\n", 1)[1]
    return section.split(f"```{language}\n", 1)[1].split("```", 1)[0]


def tour_env(home: Path) -> dict[str, str]:
    """A fresh home and no hive-mind settings of the caller's (the test embedder)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_MIND_")
           or k == "HIVE_MIND_EMBEDDING_CACHE_DIR"}
    env.update(HOME=str(home), HIVE_MIND_EMBEDDING_PROVIDER="test", COLUMNS="200")
    return env


def run_shell(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``script`` in bash, stopping at the first failing command (traced on stderr); jobs it
    started in the background are stopped when it ends."""
    prologue = ("set -eo pipefail -x\n"
                "trap 's=$?; set +e; kill $(jobs -p) 2>/dev/null; wait; exit $s' EXIT\n")
    return subprocess.run(["bash", "-c", prologue + script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_cli_tour_runs_in_order_on_a_fresh_data_dir(tmp_path: Path) -> None:
    """Every command of the tour, as written and in its order, in one shell: a fresh home (the
    tour's data dir is ~/.hive-mind) holding the files it names — the bundled ChatGPT export as
    ~/Downloads/chatgpt-export.zip, a Claude Code tree as ~/.claude, notes.md here."""
    if not (Path(sys.prefix) / "bin" / "activate").exists():
        pytest.skip("the tests do not run in a virtual environment to activate")
    if shutil.which("jq") is None:
        pytest.skip("the tour pipes into jq, which is not installed")
    home, here = tmp_path / "home", tmp_path / "here"
    (home / "Downloads").mkdir(parents=True)
    here.mkdir()
    with zipfile.ZipFile(home / "Downloads" / "chatgpt-export.zip", "w") as archive:
        archive.write(ROOT / "examples" / "chatgpt-export" / "conversations.json",
                      "conversations.json")
    shutil.copytree(CLAUDE_CODE_TREE, home / ".claude")
    (here / "notes.md").write_text("# Tidewatch notes\n\nThe ingest job runs at 02:00 UTC.\n",
                                   encoding="utf-8")
    (here / ".venv").symlink_to(sys.prefix)  # what `source .venv/bin/activate` finds
    run = run_shell(tour_block("CLI", "bash"), here, tour_env(home))
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}"
    assert "Tidewatch" in run.stdout and "acme-website" in run.stdout
    assert (home / ".hive-mind" / "workspaces" / "acme-website" / "workspace.mind").exists()


def test_the_http_tour_runs_as_written(tmp_path: Path) -> None:
    """The HTTP block in one shell (on a free port instead of 8765, which may be taken): the
    server starts, the save answers, the recall right after it finds the frame."""
    if shutil.which("curl") is None:
        pytest.skip("the HTTP tour calls curl, which is not installed")
    home = tmp_path / "home"
    home.mkdir()
    env = {**tour_env(home), "HIVE_MIND_DATA_DIR": str(tmp_path / "data"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    script = tour_block("HTTP", "bash").replace("8765", str(free_port()))
    run = run_shell(script, tmp_path, env)
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}"
    decoder, text = json.JSONDecoder(), run.stdout.strip()
    saved, end = decoder.raw_decode(text)  # curl prints the two answers without a newline
    found = decoder.raw_decode(text[end:].strip())[0]
    assert saved["content"] == "Biscuit is a beagle mix"
    assert [hit["id"] for hit in found["results"]][:1] == [saved["id"]]


def test_the_python_tour_runs_as_written(tmp_path: Path) -> None:
    code = tour_block("Python", "python").replace("/tmp/hm", str(tmp_path / "hm"))
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=tour_env(tmp_path),
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].endswith("Maya's dog is called Biscuit"), run.stdout
    assert "Biscuit" in lines[-1]
