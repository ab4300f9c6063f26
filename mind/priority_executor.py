"""One-thread executors that run interactive calls before bulk ones.

Who waits for a piece of work is the context's :func:`work_priority` (a context variable, so it
follows an ``await`` into the tasks a call starts): ``interactive`` by default — a query, a
save — and ``bulk`` inside ``with work_priority("bulk")`` (the cognify work of an import). A
:class:`PriorityExecutor` queues each submitted call by the priority current at ``submit`` and
runs interactive calls first, each priority in the order submitted. The embedder's lanes and
the extraction thread are such executors: a bulk import's work is submitted in pieces (one
forward batch of the encoder, one job's extraction), so a query or a save that arrives waits
for at most the piece running, never for the import's backlog (:mod:`workers.fairness`).
"""

from __future__ import annotations

import contextlib
import itertools
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from contextvars import ContextVar
from typing import Any, TypeVar

from vocabulary.enums import JobPriority

T = TypeVar("T")

_RANK: dict[JobPriority, int] = {"interactive": 0, "bulk": 1}
_STOP = 2  # the shutdown marker sorts after all work
_priority: ContextVar[JobPriority] = ContextVar("hive_mind_work_priority", default="interactive")


def current_priority() -> JobPriority:
    return _priority.get()


@contextlib.contextmanager
def work_priority(priority: JobPriority) -> Iterator[None]:
    """Work submitted (directly or from tasks started) inside runs at ``priority``."""
    token = _priority.set(priority)
    try:
        yield
    finally:
        _priority.reset(token)


class PriorityExecutor(Executor):
    """A single worker thread serving interactive submissions before bulk ones.

    ``initializer`` runs first on the thread (its nice value, the encoder's thread setup).
    The thread starts on the first ``submit`` and is joined at interpreter exit like a
    ``ThreadPoolExecutor``'s (so an encode running then finishes instead of being torn down).
    """

    def __init__(self, thread_name: str, initializer: Callable[[], None] | None = None) -> None:
        self._name = thread_name
        self._initializer = initializer
        self._queue: queue.PriorityQueue[tuple[int, int, Any]] = queue.PriorityQueue()
        self._seq = itertools.count()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError(f"executor {self._name} is shut down")
            self._queue.put((_RANK[current_priority()], next(self._seq),
                             (future, fn, args, kwargs)))
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name=self._name)
                self._thread.start()
                threading._register_atexit(self._stop)  # type: ignore[attr-defined]
        return future

    def _work(self) -> None:
        if self._initializer is not None:
            self._initializer()
        while True:
            rank, _, item = self._queue.get()
            if rank == _STOP:
                return
            future, fn, args, kwargs = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # handed to the waiter, as ThreadPoolExecutor does
                future.set_exception(exc)

    def _stop(self) -> None:
        self._queue.put((_STOP, next(self._seq), None))

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            already, self._closed = self._closed, True
            thread = self._thread
        stop_taken = False
        if cancel_futures:
            with contextlib.suppress(queue.Empty):
                while True:
                    rank, _, item = self._queue.get_nowait()
                    if rank == _STOP:
                        stop_taken = True
                    else:
                        item[0].cancel()
        if not already or stop_taken:
            self._stop()
        if wait and thread is not None and thread is not threading.current_thread():
            thread.join()
