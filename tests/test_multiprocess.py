"""Three embedded processes (e.g. one MCP stdio server per agent window) on one data dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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
