"""docs/cli.md is generated from the CLI's --help and must stay up to date."""

from __future__ import annotations

from hive_mind.cli import command
from hive_mind.cli.docs import DOC, render


def test_cli_docs_are_up_to_date() -> None:
    assert DOC.exists(), "run: python -m hive_mind.cli.docs"
    assert DOC.read_text(encoding="utf-8") == render(), \
        "docs/cli.md is out of date: run python -m hive_mind.cli.docs"


def test_every_command_is_documented_with_help() -> None:
    text = render()
    root = command()
    seen = 0
    for name in ("save", "recall", "ingest", "status", "serve", "worker", "mcp", "harvest",
                 "entities", "identity", "awareness", "workspace", "maintenance"):
        assert f"## hive-mind {name}\n" in text
    for path in ("harvest import", "harvest sources", "entities search", "entities save",
                 "entities relate", "identity get", "identity set", "awareness get",
                 "awareness set", "awareness clear", "workspace create", "workspace list",
                 "workspace delete", "maintenance compact", "maintenance reconcile",
                 "maintenance reembed", "maintenance dedupe"):
        assert f"## hive-mind {path}\n" in text
        seen += 1
    assert seen and root.name


def test_every_command_and_option_has_help_and_json() -> None:
    from hive_mind.cli.docs import _walk

    for path, cmd, _ctx in _walk(command(), ["hive-mind"], None):
        assert cmd.help, f"{' '.join(path)} has no help text"
        for param in cmd.params:
            assert getattr(param, "help", None), f"{' '.join(path)}: {param.name} has no help"
        is_group = hasattr(cmd, "list_commands")
        if not is_group and path[-1] != "mcp":  # mcp's stdout is the protocol
            assert "json" in {p.name for p in cmd.params} or "as_json" in \
                {p.name for p in cmd.params}, f"{' '.join(path)} has no --json"
