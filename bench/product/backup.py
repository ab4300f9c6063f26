"""Backup, restore and export of a large mind, through the real CLI in processes of their own.

Build (a bench-only shortcut): ``--frames`` synthetic frames (words from a 5,000-word
vocabulary, sessions of 50 turns, speaker-prefixed like imported turns, importances mixed) are
written with ``FrameStore.insert_many`` and given the ``test`` embedder's vectors, so a facade
opened with that provider has nothing left to index. Then, measured:

* **backup while saves continue**: this process holds the mind open (embedded facade, its
  single-writer actor) and saves one memory after another; ``hive-mind backup`` runs in a
  process of its own meanwhile. Reported: the backup's wall time and MB/s, the saves
  acknowledged while it ran and their p50 / p99 / max latency against the saves before it,
  and the check that every save acknowledged before the backup began is in the copy.
* **restore** of that copy into a new data dir (the checks included: SHA-256 and
  ``PRAGMA integrity_check`` of each file), then ``PRAGMA integrity_check`` of the restored
  file and a recall of the last save acknowledged before the backup (found or not).
* **export** (``universal`` and ``json``) of the mind: frames/s and MB/s, and the peak RSS of
  the export process — at ``--frames`` and at ``--small`` frames, so constant memory shows as
  the same peak at both sizes.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.product.backup --frames 100000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, write_section

from vocabulary.enums import Importance

IMPORTANCES: tuple[Importance, ...] = ("normal", "normal", "normal", "important", "temporary",
                                       "critical")
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("HIVE_MIND_")},
       "HIVE_MIND_EMBEDDING_PROVIDER": "test", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}


def vocabulary(seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choices(letters, k=rng.randint(3, 9))) for _ in range(5_000)]


async def build(data: Path, n: int) -> None:
    from mind.embeddings.base import fingerprint
    from mind.embeddings.testing import TestEmbedder
    from mind.frames.model import NewFrame
    from mind.mind import Mind

    embedder = TestEmbedder()
    vocab, rng = vocabulary(), random.Random(n)
    data.mkdir(parents=True, exist_ok=True)
    async with await Mind.open(data / "personal.mind") as mind:
        await mind.vectors.ensure_fingerprint(*fingerprint(embedder))
        step = 5_000
        for off in range(0, n, step):
            items = [NewFrame(
                f"harvest:bench:{(off + i) // 50}",
                f"{'Ann' if (off + i) % 2 else 'Bot'}: "
                + " ".join(rng.choices(vocab, k=rng.randint(10, 40))),
                importance=IMPORTANCES[(off + i) % len(IMPORTANCES)], source="import",
                created_at=f"2024-{1 + (off + i) % 12:02d}-{1 + (off + i) % 28:02d}T10:00:00.000Z",
                metadata={"speaker": "Ann" if (off + i) % 2 else "Bot"}, dedup=False)
                for i in range(min(step, n - off))]
            saved = await mind.frames.insert_many(items)
            ids = [r.frame.id for r in saved]
            vectors = embedder.encode([item.content for item in items])
            await mind.vectors.upsert_frame_vectors(list(zip(ids, vectors, strict=True)))
            await mind.outbox.clear(ids)


def _peak_rss(pid: int, peak: list[float], done: threading.Event) -> None:
    """The process's high-water RSS (``VmHWM``: its own, from its exec on), read until it
    exits."""
    while not done.is_set():
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak[0] = max(peak[0], int(line.split()[1]) / 1024)
        except (OSError, ValueError):
            pass
        done.wait(0.02)


def cli(*args: str) -> tuple[float, float, str]:
    """``hive-mind ARGS`` in a process of its own: (seconds, peak RSS MB, output)."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "hive_mind", *args], cwd=ROOT, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    peak, done = [0.0], threading.Event()
    watcher = threading.Thread(target=_peak_rss, args=(proc.pid, peak, done), daemon=True)
    watcher.start()
    out, _ = proc.communicate()
    elapsed = time.perf_counter() - started
    done.set()
    watcher.join()
    if proc.returncode != 0:
        raise SystemExit(f"hive-mind {' '.join(args)} failed:\n{out.decode()}")
    return elapsed, peak[0], out.decode()


