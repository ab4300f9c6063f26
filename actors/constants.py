"""Names and defaults of the actor layer."""

from __future__ import annotations

from typing import Final

# Layout of a data dir (mind ids are vocabulary.ids: "personal", "workspace:<slug>")
PERSONAL_FILE: Final = "personal.mind"
WORKSPACES_DIR: Final = "workspaces"
WORKSPACE_FILE: Final = "workspace.mind"
WORKSPACE_META: Final = "workspace.json"

DEFAULT_MAX_OPS: Final = 500  # ops per group commit
DEFAULT_MAILBOX: Final = 2_000  # queued ops before submitters wait (backpressure)
DEFAULT_MAX_WAIT: Final = 0.002  # seconds to let a group fill under load
DEFAULT_MAX_WEIGHT: Final = 1_000  # frames written per group commit (bounds commit time)
# ... of bulk work (index results, imports); a cognify job's results (64 frames) are applied in
# parts of this many frames, one commit each (actors/parts.py).
# Applying index results costs ~0.5 ms a frame (the link search against the vector index
# dominates), and a save waits for the bulk commit already running: groups of 1,000 → 256 →
# 128 → 64 frames measured save p99 162 → 83 → 60 → 35 ms during a bulk import, same ingest
# rate (2 cores, bench/product/ack_latency.py); on a 2-core AMD EPYC without VNNI,
# 64 → 32 frames: p99 64 → 44 ms, ingest 152 → 171 frames/s (one run each, side by side).
# A part's fixed cost (the link search call, the commit, the round trips) is about half of a
# 32-frame part's CPU: parts of 64 cut a host's index-apply CPU by ~25 %
# (bench/components/host_replay.py), so 64 while nobody saves, and a quarter of it while saves
# arrive (below).
DEFAULT_BULK_WEIGHT: Final = 64
# ... divided by this while interactive ops arrive (one in the last INTERACTIVE_WINDOW
# seconds): a save waits for the bulk commit already running, and parts of 16 index results
# cut the save p99 during a bulk import from 47-53 to 44 ms on the AMD EPYC without VNNI (same
# ingest rate), where a fixed 16 would cost an import no one saves beside ~20 % of its apply
# rate when the embedder is not the bottleneck: hence only while saves arrive
# (docs/performance.md, "Save acknowledgement during an import")
INTERACTIVE_BULK_DIVISOR: Final = 4
INTERACTIVE_WINDOW: Final = 2.0
# New frames of a bigger op (an import's batch) are written in parts, one commit each: of
# DEFAULT_BULK_FRAMES frames, and of DEFAULT_PART_FRAMES while interactive ops arrive (a save waits
# for the commit already running). A commit's fixed cost (its round trips, the FTS5 segment it
# flushes, the WAL pages it rewrites) made parts of 32 frames halve an import's write rate, and
# parts of 128 took ~25 % more CPU than parts of 1,024 for the write through the actor of
# `python -m bench.components.bulk_write` (actors/parts.py).
DEFAULT_PART_FRAMES: Final = 128
DEFAULT_BULK_FRAMES: Final = 1_024
# Small interactive ops (a save, a touch, an erase, ...) are committed ahead of queued bulk work
# (imports, index results), in groups of their own: a save waits for at most the one bulk commit
# already running (actors/actor.py). Kinds listed here are safe to reorder: no submitter sends
# them pipelined behind bulk ops it expects applied first (harvest batches, re-embeds are not).
URGENT_MAX_WEIGHT: Final = 16
URGENT_KINDS: Final = frozenset({
    "save_frames", "touch", "erase", "set_identity", "add_awareness", "remove_awareness",
    "clear_awareness", "save_entity", "create_relation",
})
DEFAULT_MAX_OPEN: Final = 64  # open minds per host (LRU)
CATALOG_THREADS: Final = 2  # blocking reads of minds' counts and routing summaries at once
CATALOG_FILE: Final = "catalog.json"  # in the data dir: every mind's counts, by file stamp
USAGE_FILE: Final = "usage.db"  # in the data dir: the monthly embedding counts (embedded mode)
