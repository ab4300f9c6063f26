"""One vocabulary (issue #13): ids and slugs, the timestamp format, enumerations and limits are
written once, in the stdlib-only ``vocabulary`` leaf, and every layer and surface reads them
from there.

- The drift the issue found, reproduced literally: ``mind/ids.py`` matched slugs with ``^…$``
  and ``.match``, so ``"abc\\n"`` passed and ``hive_mind/workspaces.py`` made a directory
  ``workspaces/abc\\n/`` (``POST /v1/workspaces {"id": "abc\\n"}`` answered 201).
- Every rule is refused the same way by the engine (its ``ValidationError`` tree) and by the
  job/op schemas (pydantic).
- Every surface's enumerations (HTTP OpenAPI, MCP tool schemas, CLI choices, the harvest
  registry, the schema's CHECK constraints) equal the leaf's; ``maintenance sync`` used to be
  a CLI command the HTTP API refused (422), so ``--url … maintenance sync`` failed.
- No setting is documented but never read; the leaf imports nothing but the stdlib, and
  ``mind/`` / ``queue_schemas/`` reach each other only through it.
"""

from __future__ import annotations

import ast
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import httpx
import pytest
import typer
from pydantic import ValidationError as PydanticValidationError

from actors.host import mind_path
from hive_mind.cli import app as cli_app
from hive_mind.cli.maintenance import KINDS
from hive_mind.mcp_server import build_server
from hive_mind.settings_groups import EmbeddingSettings
from hive_mind.workspaces import WorkspaceManager
from mind import ids as mind_ids
from mind import timeutil
from mind.constants import IMPORTANCE_MULTIPLIER, IMPORTANCE_RANK
from mind.errors import InvalidIdError, InvalidTimestampError, ValidationError
from mind.harvest.registry import MODULES, SOURCES
from mind.storage.schema import CORE
from queue_schemas import ops
from tests.http_server import running_server, server_settings
from tests.procs import ROOT
from vocabulary import enums, ids, limits, timestamps

PACKAGES = ("mind", "queue_schemas", "actors", "workers", "hive_mind", "vocabulary")

# -- the drift of the issue: "abc\n" --------------------------------------------------------

NEWLINE_SLUGS = ["abc\n", "abc\r\n", "\nabc", "ab\nc", "abc\x00", "abc "]


@pytest.mark.parametrize("bad", NEWLINE_SLUGS)
def test_every_slug_check_refuses_a_trailing_newline(bad: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidIdError):
        mind_ids.validate_slug(bad)
    with pytest.raises(ValueError, match="workspace id"):
        ids.validate_slug(bad)
    with pytest.raises(ValueError, match="mind id"):
        ids.validate_mind_id("workspace:" + bad)
    with pytest.raises(PydanticValidationError):
        ops.Dedupe(mind_id="workspace:" + bad)
    with pytest.raises(InvalidIdError):
        mind_path(tmp_path, "workspace:" + bad)
    manager = WorkspaceManager(tmp_path)
    with pytest.raises(InvalidIdError):
        manager.create("evil", workspace_id=bad)
    assert not manager.exists(bad)
    assert list(tmp_path.rglob("*")) == []
    assert manager.create("fine", workspace_id="abc")["id"] == "abc"


def test_mind_ids_with_a_newline_are_refused() -> None:
    for bad in ("personal\n", "workspace:abc\n", "workspace:abc\r"):
        with pytest.raises(ValueError):
            ids.validate_mind_id(bad)
        with pytest.raises(InvalidIdError):
            mind_path(Path("/nonexistent"), bad)


def _error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code, response.text


