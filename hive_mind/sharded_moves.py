"""Moving minds between the hosts of a sharded deployment (``cluster rebalance``): the steps
a host takes for a mind arriving or leaving (:mod:`actors.moves`), as
:class:`hive_mind.sharded.ShardedHiveMind` offers them to the ``/v1/cluster`` routes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from actors.placement import ShardMap
from hive_mind.contract import HostFacade
from hive_mind.move_orders import authorize, confirm_arrival, departure_url
from hive_mind.settings import Settings
from hive_mind.shapes import JsonObject
from hive_mind.workspaces import moved_metadata
from mind.errors import ValidationError
from mind.storage.fencing import Fence

if TYPE_CHECKING:
    from workers.runtime import HostedRuntime


class MindMoves:
    """The move steps of a shard host (a gateway holds no minds: each step refuses)."""

    settings: Settings
    shards: ShardMap
    local: HostFacade | None

    def _runtime(self) -> HostedRuntime:
        from workers.runtime import HostedRuntime

        runtime = None if self.local is None else self.local.runtime
        if not isinstance(runtime, HostedRuntime):
            raise ValidationError("a gateway holds no minds: ask a shard host")
        return runtime

    async def holdings(self) -> JsonObject:
        runtime = self._runtime()
        shard = runtime.shard()
        return {"shard": shard.shard, "epoch": shard.epoch, "minds": await runtime.holdings()}

    async def expect_mind(self, mind_id: str, metadata: str | None = None
                          ) -> JsonObject:
        """Step 1 of a move here, with a workspace's metadata (checked by the workspace
        rules: they are what the workspace is listed with once admitted)."""
        checked = None if metadata is None else moved_metadata(mind_id, metadata)
        self._runtime().expect_mind(mind_id, checked)
        return {"mind_id": mind_id, "expected": True}

    async def cancel_expect(self, mind_id: str) -> JsonObject:
        return {"mind_id": mind_id, "cancelled": self._runtime().cancel_arrival(mind_id)}

    async def release_mind(self, mind_id: str, to: str, epoch: int, url: str | None = None,
                           expires: int | None = None, signature: str | None = None
                           ) -> JsonObject:
        """Step 2 of a move away, to a URL the operator's configuration names
        (:mod:`hive_mind.move_orders`)."""
        runtime = self._runtime()
        where, authority = authorize(self.settings.cluster_secret(), self.shards, mind_id, to,
                                     epoch, url, expires, signature)
        gone = await runtime.release_mind(mind_id, Fence(to, epoch), where, authority)
        return {"mind_id": mind_id, "to": gone.to, "epoch": gone.epoch, "url": gone.url,
                "state": gone.state}

    async def cancel_release(self, mind_id: str) -> JsonObject:
        """Undo a move away that did not complete: this host serves the mind again."""
        gone = await asyncio.to_thread(self._runtime().cancel_departure, mind_id)
        return {"mind_id": mind_id, "cancelled": True, "to": gone.to, "url": gone.url}

    async def snapshot_mind(self, mind_id: str, dest: Path) -> None:
        """A released mind's file copied to ``dest``."""
        await self._runtime().snapshot_mind(mind_id, dest)

    async def mind_metadata(self, mind_id: str) -> str | None:
        """A workspace's metadata file (JSON text) as the move carries it; None: personal."""
        return await asyncio.to_thread(self._runtime().mind_metadata, mind_id)

    def incoming_path(self, mind_id: str) -> Path:
        """Where an arriving copy is written first (this data dir's file system)."""
        path: Path = self._runtime().incoming_path(mind_id)
        return path

    async def admit_mind(self, mind_id: str, copy: Path) -> JsonObject:
        await self._runtime().admit_mind(mind_id, copy)
        return {"mind_id": mind_id, "admitted": True}

    async def retire_mind(self, mind_id: str) -> JsonObject:
        """Step 5 of a move away: once the new owner holds the mind, this copy is deleted."""
        runtime = self._runtime()
        gone = runtime.departed(mind_id)
        if gone is not None and gone.state != "retired":
            await confirm_arrival(departure_url(self.shards, gone), gone)
        await asyncio.to_thread(runtime.retire_mind, mind_id)
        return {"mind_id": mind_id, "retired": True}
