"""queue_schemas: models, versions, ids, vectors and the JSON codec (incl. a real arq round trip)."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import enum
import json
import math
import pickle
import struct
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any, Literal

import pytest
from pydantic import BaseModel, TypeAdapter
from pydantic import ValidationError as PydanticValidationError

import queue_schemas
from queue_schemas import (
    COGNIFY_QUEUE,
    DEAD_LETTERS_KEY,
    HOST_QUEUE_PREFIX,
    KEY_PREFIX,
    AnyJob,
    AnyOp,
    ApplyIndex,
    ChunkResult,
    CognifyItem,
    CognifyJob,
    Compact,
    Dedupe,
    EntityResult,
    Envelope,
    Erase,
    Fingerprint,
    FrameIndexResult,
    HarvestBatch,
    NewFrameOp,
    PayloadError,
    Reconcile,
    Reembed,
    ReembedJob,
    RelationResult,
    SaveFrames,
    SchemaVersionError,
    Touch,
    UnknownKindError,
    Vector,
    deserialize,
    host_queue,
    job_id,
    ops,
    parse_job,
    parse_op,
    serialize,
    split_mind_id,
    validate_mind_id,
    workspace_mind_id,
)
from queue_schemas.jobs import JOB_KINDS, JOB_MODELS
from queue_schemas.ops import OP_KINDS, OP_MODELS
from tests.conftest import REDIS_URL
from vocabulary.limits import MAX_VECTOR_DIM

HASH_A = "a" * 64
HASH_B = "0123456789abcdef" * 4
FP3 = Fingerprint(provider="test", model="hm-test-3", dim=3)


def vec(*values: float) -> Vector:
    return Vector.from_floats(values)


def sample_jobs() -> list[Envelope]:
    return [
        CognifyJob(
            mind_id="personal",
            items=[
                CognifyItem(frame_id=1, content="hello wörld ✓", content_hash=HASH_A),
                CognifyItem(frame_id=2, content="second", importance="critical"),
            ],
            fingerprint_hint=FP3,
        ),
        CognifyJob(mind_id="workspace:acme", items=[CognifyItem(frame_id=9, content="x")]),
        ReembedJob(
            mind_id="workspace:acme",
            items=[CognifyItem(frame_id=3, content="again", content_hash=HASH_B)],
            fingerprint=FP3,
        ),
    ]


def sample_ops() -> list[Envelope]:
    frame = NewFrameOp(
        gop_id="session-1",
        content="We chose SQLite 🙂",
        frame_type="P",
        importance="important",
        source="import",
        base_frame_id=4,
        created_at="2024-05-01T12:00:00+02:00",
        metadata={"speaker": "ana", "nested": {"n": [1, 2.5, None, True]}},
        external_id="chatgpt:conv-1:msg-1",
        references=[1, 2],
        dedup=False,
    )
    return [
        SaveFrames(mind_id="personal", frames=[frame, NewFrameOp(gop_id="g", content="plain")]),
        ApplyIndex(
            mind_id="workspace:acme",
            fingerprint=FP3,
            results=[
                FrameIndexResult(
                    frame_id=1,
                    content_hash=HASH_A,
                    vector=vec(0.1, -0.2, 3.0),
                    chunks=[
                        ChunkResult(chunk_idx=0, content="part one", char_start=0, char_end=8,
                                    vector=vec(1, 0, 0)),
                        ChunkResult(chunk_idx=1, content="part two", char_start=9, char_end=17,
                                    vector=vec(0, 1, 0)),
                    ],
                    entities=[EntityResult(name="SQLite", entity_type="technology",
                                           confidence=0.9)],
                    relations=[RelationResult(source="hive-mind", target="SQLite",
                                              relation_type="uses", confidence=0.75)],
                ),
                FrameIndexResult(frame_id=2, content_hash=HASH_B, vector=vec(0, 0, 1)),
            ],
        ),
        Compact(mind_id="personal", op_id=job_id("compact", "personal", date(2026, 11, 30))),
        Compact(mind_id="personal", max_temp_age_days=7, max_deprecated_age_days=14),
        Reconcile(mind_id="workspace:acme", grace_seconds=0),
        Reembed(mind_id="personal", provider="sentence-transformers",
                model="all-MiniLM-L6-v2", dim=384),
        Dedupe(mind_id="workspace:acme"),
        Touch(mind_id="personal", frame_ids=[1, 2, 3]),
        HarvestBatch(mind_id="personal", source="chatgpt", conversation_ids=["conv-1"],
                     frames=[frame], cursor="conv-1:42"),
        HarvestBatch(mind_id="personal", source="universal", conversation_ids=[], frames=[]),
        Erase(mind_id="workspace:acme", frame_id=7),
        *sample_small_writes(),
    ]


def sample_small_writes() -> list[Envelope]:
    """One op of each of the facade's small writes."""
    return [
        ops.SetImportance(mind_id="personal", frame_id=7, importance="critical"),
        ops.SetIdentity(mind_id="personal", name="Ada", role="engineer"),
        ops.AddAwareness(mind_id="personal", category="task", content="ship it", priority=3,
                         expires_at="2030-01-01T00:00:00+01:00"),
        ops.RemoveAwareness(mind_id="personal", item_id=1),
        ops.ClearAwareness(mind_id="personal", category="flag"),
        ops.SaveEntity(mind_id="workspace:acme", entity_type="person", name="Ada",
                       properties={"team": "core", "langs": ["py", 1.5, None]}),
        ops.CreateRelation(mind_id="personal", source_id=1, target_id=2,
                           relation_type="works_on", confidence=0.5),
        ops.CleanupEntities(mind_id="personal", mode="audit"),
        ops.WipeFrames(mind_id="personal", mode="wipe_imports"),
        ops.FinishHarvest(mind_id="personal", run_id="run-1", source="chatgpt",
                          status="completed", path="export.zip", items=3, frames=9,
                          auto_sync=True, interval_hours=24),
    ]


