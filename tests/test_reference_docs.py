"""The generated references stay true to the code (hive_mind/docgen): docs/configuration.md
from Settings, docs/http.md from the OpenAPI schema, docs/mcp.md from the MCP server's tools.
Each test fails when its file is stale; ``python -m hive_mind.docgen`` rewrites them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pydantic import AliasChoices, BaseModel, Field
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, SettingsConfigDict

from hive_mind.docgen import configuration, http_reference, mcp_reference, write_or_check
from hive_mind.mcp_server import TOOL_NAMES
from hive_mind.settings import Settings, leaves
from hive_mind.settings_groups import is_internal
from tests.procs import ROOT

FIX = "run: python -m hive_mind.docgen"


def test_configuration_doc_is_up_to_date() -> None:
    assert configuration.DOC.exists(), FIX
    assert configuration.DOC.read_text(encoding="utf-8") == configuration.render(), FIX


def _field(path: tuple[str, ...]) -> FieldInfo:
    if len(path) == 1:
        return Settings.model_fields[path[0]]
    group = Settings.model_fields[path[0]].annotation
    assert isinstance(group, type) and issubclass(group, BaseModel)
    return group.model_fields[path[1]]


def test_every_setting_is_documented_with_its_variable_and_description() -> None:
    text = configuration.render()
    for leaf in leaves():
        field = _field(leaf.path)
        row = next(line for line in text.splitlines() if line.startswith(f"| `{leaf.env}` |"))
        assert field.description and " ".join(field.description.split())[:40] in row, leaf
        assert ("| *internal:* " in row) == is_internal(field), leaf


def test_the_doc_has_a_section_per_group_and_labels_internal_knobs() -> None:
    text = configuration.render()
    for name, field in Settings.model_fields.items():
        group = field.annotation
        if isinstance(group, type) and issubclass(group, BaseModel):
            assert f"\n## {group.model_config.get('title')}\n" in text, name
    embedding = text.split("\n## Embedding\n", 1)[1].split("\n## ", 1)[0]
    assert "| `HIVE_MIND_EMBEDDING_PROVIDER` |" in embedding
    assert "| `HIVE_MIND_BATCHER_MAX_WAIT_MS` | number (≥ 0) | `20` | *internal:* " in embedding
    assert 8 <= text.count("| *internal:* ") <= 20


def test_http_doc_is_up_to_date_and_names_every_route() -> None:
    schema = http_reference.openapi()
    text = http_reference.render(schema)
    assert http_reference.DOC.read_text(encoding="utf-8") == text, FIX
    routes = [(m, p) for p, item in schema["paths"].items() for m in item
              if m in http_reference.METHODS]
    assert len(routes) > 40
    for method, path in routes:
        assert f"\n### {method.upper()} {path}\n" in text, (method, path)
    for model in schema["components"]["schemas"]:
        assert f"\n### {model}\n" in text, model
    assert "[`SaveRequest`](#saverequest)" in text  # a request body links its model


def test_mcp_doc_is_up_to_date_and_names_every_tool() -> None:
    text = mcp_reference.render()
    assert mcp_reference.DOC.read_text(encoding="utf-8") == text, FIX
    for tool in TOOL_NAMES:
        assert f"\n### {tool}\n" in text, tool
    assert "| `query` | string (at most 10000 characters) | yes |" in text
    assert "`memory://workspace/{id}`" in text


class _Embedding(BaseModel):
    """How texts become vectors.

    A second paragraph the doc leaves out."""

    backend: str = Field(default="onnx-int8", description="what runs the model",
                         validation_alias=AliasChoices("HIVE_MIND_EMBEDDING_BACKEND",
                                                       "embedding_backend"))
    lanes: int | None = Field(default=None, ge=1, description="parallel encoders")


class _Nested(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HIVE_MIND_")

    data_dir: Path = Field(default=Path("~/.hive-mind"), description="where mind files live")
    tasks: list[str] = Field(default_factory=lambda: ["compact", "reconcile"],
                             description="nightly tasks")
    embedding: _Embedding = Field(default_factory=_Embedding)


def test_settings_grouped_in_sub_models_render_as_sections() -> None:
    text = configuration.render(_Nested)
    assert "| `HIVE_MIND_DATA_DIR` | string (path) | `~/.hive-mind` | where mind files live |" \
        in text
    assert "| `HIVE_MIND_TASKS` | list of string | `compact,reconcile` | nightly tasks |" in text
    section = text.split("## Embedding\n", 1)[1]
    assert section.startswith("\nHow texts become vectors.\n") and "second paragraph" not in text
    assert "| `HIVE_MIND_EMBEDDING_BACKEND` | string | `onnx-int8` |" in section
    assert "| `HIVE_MIND_EMBEDDING_LANES` | integer (≥ 1) or null | unset |" in section


def test_check_mode_reports_a_stale_file_and_writes_nothing(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text("old\n", encoding="utf-8")
    assert write_or_check(doc, "new\n", check=True, command="regen") == 1
    assert doc.read_text(encoding="utf-8") == "old\n"
    assert write_or_check(doc, "new\n", check=False, command="regen") == 0
    assert write_or_check(doc, "new\n", check=True, command="regen") == 0


def test_the_generator_checks_every_reference_from_the_command_line() -> None:
    done = subprocess.run([sys.executable, "-m", "hive_mind.docgen", "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
