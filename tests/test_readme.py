"""README stays true to the code: the two commands come first, it stays short, its links lead
to files that exist, and the make targets it describes do what it says (the Makefile)."""

from __future__ import annotations

import re

from tests.procs import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
DOCS = ("architecture", "configuration", "cli", "http", "mcp", "operations", "performance",
        "security")


def test_readme_starts_with_the_two_commands() -> None:
    block = README.split("```", 2)[1]
    commands = [line.split()[0:2] for line in block.strip().splitlines()]
    assert commands == [["make", "run"], ["make", "test"]]


def test_readme_is_short_and_links_to_the_docs() -> None:
    assert len(README.splitlines()) <= 160
    links = re.findall(r"\]\(([^)#\s]+)\)", README)
    assert [link for link in links if not (ROOT / link).exists()] == []
    assert [d for d in DOCS if f"docs/{d}.md" not in links] == []


def _recipe(target: str) -> str:
    match = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n?)*)", MAKEFILE, re.M)
    assert match, f"no make target {target}"
    return match.group(1)


def test_the_make_targets_it_describes_do_what_it_says() -> None:
    rows = re.findall(r"^\| `make ([\w-]+)` \| (.+) \|$", README, re.M)
    assert {"run", "test", "test-fast", "lint", "bench"} <= {target for target, _ in rows}
    for target, says in rows:
        recipe = _recipe(target)
        named = set(re.findall(r"\b(ruff|mypy|pytest)\b", recipe))
        named |= set(re.findall(r"-m (bench(?:\.\w+)+)", recipe))
        assert [tool for tool in named if tool not in says] == [], target
