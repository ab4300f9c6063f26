"""Which write-ops a host takes from Redis (issue #45): Redis is not a trusted path.

Whoever can write to the deployment's Redis can push a job into a host's queue. Such a forged
op may at most *add* to a mind — frames, index results, relations, access counts, a harvest's
bookkeeping (:data:`ADDING`) — and a ``compact`` from Redis runs with the host's own policy,
whatever its payload says (the nightly maintenance sends exactly that). Every op that removes
or replaces (``erase``, ``wipe_frames``, ``cleanup_entities``, ``dedupe``, ``reembed_mind``,
identity, awareness, entity updates) is taken only when signed with the deployment key
(``HIVE_MIND_CLUSTER_KEY``, :mod:`vocabulary.signing`); when the key is set, every op must be
signed — the hosts and workers sign what they enqueue — and an unsigned one is refused. A
refused op is dead-lettered with the reason (``PayloadError``), never applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from queue_schemas import ops
from queue_schemas.errors import PayloadError
from vocabulary.signing import sign, verify

WRITE_OP: Final = "write-op"  # the signing purpose of a write-op in Redis
ADDING: Final = frozenset({"save_frames", "harvest_batch", "apply_index", "touch", "reconcile",
                           "create_relation", "finish_harvest"})


def signature_of(key: str | None, payload: Mapping[str, Any]) -> str | None:
    """The signature of an op's payload (None without a key)."""
    return sign(key, WRITE_OP, payload) if key else None


def admitted(payload: Mapping[str, Any], signature: object, key: str | None) -> Any:
    """The op a host may apply for this Redis payload, or :class:`PayloadError`."""
    op = ops.parse_op(dict(payload))
    if verify(key, WRITE_OP, payload, signature):
        return op
    if key:
        raise PayloadError(f"an unsigned {op.kind} op was refused: this deployment signs its "
                           "ops with HIVE_MIND_CLUSTER_KEY")
    if op.kind == "compact":  # the host's own policy: the scheduled job's, nothing else
        return ops.Compact(op_id=op.op_id, mind_id=op.mind_id)
    if op.kind in ADDING:
        return op
    raise PayloadError(f"a {op.kind} op from Redis must be signed with HIVE_MIND_CLUSTER_KEY: "
                       "unsigned ops may only add to a mind")
