"""What an inflated upload costs an import: time and peak traced memory of import detection
(``harvest import auto``), the ``chatgpt`` adapter on a zip of ``[[[],[],…]]`` members (~70 KB
inflating ~170× each) and the ``universal`` adapter on 9 MB of the same shape as plain JSON.
Each is refused; what matters is what it cost before the refusal. Run it against another tree
to compare (``PYTHONPATH=<tree>``).

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.components.import_bombs
"""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from mind.harvest.detect import detect
from mind.harvest.errors import HarvestError
from mind.harvest.registry import adapter
from tests.test_security_imports import bomb_zip, nested_lists


def measure(label: str, run: Callable[[], object]) -> None:
    tracemalloc.start()
    started = time.perf_counter()
    try:
        run()
        outcome = "imported"
    except HarvestError as exc:
        outcome = f"refused ({type(exc).__name__})"
    took = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"{label:<34} {took:6.2f} s  peak {peak / 2**20:5.0f} MiB  {outcome}")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        archive, flat = Path(tmp) / "export.zip", Path(tmp) / "messages.json"
        archive.write_bytes(bomb_zip())
        flat.write_bytes(nested_lists(3_000_000, 0))
        print(f"zip: {archive.stat().st_size:,} bytes; json: {flat.stat().st_size:,} bytes")
        measure("detect (harvest import auto), zip", lambda: detect(archive))
        measure("chatgpt adapter, zip", lambda: list(adapter("chatgpt")(archive)))
        measure("universal adapter, json", lambda: list(adapter("universal")(flat)))


if __name__ == "__main__":
    main()
