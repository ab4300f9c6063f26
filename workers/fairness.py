"""The order of cognify work: interactive before bulk, and minds taking turns within bulk.

A job's priority (:data:`vocabulary.enums.JobPriority`) says who waits for it. **Interactive**
jobs — a save, one ingested document — run before any bulk job, oldest first. **Bulk** jobs —
harvest imports, re-embeds, outbox re-sends — are ordered by start-time fair queuing: each
mind's jobs get virtual start *tags* spaced by their size in frames, and a mind's first tag is
never below the system's virtual time (the tag of the bulk job at the front of the queue). So a
mind that queues 3,000 jobs and a mind that then queues 3 take turns frame for frame, and a mind
that wakes up starts at the front, not behind another mind's backlog. :class:`FairClock` hands
out the tags; each place that queues jobs keeps one.

The embedded runner keeps its queue in a heap ordered by :func:`order_key`. A Redis (arq) queue
is a sorted set that every worker serves lowest score first (among the scores not in the
future), so in the distributed mode the order is written into the scores (:func:`score`):

==============  ===========================================  ==============================
priority        score                                        order among them
==============  ===========================================  ==============================
interactive     enqueue time (ms) − :data:`INTERACTIVE_SHIFT`  first queued, first served
bulk            :data:`BULK_BASE` + tag × :data:`UNITS_PER_FRAME`  fair tags
==============  ===========================================  ==============================

Both bands lie far in the past, so no job waits for its score's time and any number of
unmodified arq workers honour the order just by reading the front of the queue. A job deferred
to a wall-clock time (arq's own ``defer``, maintenance ops spread over the night) scores in the
present and so sorts after both bands: that is why a failing job here waits out its back-off
before asking arq to retry it with no defer (:func:`workers.queue.guarded`), which keeps its
place. Scores stay exact integers in a double (|score| < 2**53).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Final

from vocabulary.enums import JobPriority

INTERACTIVE_SHIFT: Final = 8 * 10**15  # ms: interactive scores ≈ now − 8e15 (< BULK_BASE)
BULK_BASE: Final = -4 * 10**15  # bulk scores from here up: room for 4e12 frames of tags
UNITS_PER_FRAME: Final = 1000  # score units per frame of tag (arq rounds scores to the ms)
_PRUNE_AT = 4096  # minds remembered before those with nothing queued are forgotten


class FairClock:
    """Start-time fair queuing tags, per mind, in frames."""

    def __init__(self) -> None:
        self._virtual = 0.0
        self._finish: dict[str, float] = {}

    @property
    def virtual(self) -> float:
        return self._virtual

    def tags(self, mind_id: str, costs: Sequence[int], *, front: float | None) -> list[float]:
        """Start tags of ``mind_id``'s next jobs, each of ``costs[i]`` frames. ``front``: the
        smallest tag still queued (or running), ``None`` when nothing bulk is queued — then
        everything tagged so far has been served, and the clock moves past it."""
        self.advance(front)
        start = max(self._virtual, self._finish.get(mind_id, 0.0))
        out = []
        for cost in costs:
            out.append(start)
            start += max(1, cost)
        self._finish[mind_id] = start
        if len(self._finish) > _PRUNE_AT:  # at or below the clock, a finish tag changes nothing
            self._finish = {m: f for m, f in self._finish.items() if f > self._virtual}
        return out

    def advance(self, front: float | None) -> None:
        if front is None:
            self._virtual = max(self._virtual, *self._finish.values(), 0.0)
        else:
            self._virtual = max(self._virtual, front)


def order_key(priority: JobPriority, tag: float, seq: int) -> tuple[int, float, int]:
    """The embedded runner's heap key: interactive (by arrival), then bulk by tag."""
    return (0, 0.0, seq) if priority == "interactive" else (1, tag, seq)


def score(priority: JobPriority, tag: float = 0.0, *, now_ms: int | None = None) -> int:
    """The arq score that puts a job where :func:`order_key` would."""
    if priority == "interactive":
        return _now_ms(now_ms) - INTERACTIVE_SHIFT
    return BULK_BASE + round(tag * UNITS_PER_FRAME)


def defer_by(priority: JobPriority, tag: float = 0.0) -> timedelta:
    """The (negative) ``_defer_by`` that makes arq's ``enqueue_job`` score a job
    :func:`score`: arq adds it to its own enqueue time (exact for interactive jobs, within a
    millisecond — a thousandth of a frame's tag — for bulk ones). Always pass ``_expires``
    with it: arq derives a missing expiry from the score, which here is long past."""
    now = _now_ms(None)
    return timedelta(milliseconds=score(priority, tag, now_ms=now) - now)


def _now_ms(now_ms: int | None) -> int:
    return time.time_ns() // 1_000_000 if now_ms is None else now_ms


def band_of(value: float) -> str:
    """Which band a queue score is in: ``interactive``, ``bulk`` or ``scheduled`` (a
    wall-clock time: deferred maintenance, a job queued by something that knows no bands)."""
    if value < BULK_BASE:
        return "interactive"
    return "bulk" if value < 0 else "scheduled"


BAND_BOUNDS: Final = {  # zcount/zrangebyscore bounds of each band ("(" = exclusive)
    "interactive": ("-inf", f"({BULK_BASE}"),
    "bulk": (str(BULK_BASE), "(0"),
    "scheduled": ("0", "+inf"),
}


def tag_of(value: float) -> float:
    """The tag of a bulk-band score."""
    return (value - BULK_BASE) / UNITS_PER_FRAME
