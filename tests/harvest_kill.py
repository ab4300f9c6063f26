"""kill -9 a real import in the middle, then run it again: the two halves every resumable
harvest test shares (tests/harvest_child.py runs the import and prints its progress)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from mind.mind import Mind

CHILD = Path(__file__).resolve().parent / "harvest_child.py"


def start(data: Path, src: Path, source: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(CHILD), str(data), source, str(src)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})


async def kill_mid_import(data: Path, src: Path, source: str, *, total: int, per_item: int,
                          after: int = 6000) -> int:
    """Import ``src`` in a child and SIGKILL it once ``after`` frames were written; check the
    mind holds a part (``after`` ≤ frames < ``total``) of a run still ``running``, whose
    progress committed with its frames (``per_item`` frames per item). The run's
    ``items_done``."""
    proc = start(data, src, source)
    assert proc.stdout is not None
    for line in proc.stdout:
        event = json.loads(line)
        if event.get("phase") == "parse" and event["frames_written"] >= after:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    proc.stdout.close()
    async with await Mind.open(data / "personal.mind", readonly=True) as mind:
        committed = await mind.frames.count()
        run = (await mind.db.fetchall("SELECT status, items_done FROM harvest_runs"))[0]
    assert after <= committed < total and run["status"] == "running"
    assert committed == run["items_done"] * per_item  # frames and progress commit together
    return int(run["items_done"])


def resume(data: Path, src: Path, source: str, resumed_from: int) -> dict[str, Any]:
    """Run the import again to its end: it resumes after the committed items, skips nothing
    twice and leaves nothing to index. Its summary."""
    again = start(data, src, source)
    out, _ = again.communicate(timeout=240)
    assert again.returncode == 0, out[-2000:]
    summary: dict[str, Any] = json.loads(out.strip().splitlines()[-1])["summary"]
    assert (summary["status"], summary["resumed_from"]) == ("completed", resumed_from)
    assert summary["duplicates_skipped"] == 0 and summary["pending_index"] == 0
    return summary
