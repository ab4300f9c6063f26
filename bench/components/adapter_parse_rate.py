"""How fast the ChatGPT adapter parses a synthetic export (``harvest_bench``'s generator):
3,000 conversations × 20 messages as one ``conversations.json`` and as a zip of split files,
best of three, turns per second. Parsing only (no mind written): the cost of the streaming
bounds (:mod:`mind.harvest.jsondepth`, :mod:`mind.harvest.inputs`). Run it against another
tree to compare (``PYTHONPATH=<tree>``).

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.components.adapter_parse_rate
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench.product.harvest_bench import generate, generate_split

from mind.harvest.registry import adapter


def rate(target: Path) -> tuple[int, float]:
    best, turns = float("inf"), 0
    for _ in range(3):
        started = time.perf_counter()
        turns = sum(len(item.turns) for item in adapter("chatgpt")(target))
        best = min(best, time.perf_counter() - started)
    return turns, turns / best


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        single, split = Path(tmp) / "conversations.json", Path(tmp) / "export.zip"
        generate(single, 3000, 20)
        generate_split(split, 3000, 20, 50)
        for target in (single, split):
            turns, per_second = rate(target)
            print(f"{target.name:<20} {turns:,} turns  {per_second:,.0f} turns/s")


if __name__ == "__main__":
    main()
