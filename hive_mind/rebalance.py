"""``hive-mind cluster rebalance``: after shards are added or removed, move each mind whose
owner changed to its new owner (issue #17), with no acknowledged write lost.

The plan comes from what the hosts actually hold (``GET /v1/cluster/minds`` on every host of
the old and the new shard map; all must answer, since a host that does not may hold minds):
a mind whose new owner already holds its file fenced for it is done (an old copy handed over
but not yet put aside is retired); else its one live holder (or, for a move cut off midway, the
holder of the copy already handed over) is the source. Two live copies of one mind are never
moved: they are reported for the operator.

Each move runs the steps of :mod:`actors.moves` — expect on the new owner, release on the old
(its actor closes after committing every acknowledged write, and the file's fencing record
names the new owner), the online-backup copy, admit, retire — each idempotent, so running the
command again resumes a cut-off rebalance. While one mind moves, its requests get a retryable
503; every other mind is served as before. Afterwards the old owner forwards the mind's
requests and queued ops to the new one until every host runs the new shard map.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

import httpx

from actors.placement import ShardMap
from hive_mind.move_orders import sign_order
from hive_mind.remote import POOL_LIMITS, error_of
from hive_mind.settings import Settings

TIMEOUT: Final = httpx.Timeout(3600.0, connect=5.0)  # a copy of a large mind takes a while


async def _chunks(path: Path) -> AsyncIterator[bytes]:
    """A file's bytes for a streamed upload, 1 MiB at a time."""
    with path.open("rb") as handle:
        while chunk := await asyncio.to_thread(handle.read, 1 << 20):
            yield chunk


@dataclass(frozen=True, slots=True)
class Move:
    mind_id: str
    source: str
    target: str
    release: bool  # False: the source handed it over already (a resumed move)


@dataclass
class Plan:
    moves: list[Move]
    retire: list[tuple[str, str]]  # (mind, holder): an old copy to put aside
    problems: list[str]
    hosts: dict[str, str]  # shard -> URL (old and new maps)
    epochs: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return {"moves": [asdict(m) for m in self.moves],
                "retire": [{"mind_id": m, "holder": h} for m, h in self.retire],
                "problems": self.problems}


def make_plan(held: dict[str, dict[str, Any]], hosts: dict[str, str], new: ShardMap) -> Plan:
    """The moves from every host's holdings (``GET /v1/cluster/minds`` by shard) to the owners
    of ``new`` (see the module docstring)."""
    epochs = {s: int(h["epoch"]) for s, h in held.items()}
    files: dict[str, dict[str, dict[str, Any] | None]] = {}  # mind -> holder -> fence
    departed: dict[str, set[str]] = {}  # mind -> holders that handed it over
    for shard, report in held.items():
        if report["shard"] != shard:
            raise RuntimeError(f"{hosts[shard]} answers as {report['shard']}, "
                               f"not {shard}: fix its HIVE_MIND_HOST_ID first")
        for row in report["minds"]:
            if "bytes" in row:
                files.setdefault(row["mind_id"], {})[shard] = row["fence"]
            elif "departed" in row:
                departed.setdefault(row["mind_id"], set()).add(shard)
    plan = Plan([], [], [], dict(hosts), epochs)
    for mind_id, holders in sorted(files.items()):
        target = new.owner(mind_id)
        handed = {h for h, f in holders.items() if f and f["shard"] != h}
        live = [h for h in holders if h not in handed and h not in departed.get(mind_id, ())]
        if target in holders and (holders[target] or {}).get("shard", target) == target:
            plan.retire.extend((mind_id, h) for h in sorted(handed)
                               if h != target and h in departed.get(mind_id, ()))
            stale = [h for h in live if h != target]
            if stale:
                plan.problems.append(f"{mind_id}: held by {target} and also live on "
                                     f"{', '.join(stale)}")
            continue
        if len(live) > 1:
            plan.problems.append(f"{mind_id}: live copies on {', '.join(live)}; not moved")
        elif live:
            plan.moves.append(Move(mind_id, live[0], target, release=True))
        else:
            ready = [h for h in holders if (holders[h] or {}).get("shard") == target]
            if ready:
                plan.moves.append(Move(mind_id, ready[0], target, release=False))
            else:
                plan.problems.append(f"{mind_id}: handed to another shard than {target}")
    return plan


