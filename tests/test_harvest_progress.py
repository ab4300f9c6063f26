"""A harvest's progress as the CLI shows it: indexing is a phase of its own with a rate and an
ETA, plain lines without a terminal, and the summary's times cover the wait for indexing."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hive_mind.cli.harvest_progress import HarvestLines
from tests.procs import ROOT, run_with_terminal
from workers.harvest_summary import ProgressEvent

EXPORT = ROOT / "examples" / "chatgpt-export"
FRAMES = 78  # the bundled export's messages


def cli_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_MIND_")
           or k == "HIVE_MIND_EMBEDDING_CACHE_DIR"}
    env.update(HIVE_MIND_DATA_DIR=str(tmp_path / "data"), HIVE_MIND_EMBEDDING_PROVIDER="test",
               HF_HUB_OFFLINE="1")
    return env


@pytest.mark.integration
def test_plain_lines_without_a_terminal_and_times_over_the_whole_import(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "hive_mind", "harvest", "import", "chatgpt",
                          str(EXPORT), "--progress", "--json"], cwd=ROOT, env=cli_env(tmp_path),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    assert lines[0].startswith("harvest: parse "), run.stderr
    assert re.fullmatch(rf"harvest: done 12 items, {FRAMES} frames written, {FRAMES} indexed "
                        r"in \d:\d\d:\d\d", lines[-1]), run.stderr
    assert "\x1b" not in run.stderr  # no terminal codes in a log
    summary = json.loads(run.stdout)
    assert summary["pending_index"] == 0
    assert 0 <= summary["index_wait_seconds"] <= summary["elapsed_seconds"]


def test_plain_lines_every_few_seconds_with_rate_and_eta(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    now = [100.0]
    monkeypatch.setattr("hive_mind.cli.harvest_progress.time.monotonic", lambda: now[0])
    out = io.StringIO()
    lines = HarvestLines(out, every=5.0)

    def at(seconds: float, event: ProgressEvent) -> None:
        now[0] = 100.0 + seconds
        lines(event)

    at(0, ProgressEvent("parse", 10, 1_000, pending_index=1_000))
    at(1, ProgressEvent("parse", 20, 2_000, pending_index=1_900))  # too soon: no line
    at(6, ProgressEvent("parse", 30, 3_000, pending_index=2_500))
    at(7, ProgressEvent("index", 30, 3_000, pending_index=2_400))
    at(17, ProgressEvent("index", 30, 3_000, pending_index=1_400))
    at(20, ProgressEvent("done", 30, 3_000, pending_index=0))
    assert out.getvalue().splitlines() == [
        "harvest: parse 10 items, 1,000 frames written, 0 indexed (0:00:00)",
        "harvest: parse 30 items, 3,000 frames written, 333/s, 500 indexed (0:00:06)",
        "harvest: index 600/3,000 frames (0:00:07)",
        "harvest: index 1,600/3,000 frames, 100/s, eta 0:00:14 (0:00:17)",
        "harvest: done 30 items, 3,000 frames written, 3,000 indexed in 0:00:20",
    ]


@pytest.mark.integration
@pytest.mark.skipif(not os.path.exists("/dev/ptmx"), reason="needs pseudo-terminals")
def test_bars_at_a_terminal_show_the_indexing_row(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    code, out, terminal = run_with_terminal(
        ["harvest", "import", "chatgpt", str(EXPORT), "--json"], env)
    assert code == 0, terminal
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal)
    final = plain.rsplit("items parsed", 1)[1]  # the last frame drawn
    assert re.search(rf"frames indexed\W+{FRAMES} / {FRAMES} +[\d,]+/s", final), final
    assert json.loads(out)["frames_created"] == FRAMES


@pytest.mark.integration
def test_client_mode_says_the_server_imports_without_progress(tmp_path: Path) -> None:
    from tests.http_server import running_server, server_settings

    with running_server(server_settings(tmp_path / "server")) as url:
        run = subprocess.run([sys.executable, "-m", "hive_mind", "--url", url, "harvest",
                              "import", "chatgpt", str(EXPORT), "--progress", "--json"],
                             cwd=ROOT, env=cli_env(tmp_path), capture_output=True, text=True,
                             timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines() == [
        f"harvest: importing at {url}: the server uploads, parses and indexes it and reports "
        "no progress (client mode)"]
    assert json.loads(run.stdout)["frames_created"] == FRAMES
