"""A child process for the multi-process test: an embedded hive-mind on a shared data dir."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from mind.embeddings.registry import EmbeddingConfig
from mind.retrieval.search import HybridSearch
from queue_schemas import ops
from workers.runtime import EmbeddedRuntime, RuntimeConfig


async def main(data_dir: str, n: int, tag: str) -> None:
    cfg = RuntimeConfig(data_dir=Path(data_dir),
                        embedding=EmbeddingConfig(provider="test", test_dimensions=64))
    seen_max = 0
    async with EmbeddedRuntime(cfg) as rt:
        for i in range(n):
            op = ops.SaveFrames(mind_id="personal", frames=[
                ops.NewFrameOp(gop_id="shared", content=f"{tag} wrote note {i} about the roadmap")])
            await rt.submit("personal", op)
            if i % 10 == 0:
                reader = await rt.host.reader("personal")
                seen_max = max(seen_max, await reader.frames.count())
                search = HybridSearch(reader.db)
                await search.search(f"{tag} roadmap", touch=False)
        await rt.wait_idle(120)
        reader = await rt.host.reader("personal")
        seen_max = max(seen_max, await reader.frames.count())
    print(json.dumps({"tag": tag, "seen_max": seen_max}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
