"""The work one import may do: a deadline over its parsing, checked where adapters loop.

An import's input decides how much work parsing it takes, and a small input can ask for a lot
(PDF pages sharing one large content stream, a conversation chain walked once per node). Each
adapter bounds its own algorithm (linear passes, one ``ZipFile`` per input, content budgets);
this is the bound over all of them: the harvest driver (:mod:`workers.harvest`) starts a
deadline of :data:`IMPORT_SECONDS` for parsing and writing, and :func:`check` — called per item
by the driver and per page, member or node where an adapter can spend long on one item —
stops the import with a :class:`HarvestError` once it passed. What was written before stays,
and the run is resumable: importing the same input again continues after it.

The deadline travels in a context variable, so the threads the driver parses in (``asyncio.
to_thread`` copies the context) see it; outside an import there is none.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

from mind.harvest.errors import HarvestError

IMPORT_SECONDS: Final = 1800.0
_deadline: ContextVar[tuple[float, float] | None] = ContextVar("hive_mind_import_deadline",
                                                               default=None)


@contextmanager
def deadline(seconds: float | None = None) -> Iterator[None]:
    """Parsing inside this block stops ``seconds`` (default :data:`IMPORT_SECONDS`) from now
    (:func:`check`)."""
    seconds = IMPORT_SECONDS if seconds is None else seconds
    token = _deadline.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _deadline.reset(token)


def check(path: str = "", position: str = "") -> None:
    """Raise :class:`HarvestError` when the current import's deadline has passed."""
    current = _deadline.get()
    if current is not None and time.monotonic() > current[0]:
        raise HarvestError(
            f"the import took longer than {current[1]:,.0f} s and stopped here; what came "
            "before it is saved: import it again to continue", path=path, position=position)
