"""The JSON shapes of ``hive-mind jobs`` and of the retry and drop of dead letters
(:mod:`workers.jobs_admin`), as types."""

from __future__ import annotations

from typing import Final, NotRequired

from typing_extensions import TypedDict

LISTED: Final = 100  # jobs and dead letters listed in full

Row = dict[str, object]


class JobRow(TypedDict):
    job_id: str
    kind: str
    mind_id: str | None


class LetterRow(TypedDict):
    """A dead letter: its ``id`` (what ``retry``/``drop`` take), the failed job, its last
    error, how often it was tried, when it failed, and whether a retry can rebuild it."""

    id: str | None
    job_id: str | None
    kind: str | None
    mind_id: str | None
    error: str | None
    tries: int | None
    at: str | None
    retryable: bool


class MindJobs(TypedDict):
    """One mind's jobs: ``pending_index`` (frames still to index; null where it is not known
    here), queued, running and failed jobs; ``error`` when its file could not be read."""

    id: str
    pending_index: int | None
    queued: int
    running: int
    dead_letters: int
    error: NotRequired[str]


class JobsReport(TypedDict):
    """``hive-mind jobs`` / ``GET /v1/jobs``: the totals, each mind's row, the jobs listed in
    full (at most :data:`LISTED` of each) and a ``note`` on what the counts cover. A sharded
    deployment's report merges its shards' (``mode`` ``sharded``, ``shared_queue``: they share
    one Redis; ``unreachable``: the shards that did not answer) and lists no queued jobs."""

    mode: str
    shared_queue: NotRequired[bool]
    queued: int
    running: int
    dead_letters: int
    minds: list[MindJobs]
    queued_jobs: NotRequired[list[JobRow]]
    running_jobs: list[JobRow]
    failures: list[LetterRow]
    note: NotRequired[str]
    unreachable: NotRequired[dict[str, str]]


class Retried(TypedDict):
    """The dead letters run again, each with its ``status`` (queued, done, failed,
    nothing_pending, mind_gone); ``count`` (not in a sharded deployment's answer, which
    names the shards it could not reach instead)."""

    retried: list[Row]
    count: NotRequired[int]
    unreachable: NotRequired[dict[str, str]]


class Dropped(TypedDict):
    dropped: list[str]
    count: NotRequired[int]
    unreachable: NotRequired[dict[str, str]]