# -- constants and ids -----------------------------------------------------------------------
def test_queue_names_and_keys() -> None:
    assert COGNIFY_QUEUE == "hive-mind:cognify"
    assert HOST_QUEUE_PREFIX == "hive-mind:host:"
    assert KEY_PREFIX == "hm:"
    assert DEAD_LETTERS_KEY == "hm:dead-letters"
    assert host_queue("host-1") == "hive-mind:host:host-1"
    with pytest.raises(ValueError):
        host_queue("../x")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("compact", "personal", date(2026, 11, 30)), "compact:personal:2026-11-30"),
        (("reconcile", "workspace:acme", date(2026, 1, 2)), "reconcile:workspace:acme:2026-01-02"),
        (("cognify", "personal", 17, "batch-2"), "cognify:personal:17:batch-2"),
        (("dedupe", "personal"), "dedupe:personal"),
    ],
)
def test_job_id(args: tuple[Any, ...], expected: str) -> None:
    assert job_id(*args) == expected
    # a job id is a valid op id (deterministic ids double as idempotency keys)
    assert Compact(mind_id="personal", op_id=expected).op_id == expected


@pytest.mark.parametrize(
    "args",
    [
        ("Compact", "personal"),
        ("compact", "../personal"),
        ("compact", "personal", datetime(2026, 11, 30, tzinfo=UTC)),
        ("compact", "personal", "a:b"),
        ("compact", "personal", ""),
        ("compact", "personal", -1),
        ("compact", "personal", True),
        ("compact", "personal", "x" * 129),
        ("compact", "personal", *(["x" * 100] * 2)),
    ],
)
def test_job_id_rejects(args: tuple[Any, ...]) -> None:
    with pytest.raises(ValueError):
        job_id(*args)


def test_queue_schemas_imports_only_pydantic_the_vocabulary_and_stdlib() -> None:
    import ast
    import pathlib
    import sys

    allowed = {"pydantic", "pydantic_core", "queue_schemas", "vocabulary", "__future__"}
    package = pathlib.Path(queue_schemas.__file__).parent
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert top in allowed or top in sys.stdlib_module_names, (path.name, name)
                assert top not in {"pickle", "marshal", "shelve", "copyreg"}, (path.name, name)


VALID_MIND_IDS = ["personal", "workspace:a", "workspace:acme-1", "workspace:" + "a" * 64,
                  "workspace:0"]
INVALID_MIND_IDS = [
    "", " personal", "personal ", "Personal", "PERSONAL", "personal\n", "personal/..",
    "workspace", "workspace:", "workspace:..", "workspace:.", "workspace:../etc",
    "workspace:a/b", "workspace:a\\b", "workspace:a\x00b", "workspace:acme\x00",
    "workspace:/abs", "/etc/passwd", "C:\\minds\\x", "\\\\server\\share", "../personal",
    "workspace:Acme", "workspace:-a", "workspace:a-", "workspace:a b", "workspace:a_b",
    "workspace:a.b", "workspace:" + "a" * 65, "workspace:acme\n", "workspace:ａcme",
    "workspace:workspace:a", "team:acme", "workspace::a", "~", "workspace:~root",
    123, None, b"personal", ["personal"],
]


@pytest.mark.parametrize("mind_id", VALID_MIND_IDS)
def test_valid_mind_ids(mind_id: str) -> None:
    assert validate_mind_id(mind_id) == mind_id
    assert Dedupe(mind_id=mind_id).mind_id == mind_id


@pytest.mark.parametrize("mind_id", INVALID_MIND_IDS)
def test_invalid_mind_ids(mind_id: object) -> None:
    with pytest.raises(ValueError, match="mind id"):
        validate_mind_id(mind_id)
    with pytest.raises(PydanticValidationError):
        Dedupe.model_validate({"mind_id": mind_id})
    with pytest.raises(PydanticValidationError):
        parse_op({"kind": "dedupe", "v": 1, "mind_id": mind_id})


def test_mind_id_helpers() -> None:
    assert workspace_mind_id("acme") == "workspace:acme"
    assert split_mind_id("workspace:acme") == ("workspace", "acme")
    assert split_mind_id("personal") == ("personal", None)
    with pytest.raises(ValueError):
        workspace_mind_id("../acme")


@pytest.mark.parametrize("op_id", ["", "-x", "a b", "a/b", "x" * 201, "a\x00", 5])
def test_invalid_op_ids(op_id: object) -> None:
    with pytest.raises(PydanticValidationError):
        Dedupe.model_validate({"mind_id": "personal", "op_id": op_id})


