"""``hive-mind status``: embedder, queue and per-mind index state, plus the configuration.

Nothing here shows a secret: the configuration is :meth:`Settings.redacted`, and error texts
(which may quote a provider or Redis URL) go through :func:`mind.redact.mask_text`."""

from __future__ import annotations

import json
from typing import Any

from actors.host import list_minds, mind_path
from hive_mind.settings import Settings
from mind.embeddings.chain import EmbeddingProviderChain
from mind.errors import HiveMindError
from mind.external import ExternalSourceError
from mind.mind import Mind
from mind.redact import mask_text, mask_url
from queue_schemas.constants import DEAD_LETTERS_KEY
from workers.queue import connect, queue_status


async def minds_status(settings: Settings) -> list[dict[str, Any]]:
    out = []
    for mind_id in list_minds(settings.data_dir):
        async with await Mind.open(mind_path(settings.data_dir, mind_id), readonly=True) as m:
            vectors = await m.vectors.counts()
            out.append({
                "id": mind_id,
                "frames": await m.frames.count(),
                "pending_index": await m.outbox.count(),
                "vectors": vectors["frame_vectors"],
                "entities": await m.knowledge.get_entity_count(),
            })
    return out


async def embedder_status(settings: Settings, *, probe: bool) -> dict[str, Any]:
    cfg = settings.embedding_config()
    if not probe:
        return {"provider": cfg.provider, "model": cfg.model, "dimensions": None,
                "degraded": None, "probed": False}
    async with EmbeddingProviderChain(cfg) as chain:
        await chain.start()
        status = chain.status()
    return {"provider": status["provider"], "model": status["model"],
            "dimensions": status["dimensions"], "degraded": status["degraded"],
            "last_error": mask_text(str(status["last_error"])) if status.get("last_error")
            else None, "probed": True}


async def external_status(settings: Settings, *, probe: bool) -> dict[str, Any] | None:
    """The external knowledge source (null when none is configured): its name, URL (masked),
    timeout, and — only when probing — whether it answers a one-result search."""
    source = settings.external_source()
    if source is None:
        return None
    out: dict[str, Any] = {"name": source.name, "url": mask_url(source.base_url),
                           "timeout": source.timeout, "reachable": None, "error": None}
    if probe:
        async with source:
            try:
                await source.search("hive-mind status probe", 1)
                out["reachable"] = True
            except ExternalSourceError as exc:
                out["reachable"], out["error"] = False, mask_text(str(exc))
    return out


async def dead_letters_by_mind(redis: Any) -> dict[str, int]:
    """How many dead-lettered jobs each mind has (the list is capped, so this is cheap)."""
    counts: dict[str, int] = {}
    for raw in await redis.lrange(DEAD_LETTERS_KEY, 0, -1):
        try:
            mind = json.loads(raw).get("mind_id") or "unknown"
        except (ValueError, AttributeError):
            mind = "unknown"
        counts[mind] = counts.get(mind, 0) + 1
    return counts


async def collect(settings: Settings, *, probe: bool = True) -> dict[str, Any]:
    queue: dict[str, Any]
    if settings.redis_url:
        try:
            redis = await connect(settings.redis_url)
            try:
                queue = await queue_status(redis, [settings.host_id])
                queue["dead_letters_by_mind"] = await dead_letters_by_mind(redis)
            finally:
                await redis.aclose()
        except HiveMindError as exc:
            queue = {"depth": None, "in_progress": None, "dead_letters": None,
                     "error": mask_text(str(exc))}  # e.g. a Redis URL with a password
    else:
        queue = {"depth": 0, "in_progress": 0, "dead_letters": 0, "mode": "embedded",
                 "dead_letters_by_mind": {}}
    return {
        "mode": "embedded" if settings.embedded else "distributed",
        "embedder": await embedder_status(settings, probe=probe),
        "external": await external_status(settings, probe=probe),
        "queue": queue,
        "minds": await minds_status(settings),
        "config": settings.redacted(),
    }
