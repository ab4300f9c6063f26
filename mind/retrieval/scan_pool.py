"""The process's scan pool: the vector scans run in row blocks on it.

The scans run in row blocks on one pool per process (:data:`SCAN_THREADS`, one per core), so
one search uses every core and concurrent searches share them block by block instead of
oversubscribing. For that the process's BLAS is set to one thread per call
(threadpoolctl) when the first index is created: OpenBLAS's own threads made a matrix-vector
product slower, not faster, whenever another thread was busy (two concurrent searches of
100,000 rows on 2 cores: 0.79× the throughput of the same searches serialized with BLAS's
default threads, 1.60× with one BLAS thread a product).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

SCAN_THREADS = max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                          else os.cpu_count() or 1))

_pool: ThreadPoolExecutor | None = None
_configured = False
_pool_lock = threading.Lock()


def prepare_pool() -> ThreadPoolExecutor | None:
    """The process's scan pool (None with one core); the first call sets BLAS to one thread."""
    global _pool, _configured
    with _pool_lock:
        if not _configured:
            _limit_blas_threads()
            if SCAN_THREADS > 1:
                _pool = ThreadPoolExecutor(SCAN_THREADS, thread_name_prefix="vector-scan")
            _configured = True
        return _pool


def run_blocks(tasks: list[Callable[[], object]]) -> list[object]:
    """Run a scan's blocks on the process's scan pool (inline when there is one block): the
    runner every scan of :mod:`mind.retrieval.vector_scan` and :mod:`int8_scan` takes."""
    pool = prepare_pool()
    if pool is None or len(tasks) < 2:
        return [task() for task in tasks]
    return [f.result() for f in [pool.submit(task) for task in tasks]]


def _limit_blas_threads() -> None:
    """One BLAS thread per call: the scan pool is the parallelism (module docstring)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a dependency of sentence-transformers
        return
    threadpool_limits(limits=1, user_api="blas")