def test_envelope_defaults() -> None:
    op = Dedupe(mind_id="personal")
    assert op.kind == "dedupe" and op.v == 1
    assert uuid.UUID(hex=op.op_id).version == 4
    assert op.created_at.endswith("Z") and len(op.created_at) == 24
    assert Dedupe(mind_id="personal").op_id != op.op_id
    with pytest.raises(PydanticValidationError):
        op.mind_id = "workspace:x"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-30T03:20:49Z", "2026-11-30T03:20:49.000Z"),
        ("2026-11-30T03:20:49.123456789+01:00", "2026-11-30T02:20:49.123Z"),
        ("2026-11-30T03:20:49-0530", "2026-11-30T08:50:49.000Z"),
        (datetime(2026, 11, 30, 3, 20, tzinfo=timezone(timedelta(hours=2))),
         "2026-11-30T01:20:00.000Z"),
    ],
)
def test_created_at_normalized(value: object, expected: str) -> None:
    assert Dedupe.model_validate({"mind_id": "personal", "created_at": value}).created_at == (
        expected
    )


@pytest.mark.parametrize(
    "value", ["2026-11-30", "2026-11-30T03:20:49", "yesterday", "2026-13-01T00:00:00Z",
              datetime(2026, 1, 1), 1700000000],
)
def test_created_at_rejects(value: object) -> None:
    with pytest.raises(PydanticValidationError):
        Dedupe.model_validate({"mind_id": "personal", "created_at": value})


# -- versions --------------------------------------------------------------------------------
def v1_cognify(**extra: Any) -> dict[str, Any]:
    return {"kind": "cognify", "v": 1, "op_id": "legacy-1", "mind_id": "workspace:acme",
            "created_at": "2025-01-01T00:00:00.000Z", "texts": ["alpha", "beta"],
            "frame_ids": [10, 11], **extra}


def test_cognify_v1_is_upgraded_on_read() -> None:
    raw = v1_cognify()
    job = parse_job(raw)
    assert isinstance(job, CognifyJob)
    assert job.v == CognifyJob.CURRENT_VERSION == 3
    assert job.priority == "bulk"
    assert [(i.frame_id, i.content, i.content_hash, i.importance) for i in job.items] == [
        (10, "alpha", None, "normal"), (11, "beta", None, "normal")]
    assert (job.op_id, job.mind_id) == ("legacy-1", "workspace:acme")
    assert raw == v1_cognify()  # the caller's dict is not modified
    # direct validation upgrades too, and the result re-encodes as v3
    assert CognifyJob.model_validate(raw) == job
    again = parse_job(deserialize(serialize(job.model_dump(mode="json"))))
    assert again == job and again.model_dump()["v"] == 3 and "texts" not in again.model_dump()


