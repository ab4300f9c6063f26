"""The facade's small writes and harvest bookkeeping, applied by the owner: one handler per
typed op of :mod:`queue_schemas.ops` (identity, awareness, entities, relations, cleanup,
harvest runs).

Each runs inside the actor's transaction and savepoint; the op's fields were checked when it
was built, the ``mind`` method each one calls checks the values (limits, names, categories,
modes). SQL lives in those ``mind`` modules, not here.
"""

from __future__ import annotations

from actors.results import (
    AwarenessCleared,
    AwarenessRemoved,
    EntitySaved,
    HarvestFinished,
    IdentitySet,
)
from mind.awareness import AwarenessItem
from mind.cleanup import EntityCleanup, FramesWiped, cleanup_entities, wipe_frames
from mind.frames.model import SaveResult
from mind.harvest.store import HarvestStore
from mind.knowledge.bulk import entity_key, upsert_entities
from mind.knowledge.graph import Relation
from mind.mind import Mind
from queue_schemas import ops


async def set_identity(mind: Mind, op: ops.SetIdentity) -> IdentitySet:
    existed = await mind.identity.exists()
    identity = await mind.identity.set(**op.given())
    return IdentitySet(created=not existed, identity=identity)


async def add_awareness(mind: Mind, op: ops.AddAwareness) -> AwarenessItem:
    return await mind.awareness.add(op.category, op.content, op.priority, op.expires_at)


async def remove_awareness(mind: Mind, op: ops.RemoveAwareness) -> AwarenessRemoved:
    return AwarenessRemoved(await mind.awareness.remove(op.item_id), op.item_id)


async def clear_awareness(mind: Mind, op: ops.ClearAwareness) -> AwarenessCleared:
    return AwarenessCleared(await mind.awareness.clear_category(op.category), op.category)


async def save_entity(mind: Mind, op: ops.SaveEntity) -> EntitySaved:
    entity, created = await mind.knowledge.upsert_entity(op.entity_type, op.name, op.properties)
    return EntitySaved(entity, created)


async def create_relation(mind: Mind, op: ops.CreateRelation) -> Relation:
    return await mind.knowledge.create_relation(
        op.source_id, op.target_id, op.relation_type, op.confidence, op.properties)


async def entities_cleanup(mind: Mind, op: ops.CleanupEntities) -> EntityCleanup:
    return await cleanup_entities(mind.db, op.mode)


async def frames_wipe(mind: Mind, op: ops.WipeFrames) -> FramesWiped:
    return await wipe_frames(mind.db, op.mode)


async def finish_harvest(mind: Mind, op: ops.FinishHarvest) -> HarvestFinished:
    """``path`` is what the run is shown as (a label, a masked URL); only ``sync_path`` (a
    path or URL the server read because its caller named it) becomes re-readable."""
    store = HarvestStore(mind.db)
    await store.finish(op.run_id, status=op.status, error=op.error, source=op.source,
                       path=op.path, content_hash=op.content_hash)
    await store.record_sync(
        op.source, items=op.items, frames=op.frames, path=op.sync_path or None,
        display_name=op.path or None,
        content_hash=op.content_hash if op.status == "completed" else None,
        auto_sync=op.auto_sync, interval_hours=op.interval_hours)
    return HarvestFinished(op.run_id, op.status)


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
    await mind.sessions.title_untitled(op.titles)
    if op.run_id is not None:
        await HarvestStore(mind.db).progress(
            op.run_id, source=op.source, path=op.source_path, content_hash=op.content_hash,
            items=op.items, frames=len(created), cursor=op.cursor)
