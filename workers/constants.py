"""Defaults of the worker layer."""

from __future__ import annotations

from typing import Final

# in-process jobs running at once (they share one batcher). 32 (a worker's max_jobs) made a
# 4,000-frame ingest's embedding batches 375 texts instead of 136 and a bulk import ~16 % faster,
# but raised save-ack p99 during the import from 115 to 158 ms in the same A/B (AVX2 EPYC,
# bench/product/ack_latency.py): the ack bar wins, 8 stays
RUNNER_CONCURRENCY: Final = 8
# job slots (embedded runner, each worker) that only interactive jobs may take, on top of the
# concurrency: a save never waits for a slot a bulk import holds (workers/fairness.py)
RESERVED_INTERACTIVE: Final = 2
RETRY_BACKOFF_SECONDS: Final = 0.5  # × try number
COGNIFY_BATCH_FRAMES: Final = 64  # frames per cognify job
# a resumed backlog (workers/backlog.py): outbox rows read (and frames' content held) at a time,
# 16 jobs of 64, enough to keep the runner's 8 slots and a worker's 512-text batches busy; at
# most two such pieces queued per mind, and this many minds resumed at once
BACKLOG_PIECE_FRAMES: Final = 1_024
BACKLOG_MINDS_AT_ONCE: Final = 4
INDEX_OP_PREFIX: Final = "idx-"  # op id of the ApplyIndex made from job <id>: idx-<id>
IDLE_POLL_SECONDS: Final = 0.5  # arq queue poll between wake-ups (workers/wake.py): a safety net
BUSY_POLL_SECONDS: Final = 0.25  # ... while jobs run (each poll re-checks running jobs' ids)
INDEX_POLL_SECONDS: Final = 0.02  # wait_indexed: how often a save's outbox row is looked up
OUTBOX_POLL_SECONDS: Final = 0.1  # distributed wait_idle: how often the outboxes are re-counted
