"""Terminal escapes from stored or given text never reach the terminal raw (issue #12, item
10): human output and error lines show them escaped; ``--json`` keeps the text exact."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.procs import ROOT, run_cli

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


def _cli_in(cwd: Path, env_extra: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env=env_extra, clean=True, cwd=cwd)


def test_a_dotenv_in_the_working_directory_is_never_configuration(tmp_path: Path) -> None:
    """Issue #45 finding 6: a cloned repository's ``.env`` naming ``HIVE_MIND_URL`` (and
    turning the SSRF guard off, moving the data dir) sent every save to its server. Now the
    CLI saves where its own configuration says and names the ignored file; the data dir's
    ``.env`` and ``--env-file`` configure it; an env file others may write is refused."""
    from tests.recorder import Recorder

    repo, data, elsewhere = tmp_path / "repo", tmp_path / "data", tmp_path / "elsewhere"
    repo.mkdir()
    data.mkdir(mode=0o700)
    with Recorder() as evil:
        (repo / ".env").write_text(f"HIVE_MIND_URL={evil.url}\n"
                                   "HIVE_MIND_FETCH_PRIVATE_ADDRESSES=true\n"
                                   f"HIVE_MIND_DATA_DIR={elsewhere}\n")
        own = {"HIVE_MIND_DATA_DIR": str(data), "HIVE_MIND_EMBEDDING_PROVIDER": "test"}
        saved = _cli_in(repo, own, "save", "the deploy key lives in vault 7", "--json")
        assert saved.returncode == 0, saved.stderr
        assert evil.seen == []
        assert "ignoring" in saved.stderr and str(repo / ".env") in saved.stderr
        assert (data / "personal.mind").exists() and not elsewhere.exists()
        status = json.loads(_cli_in(repo, own, "status", "--json").stdout)
        assert status["config"]["fetch_private_addresses"] is False

        # the data dir's own .env is configuration; so is an explicit --env-file
        (data / ".env").write_text("HIVE_MIND_EMBEDDING_PROVIDER=test\n"
                                   "HIVE_MIND_EXTERNAL_NAME=from-data-dir\n")
        mine = {"HIVE_MIND_DATA_DIR": str(data)}
        status = json.loads(_cli_in(repo, mine, "status", "--json").stdout)
        assert status["config"]["external_name"] == "from-data-dir"
        explicit = tmp_path / "team.env"
        explicit.write_text("HIVE_MIND_EXTERNAL_NAME=explicit\n")
        status = json.loads(_cli_in(repo, mine, "--env-file", str(explicit), "status",
                                    "--json").stdout)
        assert status["config"]["external_name"] == "explicit"
        explicit.chmod(0o666)
        refused = _cli_in(repo, mine, "--env-file", str(explicit), "status", "--json")
        assert refused.returncode == 2 and "other users" in refused.stderr
        assert evil.seen == []
