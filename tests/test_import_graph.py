"""The package import graph keeps the layering honest: no import circle between modules,
nothing outside ``workers/`` reaching into ``runtime.host`` — and everything is reachable from
production code (tests and bench do not count as callers): every module is imported, every
public function and method is named somewhere else, every setting is read, and every table is
both read and written.

Every import counts — module level, inside functions and under ``TYPE_CHECKING`` — because a
lazy import that closes a circle is still a circle. Modules loaded by name are named here with
the reason: the harvest adapters (``mind.harvest.registry.MODULES``) and the entry points.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from hive_mind.settings import Settings, leaves
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


# -- public functions ---------------------------------------------------------------------------

# decorators that leave a function to be called by name; any other registers it with a
# framework that calls it (routes, CLI commands, validators, MCP tools)
PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod", "property", "abstractmethod",
                              "cached_property", "overload"})
# methods a base class calls (io.RawIOBase, html.parser.HTMLParser, pydantic-settings' settings
# and their sources)
CALLED_BY_BASES = frozenset({"readable", "readinto", "handle_starttag", "handle_endtag",
                             "handle_startendtag", "handle_data", "settings_customise_sources",
                             "get_field_value"})
# public functions no production code names, kept on purpose
KEPT: dict[str, str] = {
    "FrameQueries.get_gop_frames": "Mind.open(path).frames: a session's frames in order",
    "FrameQueries.get_b_frame_references": "Mind.open(path).frames: what a B-frame references",
    # the engine's own API, for a library user of Mind.open(path): production writes frames,
    # entities and vectors through the actors' ops instead
    "FrameStore.create_i_frame": "Mind.open(path).frames: save one statement",
    "FrameStore.create_p_frame": "Mind.open(path).frames: save an update of a statement",
    "FrameStore.create_b_frame": "Mind.open(path).frames: save a cross-reference",
    "FrameQueries.get_recent": "Mind.open(path).frames: the newest frames",
    "KnowledgeGraph.create_entity": "Mind.open(path).knowledge: a new entity",
    "KnowledgeGraph.update_entity": "Mind.open(path).knowledge: rename or re-describe",
    "KnowledgeGraph.retire_entity": "Mind.open(path).knowledge: end an entity's validity",
    "KnowledgeGraph.link_entity_to_frame": "Mind.open(path).knowledge: the entity-frame bridge",
    "KnowledgeGraph.get_frame_entities": "Mind.open(path).knowledge: a frame's entities",
    "KnowledgeGraph.get_entity_frames": "Mind.open(path).knowledge: an entity's frames",
    "VectorStore.upsert_frame_vectors": "Mind.open(path).vectors: store frame vectors",
}


def _decorators(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = set()
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        names.add(target.attr if isinstance(target, ast.Attribute)
                  else target.id if isinstance(target, ast.Name) else "?")
    return names


def _public_functions() -> Iterator[tuple[str, str, str]]:
    """(qualified name, name, where) of module-level functions and methods not starting _."""
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for module, tree in TREES.items():
        for node in tree.body:
            members = [(node.name, node)] if isinstance(node, functions) else [
                (f"{node.name}.{sub.name}", sub) for sub in node.body
                if isinstance(sub, functions)] if isinstance(node, ast.ClassDef) else []
            for qualified, fn in members:
                if not fn.name.startswith("_") and not _decorators(fn) - PLAIN_DECORATORS:
                    yield qualified, fn.name, f"{module}:{fn.lineno}"


def _names_used() -> set[str]:
    """Every name production code uses: names, attributes, imported names and identifier-like
    strings (a registry or ``getattr`` that reaches a function by name)."""
    used: set[str] = set()
    for tree in TREES.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                used.add(node.id)
            elif isinstance(node, ast.Attribute):
                used.add(node.attr)
            elif isinstance(node, ast.alias):
                used.add(node.name.rpartition(".")[2])
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and node.value.isidentifier():
                used.add(node.value)
    return used


def test_every_public_function_has_a_production_caller() -> None:
    """A public function or method no production code names is dead (or a test helper living
    in the product): remove it, or keep it in ``KEPT`` with the reason."""
    used = _names_used()
    unused = sorted(f"{where} {qualified}" for qualified, name, where in _public_functions()
                    if name not in used | CALLED_BY_BASES and qualified not in KEPT)
    assert unused == []
    assert not set(KEPT) - {q for q, _, _ in _public_functions()}, "KEPT names a missing one"


# -- settings -----------------------------------------------------------------------------------


def _settings_read() -> set[tuple[str, ...]]:
    """Where production code reads settings: ``x.group.field`` as (group, field), ``self.field``
    inside a class as (class, field), and every attribute name on its own."""
    read: set[tuple[str, ...]] = set()
    for tree in TREES.values():
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            read |= {(cls.name, node.attr) for node in ast.walk(cls)
                     if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)
                     and isinstance(node.value, ast.Name) and node.value.id == "self"}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                read.add((node.attr,))
                if isinstance(node.value, ast.Attribute):
                    read.add((node.value.attr, node.attr))
    return read


def test_every_setting_is_read() -> None:
    """A setting documented (docs/configuration.md) but read by no code is a promise nobody
    keeps: each is read as an attribute somewhere — a group's setting through its group
    (``settings.embedding.provider``) or by its own group's methods (``self.provider``)."""
    read = _settings_read()
    unread = []
    for leaf in leaves():
        if len(leaf.path) == 2:
            group = Settings.model_fields[leaf.path[0]].annotation
            owner = group.__name__ if isinstance(group, type) else "?"
            found = leaf.path in read or (owner, leaf.path[1]) in read
        else:
            found = leaf.path in read
        if not found:
            unread.append(leaf.env)
    assert unread == []
    assert len(leaves()) > 70 and any(len(leaf.path) == 2 for leaf in leaves())


