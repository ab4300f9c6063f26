"""The facade's small writes (``MindCall`` ops) and harvest batches, applied by the owner.

Each function runs inside the actor's transaction and savepoint; arguments are validated by
the mind methods they reach (unknown argument names are a :class:`ValidationError`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mind.cleanup import cleanup_entities, wipe_frames
from mind.errors import ValidationError
from mind.frame import SaveResult
from mind.harvest_store import HarvestStore
from mind.kg_bulk import entity_key, upsert_entities
from mind.mind import Mind
from queue_schemas import ops

Call = Callable[..., Awaitable[Any]]


async def set_identity(mind: Mind, **fields: Any) -> dict[str, Any]:
    existed = await mind.identity.exists()
    identity = await mind.identity.set(**{k: v for k, v in fields.items() if v is not None})
    return {"action": "updated" if existed else "created", **identity.to_dict()}


async def add_awareness(mind: Mind, *, category: str, content: str, priority: int = 0,
                        expires_at: str | None = None) -> dict[str, Any]:
    item = await mind.awareness.add(category, content, priority, expires_at)
    return item.to_dict()


async def remove_awareness(mind: Mind, *, item_id: int) -> dict[str, Any]:
    return {"removed": await mind.awareness.remove(item_id), "id": item_id}


async def clear_awareness(mind: Mind, *, category: str) -> dict[str, Any]:
    return {"cleared": await mind.awareness.clear_category(category), "category": category}


async def save_entity(mind: Mind, *, entity_type: str, name: str,
                      properties: dict[str, Any] | None = None) -> dict[str, Any]:
    entity, created = await mind.knowledge.upsert_entity(entity_type, name, properties)
    return {**entity.to_dict(), "created": created, "updated": not created}


async def create_relation(mind: Mind, *, source_id: int, target_id: int, relation_type: str,
                          confidence: float = 1.0,
                          properties: dict[str, Any] | None = None) -> dict[str, Any]:
    relation = await mind.knowledge.create_relation(
        source_id, target_id, relation_type, confidence, properties)
    return relation.to_dict()


async def entities_cleanup(mind: Mind, *, mode: str) -> dict[str, Any]:
    return await cleanup_entities(mind.db, mode)


async def frames_wipe(mind: Mind, *, mode: str) -> dict[str, Any]:
    return await wipe_frames(mind.db, mode)


async def harvest_finish(
    mind: Mind, *, run_id: str, source: str, status: str, path: str = "",
    content_hash: str = "", items: int = 0, frames: int = 0, error: str | None = None,
    auto_sync: bool | None = None, interval_hours: int | None = None,
    sync_path: str | None = None,
) -> dict[str, Any]:
    """``path`` is what the run is shown as (a label, a masked URL); only ``sync_path`` (a
    path or URL the server read because its caller named it) becomes re-readable."""
    store = HarvestStore(mind.db)
    await store.finish(run_id, status=status, error=error, source=source, path=path,
                       content_hash=content_hash)
    synced = await store.record_sync(
        source, items=items, frames=frames, path=sync_path or None, display_name=path or None,
        content_hash=content_hash if status == "completed" else None,
        auto_sync=auto_sync, interval_hours=interval_hours)
    return {"run": await store.run(run_id), "source": synced}


CALLS: dict[str, Call] = {
    "identity.set": set_identity,
    "awareness.add": add_awareness,
    "awareness.remove": remove_awareness,
    "awareness.clear_category": clear_awareness,
    "entity.save": save_entity,
    "relation.create": create_relation,
    "entities.cleanup": entities_cleanup,
    "frames.wipe": frames_wipe,
    "harvest.finish": harvest_finish,
}


async def call(mind: Mind, op: ops.MindCall) -> Any:
    try:
        return await CALLS[op.method](mind, **op.args)
    except TypeError as exc:  # unknown or missing argument names
        raise ValidationError(f"{op.method}: {exc}") from exc


async def harvest_progress(mind: Mind, op: ops.HarvestBatch, results: list[SaveResult]) -> None:
    """Session titles for new conversations, entities the source named explicitly (markdown
    bold terms: ``metadata["entities"]``) linked to their frames, and the run's progress — all
    in the batch's savepoint."""
    created = [r.frame for r in results if r.created]
    named = [(f.id, str(name)) for f in created
             for name in (f.metadata.get("entities") or []) if isinstance(name, str)
             and name.strip()]
    if named:
        ids = await upsert_entities(
            mind.db, [("concept", name, {"source": op.source}) for _, name in named])
        await mind.knowledge.link_entities_to_frames(
            (ids[entity_key("concept", name)], fid) for fid, name in named)
    for gop_id, title in op.titles.items():
        await mind.db.execute(
            "UPDATE sessions SET summary = ? WHERE gop_id = ? AND summary IS NULL",
            (title, gop_id))
    if op.run_id is not None:
        await HarvestStore(mind.db).progress(
            op.run_id, source=op.source, path=op.source_path, content_hash=op.content_hash,
            items=op.items, frames=len(created), cursor=op.cursor)
