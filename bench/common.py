"""Shared helpers for the benchmark scripts: machine description and report writing."""

from __future__ import annotations

import os
import platform
import re
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
REPORT = ROOT / "docs" / "benchmarks.md"


def machine() -> str:
    from mind.storage.connection import driver

    cpu = platform.processor() or platform.machine()
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())  # the first processor's
    except OSError:
        pass
    cpu = fields.get("model name", cpu)
    flags = set(fields.get("flags", "").split())
    return (
        f"{os.cpu_count()} cores ({cpu}{vector_extensions(flags)}), Python "
        f"{platform.python_version()}, SQLite {driver().sqlite_version} via {driver().__name__}"
    )


def vector_extensions(flags: set[str]) -> str:
    """The SIMD level that decides int8 speed: VNNI (int8 dot products) or plain AVX2."""
    if not flags:
        return ""
    if "avx512_vnni" in flags or "avx_vnni" in flags:
        return ", AVX-512 VNNI" if "avx512_vnni" in flags else ", AVX-VNNI"
    if "avx512f" in flags:
        return ", AVX-512 without VNNI"
    return ", AVX2 without VNNI" if "avx2" in flags else ", no AVX2"


def write_section(name: str, body: str) -> None:
    """Replace (or append) the section ``## name`` of docs/benchmarks.md. With
    ``BENCH_SECTION_SUFFIX`` set (e.g. a CPU's name), the section is ``## name (suffix)``: a run
    on another kind of machine sits beside the first one's figures instead of replacing them."""
    suffix = os.environ.get("BENCH_SECTION_SUFFIX", "").strip()
    if suffix:
        name = f"{name} ({suffix})"
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


def thread_times() -> dict[str, tuple[float, float]]:
    """Per thread of this process: (CPU seconds, seconds runnable but waiting for a core),
    from Linux /proc (schedstat: run time, run delay); threads named as Python names them."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    out: dict[str, tuple[float, float]] = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            ran, waited = (int(x) / 1e9 for x in (task / "schedstat").read_text().split()[:2])
        except (OSError, ValueError):
            continue
        name = names.get(int(task.name), f"native {task.name}")
        before = out.get(name, (0.0, 0.0))  # two embedders' lanes share names: summed
        out[name] = (before[0] + ran, before[1] + waited)
    return out


def thread_groups(before: dict[str, tuple[float, float]], after: dict[str, tuple[float, float]]
                  ) -> dict[str, tuple[float, float, int]]:
    """(CPU s, waited s, threads) of each group of threads between two :func:`thread_times`:
    the default executor's threads together, and the SQLite connections' threads together."""
    groups: dict[str, list[float]] = {}
    for name, (ran, waited) in after.items():
        ran0, waited0 = before.get(name, (0.0, 0.0))
        group = name.rstrip("0123456789_").rstrip("-") if name.startswith("asyncio") else name
        if name.endswith("(_connection_worker_thread)"):
            group = "SQLite connections"
        row = groups.setdefault(group, [0.0, 0.0, 0])
        row[0] += ran - ran0
        row[1] += waited - waited0
        row[2] += 1
    return {group: (ran, waited, int(n)) for group, (ran, waited, n) in groups.items()}
