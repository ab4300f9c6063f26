"""The package import graph keeps the layering honest (issue #13): no import circle between
modules, nothing outside ``workers/`` reaching into ``runtime.host``, and no module that no
production code imports (tests and bench do not count as callers).

Every import counts — module level, inside functions and under ``TYPE_CHECKING`` — because a
lazy import that closes a circle is still a circle. Modules loaded by name are named here with
the reason: the harvest adapters (``mind.harvest.registry.MODULES``) and the entry points.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from mind.harvest.registry import MODULES as ADAPTERS
from tests.procs import ROOT

PACKAGES = tuple(p for p in ("vocabulary", "mind", "queue_schemas", "actors", "workers",
                             "hive_mind") if (ROOT / p).is_dir())
ENTRY_POINTS = {
    "hive_mind.cli": "console script `hive-mind` (pyproject [project.scripts])",
    "hive_mind.__main__": "`python -m hive_mind`",
    "hive_mind.cli.docs": "`python -m hive_mind.cli.docs` writes docs/cli.md",
    "hive_mind.docgen.__main__": "`python -m hive_mind.docgen` writes the generated docs/",
    "hive_mind.server": "`python -m hive_mind.server`",
    "hive_mind.mcp_server": "`python -m hive_mind.mcp_server` (MCP clients spawn it)",
    "hive_mind.sync": "public API for scripts: `SyncHiveMind` (README, Python)",
}
LOADED_BY_NAME = {f"mind.harvest.{name}" for name in ADAPTERS.values()}


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def _known(name: str) -> str | None:
    """``name`` or its nearest enclosing module that exists."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, tree: ast.AST) -> Iterator[str]:
    is_package = MODULES[module].name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (target := _known(alias.name)) is not None:
                    yield target
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[:len(parts) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found = target if target in MODULES else _known(base)
                if found is not None:
                    yield found


TREES = {m: ast.parse(p.read_text(encoding="utf-8")) for m, p in MODULES.items()}
GRAPH = {m: {t for t in _imports(m, tree) if t != m} for m, tree in TREES.items()}


def _circles() -> list[list[str]]:
    """Strongly connected components with more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in GRAPH:
        if root in index:
            continue
        work = [(root, iter(sorted(GRAPH[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(GRAPH[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_no_import_circle() -> None:
    assert _circles() == []


def test_nothing_outside_workers_touches_runtime_host() -> None:
    offenders = []
    for module, tree in TREES.items():
        if module.startswith("workers"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "host":
                owner = node.value
                named = (isinstance(owner, ast.Name) and owner.id == "runtime") or (
                    isinstance(owner, ast.Attribute) and owner.attr == "runtime")
                if named:
                    offenders.append(f"{module}:{node.lineno}")
    assert offenders == []


def test_every_module_has_a_production_caller() -> None:
    imported = {target for targets in GRAPH.values() for target in targets}
    # importing a.b.c imports the packages a and a.b too
    parents = {t.rsplit(".", i)[0] for t in imported for i in range(1, t.count(".") + 1)}
    orphans = sorted(m for m in MODULES if m not in imported | parents | LOADED_BY_NAME
                     and m not in ENTRY_POINTS and m not in PACKAGES)
    assert orphans == []


def test_the_graph_is_read() -> None:
    """The checks above mean something: the graph has the layers' real arrows."""
    assert any(t.startswith("mind.") for t in GRAPH["actors.actor"])
    assert any(t.startswith("actors.") for t in GRAPH["workers.runtime"])
    assert "mind.harvest.errors" in GRAPH["mind.harvest.registry"]  # a from-import of a module
    assert len(MODULES) > 100


LAYERS = ("mind.storage", "mind.frames", "mind.knowledge", "mind.retrieval")


def test_mind_layers_point_one_way() -> None:
    """storage ← frames ← knowledge ← retrieval (mind/__init__ docstrings, docs/architecture)."""
    upward = []
    for rank, layer in enumerate(LAYERS):
        above = LAYERS[rank + 1:]
        for module in (m for m in GRAPH if m == layer or m.startswith(layer + ".")):
            upward += [f"{module} → {t}" for t in GRAPH[module]
                       if any(t == a or t.startswith(a + ".") for a in above)]
    assert upward == []
