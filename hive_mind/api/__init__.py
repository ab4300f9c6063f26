"""The HTTP API of ``hive-mind serve``: REST over the facade (docs/http.md).

``create_app(settings, facade=None)`` builds the FastAPI app; see :mod:`hive_mind.api.app`.
Imported lazily so that :mod:`hive_mind.api.codes` (shared with the client) stays light.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from hive_mind.api.app import create_app

        return create_app
    raise AttributeError(name)
