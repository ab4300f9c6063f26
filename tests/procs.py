"""Helpers to run real hive-mind processes in tests."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def spawn(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    full = {**os.environ, "HF_HUB_OFFLINE": "1", **env}
    handle = open(log, "ab")  # noqa: SIM115 - owned by the process for its lifetime
    return subprocess.Popen(
        [sys.executable, "-m", "hive_mind", *args], cwd=ROOT, env=full,
        stdout=handle, stderr=subprocess.STDOUT,
    )


def kill9(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            kill9(proc)


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await check():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for: {what}")


def free_port() -> int:
    """A port nothing listens on right now (for a process that must know it before starting)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# what points a CLI at a server, a queue or a token: never taken from the test run's environment
CLIENT_ENV = ("HIVE_MIND_URL", "HIVE_MIND_REDIS_URL", "HIVE_MIND_API_TOKEN")


def cli_env(data: Path | None = None, env: Mapping[str, str] | None = None, *,
            clean: bool = False) -> dict[str, str]:
    """The environment of a CLI run as a user's: embedded (no server, Redis or token), offline,
    the test embedder, data dir ``data``; ``clean`` drops every other ``HIVE_MIND_*`` setting
    too (the run's shared model cache stays), then ``env`` is laid over it."""
    keep = ("HIVE_MIND_EMBEDDING_CACHE_DIR",)
    base = {k: v for k, v in os.environ.items() if k not in CLIENT_ENV and not (
        clean and k.startswith("HIVE_MIND_") and k not in keep)}
    base.update({"HF_HUB_OFFLINE": "1", "HIVE_MIND_EMBEDDING_PROVIDER": "test",
                 "PYTHONPATH": str(ROOT)})
    if data is not None:
        base["HIVE_MIND_DATA_DIR"] = str(data)
    return {**base, **(env or {})}


def run_cli(*args: str, data: Path | None = None, env: Mapping[str, str] | None = None,
            clean: bool = False, cwd: Path = ROOT, timeout: float = 120
            ) -> subprocess.CompletedProcess[str]:
    """``python -m hive_mind ARGS`` in its own process (environment: :func:`cli_env`)."""
    return subprocess.run([sys.executable, "-m", "hive_mind", *args], cwd=cwd,
                          env=cli_env(data, env, clean=clean), capture_output=True, text=True,
                          timeout=timeout)


def run_with_terminal(args: list[str], env: dict[str, str], cwd: Path = ROOT,
                      timeout: float = 300.0) -> tuple[int, str, str]:
    """Run ``python -m hive_mind ARGS`` with its stderr on a pseudo-terminal (as a user at a
    terminal sees it) and its stdout in a file: ``(exit code, stdout, terminal text)``."""
    import pty
    import select
    import tempfile

    master, slave = pty.openpty()
    full = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "120", **env}
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([sys.executable, "-m", "hive_mind", *args], cwd=cwd, env=full,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=slave)
        os.close(slave)
        seen = bytearray()
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                ready, _, _ = select.select([master], [], [], 0.5)
                if ready:
                    try:
                        chunk = os.read(master, 65536)
                    except OSError:  # the child closed the terminal
                        break
                    if not chunk:
                        break
                    seen += chunk
                elif proc.poll() is not None:
                    break
            else:
                kill9(proc)
                raise AssertionError(f"hive-mind {args} ran longer than {timeout}s")
            code = proc.wait(30)
        finally:
            os.close(master)
        out.seek(0)
        return code, out.read().decode("utf-8", "replace"), seen.decode("utf-8", "replace")
