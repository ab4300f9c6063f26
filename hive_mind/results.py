"""The JSON shapes the facade returns, shared by CLI, MCP and HTTP."""

from __future__ import annotations

from collections.abc import Mapping
from functools import singledispatch
from typing import TYPE_CHECKING, Any, cast

from actors.results import AwarenessCleared as AwarenessClearedResult
from actors.results import (
    AwarenessRemoved,
    Deduped,
    EntitySaved,
    FramesSaved,
    HarvestFinished,
    IdentitySet,
    Reconciled,
    Reembedded,
    Touched,
)
from hive_mind.shapes import (
    AwarenessCleared,
    AwarenessShape,
    EntityView,
    Explained,
    ExternalReport,
    FrameShape,
    IdentitySaved,
    JsonObject,
    LinkedFrame,
    RecallDetail,
    RecallHit,
    RecallResult,
    RelationShape,
    Routing,
    SavedEntity,
    WorkspaceMeta,
)
from mind.awareness import AwarenessItem
from mind.cleanup import EntitiesDeduped, EntitiesRetired, EntityAudit, FramesWiped
from mind.cognify_apply import ApplyStats
from mind.frames.compaction import CompactResult
from mind.frames.forget import Erasure
from mind.frames.model import Frame
from mind.knowledge import supersession
from mind.knowledge.graph import Relation
from mind.knowledge.store import Entity, KnowledgeGraph

if TYPE_CHECKING:  # a recall's results: the search is loaded by the recall that made them
    from mind.retrieval.candidates import SearchResult
    from mind.retrieval.combined import CombinedResult, CombinedRetrievalResult
    from mind.retrieval.external import ExternalDocument

FRAME_FIELDS = ("id", "frame_type", "gop_id", "t", "content", "importance", "source",
                "created_at", "recorded_at", "metadata")


def frame_dict(frame: Frame) -> FrameShape:
    return {"id": frame.id, "frame_type": frame.frame_type, "gop_id": frame.gop_id,
            "t": frame.t, "content": frame.content, "importance": frame.importance,
            "source": frame.source, "created_at": frame.created_at,
            "recorded_at": frame.recorded_at, "metadata": frame.metadata}


def linked_frame(frame: Frame, references: list[int]) -> LinkedFrame:
    """The frame and what a P- or B-frame links to: ``base_frame_id`` (a P-frame's I-frame, a
    B-frame's first reference) and a B-frame's ``references``; an I-frame has neither key."""
    out = cast(LinkedFrame, frame_dict(frame))
    if frame.frame_type != "I":
        out["base_frame_id"] = frame.base_frame_id
    if frame.frame_type == "B":
        out["references"] = references
    return out


def recall_dict(result: SearchResult, origin: str, *, explain: bool = False,
                conflict: str | None = None) -> RecallResult:
    hit: RecallHit = {
        **frame_dict(result.frame),
        "score": round(result.score, 6),
        "absolute_relevance": _rounded(result.absolute_relevance),
        "rrf": result.rrf,
        "relevance": result.relevance,
        "final": result.final,
        "from": origin,
    }
    return _with_conflict(hit, explain_dict(result) if explain else None, explain, conflict)


def _with_conflict(hit: RecallHit, why: JsonObject | None, explain: bool,
                   conflict: str | None) -> RecallResult:
    """A result's ``explain`` (when asked) and then its ``conflict``, in that key order."""
    extra: Explained = {"explain": why} if explain else {}
    return {**hit, **extra, "conflict": conflict}


def external_dict(doc: ExternalDocument, origin: str, *, explain: bool = False,
                  conflict: str | None = None) -> RecallResult:
    """A document of the external source in a recall result's shape: the frame fields it has
    no value for are null, ``id`` is the source's document id (text), ``source`` is
    ``external``, ``metadata`` holds ``title``, ``type``, ``url`` and the source's own
    ``metadata``; no lane scores (``rrf``, ``relevance``, ``final``, ``explain`` are null)."""
    hit: RecallHit = {
        "id": doc.document_id, "frame_type": None, "gop_id": None, "t": None,
        "content": doc.content, "importance": None, "source": "external",
        "created_at": None, "recorded_at": None,
        "metadata": {"title": doc.title, "type": doc.document_type, "url": doc.url,
                     "metadata": doc.metadata},
        "score": round(doc.score, 6), "absolute_relevance": None, "rrf": None,
        "relevance": None, "final": None,
        "from": origin,
    }
    return _with_conflict(hit, None, explain, conflict)


