"""The facade seam is typed: no ``Any`` in the facade contract, its answers' shapes, the modules
through which the HTTP API, the MCP tools and the CLI hold the facade, nor in the signatures of
the facade classes' public methods — so mypy checks every call across the seam (it also holds
each facade class to the contract: ``_conformance`` in hive_mind/facade.py)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tests.procs import ROOT

SEAM_MODULES = (
    "hive_mind/contract.py",  # the protocols
    "hive_mind/shapes.py",  # the answers' shapes
    "hive_mind/per_mind.py",  # the one-mind routes of the sharded and scoped facades
    "hive_mind/api/deps.py",  # the facade the HTTP routes hold
    "hive_mind/mcp_tools.py",  # ... the MCP tools
    "hive_mind/cli/common.py",  # ... the CLI
    "hive_mind/server_reads.py",  # the ingest both the route and the tool call
)
FACADE_CLASSES = {
    "hive_mind/facade.py": "HiveMind",
    "hive_mind/remote.py": "RemoteHiveMind",
    "hive_mind/sharded.py": "ShardedHiveMind",
    "hive_mind/scopes.py": "ScopedFacade",
}


def _is_any(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "Any") or \
        (isinstance(node, ast.Attribute) and node.attr == "Any")


def _anys(tree: ast.AST) -> Iterator[int]:
    """Line numbers of every use of ``Any`` (an annotation, an alias, an import)."""
    for node in ast.walk(tree):
        imported = isinstance(node, ast.ImportFrom) and any(a.name == "Any" for a in node.names)
        if imported or _is_any(node):
            yield node.lineno


def _signature_anys(cls: ast.ClassDef) -> Iterator[str]:
    """``method:line`` of each ``Any`` in a public method's parameters or return type."""
    for item in cls.body:
        if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) \
                or (item.name.startswith("_") and not item.name.startswith("__a")):
            continue
        args = item.args
        annotated = [a.annotation for a in (*args.posonlyargs, *args.args, *args.kwonlyargs,
                                            args.vararg, args.kwarg) if a is not None]
        for annotation in (*annotated, item.returns):
            if annotation is not None:
                yield from (f"{item.name}:{line}" for line in _anys(annotation))


def test_no_any_in_the_seam_modules() -> None:
    found = {path: list(_anys(ast.parse((ROOT / path).read_text(encoding="utf-8"))))
             for path in SEAM_MODULES}
    assert sum(len(lines) for lines in found.values()) == 0, \
        {path: lines for path, lines in found.items() if lines}


def test_no_any_in_the_facade_classes_public_signatures() -> None:
    found: list[str] = []
    for path, name in FACADE_CLASSES.items():
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name]
        assert len(classes) == 1, f"{name} not found in {path}"
        found += [f"{path}:{where}" for where in _signature_anys(classes[0])]
    assert found == []


def test_the_counter_sees_an_any() -> None:
    """The check above could not pass by counting nothing."""
    tree = ast.parse("from typing import Any\n"
                     "class F:\n"
                     "    async def save(self, x: dict[str, Any]) -> list[Any]: ...\n")
    assert list(_anys(tree)) == [1, 3, 3]
    assert list(_signature_anys(next(n for n in ast.walk(tree)
                                     if isinstance(n, ast.ClassDef)))) == ["save:3", "save:3"]


def test_each_facade_class_is_held_to_the_contract() -> None:
    """mypy checks the assignments of ``_conformance``: it must name every facade class (the
    scoped one is checked where ``guarded`` returns it as a ``HostFacade``)."""
    source = (ROOT / "hive_mind/facade.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    check = next(n for n in ast.walk(tree)
                 if isinstance(n, ast.FunctionDef) and n.name == "_conformance")
    named = {a.annotation.id for a in check.args.args
             if isinstance(a.annotation, ast.Name)}
    assert named == {"HiveMind", "RemoteHiveMind", "ShardedHiveMind"}


def test_the_cli_actions_hold_the_typed_facade() -> None:
    """A command's ``act(hm)`` annotated ``Any`` would take the facade past the type check
    (``with_facade`` accepts it)."""
    untyped = []
    for path in sorted((ROOT / "hive_mind/cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                untyped += [f"{path.name}:{node.lineno} {node.name}"
                            for arg in node.args.args
                            if arg.arg in ("hm", "mind", "facade") and arg.annotation is not None
                            and any(True for _ in _anys(arg.annotation))]
    assert untyped == []


def test_the_summary_shapes_name_every_field() -> None:
    """A field added to a harvest's or an ingest's summary needs its place in the shape its
    ``as_dict`` builds (else the JSON would leave it out)."""
    from dataclasses import fields

    from hive_mind.harvest import IngestSummary
    from hive_mind.shapes import HarvestReport, IngestReport
    from workers.harvest_summary import HarvestSummary

    for summary, shape in ((HarvestSummary, HarvestReport), (IngestSummary, IngestReport)):
        assert {f.name for f in fields(summary)} == set(shape.__annotations__), shape.__name__