def test_cognify_v2_is_upgraded_to_bulk_and_v2_cannot_claim_a_priority() -> None:
    item = {"frame_id": 1, "content": "text"}
    job = parse_job({"kind": "cognify", "v": 2, "mind_id": "personal", "items": [item]})
    assert isinstance(job, CognifyJob) and (job.v, job.priority) == (3, "bulk")
    urgent = parse_job({"kind": "cognify", "v": 3, "mind_id": "personal", "items": [item],
                        "priority": "interactive"})
    assert isinstance(urgent, CognifyJob) and urgent.priority == "interactive"
    with pytest.raises(PydanticValidationError):
        parse_job({"kind": "cognify", "v": 3, "mind_id": "personal", "items": [item],
                   "priority": "urgent"})
    reembed = parse_job({"kind": "reembed", "v": 1, "mind_id": "personal", "items": [item],
                         "fingerprint": {"provider": "p", "model": "m", "dim": 3}})
    assert reembed.priority == "bulk"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (v1_cognify(texts=["only one"]), "1 texts but 2 frame_ids"),
        (v1_cognify(texts="alpha"), "needs the lists"),
        ({k: v for k, v in v1_cognify().items() if k != "frame_ids"}, "needs the lists"),
    ],
)
def test_malformed_v1_is_refused(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(PayloadError, match=message):
        parse_job(raw)


def test_v1_with_v2_fields_is_refused() -> None:
    raw = v1_cognify(items=[])
    raw.pop("texts")
    raw.pop("frame_ids")
    with pytest.raises(PayloadError):
        parse_job(raw)


def test_too_new_job_is_refused_with_the_fix() -> None:
    raw = sample_jobs()[0].model_dump(mode="json") | {"v": 4}
    with pytest.raises(SchemaVersionError) as info:
        parse_job(raw)
    assert str(info.value) == (
        "job cognify v4 is newer than this worker (supports ≤ 3): upgrade the worker"
    )
    assert (info.value.kind, info.value.version, info.value.current) == ("cognify", 4, 3)
    assert isinstance(info.value, ValueError)


def test_too_old_job_is_refused_with_the_fix() -> None:
    with pytest.raises(SchemaVersionError) as info:
        parse_job(v1_cognify(v=0))
    assert str(info.value).startswith(
        "job cognify v0 is older than the oldest supported v1: re-enqueue from the outbox"
    )


def test_op_versions() -> None:
    raw = Touch(mind_id="personal", frame_ids=[1]).model_dump(mode="json")
    with pytest.raises(SchemaVersionError, match=r"op touch v2 is newer than this host "
                                                  r"\(supports ≤ 1\): upgrade the host"):
        parse_op(raw | {"v": 2})
    with pytest.raises(SchemaVersionError, match="op touch v0 is older than the oldest"):
        parse_op(raw | {"v": 0})
    # a direct model_validate refuses too (wrapped in pydantic's ValidationError)
    with pytest.raises(PydanticValidationError, match="newer than this host"):
        Touch.model_validate(raw | {"v": 9})


def test_version_declarations_are_checked() -> None:
    from queue_schemas.ops import OpEnvelope

    with pytest.raises(TypeError, match="must equal CURRENT_VERSION"):

        class Forgot(OpEnvelope):  # raised CURRENT_VERSION but not the default of v
            CURRENT_VERSION = 2
            kind: Literal["forgot"] = "forgot"

    class NoUpgrade(OpEnvelope):
        CURRENT_VERSION = 2
        kind: Literal["no_upgrade"] = "no_upgrade"
        v: int = 2

    with pytest.raises(PydanticValidationError, match="op no_upgrade has no upgrade from v1"):
        NoUpgrade.model_validate({"v": 1, "mind_id": "personal"})
    with pytest.raises(SchemaVersionError, match="has no upgrade"):
        NoUpgrade.migrate({"v": 1, "mind_id": "personal"})
    assert NoUpgrade(mind_id="personal").v == 2


@pytest.mark.parametrize("version", ["2", 2.0, True, None, [2]])
def test_version_must_be_an_integer(version: object) -> None:
    raw = sample_jobs()[0].model_dump(mode="json") | {"v": version}
    with pytest.raises(SchemaVersionError, match="must be an integer"):
        parse_job(raw)


def test_missing_version_is_refused_on_the_wire() -> None:
    raw = sample_jobs()[0].model_dump(mode="json")
    del raw["v"]
    with pytest.raises(SchemaVersionError, match="no schema version"):
        parse_job(raw)


@pytest.mark.parametrize("kind", ["nope", None, 3, "save_frames", "Cognify"])
def test_unknown_job_kind(kind: object) -> None:
    with pytest.raises(UnknownKindError, match="unknown job kind"):
        parse_job({"kind": kind, "v": 1, "mind_id": "personal"})


@pytest.mark.parametrize("data", [[], "cognify", None, 3])
def test_payload_must_be_an_object(data: object) -> None:
    with pytest.raises(PayloadError, match="must be a JSON object"):
        parse_op(data)


def test_kinds_are_registered_and_disjoint() -> None:
    assert set(JOB_KINDS) == {"cognify", "reembed"}
    assert set(OP_KINDS) == {"save_frames", "apply_index", "compact", "reconcile",
                             "reembed_mind", "dedupe", "touch", "harvest_batch", "erase",
                             "set_importance", "set_identity", "add_awareness", "remove_awareness",
                             "clear_awareness", "save_entity", "create_relation",
                             "cleanup_entities", "wipe_frames", "finish_harvest"}
    # the module docstring's op table names every kind
    assert all(f"``{kind}``" in (ops.__doc__ or "") for kind in OP_KINDS)
    assert not set(JOB_KINDS) & set(OP_KINDS)
    assert len(JOB_MODELS) == len(JOB_KINDS) and len(OP_MODELS) == len(OP_KINDS)
    for model in (*JOB_MODELS, *OP_MODELS):
        assert model.MIN_SUPPORTED <= model.CURRENT_VERSION
    # the unions build JSON schemas (used for docs/OpenAPI)
    assert TypeAdapter(AnyOp).json_schema()["discriminator"]["propertyName"] == "kind"
    assert TypeAdapter(AnyJob).json_schema()["discriminator"]["propertyName"] == "kind"


# -- round trips -----------------------------------------------------------------------------
@pytest.mark.parametrize("model", sample_jobs() + sample_ops(), ids=lambda m: m.kind)
def test_every_model_round_trips_through_the_codec(model: Envelope) -> None:
    parse = parse_job if model.kind in JOB_KINDS else parse_op
    payload = {"t": 1, "f": model.kind, "a": (model,), "k": {"payload": model},
               "et": 1_764_000_000_000}
    data = serialize(payload)
    assert data.startswith(b"{") and b": " not in data and b", " not in data
    back = deserialize(data)
    assert back["a"] == (back["k"]["payload"],)  # args come back as a tuple
    assert parse(back["a"][0]) == model
    assert parse(back["k"]["payload"]) == model
    assert parse(model.model_dump(mode="json")) == model
    assert parse(model.model_dump()) == model  # python mode (Vector objects) validates too
    assert json.loads(data)["k"]["payload"] == model.model_dump(mode="json")


def test_vectors_are_compact_base64_in_json() -> None:
    values = [0.5 * i for i in range(384)]
    fp = Fingerprint(provider="p", model="m", dim=384)
    op = ApplyIndex(mind_id="personal", fingerprint=fp, results=[
        FrameIndexResult(frame_id=1, content_hash=HASH_A, vector=Vector.from_floats(values))])
    encoded = op.model_dump(mode="json")["results"][0]["vector"]
    assert isinstance(encoded, str) and len(encoded) == 2048
    assert base64.b64decode(encoded) == struct.pack("<384f", *values)
    back = parse_op(json.loads(serialize({"r": op}))["r"])
    assert isinstance(back, ApplyIndex) and back.results[0].vector.to_list() == values


# -- field validation ------------------------------------------------------------------------
def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")


@pytest.mark.parametrize("model", sample_jobs() + sample_ops(), ids=lambda m: m.kind)
def test_extra_fields_are_rejected(model: Envelope) -> None:
    parse = parse_job if model.kind in JOB_KINDS else parse_op
    with pytest.raises(PydanticValidationError, match="Extra inputs are not permitted"):
        parse(_dump(model) | {"surprise": 1})


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("items", 0), {"frame_id": 1, "content": "x", "exec": "rm -rf /"}),
        (("fingerprint_hint",), {"provider": "p", "model": "m", "dim": 3, "x": 1}),
    ],
)
def test_nested_extra_fields_are_rejected(path: tuple[Any, ...], value: Any) -> None:
    raw = _dump(sample_jobs()[0])
    target: Any = raw
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(PydanticValidationError):
        parse_job(raw)


