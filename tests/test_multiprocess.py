"""Three embedded processes (e.g. one MCP stdio server per agent window) on one data dir."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from mind.errors import HiveMindError
from mind.mind import Mind
from tests.procs import ROOT


async def test_three_processes_write_and_read_one_mind(tmp_path: Path) -> None:
    n = 120
    children = [
        subprocess.Popen([sys.executable, "-m", "tests.embedded_child", str(tmp_path), str(n), f"p{i}"],
                         cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1"},
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(3)
    ]
    reports = []
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err[-3000:]
        assert "locked" not in err
        reports.append(json.loads(out.strip().splitlines()[-1]))
    async with await Mind.open(tmp_path / "personal.mind", readonly=True) as m:
        frames = await m.frames.get_gop_frames("shared")
        assert len(frames) == 3 * n
        assert [f.t for f in frames] == list(range(3 * n))  # serialized, gap-free across processes
        assert {f.content.split()[0] for f in frames} == {"p0", "p1", "p2"}
        assert await m.outbox.count() == 0  # every process indexed what it wrote
        assert (await m.vectors.counts())["frame_vectors"] == 3 * n
    # the process that finished writing last saw everyone's committed writes through its reader
    assert max(r["seen_max"] for r in reports) == 3 * n


async def test_a_cli_save_lands_while_another_process_imports(tmp_path: Path) -> None:
    """`hive-mind save` from a second process while a bulk import writes into the same mind:
    acknowledged, committed and indexed by the saving process (only its own frame: the
    import's backlog is the importer's), and the import completes with every message."""
    export, data = tmp_path / "export.jsonl", tmp_path / "data"
    total = 0
    with export.open("w") as fh:
        for c in range(300):
            for m in range(20):
                fh.write(json.dumps({
                    "conversation_id": f"c{c}", "message_id": f"m{m}", "title": f"Chat {c}",
                    "speaker": "Alice" if m % 2 == 0 else "Bot",
                    "text": f"conversation {c} message {m} " + "filler words " * 20}) + "\n")
                total += 1
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HIVE_MIND_DATA_DIR": str(data),
           "HIVE_MIND_EMBEDDING_PROVIDER": "test"}
    log = (tmp_path / "import.log").open("w")  # not a pipe: a full one would stall the import
    importer = subprocess.Popen(
        [sys.executable, "-m", "hive_mind", "harvest", "import", "universal", str(export),
         "--json"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        while importer.poll() is None and not await _frames_written(data / "personal.mind"):
            await asyncio.sleep(0.05)  # the import is writing
        save = subprocess.run(
            [sys.executable, "-m", "hive_mind", "save", "a note saved during the import",
             "--json"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
        out, _ = importer.communicate(timeout=240)
    finally:
        if importer.poll() is None:
            importer.kill()
        log.close()
    assert save.returncode == 0, save.stderr[-3000:]
    assert importer.returncode == 0, (tmp_path / "import.log").read_text()[-3000:]
    saved = json.loads(save.stdout)
    assert json.loads(out)["frames_created"] == total
    async with await Mind.open(data / "personal.mind", readonly=True) as m:
        frame = await m.frames.get(saved["id"])
        assert frame is not None and frame.content == "a note saved during the import"
        assert await m.frames.count() == total + 1
        assert await m.outbox.count() == 0  # the save and the import each indexed their own


async def _frames_written(mind: Path) -> bool:
    if not mind.exists():
        return False
    try:
        async with await Mind.open(mind, readonly=True) as m:
            return await m.frames.count() > 0
    except HiveMindError:  # the importer is still creating the file
        return False
