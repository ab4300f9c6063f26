"""``hive-mind cluster status``: the shards of a sharded deployment (issue #17), each asked
over HTTP — is it up (``/healthz``, with its latency), what it holds (its own ``/v1/status``:
minds, frames, index lag) — and every host queue's depth from Redis when this process has a
Redis URL. A shard that does not answer within ``PROBE_SECONDS`` is reported down, never
waited for; the shards are asked at once.

The requests carry the hop marker (:mod:`hive_mind.forwarding`), so a shard answers with its
own status and does not ask the cluster again.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Final

import httpx

from actors.placement import ShardMap
from hive_mind.forwarding import stamp
from hive_mind.settings import Settings
from mind.redact import mask_text
from queue_schemas.constants import host_queue

PROBE_SECONDS: Final = 3.0


async def _probe(client: httpx.AsyncClient, shard: str, url: str) -> dict[str, Any]:
    out: dict[str, Any] = {"shard": shard, "url": url, "alive": False, "latency_ms": None,
                           "minds": None, "frames": None, "pending_index": None,
                           "epoch": None, "error": None}
    started = time.perf_counter()
    try:
        health = await client.get(f"{url}/healthz")
        out["latency_ms"] = round((time.perf_counter() - started) * 1000, 1)
        out["alive"] = health.status_code == 200
        status = await client.get(f"{url}/v1/status", params={"probe": "false"})
        status.raise_for_status()
        report = status.json()
    except (httpx.HTTPError, ValueError) as exc:
        out["error"] = mask_text(f"{type(exc).__name__}: {exc}".rstrip(": "))
        return out
    minds = report.get("minds") or []
    out["minds"] = len(minds)
    out["mind_ids"] = [str(m.get("id")) for m in minds]
    out["frames"] = sum(int(m.get("frames") or 0) for m in minds)
    out["pending_index"] = sum(int(m.get("pending_index") or 0) for m in minds)
    out["epoch"] = (report.get("config") or {}).get("shard_epoch")
    if report.get("shard") not in (None, shard):
        out["error"] = f"answers as {report.get('shard')}: its HIVE_MIND_HOST_ID is not {shard}"
    return out


async def _queue_depths(settings: Settings, shards: ShardMap) -> dict[str, Any] | None:
    if not settings.redis_url:
        return None
    from workers.queue import QueueUnavailableError, connect, queue_status

    try:
        redis = await asyncio.wait_for(connect(settings.redis_url), PROBE_SECONDS)
    except (QueueUnavailableError, TimeoutError, OSError) as exc:
        return {"error": mask_text(str(exc))}
    try:
        return await queue_status(redis, sorted(shards.shards))
    finally:
        await redis.close()


async def cluster_status(settings: Settings, shards: ShardMap) -> dict[str, Any]:
    """Every shard's liveness and holdings, and the queues (see the module docstring)."""
    headers = {"User-Agent": "hive-mind-cluster"}
    token = settings.api_secret()
    if token:
        headers["Authorization"] = f"Bearer {token}"
    async with httpx.AsyncClient(headers=headers, timeout=PROBE_SECONDS,
                                 event_hooks={"request": [stamp]}) as client:
        probes, queues = await asyncio.gather(
            asyncio.gather(*(_probe(client, s, u) for s, u in sorted(shards.shards.items()))),
            _queue_depths(settings, shards))
    if queues is not None and "queues" in queues:
        for row in probes:
            row["queued_ops"] = queues["queues"].get(host_queue(row["shard"]))
    return {"shards": list(probes), "alive": sum(1 for p in probes if p["alive"]),
            "queue": queues}