def test_nested_extra_fields_in_ops_are_rejected() -> None:
    raw = _dump(sample_ops()[1])
    raw["results"][0]["chunks"][0]["extra"] = True
    with pytest.raises(PydanticValidationError):
        parse_op(raw)
    raw = _dump(sample_ops()[0])
    raw["frames"][0]["evil"] = 1
    with pytest.raises(PydanticValidationError):
        parse_op(raw)


@pytest.mark.parametrize(
    "change",
    [
        {"frame_id": "1"},  # strict: no str → int coercion
        {"frame_id": 0},
        {"frame_id": True},
        {"content": ""},
        {"content": "   "},
        {"content": "a\x00b"},
        {"content": "\ud800"},
        {"content_hash": "A" * 64},
        {"content_hash": "a" * 63},
        {"importance": "urgent"},
    ],
)
def test_invalid_cognify_items(change: dict[str, Any]) -> None:
    item = {"frame_id": 1, "content": "text", "content_hash": HASH_A} | change
    with pytest.raises(PydanticValidationError):
        parse_job({"kind": "cognify", "v": 2, "mind_id": "personal", "items": [item]})


def test_job_item_rules() -> None:
    base = {"kind": "cognify", "v": 2, "mind_id": "personal"}
    with pytest.raises(PydanticValidationError):
        parse_job(base | {"items": []})
    with pytest.raises(PydanticValidationError, match="appears twice"):
        parse_job(base | {"items": [{"frame_id": 1, "content": "a"},
                                    {"frame_id": 1, "content": "b"}]})
    with pytest.raises(PydanticValidationError):  # reembed needs the target fingerprint
        parse_job({"kind": "reembed", "v": 1, "mind_id": "personal",
                   "items": [{"frame_id": 1, "content": "a"}]})


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"d": value}
    return value


@pytest.mark.parametrize(
    "change",
    [
        {"gop_id": ""},
        {"gop_id": "a\nb"},
        {"gop_id": "x" * 201},
        {"frame_type": "X"},
        {"frame_type": "B"},  # a B-frame needs a base frame
        {"source": "hacker"},
        {"created_at": "last week"},
        {"external_id": ""},
        {"external_id": "x" * 513},
        {"references": [0]},
        {"metadata": {"k": float("nan")}},
        {"metadata": {"k": [1, {"j": float("-inf")}]}},
        {"metadata": {"k": b"bytes"}},
        {"metadata": {"k": (1, 2)}},  # a tuple is no JSON array here: strict
        {"metadata": {"k": [{"j": {1: "int key"}}]}},
        {"metadata": {"k": object()}},
        {"metadata": _nested(40)},
        {"metadata": "not a dict"},
        {"dedup": "yes"},
    ],
)
def test_invalid_new_frames(change: dict[str, Any]) -> None:
    with pytest.raises(PydanticValidationError):
        NewFrameOp.model_validate({"gop_id": "g", "content": "c"} | change)


def test_metadata_nesting_within_limits_is_fine() -> None:
    frame = NewFrameOp(gop_id="g", content="c", metadata=_nested(20))
    assert NewFrameOp.model_validate(deserialize(serialize({"f": frame}))["f"]) == frame


def test_new_frame_defaults_mirror_the_engine() -> None:
    from mind.frames.model import NewFrame

    op = NewFrameOp(gop_id="g", content="c")
    engine = NewFrame(gop_id="g", content="c")
    for name in ("frame_type", "importance", "source", "base_frame_id", "created_at",
                 "external_id", "dedup"):
        assert getattr(op, name) == getattr(engine, name), name
    assert set(NewFrameOp.model_fields) == set(NewFrame.__dataclass_fields__)


def test_harvest_frames_need_external_ids() -> None:
    with pytest.raises(PydanticValidationError, match="no external_id"):
        HarvestBatch(mind_id="personal", source="chatgpt", conversation_ids=["c"],
                     frames=[NewFrameOp(gop_id="g", content="c")])


def test_save_frames_needs_frames() -> None:
    with pytest.raises(PydanticValidationError):
        SaveFrames(mind_id="personal", frames=[])


@pytest.mark.parametrize(
    "model_kwargs",
    [
        {"max_temp_age_days": 0},
        {"max_deprecated_age_days": -1},
        {"max_temp_age_days": 1.5},
    ],
)
def test_compact_bounds(model_kwargs: dict[str, Any]) -> None:
    with pytest.raises(PydanticValidationError):
        Compact(mind_id="personal", **model_kwargs)


