"""The JSON shapes the facade returns, shared by CLI, MCP and HTTP."""

from __future__ import annotations

from functools import singledispatch
from typing import Any

from actors.results import (
    AwarenessCleared,
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
from mind.awareness import AwarenessItem
from mind.cleanup import EntitiesDeduped, EntitiesRetired, EntityAudit, FramesWiped
from mind.cognify_apply import ApplyStats
from mind.frames.compaction import CompactResult
from mind.frames.forget import Erasure
from mind.frames.model import Frame
from mind.knowledge import supersession
from mind.knowledge.graph import Relation
from mind.knowledge.store import Entity, KnowledgeGraph
from mind.retrieval.candidates import SearchResult
from mind.retrieval.combined import CombinedResult, CombinedRetrievalResult
from mind.retrieval.external import ExternalDocument

FRAME_FIELDS = ("id", "frame_type", "gop_id", "t", "content", "importance", "source",
                "created_at", "recorded_at", "metadata")


def frame_dict(frame: Frame) -> dict[str, Any]:
    return {name: getattr(frame, name) for name in FRAME_FIELDS}


def frame_links(frame: Frame, references: list[int]) -> dict[str, Any]:
    """What a P- or B-frame links to: ``base_frame_id`` (a P-frame's I-frame, a B-frame's first
    reference) and a B-frame's ``references``; nothing for an I-frame."""
    if frame.frame_type == "I":
        return {}
    out: dict[str, Any] = {"base_frame_id": frame.base_frame_id}
    if frame.frame_type == "B":
        out["references"] = references
    return out


def recall_dict(result: SearchResult, origin: str, *, explain: bool = False) -> dict[str, Any]:
    out = {
        **frame_dict(result.frame),
        "score": round(result.score, 6),
        "absolute_relevance": _rounded(result.absolute_relevance),
        "rrf": result.rrf,
        "relevance": result.relevance,
        "final": result.final,
        "from": origin,
    }
    if explain:
        out["explain"] = explain_dict(result)
    return out


def external_dict(doc: ExternalDocument, origin: str, *, explain: bool = False
                  ) -> dict[str, Any]:
    """A document of the external source in a recall result's shape: the frame fields it has
    no value for are null, ``id`` is the source's document id (text), ``source`` is
    ``external``, ``metadata`` holds ``title``, ``type``, ``url`` and the source's own
    ``metadata``; no lane scores (``rrf``, ``relevance``, ``final``, ``explain`` are null)."""
    out: dict[str, Any] = dict.fromkeys(FRAME_FIELDS)
    out.update({
        "id": doc.document_id, "content": doc.content, "source": "external",
        "metadata": {"title": doc.title, "type": doc.document_type, "url": doc.url,
                     "metadata": doc.metadata},
        "score": round(doc.score, 6), "absolute_relevance": None, "rrf": None,
        "relevance": None, "final": None,
        "from": origin,
    })
    if explain:
        out["explain"] = None
    return out


def combined_dict(result: CombinedResult, *, explain: bool = False) -> dict[str, Any]:
    """One recall result: a frame or an external document, ``from`` naming where
    it came from and ``conflict`` the conflict note(s) it takes part in (else null)."""
    if result.hit is not None:
        out = recall_dict(result.hit, result.origin, explain=explain)
    else:
        assert result.document is not None
        out = external_dict(result.document, result.origin, explain=explain)
    out["conflict"] = result.conflict
    return out


def recall_response(combined: CombinedRetrievalResult, limit: int, *, explain: bool = False
                    ) -> dict[str, Any]:
    """The whole answer of a recall, as ``POST /v1/recall`` returns it: ``results`` (merged,
    at most ``limit``), ``count``, ``conflicts`` (``{note, from: [workspace:<id>,
    external:<name>]}``, each also on the results it concerns) and ``external`` (null when no
    external source is configured, else ``{name, queried, error}``) and ``routing`` (null when
    every mind in scope was searched, else ``{searched, workspaces}``: a scope-all recall over
    more workspaces than ``HIVE_MIND_SCOPE_MINDS`` searched that many, chosen by content)."""
    results = [combined_dict(r, explain=explain) for r in combined.merged(limit)]
    external = None if combined.external_name is None else {
        "name": combined.external_name, "queried": combined.external_queried,
        "error": combined.external_error}
    return {"results": results, "count": len(results),
            "conflicts": [{"note": c.note, "from": list(c.origins)} for c in combined.conflicts],
            "external": external, "routing": combined.routing}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def explain_dict(result: SearchResult) -> dict[str, Any]:
    """Why a result ranked where it did (``recall --explain``): each lane's 1-based rank (null
    when that lane did not find it), the cosine ``similarity`` of the vector lane, ``lanes``
    (the lanes' fused score), the conversation signals added to it (``session``,
    ``neighbour``, and ``update``: what lifts a later statement just above the earlier one it
    supersedes) giving ``fused``, the ``match`` multiplier (speaker × time × ``spread``: a
    gathering question's share for a turn with better turns of its own conversation), the re-score
    factors combined into ``relevance``, and ``final`` = fused × match × relevance, the sort
    key; ``score`` is ``final`` normalized to [0, 1]. ``popularity`` only breaks ties. Floats
    are rounded to 6 digits. A catch-up result has no lanes or factors (nulls) and names its
    ``reason`` instead; a result a cross-encoder re-ranked carries ``reranked: true`` and its
    ``final`` is the reranker's logit. ``superseded_by`` / ``supersedes``: the ids of the
    later statements that replace this one / the earlier ones it replaces
    (:mod:`mind.knowledge.supersession`), empty for none. ``path``: what ran — ``lanes``,
    ``briefing`` (a catch-up without a topic: no lanes, the factors are null) or ``catch-up
    about '<topic>': lanes, decisions first``. ``absolute_relevance`` and its evidence:
    ``above_background`` (cosine minus the query's mean cosine to this mind's frames; null
    without a vector) and ``coverage`` (share of the query's words the frame holds),
    :mod:`mind.retrieval.relevance`. ``decision`` (a factor of ``match``): 1.5 for a turn that
    states a decision about a catch-up's topic, else 1 (:mod:`mind.retrieval.catchup`)."""
    factors = result.factors

    def factor(name: str) -> float | None:
        return _rounded(factors.get(name))

    out: dict[str, Any] = {
        "keyword_rank": None if result.keyword_rank is None else result.keyword_rank + 1,
        "vector_rank": None if result.vector_rank is None else result.vector_rank + 1,
        "similarity": _rounded(result.similarity),
        "lanes": _rounded(result.rrf),
        "session": factor("session"),
        "neighbour": factor("neighbour"),
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


async def entity_dict(kg: KnowledgeGraph, entity: Entity) -> dict[str, Any]:
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
        "history": [v.as_dict() for v in versions],
    }


# -- write results (actors/results.py) as JSON ------------------------------------------------

@singledispatch
def write_dict(result: object) -> dict[str, Any]:
    """The JSON shape of a write-op's result (the op table of :mod:`actors.results`)."""
    raise TypeError(f"no JSON shape for a {type(result).__name__} result")


@write_dict.register
def _saved_entity(result: EntitySaved) -> dict[str, Any]:
    return {**result.entity.to_dict(), "created": result.created, "updated": not result.created}


@write_dict.register
def _relation(result: Relation) -> dict[str, Any]:
    return result.to_dict()


@write_dict.register
def _identity(result: IdentitySet) -> dict[str, Any]:
    return {"action": "created" if result.created else "updated", **result.identity.to_dict()}


@write_dict.register
def _awareness_item(result: AwarenessItem) -> dict[str, Any]:
    return result.to_dict()


@write_dict.register
def _awareness_removed(result: AwarenessRemoved) -> dict[str, Any]:
    return {"removed": result.removed, "id": result.id}


@write_dict.register
def _awareness_cleared(result: AwarenessCleared) -> dict[str, Any]:
    return {"cleared": result.cleared, "category": result.category}


@write_dict.register
def _entity_audit(result: EntityAudit) -> dict[str, Any]:
    return {"action": result.action, "total_entities": result.total_entities,
            "noise_entities": result.noise_entities, "noise_sample": list(result.noise_sample),
            "duplicate_groups": result.duplicate_groups,
            "duplicate_sample": [list(group) for group in result.duplicate_sample],
            "orphan_entities": result.orphan_entities}


@write_dict.register
def _entities_deduped(result: EntitiesDeduped) -> dict[str, Any]:
    return {"action": result.action, "duplicate_groups": result.duplicate_groups,
            "entities_merged": result.entities_merged}


@write_dict.register
def _entities_retired(result: EntitiesRetired) -> dict[str, Any]:
    out: dict[str, Any] = {"action": result.action, "entities_retired": result.entities_retired}
    if result.relations_retired is not None:
        out["relations_retired"] = result.relations_retired
    return out


@write_dict.register
def _frames_wiped(result: FramesWiped) -> dict[str, Any]:
    erased = result.erased
    out: dict[str, Any] = {"action": result.action, "frames_deleted": erased.frames,
                           "entities_erased": erased.entities_erased,
                           "relations_erased": erased.relations_erased}
    if result.warning is not None:
        out["warning"] = result.warning
    return out


@write_dict.register
def _erasure(result: Erasure) -> dict[str, Any]:
    return {"deleted": result.deleted, "entities_erased": result.entities_erased,
            "relations_erased": result.relations_erased}


@write_dict.register
def _compacted(result: CompactResult) -> dict[str, Any]:
    return dict(result.as_dict())


@write_dict.register
def _reconciled(result: Reconciled) -> dict[str, Any]:
    """The sweep's report (what it queued again is the caller's to add)."""
    return dict(result.report.as_dict())


@write_dict.register
def _reembedded(result: Reembedded) -> dict[str, Any]:
    return {"queued": result.queued}


@write_dict.register
def _deduped(result: Deduped) -> dict[str, Any]:
    return {"groups": result.groups, "merged": result.merged}


@write_dict.register
def _index_applied(result: ApplyStats) -> dict[str, Any]:
    return dict(result.as_dict())


@write_dict.register
def _touched(result: Touched) -> dict[str, Any]:
    return {"touched": result.touched}


@write_dict.register
def _frames_saved(result: FramesSaved) -> dict[str, Any]:
    return {"frames": [{"id": f.id, "created": f.created, "upgraded": f.upgraded,
                        "gop_id": f.gop_id, "t": f.t, "content_hash": f.content_hash}
                       for f in result.frames]}


@write_dict.register
def _harvest_finished(result: HarvestFinished) -> dict[str, Any]:
    return {"run_id": result.run_id, "status": result.status}