class Rebalancer:
    def __init__(self, settings: Settings, new: ShardMap, old: ShardMap | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.new = new
        self.key = settings.cluster_secret()  # signs move orders to shards the source lacks
        self.hosts = {**(old.shards if old else {}), **new.shards}
        headers = {"User-Agent": "hive-mind-rebalance"}
        token = settings.api_secret()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.http = httpx.AsyncClient(headers=headers, timeout=TIMEOUT, transport=transport,
                                      limits=POOL_LIMITS)

    async def close(self) -> None:
        await self.http.aclose()

    async def _call(self, shard: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = await self.http.request(method, f"{self.hosts[shard]}/v1/cluster{path}",
                                           **kwargs)
        if response.status_code >= 400:  # the host's own error class (a fenced mind, …)
            raise error_of(response, f"{shard}: ")
        return response

    @staticmethod
    def _mind(mind_id: str) -> str:
        return f"/minds/{quote(mind_id, safe='')}"

    async def plan(self) -> Plan:
        answers = await asyncio.gather(*(self._call(s, "GET", "/minds") for s in self.hosts))
        held = {s: a.json() for s, a in zip(self.hosts, answers, strict=True)}
        return make_plan(held, self.hosts, self.new)

    async def move(self, move: Move, epochs: dict[str, int]) -> None:
        """One mind's move, every step idempotent (see :mod:`actors.moves`)."""
        path = self._mind(move.mind_id)
        meta = (await self._call(move.source, "GET", f"{path}/metadata")).json()["metadata"]
        await self._call(move.target, "POST", f"{path}/expect", json={"metadata": meta})
        if move.release:
            await self._call(move.source, "POST", f"{path}/release",
                             json=self.release_order(move, epochs[move.target]))
        with tempfile.TemporaryDirectory(prefix="hive-mind-rebalance-") as tmp:
            copy = Path(tmp) / "mind.sqlite"
            async with self.http.stream(
                    "GET", f"{self.hosts[move.source]}/v1/cluster{path}/snapshot") as stream:
                if stream.status_code >= 400:
                    await stream.aread()
                    raise error_of(stream, f"{move.source}: ")
                with copy.open("wb") as out:
                    async for chunk in stream.aiter_bytes(1 << 20):
                        out.write(chunk)
            await self._call(move.target, "PUT", f"{path}/snapshot", content=_chunks(copy),
                             headers={"Content-Type": "application/vnd.sqlite3"})
        await self._call(move.source, "POST", f"{path}/retire")

    def release_order(self, move: Move, epoch: int) -> dict[str, object]:
        """The ``release`` body: signed when this process has the deployment key (the source
        may not know the target from its own, older map), else the target by its shard id
        (the source takes the URL from its map)."""
        url = self.hosts[move.target]
        if self.key is None:
            return {"to": move.target, "epoch": epoch, "url": url}
        return sign_order(self.key, move.mind_id, move.target, epoch, url)

    async def run(self, plan: Plan, on_step: Callable[[int], None] | None = None
                  ) -> dict[str, Any]:
        """Every move of ``plan``, one mind at a time; ``on_step(minds moved)``."""
        done: list[str] = []
        for move in plan.moves:
            await self.move(move, plan.epochs)
            done.append(move.mind_id)
            if on_step is not None:
                on_step(len(done))
        for mind_id, holder in plan.retire:
            await self._call(holder, "POST", f"{self._mind(mind_id)}/retire")
        return {**plan.as_dict(), "moved": done}
