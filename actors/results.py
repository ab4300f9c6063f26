"""What the owner returns after applying a write-op: small frozen result types.

A handler (:mod:`actors.handlers`) returns one of these (or a ``mind`` result type such as
:class:`~mind.frames.compaction.CompactResult`, :class:`~mind.identity.Identity`,
:class:`~mind.cleanup.FramesWiped`) to the code that submitted the op: the facade, the
commit hook
that queues follow-up work (:mod:`workers.followups`), a harvest. They are read by attribute;
only the interface edge (:mod:`hive_mind.results`) turns them into the JSON shapes the CLI,
MCP and HTTP answer.

=====================  =================================================================
op kind                result
=====================  =================================================================
``save_frames``        :class:`FramesSaved`
``harvest_batch``      :class:`FramesSaved`
``apply_index``        :class:`mind.cognify_apply.ApplyStats`
``touch``              :class:`Touched`
``erase``              :class:`mind.frames.forget.Erasure`
``compact``            :class:`mind.frames.compaction.CompactResult`
``reconcile``          :class:`Reconciled`
``reembed_mind``       :class:`Reembedded`
``dedupe``             :class:`Deduped`
``set_identity``       :class:`IdentitySet`
``add_awareness``      :class:`mind.awareness.AwarenessItem`
``remove_awareness``   :class:`AwarenessRemoved`
``clear_awareness``    :class:`AwarenessCleared`
``save_entity``        :class:`EntitySaved`
``create_relation``    :class:`mind.knowledge.graph.Relation`
``cleanup_entities``   :data:`mind.cleanup.EntityCleanup`
``wipe_frames``        :class:`mind.cleanup.FramesWiped`
``finish_harvest``     :class:`HarvestFinished`
=====================  =================================================================

An op whose id was applied before returns :class:`actors.actor.Duplicate` instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from mind.errors import HiveMindError
from mind.frames.model import SaveResult
from mind.identity import Identity
from mind.knowledge.store import Entity
from mind.retrieval.reconcile import ReconcileResult

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SavedFrame:
    """One frame of a ``save_frames`` / ``harvest_batch``: ``created`` is False for a
    duplicate (same content in the session, or a known ``external_id``)."""

    id: int
    created: bool
    upgraded: bool
    gop_id: str
    t: int
    content_hash: str


@dataclass(frozen=True, slots=True)
class FramesSaved:
    """The frames of the op, in its order."""

    frames: tuple[SavedFrame, ...]

    @classmethod
    def of(cls, results: Sequence[SaveResult]) -> FramesSaved:
        return cls(tuple(SavedFrame(r.frame.id, r.created, r.upgraded, r.frame.gop_id, r.frame.t,
                                    r.frame.content_hash) for r in results))  # an import's many

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FramesSaved:
        """Back from its JSON form (``dataclasses.asdict``), e.g. a stored keyed result."""
        return cls(tuple(SavedFrame(**frame) for frame in data["frames"]))


@dataclass(frozen=True, slots=True)
class Touched:
    touched: int


@dataclass(frozen=True, slots=True)
class Reconciled:
    """The sweep's report, and the pending frames older than the grace period, whose
    indexing the commit hook queues again."""

    report: ReconcileResult
    requeue: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Reembedded:
    """The frames queued for re-embedding; ``continued``: an earlier re-embed to the same model
    was unfinished, and only the frames it left are (the vectors it made are kept)."""

    queued: int
    continued: bool = False


@dataclass(frozen=True, slots=True)
class Deduped:
    groups: int
    merged: int


@dataclass(frozen=True, slots=True)
class IdentitySet:
    created: bool
    identity: Identity


@dataclass(frozen=True, slots=True)
class AwarenessRemoved:
    removed: bool
    id: int


@dataclass(frozen=True, slots=True)
class AwarenessCleared:
    cleared: int
    category: str


@dataclass(frozen=True, slots=True)
class EntitySaved:
    entity: Entity
    created: bool


@dataclass(frozen=True, slots=True)
class HarvestFinished:
    run_id: str
    status: str


def expect(result: object, kind: type[T]) -> T:
    """``result`` as the type its op returns (a :class:`~actors.actor.Duplicate` or anything
    else is a bug of the caller: raised, not guessed around)."""
    if not isinstance(result, kind):
        raise HiveMindError(
            f"expected a {kind.__name__} result, got {type(result).__name__}")
    return result
