"""Requests being answered, and background threads that step aside for them.

A thread building an index in Python holds the GIL most of the time. A request answered on
the event loop meanwhile hands work to threads, SQLite and NumPy many times, and each time it
wants the GIL back it waits for the builder to let go of it, up to the interpreter's switch
interval (5 ms): a recall of ~10 ms took 100-300 ms (p95 / max) beside a keyword index build
at 100,000 frames. So such a build does its work in small pieces and, between pieces, waits
while any request is being answered (:func:`step_aside`); a request then waits at most for
the piece in progress. Requests mark themselves with :func:`answering` (the facade's recall
and save). Under requests that never pause the build still moves on, one piece per
:data:`PATIENCE_SECONDS`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

PATIENCE_SECONDS = 0.05  # the longest a piece of background work waits for requests to pause

_answering = 0
_changed = threading.Condition()


@contextlib.contextmanager
def answering() -> Iterator[None]:
    """Mark a request in progress for the duration of the block."""
    global _answering
    with _changed:
        _answering += 1
    try:
        yield
    finally:
        with _changed:
            _answering -= 1
            if _answering == 0:
                _changed.notify_all()


def in_progress() -> int:
    """Requests being answered now."""
    return _answering


def step_aside(patience: float = PATIENCE_SECONDS) -> None:
    """Between two pieces of background work (blocking: a worker thread): wait until no
    request is being answered, at most ``patience`` seconds."""
    with _changed:
        _changed.wait_for(lambda: _answering == 0, timeout=patience)
