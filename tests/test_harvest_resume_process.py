"""kill -9 in the middle of a real import, then run it again: it resumes after the last
committed batch and every message ends up exactly once (and indexed)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from mind.mind import Mind

HERE = Path(__file__).resolve().parent


def export(path: Path, conversations: int, messages: int) -> int:
    with path.open("w") as fh:
        for c in range(conversations):
            for m in range(messages):
                fh.write(json.dumps({
                    "conversation_id": f"c{c}", "message_id": f"m{m}", "title": f"Chat {c}",
                    "speaker": "Alice" if m % 2 == 0 else "Bot",
                    "text": f"conversation {c} message {m} " + "filler words " * 20,
                    "timestamp": f"2024-01-{1 + c % 28:02d}T10:{m % 60:02d}:00Z"}) + "\n")
    return conversations * messages


def start(data: Path, src: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(HERE / "harvest_child.py"), str(data), "universal", str(src)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"})


async def test_kill9_mid_import_then_resume(tmp_path: Path) -> None:
    src = tmp_path / "export.jsonl"
    total = export(src, 1500, 20)  # 30,000 messages = 15 batches of 2,000
    data = tmp_path / "data"
    proc = start(data, src)
    assert proc.stdout is not None
    for line in proc.stdout:
        event = json.loads(line)
        if event.get("phase") == "parse" and event["frames_written"] >= 6000:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)

    async with await Mind.open(data / "personal.mind", readonly=True) as mind:
        committed = await mind.frames.count()
        run = (await mind.db.fetchall("SELECT status, items_done FROM harvest_runs"))[0]
    assert 6000 <= committed < total
    assert run["status"] == "running"
    assert committed == run["items_done"] * 20  # frames and progress commit together

    again = start(data, src)
    out, _ = again.communicate(timeout=240)
    assert again.returncode == 0, out[-2000:]
    summary = json.loads(out.strip().splitlines()[-1])["summary"]
    assert summary["status"] == "completed"
    assert summary["resumed_from"] == run["items_done"]
    assert summary["duplicates_skipped"] == 0
    assert summary["pending_index"] == 0

    async with await Mind.open(data / "personal.mind", readonly=True) as mind:
        assert await mind.frames.count() == total
        distinct = await mind.db.fetchval("SELECT count(DISTINCT external_id) FROM memory_frames")
        assert distinct == total
        assert (await mind.vectors.counts())["frame_vectors"] == total
        assert await mind.outbox.count() == 0