# -- tables -------------------------------------------------------------------------------------

# a mind's (and the usage file's) tables; temp.* tables are a connection's scratch space
TABLE_RE = re.compile(r"CREATE (?:VIRTUAL )?TABLE (?:IF NOT EXISTS )?(?!temp\.)([a-z_]+)")
READS = r"(?:FROM|JOIN)\s+{t}\b|\b{t}\s+MATCH\b"  # MATCH: a full-text search of it
WRITES = r"(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM)\s+{t}\b"


def _production_sql() -> tuple[set[str], str]:
    """The tables the schema and the usage file create (less those a later migration drops),
    and every string of production code (f-strings with their ``{T_…}`` table constants filled
    in), the CREATE statements cut."""
    constants = {}
    for node in TREES["mind.constants"].body:
        if isinstance(node, ast.AnnAssign | ast.Assign) and isinstance(node.value, ast.Constant):
            target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
            if isinstance(target, ast.Name) and isinstance(node.value.value, str):
                constants[target.id] = node.value.value
    texts = []
    for tree in TREES.values():
        inside = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)
                  for part in node.values}  # an f-string's pieces: read with the f-string
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and id(node) not in inside:
                texts.append(node.value)
            elif isinstance(node, ast.JoinedStr):
                texts.append("".join(
                    part.value if isinstance(part, ast.Constant) else
                    constants.get(part.value.id, "?") if isinstance(part, ast.FormattedValue)
                    and isinstance(part.value, ast.Name) else "?" for part in node.values))
    sql = "\n".join(texts)
    created = Counter(TABLE_RE.findall(sql))
    created.subtract(re.findall(r"DROP TABLE (?!temp\.)([a-z_]+)", sql))  # embedding_usage: 2 - 1
    tables = {table for table, count in created.items() if count > 0}
    return tables, TABLE_RE.sub("CREATED", sql)


def test_every_table_is_read_and_written() -> None:
    """A table production code only creates (concept mastery was one) is dead weight in every
    mind file: each table is written (INSERT, UPDATE, DELETE — a trigger counts) and read."""
    tables, sql = _production_sql()
    assert {"memory_frames", "embedding_usage", "meta"} <= tables
    unread = sorted(t for t in tables if not re.search(READS.format(t=t), sql))
    unwritten = sorted(t for t in tables if not re.search(WRITES.format(t=t), sql))
    assert (unread, unwritten) == ([], [])
