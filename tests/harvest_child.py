"""Run one harvest in this process (for kill -9 tests): prints one line per progress event."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hive_mind.facade import HiveMind


async def main(data_dir: str, source: str, path: str) -> None:
    async with await HiveMind.open(data_dir=data_dir, embedding_provider="test") as hm:
        summary = await hm.harvest(
            source, path, progress=lambda e: print(json.dumps(e.as_dict()), flush=True))
        print(json.dumps({"summary": summary}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
