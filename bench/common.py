"""Shared helpers for the benchmark scripts: machine description and results writing.

Benchmarks run as modules from the repository's root (``python -m bench.product.ingest``). A
benchmark prints its results and writes them to ``bench/results/<group>.<name>.json`` (not
committed: the current figure per CPU class is kept by hand in docs/performance.md, and
history lives in git). Nothing here writes into ``docs/``.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import re
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")
RESULTS = ROOT / "bench" / "results"


def cli_environment(data_dir: Path, provider: str, pycache: Path) -> dict[str, str]:
    """The environment of a ``hive-mind`` CLI process a benchmark starts: embedded on
    ``data_dir`` with the embedder ``provider`` (``default``: the product's), offline, and its
    bytecode cached in ``pycache`` as an installed package's is, even where
    ``PYTHONDONTWRITEBYTECODE`` is set (compiling every module of the project again in each
    process adds ~0.1 s that no user pays)."""
    env = {**os.environ, "HIVE_MIND_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1",
           "PYTHONPYCACHEPREFIX": str(pycache)}
    for key in ("HIVE_MIND_REDIS_URL", "HIVE_MIND_URL", "HIVE_MIND_EMBEDDING_PROVIDER",
                "PYTHONDONTWRITEBYTECODE"):
        env.pop(key, None)
    if provider != "default":
        env["HIVE_MIND_EMBEDDING_PROVIDER"] = provider
    return env


def machine() -> str:
    """Cores, CPU (with its family and model: they tell AMD's Zen generations apart) and SIMD
    level, Python and SQLite: what a figure must be read with."""
    from mind.storage.connection import driver

    cpu = platform.machine()  # the model name from /proc/cpuinfo replaces it below
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())  # the first processor's
    except OSError:
        pass
    cpu = fields.get("model name", cpu)
    if "cpu family" in fields:
        cpu += f" family {fields['cpu family']} model {fields.get('model', '?')}"
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


def bench_module() -> str:
    """The running benchmark's module (``bench.product.ingest`` for ``python -m
    bench.product.ingest``); otherwise (a test) the script's path read as a module."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and str(spec.name).startswith("bench."):
        return str(spec.name)
    path = Path(sys.argv[0] if sys.argv else "bench")
    return ".".join([*path.parent.parts, path.stem]) if path.stem else "bench"


def bench_name() -> str:
    """The running benchmark's results name: its module after ``bench.`` (``product.ingest``)."""
    return bench_module().removeprefix("bench.") or "bench"


def markdown_tables(body: str) -> list[list[dict[str, str]]]:
    """The Markdown tables of ``body``, each as its rows keyed by the header's cells (``**``
    emphasis dropped), so a results file can be read without parsing Markdown."""
    tables: list[list[dict[str, str]]] = []
    header: list[str] | None = None
    for line in [*body.splitlines(), ""]:
        line = line.strip()
        if not (line.startswith("|") and line.endswith("|")):
            header = None
            continue
        cells = [cell.strip().replace("**", "") for cell in line[1:-1].split("|")]
        if header is None:
            header = cells
            tables.append([])
        elif all(re.fullmatch(r":?-+:?", cell) for cell in cells if cell):
            continue
        else:
            tables[-1].append(dict(zip(header, cells, strict=False)))
    return tables


def write_section(name: str, body: str) -> Path:
    """Print the results ``body`` (Markdown: text and tables) under ``name`` and record them in
    ``bench/results/<group>.<name>.json``, replacing that file's entry of the same name (a script run
    at two sizes keeps both). With ``BENCH_SECTION_SUFFIX`` set (e.g. a CPU's name) the entry is
    ``name (suffix)``: a run on another kind of machine sits beside the first one's figures."""
    suffix = os.environ.get("BENCH_SECTION_SUFFIX", "").strip()
    if suffix:
        name = f"{name} ({suffix})"
    entry: dict[str, Any] = {
        "measured": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
        "command": " ".join(["python", "-m", bench_module(), *sys.argv[1:]]),
        "load_average": _load_average(),
        "text": body.strip(),
        "tables": markdown_tables(body),
    }
    path = RESULTS / f"{bench_name()}.json"
    results: dict[str, Any] = {}
    if path.exists():
        try:
            results = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            results = {}
    found = results.get("sections")
    sections: dict[str, Any] = found if isinstance(found, dict) else {}
    sections[name] = entry
    RESULTS.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"bench": bench_name(), "sections": sections}, indent=2,
                               ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\n## {name}\n\n_{entry['machine']}; load average {entry['load_average']}_\n\n"
          f"{entry['text']}\n\nwrote {path.relative_to(ROOT)}", flush=True)
    return path


def _load_average() -> str:
    """The 1/5/15-minute load averages: other work on a shared machine moves every figure."""
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


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


def in_data_dir(keep: Path | None, prefix: str, work: Callable[[Path], Awaitable[T]]) -> T:
    """Run ``work`` on ``keep`` (made if missing, kept afterwards: a later run reuses what it
    built) or on a temporary dir removed afterwards."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        return asyncio.run(work(keep))
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        return asyncio.run(work(Path(tmp)))
