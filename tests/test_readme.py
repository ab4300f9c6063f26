"""README stays true to the code: every setting is documented, the two commands come first."""

from __future__ import annotations

from pathlib import Path

from hive_mind.settings import Settings

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def test_every_setting_is_in_the_configuration_table() -> None:
    missing = [name for name in Settings.model_fields
               if f"HIVE_MIND_{name.upper()}" not in README]
    assert missing == []


def test_readme_starts_with_the_two_commands() -> None:
    block = README.split("```", 2)[1]
    commands = [line.split()[0:2] for line in block.strip().splitlines()]
    assert commands == [["make", "run"], ["make", "test"]]
