"""Queue names, Redis keys and job ids of the job/op schemas.

Queues (arq ``queue_name``):

- :data:`COGNIFY_QUEUE` — stateless embedding/cognify workers (any machine, never open a mind).
- :data:`HOST_QUEUE_PREFIX` + host id — the owning mind host's queue of write-ops
  (index results coming back from workers, maintenance ops); see :func:`host_queue`.

Enumerations, limits and id rules are the shared vocabulary (:mod:`vocabulary`), not repeated
here.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Final

from vocabulary.ids import ID_PART_RE, KIND_RE, validate_host_id, validate_mind_id
from vocabulary.limits import MAX_ID_CHARS

# -- queues and keys -------------------------------------------------------------------------
COGNIFY_QUEUE: Final = "hive-mind:cognify"
HOST_QUEUE_PREFIX: Final = "hive-mind:host:"

KEY_PREFIX: Final = "hm:"
DEAD_LETTERS_KEY: Final = KEY_PREFIX + "dead-letters"
WAKE_CHANNEL_PREFIX: Final = KEY_PREFIX + "wake:"  # pub/sub: a job was queued on <queue>
USAGE_KEY_PREFIX: Final = KEY_PREFIX + "embedding-usage:"  # + <month>:<user id>: a count

# -- maintenance defaults --------------------------------------------------------------------
RECONCILE_GRACE_SECONDS: Final = 600


# -- key helpers -----------------------------------------------------------------------------
def host_queue(host_id: str) -> str:
    """The write-op queue of the mind host ``host_id``: ``hive-mind:host:<host_id>``."""
    return HOST_QUEUE_PREFIX + validate_host_id(host_id)


def wake_channel(queue_name: str, db: int = 0) -> str:
    """The pub/sub channel that wakes the workers of ``queue_name`` in Redis database ``db``
    (:mod:`workers.wake`; channels are not per database, the queues are)."""
    return f"{WAKE_CHANNEL_PREFIX}{int(db)}:{queue_name}"


def job_id(kind: str, mind_id: str, *parts: str | int | date) -> str:
    """A deterministic arq job id: ``kind:mind_id[:part…]``.

    ``job_id("compact", "personal", date(2026, 11, 30))`` → ``"compact:personal:2026-11-30"``.
    Deterministic ids make enqueueing idempotent (arq refuses an id whose job or result still
    exists) and double as the op id of the resulting write-op. Parts are dates (rendered
    ``YYYY-MM-DD``), non-negative ints or short tokens of letters, digits, ``.``, ``_``, ``-``;
    a ``datetime`` is refused (pass ``.date()``: per-day ids must not depend on the time of day).
    """
    if not isinstance(kind, str) or KIND_RE.fullmatch(kind) is None:
        raise ValueError(f"invalid job kind {kind!r}: lowercase letters, digits and '_'")
    rendered = [kind, validate_mind_id(mind_id)]
    for part in parts:
        if isinstance(part, datetime):
            raise ValueError(f"job id part {part!r} is a datetime: pass a date (.date())")
        if isinstance(part, date):
            rendered.append(part.isoformat())
        elif isinstance(part, int) and not isinstance(part, bool) and part >= 0:
            rendered.append(str(part))
        elif isinstance(part, str) and ID_PART_RE.fullmatch(part):
            rendered.append(part)
        else:
            raise ValueError(
                f"invalid job id part {part!r}: a date, a non-negative int or 1-128 letters, "
                "digits, '.', '_' or '-'"
            )
    result = ":".join(rendered)
    if len(result) > MAX_ID_CHARS:
        raise ValueError(f"job id is {len(result)} characters; the limit is {MAX_ID_CHARS}")
    return result
