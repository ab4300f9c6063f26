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
DEFAULT_MAX_OPEN: Final = 20  # open minds per host (LRU)
DEFAULT_IDLE_SECONDS: Final = 60.0