def combined_dict(result: CombinedResult, *, explain: bool = False) -> RecallResult:
    """One recall result: a frame or an external document, ``from`` naming where
    it came from and ``conflict`` the conflict note(s) it takes part in (else null)."""
    if result.hit is not None:
        return recall_dict(result.hit, result.origin, explain=explain, conflict=result.conflict)
    assert result.document is not None
    return external_dict(result.document, result.origin, explain=explain,
                         conflict=result.conflict)


def recall_response(combined: CombinedRetrievalResult, limit: int, *, explain: bool = False
                    ) -> RecallDetail:
    """The whole answer of a recall, as ``POST /v1/recall`` returns it: ``results`` (merged,
    at most ``limit``), ``count``, ``conflicts`` (``{note, from: [workspace:<id>,
    external:<name>]}``, each also on the results it concerns) and ``external`` (null when no
    external source is configured, else ``{name, queried, error}``) and ``routing`` (null when
    every mind in scope was searched, else ``{searched, workspaces}``: a scope-all recall over
    more workspaces than ``HIVE_MIND_SCOPE_MINDS`` searched that many, chosen by content)."""
    results = [combined_dict(r, explain=explain) for r in combined.merged(limit)]
    external: ExternalReport | None = None if combined.external_name is None else {
        "name": combined.external_name, "queried": combined.external_queried,
        "error": combined.external_error}
    routed = combined.routing
    routing: Routing | None = None if routed is None else {
        "searched": routed["searched"], "workspaces": routed["workspaces"]}
    return {"results": results, "count": len(results),
            "conflicts": [{"note": c.note, "from": list(c.origins)} for c in combined.conflicts],
            "external": external, "routing": routing}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def explain_dict(result: SearchResult) -> JsonObject:
    """Why a result ranked where it did (``recall --explain``): each lane's 1-based rank (null when
    that lane did not find it), the cosine ``similarity`` of the vector lane, ``lanes`` (the
    lanes' fused score), the conversation signals added to it (``session``, ``neighbour``,
    ``part``: what a two-event question's events, each asked alone, add
    (:mod:`mind.retrieval.query_parts`), and ``update``: what lifts a later statement just above
    the earlier one it supersedes) giving ``fused``, the ``match`` multiplier (speaker × time ×
    ``spread``: a gathering question's share for a turn with better turns of its own
    conversation), the re-score factors combined into ``relevance``, and ``final`` = fused ×
    match × relevance, the sort key; ``score`` is ``final`` normalized to [0, 1]. ``popularity``
    only breaks ties. Floats are rounded to 6 digits. A catch-up result has no lanes or factors
    (nulls) and names its ``reason`` instead; a result a cross-encoder re-ranked carries
    ``reranked: true`` and its ``final`` is the reranker's logit. ``superseded_by`` /
    ``supersedes``: the ids of the later statements that replace this one / the earlier ones it
    replaces (:mod:`mind.knowledge.supersession`), empty for none. ``path``: what ran —
    ``lanes``, ``briefing`` (a catch-up without a topic: no lanes, the factors are null) or
    ``catch-up about '<topic>': lanes, decisions first``. ``absolute_relevance`` and its
    evidence: ``above_background`` (cosine minus the query's mean cosine to this mind's frames;
    null without a vector) and ``coverage`` (share of the query's words the frame holds),
    :mod:`mind.retrieval.relevance`. ``decision`` (a factor of ``match``): 1.5 for a turn that
    states a decision about a catch-up's topic, else 1 (:mod:`mind.retrieval.catchup`)."""
    factors = result.factors

    def factor(name: str) -> float | None:
        return _rounded(factors.get(name))

    out: JsonObject = {
        "keyword_rank": None if result.keyword_rank is None else result.keyword_rank + 1,
        "vector_rank": None if result.vector_rank is None else result.vector_rank + 1,
        "similarity": _rounded(result.similarity),
        "lanes": _rounded(result.rrf),
        "session": factor("session"),
        "neighbour": factor("neighbour"),
        "part": factor("part"),
        "update": factor("update"),
        "fused": factor("fused"),
        "speaker_match": bool(factors.get("speaker")),
        "time_match": bool(factors.get("time")),
        "match": factor("match"),
        "spread": factor("spread"),
        "decision": factor("decision"),
        "recency": factor("recency"),
        "importance": factor("importance"),
        "proximity": factor("proximity"),
        "popularity": factor("popularity"),
        "relevance": _rounded(result.relevance),
        "final": _rounded(result.final),
        "score": _rounded(result.score),
        "superseded_by": list(result.superseded_by),
        "supersedes": list(result.supersedes),
        "path": result.path,
        "above_background": factor("above_background"),
        "coverage": factor("coverage"),
        "absolute_relevance": _rounded(result.absolute_relevance),
    }
    if result.reason is not None:
        out["reason"] = result.reason
    if result.reranked:
        out["reranked"] = True
    return out


