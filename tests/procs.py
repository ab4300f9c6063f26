"""Helpers to run real hive-mind processes in tests."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
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
