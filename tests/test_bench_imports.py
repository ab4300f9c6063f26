"""bench/ measures the product through its public names: no benchmark imports a private name
(``_x``) of our packages or reaches into a private attribute of anything but itself, so that
renaming an internal never silently breaks (or falsifies) a benchmark. And every script sits in
its group: product benchmarks, evals or component benchmarks (bench/README.md)."""

from __future__ import annotations

import ast
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"
OURS = {"mind", "actors", "workers", "queue_schemas", "vocabulary", "hive_mind"}
GROUPS = {"product", "evals", "components"}
SHARED = {"__init__", "common", "conv_data"}  # helpers the groups import


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(source: str) -> list[str]:
    """Each private name ``source`` imports from our packages, and each private attribute it
    reads or writes on anything but ``self`` / ``cls`` (an imported module or class, or an
    object of ours), as ``line: what``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in OURS:
            found += [f"{node.lineno}: from {node.module} import {alias.name}"
                      for alias in node.names if _private(alias.name)]
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {alias.name}" for alias in node.names
                      if alias.name.split(".")[0] in OURS
                      and any(map(_private, alias.name.split(".")))]
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            owner = ast.unparse(node.value)
            if owner not in ("self", "cls"):
                found.append(f"{node.lineno}: {owner}.{node.attr}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
              and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str) and _private(node.args[1].value)):
            found.append(f"{node.lineno}: {node.func.id}(…, {node.args[1].value!r})")
    return sorted(found, key=lambda use: int(use.split(":")[0]))


def test_the_check_sees_private_names() -> None:
    assert private_uses("from workers.cognify import _graphs, run_index_job\n") == [
        "1: from workers.cognify import _graphs"]
    assert private_uses("import mind.retrieval._x\n") == ["1: import mind.retrieval._x"]
    assert private_uses("from mind.retrieval import vector_index as vi\nvi._run_blocks([])\n"
                        ) == ["2: vi._run_blocks"]
    assert private_uses("index._frames.put(1)\nMindActor._apply = f\n") == [
        "1: index._frames", "2: MindActor._apply"]
    assert private_uses("getattr(handle, '_callback', None)\n") == [
        "1: getattr(…, '_callback')"]
    assert private_uses("from numpy import _x\nself._x = 1\nx.__class__\nfrom mind import a\n"
                        ) == []


def test_no_benchmark_uses_a_private_name() -> None:
    scripts = sorted(BENCH.rglob("*.py"))
    assert len(scripts) > 20  # the check ran over the benchmarks, not over nothing
    used = {str(p.relative_to(BENCH)): private_uses(p.read_text(encoding="utf-8"))
            for p in scripts}
    assert {name: uses for name, uses in used.items() if uses} == {}


def test_every_script_is_in_a_group() -> None:
    top = {p.stem for p in BENCH.glob("*.py")}
    assert top - SHARED == set(), "a benchmark belongs in bench/product, evals or components"
    assert {p.name for p in BENCH.iterdir() if (p / "__init__.py").exists()} == GROUPS
    for group in GROUPS:
        assert [p for p in (BENCH / group).glob("*.py") if p.stem != "__init__"], group