async def entity_dict(kg: KnowledgeGraph, entity: Entity) -> EntityView:
    """An entity with its active relations and ``history``: the statements about it that were
    updated or update another (:func:`mind.knowledge.supersession.history`), newest first, each
    with ``valid_from`` / ``valid_to`` and ``current``."""
    outgoing = await kg.get_relations_from(entity.id)
    incoming = await kg.get_relations_to(entity.id)
    versions = await supersession.history(kg.db, entity.id)
    return {
        "id": entity.id, "type": entity.entity_type, "name": entity.name,
        "properties": entity.properties, "valid_from": entity.valid_from,
        "valid_to": entity.valid_to,
        "relations": {
            "outgoing": [{"target_id": r.target_id, "type": r.relation_type,
                          "confidence": r.confidence} for r in outgoing if r.active],
            "incoming": [{"source_id": r.source_id, "type": r.relation_type,
                          "confidence": r.confidence} for r in incoming if r.active],
        },
        "history": [{"frame_id": v.frame_id, "content": v.content, "valid_from": v.valid_from,
                     "valid_to": v.valid_to, "superseded_by": v.superseded_by,
                     "current": v.valid_to is None} for v in versions],
    }


def workspace_meta(data: Mapping[str, Any]) -> WorkspaceMeta:
    """A workspace's metadata as stored (:class:`hive_mind.workspaces.WorkspaceManager`)."""
    meta: WorkspaceMeta = {"id": data["id"], "name": data["name"]}
    if "group" in data:
        meta["group"] = data["group"]
    if "icon" in data:
        meta["icon"] = data["icon"]
    if "model" in data:
        meta["model"] = data["model"]
    if "created" in data:
        meta["created"] = data["created"]
    return meta


# -- typed write results --------------------------------------------------------------------

def saved_entity(result: EntitySaved) -> SavedEntity:
    entity = result.entity
    return {"id": entity.id, "entity_type": entity.entity_type, "name": entity.name,
            "normalized_name": entity.normalized_name, "properties": entity.properties,
            "valid_from": entity.valid_from, "valid_to": entity.valid_to,
            "recorded_at": entity.recorded_at, "created": result.created,
            "updated": not result.created}


def relation_shape(relation: Relation) -> RelationShape:
    return {"id": relation.id, "source_id": relation.source_id,
            "target_id": relation.target_id, "relation_type": relation.relation_type,
            "confidence": relation.confidence, "properties": relation.properties,
            "valid_from": relation.valid_from, "valid_to": relation.valid_to,
            "recorded_at": relation.recorded_at}


def identity_saved(result: IdentitySet) -> IdentitySaved:
    who = result.identity
    return {"action": "created" if result.created else "updated", "name": who.name,
            "role": who.role, "department": who.department, "personality": who.personality,
            "capabilities": who.capabilities, "system_prompt": who.system_prompt,
            "created_at": who.created_at, "updated_at": who.updated_at}


def awareness_shape(item: AwarenessItem) -> AwarenessShape:
    return {"id": item.id, "category": item.category, "content": item.content,
            "priority": item.priority, "metadata": item.metadata,
            "created_at": item.created_at, "expires_at": item.expires_at}


