"""Defaults of the worker layer."""

from __future__ import annotations

from typing import Final

# in-process jobs running at once (they share one batcher), as many as a worker runs
# (worker_max_jobs): with 8, a 4,000-frame ingest's embedding batches averaged 136 texts, with
# 32 375, and a small embed_batch costs more CPU per text (docs/benchmarks.md, ingest)
RUNNER_CONCURRENCY: Final = 32
RETRY_BACKOFF_SECONDS: Final = 0.5  # × try number
COGNIFY_BATCH_FRAMES: Final = 64  # frames per cognify job
INDEX_OP_PREFIX: Final = "idx-"  # op id of the ApplyIndex made from job <id>: idx-<id>
IDLE_POLL_SECONDS: Final = 0.05  # arq queue poll while no job runs (pick-up latency)
BUSY_POLL_SECONDS: Final = 0.25  # ... while jobs run (each poll re-checks running jobs' ids)
OUTBOX_POLL_SECONDS: Final = 0.1  # distributed wait_idle: how often the outboxes are re-counted
