"""Shared helpers for the benchmark scripts: machine description and report writing."""

from __future__ import annotations

import os
import platform
import re
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
REPORT = ROOT / "docs" / "benchmarks.md"


def machine() -> str:
    from mind.storage.connection import driver

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, "
        f"SQLite {driver().sqlite_version} via {driver().__name__}"
    )


def write_section(name: str, body: str) -> None:
    """Replace (or append) the section ``## name`` of docs/benchmarks.md."""
    text = REPORT.read_text() if REPORT.exists() else "# Benchmarks\n"
    stamp = datetime.now(UTC).strftime("%Y-%m-%d")
    section = f"## {name}\n\n_Measured {stamp} on {machine()}._\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(name)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(section + "\n", text)
    else:
        text = text.rstrip() + "\n\n" + section
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(text.rstrip() + "\n")
