"""`make run`: harvest the bundled ChatGPT export into a local mind and show recall results.

Embedded mode (no Redis): the real embedding model runs in this process. The data dir is
``.hive-mind-demo/`` in the repository (``--data-dir`` to change it); running it again re-uses
the mind (the re-import is idempotent and reports nothing new).

    .venv/bin/python examples/demo.py [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

if TYPE_CHECKING:
    from workers.harvest_summary import ProgressEvent

HERE = Path(__file__).resolve().parent
EXPORT = HERE / "chatgpt-export" / "conversations.json"
QUESTIONS = HERE / "questions.json"
TOP = 5


async def main(data_dir: Path) -> int:
    os.environ.pop("HIVE_MIND_REDIS_URL", None)  # the demo is the embedded default
    os.environ.pop("HIVE_MIND_URL", None)
    from hive_mind.facade import HiveMind

    console = Console()
    async with await HiveMind.open(data_dir=data_dir) as hm:
        console.print(f"[bold]hive-mind demo[/] — data dir {data_dir}")
        with console.status("loading the embedding model…"):
            embedder = await hm.runtime.embedder_ready()
        degraded = " [red]DEGRADED" if embedder.degraded else ""
        console.print(f"embedder: {embedder.provider} {embedder.model_id} "
                      f"({embedder.dimensions} dims){degraded}")
        columns = (TextColumn("{task.description}"), BarColumn(),
                   TextColumn("{task.fields[info]}"), TimeElapsedColumn())
        with Progress(*columns, console=console) as bar:
            task = bar.add_task("harvest examples/chatgpt-export", total=None, info="")

            def progress(event: ProgressEvent) -> None:
                bar.update(task, info=f"{event.phase}: {event.items} conversations, "
                                      f"{event.frames_written} frames, "
                                      f"{event.pending_index or 0} to index")

            summary = await hm.harvest("chatgpt", EXPORT, progress=progress)
            bar.update(task, total=1, completed=1)
        console.print(f"imported {summary['items']} conversations → {summary['frames_created']} "
                      f"new frames ({summary['status']}, {summary['elapsed_seconds']} s)")
        hits = 0
        for q in json.loads(QUESTIONS.read_text()):
            results = await hm.recall(q["question"], limit=TOP)
            table = Table(title=q["question"], title_justify="left", show_lines=False)
            table.add_column("score", justify="right")
            table.add_column("when")
            table.add_column("memory")
            for r in results:
                found = q["expect"] in r["content"]
                hits += found
                text = r["content"].replace("\n", " ")
                short = text[:110] + "…" if len(text) > 110 else text
                table.add_row(f"{r['score']:.2f}", r["created_at"][:10],
                              ("[green]" if found else "") + short)
            console.print(table)
        stats = await hm.stats()
        console.print(f"[bold]{hits}[/] of {len(json.loads(QUESTIONS.read_text()))} questions have "
                      f"their answer in the top {TOP}")
        console.print(f"mind: {stats['frames']} frames, {stats['vectors']} vectors, "
                      f"{stats['entities']} entities, {stats['pending_index']} pending index")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data-dir", type=Path, default=HERE.parent / ".hive-mind-demo")
    raise SystemExit(asyncio.run(main(parser.parse_args().data_dir)))