def test_maintenance_defaults() -> None:
    compact = Compact(mind_id="personal")
    assert (compact.max_temp_age_days, compact.max_deprecated_age_days) == (30, 90)
    assert Reconcile(mind_id="personal").grace_seconds == 600
    with pytest.raises(PydanticValidationError):
        Reconcile(mind_id="personal", grace_seconds=-1)
    reembed = Reembed(mind_id="personal", provider="p", model="m", dim=8)
    assert reembed.fingerprint == Fingerprint(provider="p", model="m", dim=8)
    with pytest.raises(PydanticValidationError):
        Reembed(mind_id="personal", provider="p", model="m", dim=0)
    with pytest.raises(PydanticValidationError):
        Touch(mind_id="personal", frame_ids=[])
    with pytest.raises(PydanticValidationError):
        Erase(mind_id="personal", frame_id=-3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": ""}, "at least 1"),
        ({"name": "x\x07"}, "control characters"),
        ({"confidence": 1.5}, "less than or equal"),
        ({"confidence": -0.1}, "greater than or equal"),
        ({"entity_type": "t" * 101}, "at most 100"),
    ],
)
def test_entity_result_rules(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(PydanticValidationError, match=message):
        EntityResult.model_validate({"name": "n", "entity_type": "t"} | kwargs)


def test_apply_index_rules() -> None:
    good = _dump(sample_ops()[1])
    wrong_dim = json.loads(json.dumps(good))
    wrong_dim["results"][1]["vector"] = vec(1, 2).to_base64()
    with pytest.raises(PydanticValidationError, match="vector has 2 dims but the fingerprint"):
        parse_op(wrong_dim)
    chunk_dim = json.loads(json.dumps(good))
    chunk_dim["results"][0]["chunks"][1]["vector"] = vec(1, 2, 3, 4).to_base64()
    with pytest.raises(PydanticValidationError, match="4 dims"):
        parse_op(chunk_dim)
    twice = json.loads(json.dumps(good))
    twice["results"][1]["frame_id"] = 1
    with pytest.raises(PydanticValidationError, match="appears twice"):
        parse_op(twice)
    gap = json.loads(json.dumps(good))
    gap["results"][0]["chunks"][1]["chunk_idx"] = 5
    with pytest.raises(PydanticValidationError, match="chunk_idx"):
        parse_op(gap)
    span = json.loads(json.dumps(good))
    span["results"][0]["chunks"][0]["char_end"] = 0
    with pytest.raises(PydanticValidationError, match="empty"):
        parse_op(span)
    with pytest.raises(PydanticValidationError):
        parse_op(good | {"results": []})


# -- vectors ---------------------------------------------------------------------------------
def test_vector_round_trips_exactly() -> None:
    values = [0.1, -2.5, 3.0e-8, 1e30]
    v = Vector.from_floats(values)
    as_f32 = list(struct.unpack("<4f", struct.pack("<4f", *values)))
    assert v.dim == len(v) == 4
    assert v.to_list() == as_f32
    assert v.to_bytes() == struct.pack("<4f", *values)
    assert Vector.from_base64(v.to_base64()) == v
    assert Vector.from_bytes(v.to_bytes()) == v
    assert hash(Vector.from_bytes(bytearray(v.to_bytes()))) == hash(v)
    assert "dim=4" in repr(v)
    with pytest.raises(AttributeError):
        v.x = 1


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([1.0, float("nan")], "component 1 is nan"),
        ([float("inf")], "component 0 is inf"),
        ([1e40], "component 0 is inf"),  # float32 overflow
        ([], "empty"),
        ([1.0, "2"], "not a number"),
        ([True], "not a number"),
        ("not base64!", "not valid base64"),
        ("AAAA=", "not valid base64"),
        ("AAB=", "not canonical"),
        ("AACAPwA=", "not a whole number of float32s"),  # 5 bytes
        (base64.b64encode(struct.pack("<2f", 1.0, math.nan)).decode(), "component 1 is nan"),
        (base64.b64encode(struct.pack("<f", -math.inf)).decode(), "component 0 is -inf"),
        ("", "empty"),
        ("ＡＡＡＡ", "not valid base64"),
        (b"\x00\x00\x80", "not a whole number"),
        (3.0, "must be a base64 string"),
        ({"dim": 1}, "must be a base64 string"),
        (base64.b64encode(bytes(4 * (MAX_VECTOR_DIM + 1))).decode(), "the limit is"),
    ],
)
def test_invalid_vectors(value: object, message: str) -> None:
    with pytest.raises(PydanticValidationError, match=message):
        FrameIndexResult.model_validate({"frame_id": 1, "content_hash": HASH_A, "vector": value})


def test_vector_finiteness_is_checked_on_every_component_and_bit_pattern() -> None:
    """The byte-level check agrees with ``math.isfinite`` on each float32 exponent pattern (all
    ones: inf or NaN, with any sign and mantissa; the largest finite; subnormals; zeros), in
    every position of a vector."""
    patterns = [0x7F800000, 0xFF800000, 0x7FC00000, 0xFFFFFFFF, 0x7F800001, 0x7F7FFFFF,
                0xFF7FFFFF, 0x00000001, 0x80000000, 0x3F800000, 0x7F000000, 0x00800000]
    for pattern in patterns:
        value = struct.unpack("<f", struct.pack("<I", pattern))[0]
        for position in range(5):
            words = [0x3F800000] * 5
            words[position] = pattern
            blob = struct.pack("<5I", *words)
            if math.isfinite(value):
                assert Vector.from_bytes(blob).to_list()[position] == value
            else:
                with pytest.raises(ValueError, match=f"component {position} is"):
                    Vector.from_bytes(blob)


def test_vector_needs_a_known_input() -> None:
    with pytest.raises(TypeError):
        Vector([1.0, 2.0])  # type: ignore[arg-type]


def test_vector_accepts_python_inputs() -> None:
    for value in ([1, 2.5, 0], (1, 2.5, 0), struct.pack("<3f", 1, 2.5, 0),
                  vec(1, 2.5, 0).to_base64(), vec(1, 2.5, 0)):
        result = FrameIndexResult.model_validate(
            {"frame_id": 1, "content_hash": HASH_A, "vector": value}
        )
        assert result.vector == vec(1, 2.5, 0)


