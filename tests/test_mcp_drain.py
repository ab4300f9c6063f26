"""``hive-mind mcp`` over stdio drains the indexing it caused before a clean exit (issue #12,
item 13): the SDK's real stdio client saves memories as fast as it can, closes stdin at once,
and the mind file the process leaves behind has nothing pending."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from actors.host import mind_path
from vocabulary.ids import PERSONAL_MIND

SAVES = 300


def _counts(data_dir: Path) -> tuple[int, int]:
    with sqlite3.connect(f"file:{mind_path(data_dir, PERSONAL_MIND)}?mode=ro", uri=True) as db:
        frames = db.execute("SELECT count(*) FROM memory_frames").fetchone()[0]
        pending = db.execute("SELECT count(*) FROM pending_index").fetchone()[0]
    return int(frames), int(pending)


async def test_stdio_exit_waits_for_the_indexing_it_caused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "hive_mind.mcp_server"], cwd=str(tmp_path),
        env={"HIVE_MIND_DATA_DIR": str(data), "HIVE_MIND_EMBEDDING_PROVIDER": "test",
             "HF_HUB_OFFLINE": "1", "HIVE_MIND_COGNIFY_BATCH_FRAMES": "1"},
    )
    with open(tmp_path / "mcp.log", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            for n in range(SAVES):
                text = (f"Note {n}: Orbit build {n} shipped by Dana Whitfield to the "
                        f"Lisbon office on day {n}")
                result = await session.call_tool("save_memory", {"content": text})
                assert not result.is_error, result.content
        # leaving the block closes stdin; stdio_client waits for the process to exit
    frames, pending = _counts(data)
    log = (tmp_path / "mcp.log").read_text()
    assert frames == SAVES, log[-2000:]
    assert pending == 0, f"{pending} of {frames} frames left unindexed\n{log[-2000:]}"