def test_http_create_workspace_with_a_newline_id_fails_closed(tmp_path: Path) -> None:
    """The request from the issue, over a real socket: 201 and a directory ``abc\\n`` before."""
    data = tmp_path / "data"
    with running_server(server_settings(data)) as url, \
            httpx.Client(base_url=url, timeout=60) as api:
        _error(api.post("/v1/workspaces", json={"name": "evil", "id": "abc\n"}), 400,
               "invalid_id")
        _error(api.get("/v1/stats", params={"workspace": "abc\n"}), 400, "invalid_id")
        _error(api.post("/v1/memories", json={"content": "x", "workspace": "abc\n"}), 400,
               "invalid_id")
        workspaces = data / "workspaces"
        assert not workspaces.exists() or list(workspaces.iterdir()) == []
        assert api.get("/v1/workspaces").json()["workspaces"] == []
        # the legitimate id still works
        created = api.post("/v1/workspaces", json={"name": "fine", "id": "abc"})
        assert created.status_code == 201, created.text
        assert [p.name for p in workspaces.iterdir()] == ["abc"]
        # the drift the shared vocabulary removed: `maintenance sync` was a CLI command the
        # HTTP API refused (422), so `hive-mind --url … maintenance sync` always failed
        synced = api.post("/v1/maintenance/sync", json={"workspace": "abc"})
        assert synced.status_code == 200, synced.text
        assert synced.json()["action"] == "sync"
        schema = api.get("/openapi.json").json()
    _check_openapi(schema)


