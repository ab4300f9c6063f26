"""What the caller of the current request may touch, and the facade every surface serves it.

The auth layer (HTTP, MCP over HTTP) binds the caller's :class:`~hive_mind.tokens.Scope` to the
request (:func:`bound`); outside a request — the nightly maintenance, a local CLI or MCP over
stdio — it is :data:`~hive_mind.tokens.ADMIN`. Two checks read it:

- :func:`guarded` wraps the facade the routes and MCP tools call: a call naming one mind
  (``workspace=``, a workspace id, a recall's scope) is refused unless the scope names that
  mind; a write, unless the token may write; a call over the deployment (jobs, maintenance of
  every mind, status, moves between shards, defaults) is the admin's. A method this table does
  not know is the admin's too: a new method is closed until it is placed here.
- :func:`within` narrows the facade's "minds this host serves" (``HiveMind.owns``): a
  scope-wide recall and the workspace list cover only the scope's minds — on every shard, since
  a forwarded call carries the caller's own token and each host resolves it itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

from hive_mind.tokens import ADMIN, ForbiddenError, Scope
from vocabulary.ids import PERSONAL_MIND, workspace_mind_id

_scope: ContextVar[Scope] = ContextVar("hive_mind_scope", default=ADMIN)

READ_BY_WORKSPACE: Final = frozenset({
    "get_frame", "session_state", "catch_up", "search_entities", "get_identity",
    "get_awareness", "stats", "harvest_sources", "export_mind", "export_page"})
WRITE_BY_WORKSPACE: Final = frozenset({
    "save", "forget", "save_entity", "create_relation", "set_identity", "set_awareness",
    "clear_awareness", "cleanup_frames", "cleanup_entities", "harvest", "run_harvest",
    "ingest", "run_ingest", "maintenance"})
READ_FIRST_ARGUMENT: Final = frozenset({"get_workspace"})
WRITE_FIRST_ARGUMENT: Final = frozenset({"update_workspace"})
SCOPE_WIDE: Final = frozenset({"list_workspaces"})  # narrowed by :func:`within`
ANY_SCOPE: Final = frozenset({"readiness", "wait_idle", "warm_up"})


def current() -> Scope:
    return _scope.get()


@contextmanager
def bound(scope: Scope) -> Iterator[None]:
    """The current request's caller has ``scope`` inside this block."""
    token = _scope.set(scope)
    try:
        yield
    finally:
        _scope.reset(token)


def within(serves: Callable[[str], bool]) -> Callable[[str], bool]:
    """``serves`` narrowed to the minds the current caller's scope names."""
    def owns(mind_id: str) -> bool:
        return serves(mind_id) and current().allows(mind_id)

    return owns


def _mind(workspace: object) -> str:
    if workspace is None or workspace == "" or workspace == PERSONAL_MIND:
        return PERSONAL_MIND
    if not isinstance(workspace, str):
        raise ForbiddenError("this token may not name that workspace")
    try:
        return workspace_mind_id(workspace)
    except ValueError:
        return f"workspace:{workspace}"  # refused below unless named (never a path here)


def check(scope: Scope, mind_id: str, write: bool, what: str) -> None:
    """Refuse (ForbiddenError) ``what`` on ``mind_id`` unless ``scope`` allows it."""
    if not scope.allows(mind_id):
        raise ForbiddenError(f"this token may not {what} {mind_id}")
    if write and scope.read_only:
        raise ForbiddenError(f"this token is read-only: it may not {what} {mind_id}")


class ScopedFacade:
    """The facade as a scoped token's caller sees it (see the module docstring)."""

    def __init__(self, facade: Any, scope: Scope) -> None:
        self._facade = facade
        self._scope = scope

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._facade, name)
        if not callable(attr) or name in ANY_SCOPE or name in SCOPE_WIDE:
            return attr
        if name in ("recall", "recall_detail"):
            return self._recall(attr)
        if name == "create_workspace":
            return self._create(attr)
        first = name in READ_FIRST_ARGUMENT or name in WRITE_FIRST_ARGUMENT
        if not first and name not in READ_BY_WORKSPACE | WRITE_BY_WORKSPACE:
            return self._admin_only(name)
        write = name in WRITE_BY_WORKSPACE or name in WRITE_FIRST_ARGUMENT
        scope = self._scope

        async def call(*args: Any, **kwargs: Any) -> Any:
            if name == "maintenance" and kwargs.get("all_minds"):
                raise ForbiddenError("maintenance of every mind takes the admin token")
            named = (args[0] if args else kwargs.get("workspace")) if first \
                else kwargs.get("workspace")
            check(scope, _mind(named), write, name.replace("_", " "))
            return await attr(*args, **kwargs)

        return call

    def _recall(self, attr: Callable[..., Any]) -> Callable[..., Any]:
        scope = self._scope

        async def call(query: str, **kwargs: Any) -> Any:
            wide = kwargs.get("scope")
            if wide != "all":  # scope-wide: narrowed to the scope's minds by ``within``
                kind = wide or ("workspace" if kwargs.get("workspace") else "personal")
                check(scope, _mind(None if kind == "personal" else kwargs.get("workspace")),
                      False, "recall from")
            return await attr(query, **kwargs)

        return call

    def _create(self, attr: Callable[..., Any]) -> Callable[..., Any]:
        scope = self._scope

        async def call(name: str, **kwargs: Any) -> Any:
            ident = kwargs.get("workspace_id")
            if ident is None:
                raise ForbiddenError("a scoped token creates only a workspace it names: "
                                     "give its id")
            check(scope, _mind(ident), True, "create")
            return await attr(name, **kwargs)

        return call

    @staticmethod
    def _admin_only(name: str) -> Callable[..., Any]:
        async def call(*args: Any, **kwargs: Any) -> Any:
            raise ForbiddenError(f"{name.replace('_', ' ')} takes the admin token (this "
                                 "token is scoped to workspaces)")

        return call


def guarded(facade: Any) -> Any:
    """``facade`` as the current caller may use it: itself for the admin."""
    scope = current()
    return facade if scope.admin else ScopedFacade(facade, scope)
