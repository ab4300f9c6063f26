"""``docs/configuration.md`` from :class:`~hive_mind.settings.Settings`: every setting, its
environment variable, type, default and description, in the order the class declares them.

A field whose type is itself a pydantic model (a group of settings) becomes a section of its
own, titled by the model's ``title`` (else the field's name) and introduced by the model's
docstring. A setting marked internal (:func:`hive_mind.settings_groups.setting`) says so at the
start of its description. Environment names come from
a field's alias when it has one, else from the settings' ``env_prefix`` and the field's path.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any, NamedTuple

from pydantic import AliasChoices, BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from hive_mind.docgen import DOCS, generated_note
from hive_mind.docgen.schema_text import cell, type_text
from hive_mind.settings_groups import is_internal

DOC = DOCS / "configuration.md"
COMMAND = "python -m hive_mind.docgen"
TEST = "tests/test_reference_docs.py"

INTRO = """\
hive-mind has one settings object. Each setting is read, in this order of precedence, from:

1. the CLI's global options (`--data-dir`, `--redis-url`, `--url`, … before the command;
   `hive-mind --help` lists them);
2. environment variables (the names below);
3. a `.env` file: `<data dir>/.env`, or the file named by `--env-file` / `HIVE_MIND_ENV_FILE`.
   A `.env` in the working directory is never read (a cloned repository could otherwise
   redirect every save), and an env file other users may write is refused;
4. the defaults below.

Nothing is read at import time. `hive-mind status` prints the effective configuration with
secrets masked. Lists are comma-separated (`HIVE_MIND_MAINTENANCE_TASKS=compact,reconcile`);
booleans are `true` / `false`; "unset" means the variable is absent or empty.

The settings come in groups (one section each below; in code `settings.embedding.provider` is
`HIVE_MIND_EMBEDDING_PROVIDER`). A setting marked *internal* is a tuning knob whose default was
measured (docs/performance.md): it is listed for completeness, and a deployment does not need
to set it.
"""


INTERNAL_LABEL = "*internal:* "


class Row(NamedTuple):
    env: str
    type: str
    default: str
    description: str


class Section(NamedTuple):
    title: str
    doc: str
    rows: list[Row]


def _group(annotation: Any) -> type[BaseModel] | None:
    """The model class of a field holding a group of settings, else None."""
    return annotation if inspect.isclass(annotation) and issubclass(annotation, BaseModel) \
        and not issubclass(annotation, SecretStr) else None


def env_names(name: str, field: FieldInfo, prefix: str, root: str) -> list[str]:
    """The environment variables a field is read from: its aliases (those under the ``root``
    env prefix when some are: the others are there to build the model by field name), else
    ``prefix`` and its name."""
    alias = field.validation_alias or field.alias
    if isinstance(alias, str):
        return [alias.upper()]
    if isinstance(alias, AliasChoices):
        found = [c.upper() for c in alias.choices if isinstance(c, str)]
        prefixed = [c for c in found if root and c.startswith(root.upper())]
        if prefixed or found:
            return prefixed or found
    return [f"{prefix}{name}".upper()]


def default_text(field: FieldInfo) -> str:
    """A field's default as an environment variable would spell it."""
    if field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
        if not isinstance(value, list | tuple | set | frozenset):
            return "computed: see the description"
        return f"`{','.join(str(v) for v in value)}`" if value else "empty"
    value = field.default
    if value is PydanticUndefined:
        return "required"
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float):
        return f"`{value:g}`"
    if isinstance(value, str) and not value:
        return "empty"
    return f"`{value}`"


def _prefix(model: type[BaseModel], nested: str) -> str:
    """The env prefix of a group's fields: its own ``env_prefix`` when it is a settings class,
    else ``nested`` (the outer prefix and the field's name, joined by the nested delimiter)."""
    config: Any = model.model_config
    return str(config.get("env_prefix") or nested)


def sections(model: type[BaseModel], prefix: str | None = None, title: str = "Settings",
             root: str | None = None) -> Iterator[Section]:
    """The model's own settings, then one section per group of settings it holds."""
    config: Any = model.model_config
    prefix = str(config.get("env_prefix", "")) if prefix is None else prefix
    root = prefix if root is None else root
    delimiter = str(config.get("env_nested_delimiter") or "_")
    schema = model.model_json_schema(by_alias=False)
    rows: list[Row] = []
    groups: list[tuple[str, type[BaseModel]]] = []
    for name, field in model.model_fields.items():
        group = _group(field.annotation)
        if group is not None:
            groups.append((name, group))
            continue
        prop = schema.get("properties", {}).get(name, {})
        label = INTERNAL_LABEL if is_internal(field) else ""
        rows.append(Row(", ".join(f"`{e}`" for e in env_names(name, field, prefix, root)),
                        type_text(prop), default_text(field), label + (field.description or "")))
    doc = inspect.cleandoc(model.__doc__ or "") if model.__doc__ else ""
    yield Section(title, doc, rows)
    for name, group in groups:
        inner = _prefix(group, f"{prefix}{name}{delimiter}")
        title = str(group.model_config.get("title") or name.replace("_", " ").capitalize())
        yield from sections(group, inner, title, root)


def render(model: type[BaseModel] | None = None) -> str:
    """The whole of docs/configuration.md."""
    if model is None:
        from hive_mind.settings import Settings

        model = Settings
    parts = ["# Configuration\n", generated_note(COMMAND, TEST) + "\n", INTRO]
    for section in sections(model):
        if not section.rows:
            continue
        parts.append(f"## {section.title}\n")
        if section.doc and section.title != "Settings":
            parts.append(section.doc.split("\n\n")[0].replace("\n", " ") + "\n")
        parts.append("| variable | type | default | description |")
        parts.append("|---|---|---|---|")
        parts.extend(f"| {r.env} | {cell(r.type)} | {cell(r.default)} | {cell(r.description)} |"
                     for r in section.rows)
        parts.append("")
    return "\n".join(parts).rstrip() + "\n"