def _read(path: Path, sql: str) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` on the mind file at ``path``, through the project's SQLite driver."""
    from mind.storage.connection import driver

    conn = driver().connect(f"file:{path}?mode=ro", uri=True)
    try:
        return list(conn.execute(sql).fetchall())
    finally:
        conn.close()


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else 0.0


async def backup_under_saves(data: Path, dest: Path) -> dict[str, Any]:
    from hive_mind.facade import HiveMind

    acked: list[tuple[str, float, float]] = []  # (text, acked at, latency)
    stop = asyncio.Event()
    async with await HiveMind.open(data_dir=data, embedding_provider="test") as hm:
        async def saver() -> None:
            n = 0
            while not stop.is_set():
                text = f"save during the backup bench number {n} tag{n}q"
                t0 = time.perf_counter()
                await hm.save(text)
                acked.append((text, time.perf_counter(), time.perf_counter() - t0))
                n += 1

        task = asyncio.create_task(saver())
        await asyncio.sleep(3.0)
        before = len(acked)
        started = time.perf_counter()
        elapsed, rss, _ = await asyncio.to_thread(cli, "--data-dir", str(data), "backup",
                                                  str(dest), "--json")
        ended = time.perf_counter()
        await asyncio.sleep(0.5)
        stop.set()
        await task
    during = [lat for _, at, lat in acked if started <= at <= ended]
    baseline = [lat for _, at, lat in acked[:before]]
    copy = dest / "personal.mind"
    stored = {r[0] for r in _read(
        copy, "SELECT content FROM memory_frames WHERE content LIKE 'save during the backup%'")}
    missing = [text for text, _, _ in acked[:before] if text not in stored]
    return {"seconds": elapsed, "rss": rss, "bytes": copy.stat().st_size,
            "saves_before": before, "saves_during": len(during),
            "during": during, "baseline": baseline, "missing": len(missing),
            "last_before": acked[before - 1][0]}


async def recall_finds(data: Path, text: str) -> float | None:
    """Seconds from opening the restored data dir until a recall finds ``text`` (None: not
    within 60 s); the indexing the copy had not done yet is resumed on opening."""
    from hive_mind.facade import HiveMind

    started = time.perf_counter()
    async with await HiveMind.open(data_dir=data, embedding_provider="test") as hm:
        while time.perf_counter() - started < 60:
            results = await hm.recall(text, limit=5)
            if any(r["content"] == text for r in results):
                return time.perf_counter() - started
            await asyncio.sleep(0.5)
    return None


def export_rows(data: Path, frames: int, out: Path) -> list[str]:
    rows = []
    for fmt in ("universal", "json"):
        dest = out / f"export-{frames}.{fmt}"
        seconds, rss, _ = cli("--data-dir", str(data), "export", "--format", fmt, str(dest),
                              "--json")
        size = dest.stat().st_size / 1e6
        rows.append(f"| export {fmt}, {frames:,} frames | {seconds:.1f} s | "
                    f"{frames / seconds:,.0f} frames/s, {size / seconds:.1f} MB/s ({size:.0f} MB)"
                    f" | {rss:.0f} MB |")
        dest.unlink()
    return rows


def backup_and_restore(root: Path, data: Path, frames: int) -> tuple[list[str], list[str]]:
    """The backup while saves continue, and the restore of its copy: table rows and notes."""
    b = asyncio.run(backup_under_saves(data, root / "backup"))
    mb = b["bytes"] / 1e6
    rows = [f"| backup while saves continue, {frames:,} frames | {b['seconds']:.1f} s | "
            f"{mb / b['seconds']:.0f} MB/s ({mb:.0f} MB) | {b['rss']:.0f} MB |"]
    seconds, rss, out = cli("--data-dir", str(root / "restored"), "restore",
                            str(root / "backup"), "--json")
    restored = root / "restored" / "personal.mind"
    integrity = _read(restored, "PRAGMA integrity_check")[0][0]
    found = asyncio.run(recall_finds(root / "restored", b["last_before"]))
    rows.append(f"| restore (checksums + integrity_check, then written), {frames:,} frames | "
                f"{seconds:.1f} s | {mb / seconds:.0f} MB/s | {rss:.0f} MB |")
    summary = json.loads(out)
    notes = [
        f"Saves: {b['saves_before']} acknowledged in the 3 s before the backup (p50 "
        f"{pct(b['baseline'], 50) * 1e3:.1f} / p99 {pct(b['baseline'], 99) * 1e3:.1f} ms), "
        f"{b['saves_during']} while it ran (p50 {pct(b['during'], 50) * 1e3:.1f} / p99 "
        f"{pct(b['during'], 99) * 1e3:.1f} / max {max(b['during'] or [0]) * 1e3:.1f} ms, "
        f"mean {statistics.fmean(b['during'] or [0]) * 1e3:.1f} ms).",
        f"Acknowledged before the backup began and missing from the copy: {b['missing']}. "
        f"Restored: {', '.join(summary['restored'])}; PRAGMA integrity_check of the "
        f"restored file: {integrity}; a recall of the last save acknowledged before the "
        "backup finds it: " + ("NO (60 s)" if found is None else
                               f"after {found:.1f} s from opening the restored data dir") + "."]
    return rows, notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--export-only", action="store_true",
                        help="measure the exports only (e.g. at 1,000,000 frames)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hm-backup-bench-") as tmp:
        root = Path(tmp)
        data, small = root / "data", root / "small"
        t0 = time.perf_counter()
        asyncio.run(build(data, args.frames))
        asyncio.run(build(small, args.small))
        print(f"built {args.frames:,} + {args.small:,} frames in "
              f"{time.perf_counter() - t0:.0f} s", flush=True)
        rows: list[str] = []
        notes: list[str] = []
        if not args.export_only:
            rows, notes = backup_and_restore(root, data, args.frames)
        rows += export_rows(data, args.frames, root)
        rows += export_rows(small, args.small, root)
        body = "\n".join([
            "| step | time (process start included) | rate | peak RSS of the process |",
            "|---|---|---|---|", *rows, "", *notes])
        what = "export" if args.export_only else "backup, restore, export"
        write_section(f"{what} at {args.frames:,} frames", body)


if __name__ == "__main__":
    main()