def awareness_removed(result: AwarenessRemoved) -> AwarenessCleared:
    return {"removed": result.removed, "id": result.id}


def awareness_cleared(result: AwarenessClearedResult) -> AwarenessCleared:
    return {"cleared": result.cleared, "category": result.category}


# -- write results (actors/results.py) as JSON ------------------------------------------------

@singledispatch
def write_dict(result: object) -> JsonObject:
    """The JSON shape of a write-op's result (the op table of :mod:`actors.results`)."""
    raise TypeError(f"no JSON shape for a {type(result).__name__} result")


@write_dict.register
def _saved_entity(result: EntitySaved) -> JsonObject:
    return dict(saved_entity(result))


@write_dict.register
def _relation(result: Relation) -> JsonObject:
    return dict(relation_shape(result))


@write_dict.register
def _identity(result: IdentitySet) -> JsonObject:
    return dict(identity_saved(result))


@write_dict.register
def _awareness_item(result: AwarenessItem) -> JsonObject:
    return dict(awareness_shape(result))


@write_dict.register
def _awareness_removed(result: AwarenessRemoved) -> JsonObject:
    return dict(awareness_removed(result))


@write_dict.register
def _awareness_cleared(result: AwarenessClearedResult) -> JsonObject:
    return dict(awareness_cleared(result))


@write_dict.register
def _entity_audit(result: EntityAudit) -> JsonObject:
    return {"action": result.action, "total_entities": result.total_entities,
            "noise_entities": result.noise_entities, "noise_sample": list(result.noise_sample),
            "duplicate_groups": result.duplicate_groups,
            "duplicate_sample": [list(group) for group in result.duplicate_sample],
            "orphan_entities": result.orphan_entities}


@write_dict.register
def _entities_deduped(result: EntitiesDeduped) -> JsonObject:
    return {"action": result.action, "duplicate_groups": result.duplicate_groups,
            "entities_merged": result.entities_merged}


@write_dict.register
def _entities_retired(result: EntitiesRetired) -> JsonObject:
    out: JsonObject = {"action": result.action, "entities_retired": result.entities_retired}
    if result.relations_retired is not None:
        out["relations_retired"] = result.relations_retired
    return out


@write_dict.register
def _frames_wiped(result: FramesWiped) -> JsonObject:
    erased = result.erased
    out: JsonObject = {"action": result.action, "frames_deleted": erased.frames,
                           "entities_erased": erased.entities_erased,
                           "relations_erased": erased.relations_erased}
    if result.warning is not None:
        out["warning"] = result.warning
    return out


@write_dict.register
def _erasure(result: Erasure) -> JsonObject:
    return {"deleted": result.deleted, "entities_erased": result.entities_erased,
            "relations_erased": result.relations_erased}


@write_dict.register
def _compacted(result: CompactResult) -> JsonObject:
    return dict(result.as_dict())


@write_dict.register
def _reconciled(result: Reconciled) -> JsonObject:
    """The sweep's report (what it queued again is the caller's to add)."""
    return dict(result.report.as_dict())


@write_dict.register
def _reembedded(result: Reembedded) -> JsonObject:
    return {"queued": result.queued, "continued": result.continued}


@write_dict.register
def _deduped(result: Deduped) -> JsonObject:
    return {"groups": result.groups, "merged": result.merged}


@write_dict.register
def _index_applied(result: ApplyStats) -> JsonObject:
    return dict(result.as_dict())


@write_dict.register
def _frame(result: Frame) -> JsonObject:
    return dict(frame_dict(result))


@write_dict.register
def _touched(result: Touched) -> JsonObject:
    return {"touched": result.touched}


@write_dict.register
def _frames_saved(result: FramesSaved) -> JsonObject:
    return {"frames": [{"id": f.id, "created": f.created, "upgraded": f.upgraded,
                        "gop_id": f.gop_id, "t": f.t, "content_hash": f.content_hash}
                       for f in result.frames]}


@write_dict.register
def _harvest_finished(result: HarvestFinished) -> JsonObject:
    return {"run_id": result.run_id, "status": result.status}
