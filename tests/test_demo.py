"""``make run``'s program (examples/demo.py) end to end in a subprocess: the bundled export
harvested into a fresh data dir, recall tables printed (test embedder: the real model is
exercised by the integration tests; this guards the demo's own code against API drift)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.procs import ROOT


def test_demo_harvests_the_example_export_and_recalls(tmp_path: Path) -> None:
    env = {**os.environ, "HIVE_MIND_EMBEDDING_PROVIDER": "test", "HF_HUB_OFFLINE": "1",
           "COLUMNS": "120"}
    for key in ("HIVE_MIND_REDIS_URL", "HIVE_MIND_URL", "HIVE_MIND_DATA_DIR"):
        env.pop(key, None)
    run = subprocess.run([sys.executable, "examples/demo.py", "--data-dir", str(tmp_path / "d")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    assert "imported 12 conversations" in run.stdout
    assert (tmp_path / "d" / "personal.mind").is_file()
