"""Wall time of embedded CLI commands on a small mind (issue #14's "a CLI that answers in a
second"): ``hive-mind recall … --json`` and ``hive-mind save … --json`` as a user runs them,
each a fresh process, median of ``--runs`` (after one warm-up that also creates the mind), with
the CPU time (user + system) and peak RSS of those processes (each child's own rusage).

``--provider`` picks the embedder, comma-separated to compare several side by side in one run:
``default`` is the product default (no ``HIVE_MIND_EMBEDDING_PROVIDER``), ``test`` the
deterministic test embedder, which takes the model out of the picture and leaves the CLI's own
cost (imports, opening the mind, the runtime). ``--baseline DIR`` runs the same commands from
another checkout too (same venv, e.g. ``git archive <commit> | tar -x -C DIR``), so a change
is measured before/after in one run. ``--importtime`` adds the time spent importing: the sum of
``python -X importtime``'s self times in separate runs of the same commands (that flag slows a
process down, so those runs are not the timed ones). Every variant has its own data dir; their runs are
interleaved, so a busy machine slows them alike (compare within one run, not across runs).
Bytecode is cached (in a temp ``PYTHONPYCACHEPREFIX``, written by the warm-up) as an installed
package's is, even where ``PYTHONDONTWRITEBYTECODE`` is set: compiling every module of the
project again on each run would add ~0.1 s that no user pays.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.product.cli_latency [--runs 5] [--provider default,test]
        [--baseline DIR] [--importtime]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import ROOT, cli_environment


@dataclass(frozen=True)
class Sample:
    wall: float  # seconds
    cpu: float  # seconds, user + system
    rss_mb: float


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> Sample:
    """One child process: wall and CPU time, peak RSS; a failure stops the bench."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    stderr = child.stderr.read().decode() if child.stderr else ""
    if child.stderr:
        child.stderr.close()
    if child.returncode:
        raise SystemExit(f"{' '.join(argv)} (in {cwd}) failed ({child.returncode}): "
                         f"{stderr.strip()}")
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def import_seconds(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """The sum of ``-X importtime``'s self times of one run of ``argv`` (a Python command)."""
    done = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], cwd=cwd, env=env,
                          capture_output=True, text=True, check=True)
    return sum(int(line.split("|")[0].split(":")[1]) for line in done.stderr.splitlines()
               if line.startswith("import time:") and "self [us]" not in line) / 1e6


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "hive_mind", *args]


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--provider", default="default",
                        help="default (the product's), test, or any provider name; "
                             "comma-separated to compare side by side")
    parser.add_argument("--baseline", type=Path, metavar="DIR",
                        help="another checkout to run side by side (labelled 'baseline')")
    parser.add_argument("--importtime", action="store_true",
                        help="also the time spent importing (separate -X importtime runs)")
    args = parser.parse_args()
    providers = [p.strip() for p in args.provider.split(",") if p.strip()]
    trees = {"this": ROOT, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    samples: dict[tuple[str, str, str], list[Sample]] = {}
    importing: dict[tuple[str, str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        variants = [(tree, provider, cli_environment(Path(tmp) / f"{tree}-{provider}",
                                                     provider, Path(tmp) / f"pycache-{tree}"))
                    for tree in trees for provider in providers]
        for tree, _provider, env in variants:  # warm-up: creates the mind, fills the caches
            timed(cli("save", "The Q3 budget review moved to Thursday", "--json"),
                  trees[tree], env)
        for i in range(args.runs):
            for tree, provider, env in variants:
                commands = {"recall --json": cli("recall", "budget", "--json"),
                            "save --json": cli("save", f"Note {i} about the budget", "--json")}
                for name, argv in commands.items():
                    samples.setdefault((tree, provider, name), []).append(
                        timed(argv, trees[tree], env))
                    if args.importtime:
                        importing.setdefault((tree, provider, name), []).append(
                            import_seconds(argv, trees[tree], env))
    print(f"{cpu_name()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}; median of "
          f"{args.runs} fresh processes per figure (wall, CPU = user + system)")
    for (tree, provider, name), runs in samples.items():
        label = f"{tree}/{provider}" if len(trees) > 1 else provider
        wall = statistics.median(s.wall for s in runs)
        cpu = statistics.median(s.cpu for s in runs)
        imports = importing.get((tree, provider, name))
        print(f"  {label:<18} {name:<14} wall {wall:5.2f} s (min {min(s.wall for s in runs):.2f})"
              f"  CPU {cpu:5.2f} s  peak RSS {max(s.rss_mb for s in runs):,.0f} MB"
              + (f"  imports {statistics.median(imports):.2f} s" if imports else ""))


if __name__ == "__main__":
    main()
