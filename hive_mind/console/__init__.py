"""The web console at ``/ui`` of ``hive-mind serve``: search, memories, the knowledge graph,
workspaces, imports and operations, as server-rendered pages over the same facade the HTTP
API serves (:func:`hive_mind.api.deps.get_facade`: the caller's token scope applies).

Sign-in and CSRF: :mod:`hive_mind.console.sessions`; escaping and headers:
:mod:`hive_mind.console.render`. The pages use two vendored scripts (htmx, cytoscape.js;
versions and licences in THIRD_PARTY.md) and ``static/console.js``; nothing is fetched from
elsewhere.
"""

from __future__ import annotations

from fastapi import FastAPI

from hive_mind.console import graph, imports, memories, operations, search, shell, workspaces
from hive_mind.console.sessions import ConsoleSessions
from hive_mind.console.shell import PUBLIC_PATHS

__all__ = ["PUBLIC_PATHS", "install"]


def install(app: FastAPI) -> ConsoleSessions:
    """Add the console's routes and error pages to ``app``; returns the session store its
    middleware (:class:`~hive_mind.console.sessions.ConsoleMiddleware`) needs."""
    sessions = ConsoleSessions()
    app.state.console_sessions = sessions
    for module in (shell, search, memories, graph, workspaces, imports, operations):
        app.include_router(module.router)
    shell.install_errors(app)
    return sessions