def test_cli_create_workspace_with_a_newline_id_fails_closed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {**os.environ, "HIVE_MIND_DATA_DIR": str(data), "HIVE_MIND_EMBEDDING_PROVIDER": "test",
           "HF_HUB_OFFLINE": "1"}
    for key in ("HIVE_MIND_REDIS_URL", "HIVE_MIND_URL"):
        env.pop(key, None)
    cmd = [sys.executable, "-m", "hive_mind", "workspace", "create", "evil", "--id"]
    bad = subprocess.run([*cmd, "abc\n"], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode != 0 and "invalid workspace id" in bad.stderr, bad.stderr
    assert not (data / "workspaces").exists() or list((data / "workspaces").iterdir()) == []
    good = subprocess.run([*cmd, "abc"], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert good.returncode == 0, good.stderr
    assert [p.name for p in (data / "workspaces").iterdir()] == ["abc"]


# -- ids and text: one rule, refused alike by the engine and the schemas ----------------------

BAD_GOP_IDS = ["", "   ", "a\x00b", "a\nb", "a\x7fb", "a\x85b", "a\ud800b", "x" * 201]


@pytest.mark.parametrize("bad", BAD_GOP_IDS)
def test_gop_ids_are_refused_alike(bad: str) -> None:
    with pytest.raises(InvalidIdError):
        mind_ids.validate_id(bad)
    with pytest.raises(PydanticValidationError):
        ops.NewFrameOp(gop_id=bad, content="x")


def test_good_ids_pass_everywhere() -> None:
    for good in ("save:2026-11-30", "chatgpt:conv-1", "Zoë's chat", "日本語", "x" * 200):
        assert mind_ids.validate_id(good) == good
        assert ops.NewFrameOp(gop_id=good, content="x").gop_id == good


@pytest.mark.parametrize("bad", ["", "  ", "bin\x00ary", "bad \ud800 surrogate",
                                 "x" * (limits.MAX_FRAME_CHARS + 1)])
def test_frame_text_is_refused_alike(bad: str) -> None:
    from mind.frames.store import validate_content

    with pytest.raises(ValidationError):
        validate_content(bad)
    with pytest.raises(PydanticValidationError):
        ops.NewFrameOp(gop_id="g", content=bad)


def test_refused_values_are_never_echoed_whole() -> None:
    huge = "x" * 100_000
    for check in (ids.validate_slug, ids.validate_mind_id, ids.validate_op_id,
                  ids.validate_host_id, timestamps.parse_iso):
        with pytest.raises(ValueError) as err:
            check(huge)
        assert len(str(err.value)) < 300


# -- timestamps -------------------------------------------------------------------------------

GOOD_TIMES = [
    ("2026-11-30T03:20:49.123Z", "2026-11-30T03:20:49.123Z"),
    ("2026-11-30T03:20:49Z", "2026-11-30T03:20:49.000Z"),
    ("2026-11-30T04:20:49.123456789+01:00", "2026-11-30T03:20:49.123Z"),
    ("2026-11-30T04:20:49+0100", "2026-11-30T03:20:49.000Z"),
]
BAD_TIMES = ["2026-11-30T03:20:49.123Z\n", "2026-11-30T03:20:49", "2026-11-30",
             "２０２６-11-30T03:20:49Z", "2026-13-30T03:20:49.000Z", "2026-11-30 03:20:49Z",
             " 2026-11-30T03:20:49Z", "yesterday", ""]


@pytest.mark.parametrize(("raw", "house"), GOOD_TIMES)
def test_timestamps_normalize_alike(raw: str, house: str) -> None:
    assert timeutil.normalize_ts(raw) == house
    assert timestamps.normalize_ts(raw) == house
    assert ops.SaveFrames(mind_id="personal", frames=[
        ops.NewFrameOp(gop_id="g", content="x", created_at=raw)]).frames[0].created_at == house


@pytest.mark.parametrize("bad", BAD_TIMES)
def test_bad_timestamps_are_refused_alike(bad: str) -> None:
    assert not timeutil.is_strict_iso(bad) or bad == "2026-13-30T03:20:49.000Z"
    with pytest.raises(InvalidTimestampError):
        timeutil.normalize_ts(bad)
    with pytest.raises(PydanticValidationError):
        ops.NewFrameOp(gop_id="g", content="x", created_at=bad)


def test_house_format_round_trips_and_matches_sqlite() -> None:
    moment = datetime(2026, 11, 30, 3, 20, 49, 123_999, tzinfo=UTC)
    text = timestamps.format_ts(moment)
    assert text == "2026-11-30T03:20:49.123Z" and timestamps.HOUSE_RE.fullmatch(text)
    with pytest.raises(InvalidTimestampError):
        timeutil.format_ts(datetime(2026, 1, 1))  # naive
    sql = sqlite3.connect(":memory:").execute(f"SELECT {timestamps.SQL_NOW}").fetchone()[0]
    assert timestamps.HOUSE_RE.fullmatch(sql), sql


# -- enumerations: every surface reads the leaf -----------------------------------------------

def test_subsets_and_derived_tables() -> None:
    pairs = [(enums.AGENT_SOURCES, enums.FRAME_SOURCES), (enums.TOOL_SCOPES, enums.SCOPES),
             (enums.AGENT_IMPORTANCES, enums.IMPORTANCES),
             (enums.INGEST_IMPORTANCES, enums.AGENT_IMPORTANCES),
             (enums.CONVERSATION_SOURCES, enums.HARVEST_SOURCES),
             (enums.FRAME_WIPES, enums.FRAME_CLEANUP_MODES)]
    for narrow, wide in pairs:
        assert narrow and set(narrow) < set(wide), (narrow, wide)
    assert set(enums.INGEST_TYPES) == {"auto", *enums.DOCUMENT_SOURCES}
    assert set(enums.HARVEST_CHOICES) == {"auto", *enums.HARVEST_SOURCES}
    assert set(enums.CONVERSATION_CHOICES) == {"auto", *enums.CONVERSATION_SOURCES}
    assert sorted(enums.CONVERSATION_SOURCES + enums.DOCUMENT_SOURCES) == sorted(
        enums.HARVEST_SOURCES)
    assert set(IMPORTANCE_RANK) == set(IMPORTANCE_MULTIPLIER) == set(enums.IMPORTANCES)
    assert IMPORTANCE_RANK["critical"] > IMPORTANCE_RANK["normal"] > IMPORTANCE_RANK["deprecated"]
    for values in (enums.IMPORTANCES, enums.FRAME_SOURCES, enums.ENTITY_TYPES, enums.SCOPES):
        assert len(set(values)) == len(values)


def test_schema_check_constraints_are_the_leaf_tuples() -> None:
    for column, values in (("frame_type", enums.FRAME_TYPES),
                           ("importance", enums.IMPORTANCES),
                           ("source", enums.FRAME_SOURCES),
                           ("status", enums.SESSION_STATUSES),
                           ("category", enums.AWARENESS_CATEGORIES)):
        listed = "(" + ", ".join(f"'{v}'" for v in values) + ")"
        assert f"CHECK ({column} IN {listed})" in CORE, column


def test_harvest_registry_is_the_leaf() -> None:
    import importlib.util

    assert SOURCES == enums.HARVEST_SOURCES
    for source, module in MODULES.items():
        assert importlib.util.find_spec(f"mind.harvest.{module}") is not None, source


def _enum(schema: dict[str, Any], root: dict[str, Any]) -> list[str]:
    """The allowed values of a (possibly optional, possibly referenced) enum property."""
    if "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return _enum(target, root)
    if "enum" in schema:
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    for key in ("anyOf", "allOf", "oneOf"):
        for option in schema.get(key, []):
            found = _enum(option, root)
            if found:
                return found
    return []


def _check_openapi(schema: dict[str, Any]) -> None:
    bodies = schema["components"]["schemas"]
    expected = {
        ("SaveRequest", "importance"): enums.IMPORTANCES,
        ("SaveRequest", "source"): enums.FRAME_SOURCES,
        ("RecallRequest", "scope"): enums.SCOPES,
        ("RecallRequest", "profile"): enums.RECALL_PROFILES,
        ("RecallRequest", "lanes"): enums.RECALL_LANES,
        ("EntityRequest", "entity_type"): enums.ENTITY_TYPES,
        ("AwarenessRequest", "category"): enums.AWARENESS_CATEGORIES,
        ("CleanupFramesRequest", "mode"): enums.FRAME_CLEANUP_MODES,
        ("CleanupEntitiesRequest", "mode"): enums.ENTITY_CLEANUP_MODES,
        ("HarvestRequest", "source"): enums.HARVEST_CHOICES,
        ("IngestRequest", "type_hint"): enums.INGEST_TYPES,
    }
    for (body, field), values in expected.items():
        found = _enum(bodies[body]["properties"][field], schema)
        assert sorted(found) == sorted(values), (body, field, found)
    kind = next(p for p in schema["paths"]["/v1/maintenance/{kind}"]["post"]["parameters"]
                if p["name"] == "kind")
    assert sorted(_enum(kind["schema"], schema)) == sorted(enums.MAINTENANCE_KINDS)


async def test_mcp_tool_schemas_are_the_leaf() -> None:
    async def no_facade() -> Any:
        raise AssertionError("listing tools opens no mind")

    tools = {t.name: t.input_schema for t in await build_server(no_facade).list_tools()}
    expected = {
        ("save_memory", "importance"): enums.AGENT_IMPORTANCES,
        ("save_memory", "source"): enums.AGENT_SOURCES,
        ("recall_memory", "scope"): enums.TOOL_SCOPES,
        ("recall_memory", "profile"): enums.RECALL_PROFILES,
        ("search_entities", "type"): enums.ENTITY_TYPES,
        ("save_entity", "type"): enums.ENTITY_TYPES,
        ("get_awareness", "category"): enums.AWARENESS_CATEGORIES,
        ("set_awareness", "category"): enums.AWARENESS_CATEGORIES,
        ("harvest_import", "source"): enums.CONVERSATION_CHOICES,
        ("ingest_source", "type_hint"): enums.INGEST_TYPES,
        ("ingest_source", "importance"): enums.INGEST_IMPORTANCES,
        ("cleanup_frames", "mode"): enums.FRAME_CLEANUP_MODES,
        ("cleanup_entities", "mode"): enums.ENTITY_CLEANUP_MODES,
    }
    for (tool, field), values in expected.items():
        schema = tools[tool]
        found = _enum(schema["properties"][field], schema)
        assert sorted(found) == sorted(values), (tool, field, found)


def _literal_values(annotation: Any) -> list[str]:
    """The values of a ``Literal`` (or ``Literal | None``) annotation, flattened."""
    if get_origin(annotation) is Literal:
        return [str(v) for v in get_args(annotation)]
    return [v for arg in get_args(annotation) for v in _literal_values(arg)]


def _choices(path: list[str], option: str) -> list[str]:
    """The values a CLI option accepts (Typer turns a ``Literal`` into a choice)."""
    command: Any = typer.main.get_command(cli_app.app)
    for name in path:
        command = command.commands[name]
    param = next(p for p in command.params if p.name == option)
    return _literal_values(param.type_descriptor.annotation)


def test_cli_choices_are_the_leaf() -> None:
    expected: dict[tuple[str, ...], tuple[str, ...]] = {
        ("save", "importance"): enums.IMPORTANCES,
        ("save", "source"): enums.FRAME_SOURCES,
        ("recall", "scope"): enums.SCOPES,
        ("recall", "profile"): enums.RECALL_PROFILES,
        ("recall", "lanes"): enums.RECALL_LANES,
        ("ingest", "type_hint"): enums.INGEST_TYPES,
        ("ingest", "importance"): enums.INGEST_IMPORTANCES,
        ("entities", "search", "entity_type"): enums.ENTITY_TYPES,
        ("entities", "save", "entity_type"): enums.ENTITY_TYPES,
        ("awareness", "set", "category"): enums.AWARENESS_CATEGORIES,
        ("harvest", "import", "source"): enums.HARVEST_CHOICES,
    }
    for (*path, option), values in expected.items():
        assert sorted(_choices(path, option)) == sorted(values), (path, option)
    assert tuple(KINDS) == enums.MAINTENANCE_KINDS
    assert sorted(_choices([], "embedding_provider")) == sorted(
        _literal_values(EmbeddingSettings.model_fields["provider"].annotation))


# -- structure --------------------------------------------------------------------------------

def _imports(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def test_the_leaf_imports_only_the_stdlib() -> None:
    for path in (ROOT / "vocabulary").glob("*.py"):
        for name in _imports(path):
            top = name.split(".")[0]
            assert top == "vocabulary" or top in sys.stdlib_module_names, (path.name, name)


def test_mind_and_queue_schemas_meet_only_in_the_leaf() -> None:
    for package, foreign in (("mind", {"queue_schemas", "actors", "workers", "hive_mind"}),
                             ("queue_schemas", {"mind", "actors", "workers", "hive_mind"})):
        for path in (ROOT / package).rglob("*.py"):
            for name in _imports(path):
                assert name.split(".")[0] not in foreign, (str(path), name)


def _assigned_constants(path: Path) -> set[str]:
    """Module-level public UPPER_CASE names assigned in ``path``."""
    out = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        out |= {t.id for t in targets
                if isinstance(t, ast.Name) and re.fullmatch(r"[A-Z][A-Z0-9_]+", t.id)}
    return out


def test_shared_constants_are_defined_once() -> None:
    """A name of a constants module or of the vocabulary is assigned nowhere else: the shape of
    the drift the issue found (IDLE_POLL_SECONDS 0.05 in workers/constants.py and 0.1 in
    workers/host_runtime.py; MAX_FRAME_CHARS, COMPACT_TEMP_DAYS, … in two packages)."""
    where: dict[str, list[str]] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for name in _assigned_constants(path):
                where.setdefault(name, []).append(str(path.relative_to(ROOT)))
    shared = {name for name, paths in where.items()
              if any(p.endswith("constants.py") or p.startswith("vocabulary/") for p in paths)}
    assert {name: where[name] for name in shared if len(where[name]) > 1} == {}


def _raises_value_error(check: Callable[[object], object], value: object) -> bool:
    try:
        check(value)
    except ValueError:
        return True
    return False


def test_op_host_and_kind_ids_fullmatch() -> None:
    assert ids.validate_op_id("idx-compact:personal:2026-11-30") == "idx-compact:personal:2026-11-30"
    assert ids.validate_host_id("host-1.local") == "host-1.local"
    for bad in ("op\n", "op id", "-op", "", "x" * 201, None):
        assert _raises_value_error(ids.validate_op_id, bad), bad
    for bad in ("host\n", "host:1", "../h", "", None):
        assert _raises_value_error(ids.validate_host_id, bad), bad
    assert ids.KIND_RE.fullmatch("compact\n") is None
    assert ids.ID_PART_RE.fullmatch("part\n") is None