# -- codec -----------------------------------------------------------------------------------
class _Color(enum.Enum):
    RED = "red"


def test_codec_encodes_known_types() -> None:
    moment = datetime(2026, 11, 30, 4, 5, 6, 789000, tzinfo=timezone(timedelta(hours=1)))
    ident = uuid.UUID("12345678123456781234567812345678")
    data = serialize({"when": moment, "day": date(2026, 1, 2), "c": _Color.RED, "u": ident,
                      "v": vec(1.0), "t": (1, 2), "text": "ünï ✓"})
    assert "ünï ✓".encode() in data  # ensure_ascii=False
    assert deserialize(data) == {"when": "2026-11-30T03:05:06.789Z", "day": "2026-01-02",
                                 "c": "red", "u": ident.hex, "v": "AACAPw==", "t": [1, 2],
                                 "text": "ünï ✓"}


def test_codec_refuses_what_it_cannot_encode_faithfully() -> None:
    with pytest.raises(ValueError, match="naive"):
        serialize({"when": datetime(2026, 1, 1)})
    with pytest.raises(TypeError, match="cannot encode"):
        serialize({"x": object()})
    with pytest.raises(TypeError):
        serialize({"x": b"raw bytes"})
    with pytest.raises(ValueError):
        serialize({"x": float("nan")})


def test_codec_turns_exceptions_into_error_dicts() -> None:
    result = {"t": 1, "f": "cognify", "a": (), "k": {}, "et": 1, "s": False,
              "r": RuntimeError("model exploded"), "st": 2, "ft": 3, "q": COGNIFY_QUEUE,
              "id": "x"}
    back = deserialize(serialize(result))
    assert back["r"] == {"error": "RuntimeError", "message": "model exploded"}
    assert deserialize(serialize({"r": asyncio.CancelledError()}))["r"] == {
        "error": "CancelledError", "message": ""}
    assert deserialize(serialize({"r": SchemaVersionError("too new")}))["r"] == {
        "error": "SchemaVersionError", "message": "too new"}


def test_codec_stores_a_result_without_its_jobs_arguments() -> None:
    """A job keeps its payload; its result does not repeat it (nothing reads it back, and for an
    apply_index it is the batch's vectors once more); decoded payloads print short."""
    op = sample_ops()[1]  # apply_index, with vectors
    job = {"t": 1, "f": "apply_op", "a": (op,), "k": {}, "et": 1}
    decoded = deserialize(serialize(job))
    assert parse_op(decoded["a"][0]) == op
    assert decoded["a"][0] == op.model_dump(mode="json")
    shown = repr(decoded["a"][0])
    assert len(shown) < 200 and op.op_id in shown and "apply_index" in shown
    assert "AAAA" not in shown  # no vector
    result = {**job, "s": True, "r": {"applied": 3}, "st": 2, "ft": 3, "q": "q", "id": "x"}
    stored = serialize(result)
    assert len(stored) < 300 < len(serialize(job))
    assert deserialize(stored)["a"] == () and deserialize(stored)["r"] == {"applied": 3}
    assert job["a"] == (op,)  # the caller's dict is left as it was


@dataclasses.dataclass(frozen=True)
class _Inner:
    n: int
    names: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class _Outer:
    label: str
    items: list[_Inner]
    by_key: dict[str, _Inner]
    when: datetime


def test_codec_encodes_nested_dataclasses_like_asdict() -> None:
    moment = datetime(2026, 12, 3, tzinfo=UTC)
    value = _Outer("x", [_Inner(1, ("a", "b")), _Inner(2, ())], {"k": _Inner(3, ("c",))}, moment)
    expected = json.loads(json.dumps(dataclasses.asdict(value), default=lambda v: v.isoformat()))
    expected["when"] = "2026-12-03T00:00:00.000Z"
    assert deserialize(serialize({"r": value}))["r"] == expected


def test_codec_keeps_lone_surrogates() -> None:
    assert deserialize(serialize({"s": "a\ud800b"})) == {"s": "a\ud800b"}


class _Tripwire:
    """Unpickling this would call _trip: proof that nothing unpickles."""

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (_trip, ("unpickled!",))


TRIPPED: list[str] = []


def _trip(message: str) -> str:
    TRIPPED.append(message)
    return message


@pytest.mark.parametrize("protocol", [0, 1, 2, pickle.HIGHEST_PROTOCOL])
def test_pickled_payloads_are_rejected(protocol: int) -> None:
    payload = pickle.dumps({"t": 1, "f": "cognify", "a": (_Tripwire(),), "k": {}, "et": 1},
                           protocol=protocol)
    with pytest.raises(ValueError, match="not a hive-mind JSON job payload"):
        deserialize(payload)
    assert TRIPPED == []


@pytest.mark.parametrize(
    ("data", "detail"),
    [
        (b"", "JSONDecodeError"),
        (b"\xff\xfe{}", "UnicodeDecodeError"),
        (b"[1, 2]", "top level is list"),
        (b'"text"', "top level is str"),
        (b'{"a": NaN}', "NaN is not JSON"),
        (b'{"a": -Infinity}', "-Infinity is not JSON"),
        (b'{"f": "x", "f": "y"}', "duplicate key 'f'"),
        (b"[" * 100_000, "RecursionError"),
    ],
)
def test_deserialize_rejects_non_json(data: bytes, detail: str) -> None:
    with pytest.raises(PayloadError, match="not a hive-mind JSON job payload") as info:
        deserialize(data)
    assert detail in str(info.value)


