"""Give the heap that closed minds freed back to the operating system.

Opening and closing mind files (a scope-wide recall opens a dozen of its LRU's minds per query)
allocates and frees page caches and vector matrices in many threads; glibc keeps freed memory
in per-thread arenas, so a host's RSS grew by ~300 MB over 40 scope-wide recalls at 1,000
workspaces whatever its LRU bound (docs/performance.md, "Many workspaces"). ``malloc_trim(0)``
returns it; :class:`HeapTrimmer` runs it in a worker thread after minds close, at most every
:data:`TRIM_INTERVAL_SECONDS`. Elsewhere than glibc it does nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import functools
import logging
import time
from collections.abc import Callable
from typing import Final

log = logging.getLogger(__name__)

TRIM_INTERVAL_SECONDS: Final = 5.0


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:  # the process's own symbols: libc is linked in (no ldconfig run to find it)
        libc = ctypes.CDLL(None)
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):
        return None  # not glibc
    return trim


def trim_now() -> bool:
    """Run ``malloc_trim(0)`` (blocking); False where there is none."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


class HeapTrimmer:
    def __init__(self, interval: float = TRIM_INTERVAL_SECONDS) -> None:
        self.interval = interval
        self._last = float("-inf")
        self._running: asyncio.Future[bool] | None = None

    def request(self) -> None:
        """Trim soon (in a thread) unless a trim ran within the interval or is running."""
        now = time.monotonic()
        if now - self._last < self.interval or (self._running and not self._running.done()):
            return
        self._last = now
        self._running = asyncio.get_running_loop().run_in_executor(None, trim_now)
