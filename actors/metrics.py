"""The actor's Prometheus series (exposed with the rest, :mod:`workers.metrics`)."""

from __future__ import annotations

from prometheus_client import Histogram

GROUP_COMMIT_SECONDS = Histogram(
    "hive_mind_group_commit_seconds", "one actor group commit: BEGIN … COMMIT of its ops",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5))