def test_deserialize_accepts_bytes_like() -> None:
    assert deserialize(bytearray(b'{"a": [1]}')) == {"a": (1,)}
    assert deserialize(memoryview(b'{"k": {}}')) == {"k": {}}
    with pytest.raises(PayloadError):
        deserialize("{}")  # type: ignore[arg-type]


# -- arq, for real ---------------------------------------------------------------------------


@pytest.fixture
async def arq_pool() -> AsyncIterator[Any]:
    from arq.connections import RedisSettings, create_pool

    settings = RedisSettings.from_dsn(REDIS_URL)
    settings.conn_retries = 0
    settings.conn_timeout = 2
    try:
        pool = await create_pool(settings, job_serializer=serialize, job_deserializer=deserialize)
        await pool.flushdb()
    except Exception as exc:  # no Redis: skip, with the reason
        pytest.skip(f"no Redis answers at {REDIS_URL} ({type(exc).__name__}: {exc}); "
                    "set HIVE_MIND_TEST_REDIS_URL")
    try:
        yield pool
    finally:
        await pool.flushdb()
        await pool.aclose()


async def test_arq_enqueue_and_read_back(arq_pool: Any) -> None:
    from arq.jobs import Job

    op = sample_ops()[1]  # apply_index, with vectors
    queue = host_queue("host-1")
    jid = job_id("apply_index", op.mind_id, "batch-1")
    job = await arq_pool.enqueue_job("apply_index", op, _job_id=jid, _queue_name=queue,
                                     note=date(2026, 11, 30))
    assert job is not None
    # idempotent enqueue: the same job id is refused while the job exists
    assert await arq_pool.enqueue_job("apply_index", op, _job_id=jid, _queue_name=queue) is None

    raw = await arq_pool.get(f"arq:job:{jid}")
    assert raw.startswith(b"{") and json.loads(raw)["f"] == "apply_index"

    info = await Job(jid, arq_pool, _queue_name=queue, _deserializer=deserialize).info()
    assert info is not None
    assert info.function == "apply_index" and info.job_try is None
    assert info.kwargs == {"note": "2026-11-30"}
    assert parse_op(info.args[0]) == op
    assert info.score is not None

    queued = await arq_pool.queued_jobs(queue_name=queue)
    assert [parse_op(j.args[0]) for j in queued] == [op]


async def _apply(ctx: dict[str, Any], payload: dict[str, Any]) -> Any:
    return parse_op(payload)


async def _fail(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
    raise RuntimeError(f"cannot apply {payload['kind']}")


async def _noop(ctx: dict[str, Any], *args: Any) -> str:
    TRIPPED.append("noop ran")
    return "ran"


async def test_arq_worker_round_trip_with_results_and_failures(arq_pool: Any) -> None:
    from arq.connections import RedisSettings
    from arq.jobs import Job, SerializationError
    from arq.worker import Worker, func

    queue = host_queue("host-2")
    ok_op, bad_op = sample_ops()[2], sample_ops()[6]
    await arq_pool.enqueue_job("apply", ok_op, _job_id="ok", _queue_name=queue)
    await arq_pool.enqueue_job("fail", bad_op, _job_id="bad", _queue_name=queue)
    pickled = pickle.dumps({"t": 1, "f": "noop", "a": (_Tripwire(),), "k": {}, "et": 1})
    await arq_pool.set("arq:job:evil", pickled)
    await arq_pool.zadd(queue, {"evil": 1})

    worker = Worker(
        functions=[func(_apply, name="apply"), func(_fail, name="fail", max_tries=1),
                   func(_noop, name="noop")],
        redis_settings=RedisSettings.from_dsn(REDIS_URL),
        queue_name=queue,
        burst=True,
        handle_signals=False,
        poll_delay=0.05,
        job_serializer=serialize,
        job_deserializer=deserialize,
    )
    try:
        await asyncio.wait_for(worker.main(), timeout=30)
    finally:
        await worker.close()

    ok = Job("ok", arq_pool, _queue_name=queue, _deserializer=deserialize)
    assert parse_op(await ok.result(timeout=5)) == ok_op

    bad = await Job("bad", arq_pool, _queue_name=queue, _deserializer=deserialize).result_info()
    assert bad is not None and bad.success is False
    assert bad.result == {"error": "RuntimeError", "message": "cannot apply dedupe"}
    with pytest.raises(SerializationError):
        await Job("bad", arq_pool, _queue_name=queue, _deserializer=deserialize).result(timeout=5)

    evil = await Job("evil", arq_pool, _queue_name=queue, _deserializer=deserialize).result_info()
    assert evil is not None and evil.success is False
    assert evil.result["error"] == "DeserializationError"
    assert TRIPPED == []  # neither unpickled nor executed


def test_small_writes_refuse_the_string_rpc_and_non_finite_properties() -> None:
    """The old string RPC (``{"kind": "call", "method": …, "args": …}``) is no op any more, and
    typed ops refuse what JSON cannot carry."""
    with pytest.raises(UnknownKindError, match="unknown op kind 'call'"):
        parse_op({"kind": "call", "v": 1, "mind_id": "personal", "op_id": "c1",
                  "method": "awareness.add", "args": {"category": "task", "content": "x"}})
    with pytest.raises(ValueError, match="finite"):
        parse_op({"kind": "create_relation", "v": 1, "mind_id": "personal", "op_id": "c3",
                  "source_id": 1, "target_id": 2, "relation_type": "knows",
                  "properties": {"weight": float("nan")}})
