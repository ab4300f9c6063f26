"""Big bulk writes applied in parts: one commit per part, interactive ops between them.

A save waits for the bulk commit already running (:mod:`actors.actor`), so the longest bulk
commit is a save's worst case. An import's ops are big (a harvest batch is up to 2,000 frames:
~130 ms for 1,000 frames on a 2-core AMD EPYC), and so is a cognify job's result (64 frames:
~40 ms there), so the actor splits an unkeyed ``save_frames``, ``harvest_batch`` or
``apply_index`` heavier than its part size into consecutive parts of the bulk lane, each
committed on its own (docs/performance.md, "Save acknowledgement during an import"). New
frames go in bigger parts than index results: a commit has a fixed cost (~7 ms on that machine: its
statements' round trips to the SQLite thread, the FTS5 segment it flushes, the WAL pages it
rewrites), which parts of 32 frames made half an import's write rate. The part size is the
actor's bulk limit of the moment (:meth:`actors.actor.MindActor.bulk_limit`): parts of 1,024
new frames for an import no one saves beside, 128 while saves arrive.

What an op applied in parts keeps and gives up:

- **exactly-once effect**: each part has an op id of its own (``<op_id>#<i>/<n>``), recorded in
  its commit; the last part records the op's id and drops its parts' ids. A redelivered op skips
  the parts already applied (and every part once the op's id is recorded).
- **order**: the parts are consecutive in the bulk lane; a later part is not applied once an
  earlier one failed (it fails with that error), so an import's resume point never passes
  frames that were not written.
- **not all-or-nothing**: a failing part leaves the parts before it committed (a retry applies
  the rest); readers may see an op's first parts before its last. A harvest's resume point
  (``items_done``, ``cursor``) advances only with the last part.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from actors.results import FramesSaved
from mind.cognify_apply import ApplyStats
from mind.storage.idempotency import KEYED_PREFIX
from queue_schemas import ops

ITEMS: Final = {"save_frames": "frames", "harvest_batch": "frames", "apply_index": "results"}
"""The kinds applied in parts, and the field holding their items."""


def part_id(op_id: str, index: int, count: int) -> str:
    return f"{op_id}#{index + 1}/{count}"


@dataclass(slots=True)
class Parted:
    """The parts of one op in flight, shared by them: the op's id, its parts' ids (in order)
    and the first failure."""

    op_id: str
    part_ids: tuple[str, ...]
    failed: BaseException | None = None

    def last(self, op_id: str) -> bool:
        return op_id == self.part_ids[-1]


def split(op: Any, *, frames: int, results: int) -> list[Any] | None:
    """``op`` as parts of at most ``frames`` new frames or ``results`` index results, or None
    when it is applied whole (small, keyed — a keyed op keeps its result for retries — or of a
    kind that is not split)."""
    name = ITEMS.get(op.kind, "")
    items = getattr(op, name, None) if name else None
    size = frames if name == "frames" else results
    if (not isinstance(items, list) or size < 1 or len(items) <= size
            or op.op_id.startswith(KEYED_PREFIX)):
        return None
    count = -(-len(items) // size)
    parts = []
    for index in range(count):
        update: dict[str, Any] = {"op_id": part_id(op.op_id, index, count),
                                  name: items[index * size:(index + 1) * size]}
        if isinstance(op, ops.HarvestBatch):
            gops = {frame.gop_id for frame in update[name]}
            update["titles"] = {g: t for g, t in op.titles.items() if g in gops}
            if index < count - 1:
                update["items"] = 0  # the run's resume point moves with the last part only
        parts.append(op.model_copy(update=update))
    return parts


def merge(results: list[Any], duplicate: Any) -> Any:
    """The op's result from its parts' (``duplicate``: what an op applied before returns).
    Parts applied before (a redelivery) add nothing: their results were not stored."""
    saved = [r for r in results if isinstance(r, FramesSaved)]
    if saved:
        return FramesSaved(tuple(frame for r in saved for frame in r.frames))
    stats = [r for r in results if isinstance(r, ApplyStats)]
    if stats:
        return ApplyStats(**{k: sum(getattr(r, k) for r in stats) for k in ApplyStats.__slots__})
    return duplicate
