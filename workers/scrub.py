"""Forgetting reaches Redis (issue #45): a forgotten frame's text leaves the queues.

In the distributed mode a frame's text travels to the workers in a queued cognify job, and what
they derived from it (chunk texts, entity names) comes back in a queued ``apply_index`` op; a
job waits up to 7 days, a dead letter keeps its payload as long. When a frame is erased, its
items are taken out of every such job of its mind still waiting in Redis — the cognify queue,
this host's queue, the dead letters' payloads — and a job left with none is deleted. An
``apply_index`` op changed so is signed again with the deployment key when there is one
(:mod:`workers.op_auth`). A job a worker already took is past reach: its results for a frame
that no longer exists are dropped by the owner.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any, Final

from arq.connections import ArqRedis
from arq.constants import job_key_prefix

from queue_schemas.codec import serialize
from queue_schemas.constants import COGNIFY_QUEUE, host_queue
from workers.dead_letters import PAYLOAD_TTL_SECONDS, payload_key, redis_entries
from workers.op_auth import signature_of

FRAME_LISTS: Final = ("items", "results")  # a cognify job's, an apply_index op's


def without(payload: Any, mind_id: str, frame_ids: Collection[int]) -> Any:
    """``payload`` with the frames' entries removed: the same object when nothing changed,
    None when nothing is left."""
    if not isinstance(payload, dict) or payload.get("mind_id") != mind_id:
        return payload
    for field in FRAME_LISTS:
        entries = payload.get(field)
        if not isinstance(entries, list):
            continue
        kept = [e for e in entries if not (isinstance(e, dict) and e.get("frame_id") in frame_ids)]
        if len(kept) != len(entries):
            return {**payload, field: kept} if kept else None
    return payload


async def _scrub_job(redis: ArqRedis, queue: str, job_id: bytes | str, mind_id: str,
                     frame_ids: Collection[int], key: str | None) -> int:
    name = job_id.decode() if isinstance(job_id, bytes) else job_id
    raw = await redis.get(job_key_prefix + name)
    if raw is None:
        return 0
    job = json.loads(raw)
    args = job.get("a") or []
    payload = args[0] if args else None
    left = without(payload, mind_id, frame_ids)
    if left is payload:
        return 0
    if left is None:
        await redis.delete(job_key_prefix + name)
        await redis.zrem(queue, name)
        return 1
    job["a"] = [left, signature_of(key, left)] if job.get("f") == "apply_op" else [left]
    await redis.set(job_key_prefix + name, serialize(job), keepttl=True)
    return 1


async def _scrub_dead_letters(redis: ArqRedis, mind_id: str, frame_ids: Collection[int]) -> int:
    changed = 0
    for _raw, entry in await redis_entries(redis):
        ident = entry.get("id")
        if entry.get("mind_id") != mind_id or not isinstance(ident, str):
            continue
        stored = await redis.get(payload_key(ident))
        payload = None if stored is None else json.loads(stored)
        left = without(payload, mind_id, frame_ids)
        if left is payload:
            continue
        if left is None:
            await redis.delete(payload_key(ident))
        else:
            await redis.set(payload_key(ident), json.dumps(left), ex=PAYLOAD_TTL_SECONDS)
        changed += 1
    return changed


async def forget_queued(redis: ArqRedis, host_id: str, mind_id: str,
                        frame_ids: Collection[int], key: str | None = None) -> int:
    """Take ``frame_ids`` of ``mind_id`` out of every job waiting in Redis; how many jobs and
    dead letters changed."""
    changed = 0
    for queue in (COGNIFY_QUEUE, host_queue(host_id)):
        for job_id in await redis.zrange(queue, 0, -1):
            changed += await _scrub_job(redis, queue, job_id, mind_id, frame_ids, key)
    return changed + await _scrub_dead_letters(redis, mind_id, frame_ids)
