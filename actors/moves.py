"""A shard host's side of moving minds between shards (issue #17, ``cluster rebalance``).

A move of mind *m* from host A to host B, each step idempotent so a cut-off rebalance resumes:

1. **expect** (B): B records that *m* is on its way and refuses to open or create it until it
   arrives — a write routed to B by the new shard map meanwhile gets a retryable ``fenced``
   refusal, never a fresh empty file.
2. **release** (A): A records *m* as departed (refusing it from now on), closes its actor —
   every acknowledged write is committed in the file — and hands the file's fencing record to
   B (:func:`mind.storage.fencing.hand_over`). From here the file names B as its owner.
3. **snapshot** (A): SQLite's online backup of the released file, streamed to the rebalancer.
4. **admit** (B): the copy is checked (a mind file, fenced for B at an epoch B may claim) and
   renamed into place with the workspace's metadata; B serves *m*.
5. **retire** (A): once B holds *m* (A asks B), A deletes its file and workspace folder — a
   copy kept aside would be beyond the reach of every later ``forget``; the departure record
   stays, so A keeps forwarding *m*'s requests and queued ops to B and never re-creates *m*
   even if restarted with the old shard map.

Records are small JSON files under ``<data dir>/moves/`` (owner-only), read at start.

Where a departed mind's requests go is operator configuration, never a client's word: the
receiving shard's URL comes from this host's shard map, or from a *move order* — the mind, the
shard, its epoch and URL and an expiry, signed with the deployment key
(:mod:`vocabulary.signing`) by ``cluster rebalance`` from the new map it was given. A departure
records which of the two authorized it; a record without (written before this rule) is not
followed. A departure, and an awaited arrival, can be cancelled (:meth:`MoveBook.cancel`).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final, Literal

from mind.errors import NotFoundError
from mind.storage.fencing import FencedError
from mind.storage.private_files import make_private_dir, write_private_text
from mind.storage.writer_locks import LOCK_SUFFIXES
from vocabulary.ids import PERSONAL_MIND, split_mind_id

MOVES_DIR: Final = "moves"
MOVE_ORDER: Final = "move-order"  # the signing purpose of a move order
ORDER_SECONDS: Final = 600  # how long a signed move order may be used
DepartureState = Literal["released", "retired"]
Authority = Literal["map", "order"]  # what named the receiving shard's URL


def order_payload(mind_id: str, to: str, epoch: int, url: str, expires: int
                  ) -> dict[str, object]:
    """What a move order signs (``expires``: Unix seconds)."""
    return {"mind_id": mind_id, "to": to, "epoch": epoch, "url": url, "expires": expires}


def record_name(mind_id: str) -> str:
    """A file-name-safe form of a (validated) mind id: ``personal``, ``workspace-<slug>``."""
    kind, slug = split_mind_id(mind_id)
    return PERSONAL_MIND if slug is None else f"{kind}-{slug}"


@dataclass(frozen=True, slots=True)
class Departure:
    mind_id: str
    to: str  # the shard it went to
    epoch: int
    url: str  # where that shard serves
    state: DepartureState
    authorized: Authority | None = None  # None: recorded before URLs had to be authorized


class MoveBook:
    """The minds this host released (departures) and the minds it awaits (arrivals)."""

    def __init__(self, data_dir: Path) -> None:
        self.root = data_dir / MOVES_DIR
        self.departed: dict[str, Departure] = {}
        self.awaited: dict[str, str | None] = {}  # mind -> its workspace metadata (JSON)
        if self.root.is_dir():
            for entry in sorted(self.root.glob("*.json")):
                data = json.loads(entry.read_text(encoding="utf-8"))
                if data.get("kind") == "arrival":
                    self.awaited[str(data["mind_id"])] = data.get("metadata")
                else:
                    data.pop("kind", None)
                    self.departed[str(data["mind_id"])] = Departure(**data)
        self.purge_retired()

    def refusal(self, mind_id: str) -> FencedError | None:
        """Why this host may not open ``mind_id`` because of a move (None: no move)."""
        gone = self.departed.get(mind_id)
        if gone is not None:
            return FencedError(f"mind {mind_id} moved to {gone.to} (epoch {gone.epoch})",
                               owner=gone.to)
        if mind_id in self.awaited:
            return FencedError(f"mind {mind_id} is moving to this host; retry in a moment")
        return None

    def incoming(self, mind_id: str) -> Path:
        """Where an arriving copy is written first (this data dir's file system: it is
        renamed into place)."""
        make_private_dir(self.root)
        return self.root / f".incoming-{record_name(mind_id)}.mind"

    def _write(self, name: str, data: dict[str, Any]) -> None:
        make_private_dir(self.root)
        write_private_text(self.root / f"{name}.json", json.dumps(data, sort_keys=True))

    def expect(self, mind_id: str, metadata: str | None) -> None:
        """Await ``mind_id`` (a workspace's checked metadata: admitted with it)."""
        self.awaited[mind_id] = metadata
        self._write(f"{record_name(mind_id)}.arrival",
                    {"kind": "arrival", "mind_id": mind_id, "metadata": metadata})

    def arrived(self, mind_id: str) -> None:
        self.awaited.pop(mind_id, None)
        (self.root / f"{record_name(mind_id)}.arrival.json").unlink(missing_ok=True)

    def cancel_arrival(self, mind_id: str) -> bool:
        """Stop awaiting ``mind_id`` (and drop a copy half-written here); False: not awaited."""
        awaited = mind_id in self.awaited
        self.arrived(mind_id)
        self.incoming(mind_id).unlink(missing_ok=True)
        return awaited

    def cancel_departure(self, mind_id: str) -> Departure:
        """Forget a departure; returns it (NotFoundError: none recorded). A retired one's file
        is first put back from ``moves/`` (the caller re-fences it)."""
        gone = self.departed.get(mind_id)
        if gone is None:
            raise NotFoundError(f"mind {mind_id} has no departure recorded on this host")
        del self.departed[mind_id]
        (self.root / f"{record_name(mind_id)}.departure.json").unlink(missing_ok=True)
        return gone

    def depart(self, departure: Departure) -> None:
        """Record (or advance) a departure: written before the file is touched."""
        self.departed[departure.mind_id] = departure
        self._write(f"{record_name(departure.mind_id)}.departure",
                    {"kind": "departure", **asdict(departure)})

    def retire(self, mind_id: str, path: Path) -> None:
        """Delete the released file (with its WAL, and a workspace's folder): the new owner
        holds the mind (the caller checked), and a copy left here would be out of reach of
        every later ``forget``. Already retired: nothing to do."""
        gone = self.departed.get(mind_id)
        if gone is None:
            raise NotFoundError(f"mind {mind_id} was not released by this host")
        if gone.state != "retired":
            remove_mind_files(mind_id, path)
            self.depart(Departure(gone.mind_id, gone.to, gone.epoch, gone.url, "retired",
                                  gone.authorized))
        shutil.rmtree(self.root / f"{record_name(mind_id)}.{gone.epoch}", ignore_errors=True)

    def purge_retired(self) -> None:
        """Delete the copies of retired minds that older versions kept aside under
        ``moves/`` (``<record>.<epoch>`` folders)."""
        for gone in self.departed.values():
            if gone.state == "retired":
                shutil.rmtree(self.root / f"{record_name(gone.mind_id)}.{gone.epoch}",
                              ignore_errors=True)


def remove_mind_files(mind_id: str, path: Path) -> None:
    """A mind's file with its WAL and shared memory; a workspace's whole folder."""
    _, slug = split_mind_id(mind_id)
    if slug is not None:
        shutil.rmtree(path.parent, ignore_errors=True)
        return
    for suffix in ("", "-wal", "-shm", *LOCK_SUFFIXES):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
