"""Typed write-ops instead of the string RPC, typed results, no SQL in ``actors/`` (issue #13).

Every op kind round-trips through the JSON codec and is applied by a real actor on a real mind
file, returning its result type; a wrong argument is refused when the op is built — by the
facade, before any actor sees it — naming the field.
"""

from __future__ import annotations

import ast
import json
import re
import traceback
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic
import pytest

from actors.actor import Duplicate
from actors.handlers import HANDLERS
from actors.host import MindHost
from actors.results import (
    AwarenessCleared,
    AwarenessRemoved,
    Deduped,
    EntitySaved,
    FramesSaved,
    HarvestFinished,
    IdentitySet,
    Reconciled,
    Reembedded,
    Touched,
)
from hive_mind.facade import HiveMind, build_op
from hive_mind.results import write_dict
from mind.awareness import AwarenessItem
from mind.cleanup import EntityAudit, FramesWiped
from mind.cognify_apply import ApplyStats
from mind.errors import ValidationError
from mind.frames.compaction import CompactResult
from mind.frames.forget import Erasure
from mind.frames.model import Frame
from mind.knowledge.graph import Relation
from queue_schemas import deserialize, ops, parse_op, serialize
from queue_schemas.ops import OP_KINDS
from queue_schemas.vector import Fingerprint, Vector

ROOT = Path(__file__).resolve().parent.parent
MIND = "personal"


# -- every op kind: codec round trip, applied, typed result ----------------------------------

@dataclass
class _State:
    """Ids that later ops of the table refer to."""

    frames: list[int] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)
    entities: list[int] = field(default_factory=list)
    awareness: int = 0


def _frame(text: str, **extra: Any) -> ops.NewFrameOp:
    return ops.NewFrameOp(gop_id="g-typed", content=text, **extra)


def _remember(state: _State, result: object) -> None:
    if isinstance(result, FramesSaved):
        state.frames += [f.id for f in result.frames]
        state.hashes += [f.content_hash for f in result.frames]
    elif isinstance(result, EntitySaved):
        state.entities.append(result.entity.id)
    elif isinstance(result, AwarenessItem):
        state.awareness = result.id


Step = tuple[Callable[[_State], ops.OpModel], type]
FP3 = Fingerprint(provider="test", model="typed-3", dim=3)

STEPS: list[Step] = [
    (lambda s: ops.SaveFrames(mind_id=MIND, frames=[_frame("Ada maintains the compiler."),
                                                    _frame("Grace reviews the parser.")]),
     FramesSaved),
    (lambda s: ops.HarvestBatch(
        mind_id=MIND, source="chatgpt", conversation_ids=["conv-1"], run_id="run-typed",
        frames=[ops.NewFrameOp(gop_id="harvest-conv-1", content="imported turn", source="import",
                               external_id="chatgpt:conv-1:1")],
        titles={"harvest-conv-1": "A title"}, items=1, cursor="1"), FramesSaved),
    (lambda s: ops.ApplyIndex(mind_id=MIND, fingerprint=FP3, results=[ops.FrameIndexResult(
        frame_id=s.frames[0], content_hash=s.hashes[0], vector=Vector.from_floats([1, 0, 0]))]),
     ApplyStats),
    (lambda s: ops.Touch(mind_id=MIND, frame_ids=[s.frames[0]]), Touched),
    (lambda s: ops.SetIdentity(mind_id=MIND, name="Ada", role="engineer"), IdentitySet),
    (lambda s: ops.AddAwareness(mind_id=MIND, category="task", content="review the parser",
                                priority=2), AwarenessItem),
    (lambda s: ops.RemoveAwareness(mind_id=MIND, item_id=s.awareness), AwarenessRemoved),
    (lambda s: ops.ClearAwareness(mind_id=MIND, category="flag"), AwarenessCleared),
    (lambda s: ops.SaveEntity(mind_id=MIND, entity_type="person", name="Ada",
                              properties={"team": "core"}), EntitySaved),
    (lambda s: ops.SaveEntity(mind_id=MIND, entity_type="project", name="Compiler"),
     EntitySaved),
    (lambda s: ops.CreateRelation(mind_id=MIND, source_id=s.entities[0],
                                  target_id=s.entities[1], relation_type="maintains",
                                  confidence=0.9), Relation),
    (lambda s: ops.CleanupEntities(mind_id=MIND, mode="audit"), EntityAudit),
    (lambda s: ops.Dedupe(mind_id=MIND), Deduped),
    (lambda s: ops.Reconcile(mind_id=MIND, grace_seconds=0), Reconciled),
    (lambda s: ops.Compact(mind_id=MIND), CompactResult),
    (lambda s: ops.FinishHarvest(mind_id=MIND, run_id="run-typed", source="chatgpt",
                                 status="completed", path="export.zip", items=1, frames=1),
     HarvestFinished),
    (lambda s: ops.SetImportance(mind_id=MIND, frame_id=s.frames[0], importance="critical"),
     Frame),
    (lambda s: ops.Erase(mind_id=MIND, frame_id=s.frames[1]), Erasure),
    (lambda s: ops.WipeFrames(mind_id=MIND, mode="wipe_imports"), FramesWiped),
    (lambda s: ops.Reembed(mind_id=MIND, provider="test", model="typed-4", dim=4), Reembedded),
]


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[MindHost]:
    async with MindHost(tmp_path, HANDLERS) as mind_host:
        yield mind_host


def test_every_op_model_has_one_handler() -> None:
    assert set(HANDLERS) == set(OP_KINDS)
    assert {step(_State(frames=[1, 2], hashes=["a" * 64], entities=[1, 2])).kind
            for step, _ in STEPS} == set(OP_KINDS)


async def test_every_op_kind_round_trips_and_is_applied(host: MindHost) -> None:
    state = _State()
    for build, result_type in STEPS:
        op = build(state)
        wire = deserialize(serialize({"a": (op,), "k": {"payload": op}}))
        parsed = parse_op(wire["k"]["payload"])
        assert parsed == op and type(parsed) is type(op)
        result = await host.submit(MIND, parsed)
        assert isinstance(result, result_type), (op.kind, result)
        _remember(state, result)
        shape = write_dict(result)  # the interface edge has a JSON shape for every result
        assert json.loads(json.dumps(shape)) == shape
        assert isinstance(deserialize(serialize({"r": result}))["r"], dict)  # arq's apply_op
        assert isinstance(await host.submit(MIND, parsed), Duplicate)  # applied once
    reader = await host.reader(MIND)
    assert (await reader.identity.get()).name == "Ada"
    assert await reader.frames.count() == 1  # one erased, the import wiped
    session = await reader.sessions.get_by_gop_id("harvest-conv-1")
    assert session is not None and session.summary == "A title"  # the batch titled it


async def test_results_keep_their_public_json_shapes(host: MindHost) -> None:
    saved = await host.submit(MIND, ops.SaveEntity(mind_id=MIND, entity_type="person",
                                                   name="Ada"))
    assert isinstance(saved, EntitySaved)
    shape = write_dict(saved)
    assert shape["created"] is True and shape["updated"] is False and shape["name"] == "Ada"
    identity = write_dict(await host.submit(MIND, ops.SetIdentity(mind_id=MIND, name="Ada")))
    assert identity["action"] == "created" and identity["name"] == "Ada"
    again = write_dict(await host.submit(MIND, ops.SetIdentity(mind_id=MIND, role="lead")))
    assert (again["action"], again["name"], again["role"]) == ("updated", "Ada", "lead")
    wiped = write_dict(await host.submit(MIND, ops.WipeFrames(mind_id=MIND, mode="wipe_all")))
    assert wiped == {"action": "wipe_all", "frames_deleted": 0, "entities_erased": 0,
                     "relations_erased": 0,
                     "warning": "every frame and session of this mind was deleted"}
    retired = write_dict(await host.submit(MIND, ops.CleanupEntities(mind_id=MIND,
                                                                      mode="retire_orphans")))
    assert retired == {"action": "retire_orphans", "entities_retired": 1}


# -- a wrong argument is refused where the op is built ---------------------------------------

BAD_ARGUMENTS: list[tuple[Callable[[str], ops.OpModel], str]] = [
    (lambda m: ops.SetIdentity(mind_id=m, nmae="Ada"), "nmae"),
    (lambda m: ops.SetIdentity(mind_id=m, name=42), "name"),
    (lambda m: ops.AddAwareness(mind_id=m, category="task"), "content"),
    (lambda m: ops.AddAwareness(mind_id=m, category="task", content="x", priority="9"),
     "priority"),
    (lambda m: ops.AddAwareness(mind_id=m, category="task", content="x",
                                expires_at="tomorrow"), "expires_at"),
    (lambda m: ops.RemoveAwareness(mind_id=m, item_id="7"), "item_id"),
    (lambda m: ops.ClearAwareness(mind_id=m, category=None), "category"),
    (lambda m: ops.SaveEntity(mind_id=m, entity_type="person", nmae="Ada"),
     "nmae"),
    (lambda m: ops.SaveEntity(mind_id=m, entity_type="person", name="Ada",
                              properties={"w": float("inf")}), "properties"),
    (lambda m: ops.CreateRelation(mind_id=m, source_id=1, target_id=2, relation_type="knows",
                                  confidence="high"), "confidence"),
    (lambda m: ops.CreateRelation(mind_id=m, source_id=True, target_id=2,  # bool is no id
                                  relation_type="knows"), "source_id"),
    (lambda m: ops.CleanupEntities(mind_id=m, mode=3), "mode"),
    (lambda m: ops.WipeFrames(mind_id=m), "mode"),
    (lambda m: ops.FinishHarvest(mind_id=m, run_id="r", source="chatgpt", status="done"),
     "status"),
    (lambda m: ops.FinishHarvest(mind_id=m, run_id="r", source="chatgpt", status="failed",
                                 items=-1), "items"),
]


@pytest.mark.parametrize(("build", "field_name"), BAD_ARGUMENTS,
                         ids=[f"{i}-{name}" for i, (_, name) in enumerate(BAD_ARGUMENTS)])
def test_a_bad_argument_is_refused_when_the_op_is_built(
        build: Callable[[str], ops.OpModel], field_name: str) -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        build(MIND)
    assert field_name in {str(err["loc"][0]) for err in caught.value.errors()}
    with pytest.raises(ValidationError, match=field_name) as ours:  # the facade's edge
        build_op(build, MIND)
    assert str(ours.value).startswith("invalid ")
    assert not isinstance(ours.value, pydantic.ValidationError)


QUEUE_MISTAKES: list[tuple[dict[str, Any], str]] = [
    ({"kind": "set_identity", "nmae": "Ada"}, "nmae"),
    ({"kind": "set_identity", "name": 42}, "name"),
    ({"kind": "add_awareness", "category": "task"}, "content"),
    ({"kind": "save_entity", "entity_type": "person", "name": "Ada", "properties": []},
     "properties"),
    ({"kind": "create_relation", "source_id": 1.0, "target_id": 2, "relation_type": "knows"},
     "source_id"),
    ({"kind": "finish_harvest", "run_id": "r", "source": "chatgpt", "status": "completed",
      "sync_path": "p" * 5000}, "sync_path"),
]


@pytest.mark.parametrize(("payload", "field_name"), QUEUE_MISTAKES,
                         ids=[f"{p['kind']}-{f}" for p, f in QUEUE_MISTAKES])
def test_a_bad_payload_on_the_queue_is_refused_naming_the_field(
        payload: dict[str, Any], field_name: str) -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        parse_op({"v": 1, "mind_id": MIND, **payload})
    # the discriminated union's errors are located at (kind, field)
    assert field_name in {str(err["loc"][1]) for err in caught.value.errors()}


def _frames_of(exc: BaseException) -> list[str]:
    return [frame.filename for frame in traceback.extract_tb(exc.__traceback__)]


FACADE_MISTAKES: list[tuple[str, dict[str, Any], str]] = [
    ("set_identity", {"nmae": "Ada"}, "nmae"),
    ("set_identity", {"name": 42}, "name"),
    ("save_entity", {"entity_type": "person", "name": 42}, "name"),
    ("create_relation", {"source_id": 1, "target_id": 2, "relation_type": "knows",
                         "confidence": "high"}, "confidence"),
    ("create_relation", {"source_id": "1", "target_id": 2, "relation_type": "knows"},
     "source_id"),
    ("set_awareness", {"category": 7, "content": "x"}, "category"),
    ("clear_awareness", {"item_id": "3"}, "item_id"),
    ("cleanup_entities", {"mode": ["audit"]}, "mode"),
]


@pytest.mark.parametrize(("method", "args", "field_name"), FACADE_MISTAKES,
                         ids=[f"{m}-{f}" for m, _, f in FACADE_MISTAKES])
async def test_the_facade_refuses_a_wrong_argument_before_any_actor(
        hm: HiveMind, method: str, args: dict[str, Any], field_name: str) -> None:
    """Before: ``MindCall("identity.set", {"nmae": …})`` reached the actor, whose
    ``TypeError`` (or the mind's own check) came back as a ValidationError from inside it."""
    await hm.set_identity(name="Grace")  # the mind is open and its actor running
    actor = await hm.runtime.host.actor(MIND)
    applied = actor.ops_applied
    with pytest.raises(ValidationError, match=field_name) as caught:
        await getattr(hm, method)(**args)
    assert not any("/actors/" in name for name in _frames_of(caught.value))
    assert actor.ops_applied == applied  # the actor never saw it
    assert (await hm.get_identity())["name"] == "Grace"  # and the legitimate use still works
    assert (await hm.set_identity(role="lead"))["action"] == "updated"
    assert (await hm.save_entity("person", "Ada"))["created"] is True


async def test_legitimate_small_writes_still_work_through_the_facade(hm: HiveMind) -> None:
    ada = await hm.save_entity("person", "Ada", properties={"team": "core"})
    compiler = await hm.save_entity("project", "Compiler")
    relation = await hm.create_relation(ada["id"], compiler["id"], "maintains", confidence=1)
    assert relation["relation_type"] == "maintains" and relation["confidence"] == 1.0
    item = await hm.set_awareness("task", "ship it", priority=2, ttl_minutes=5)
    assert (await hm.clear_awareness(item_id=item["id"])) == {"removed": True, "id": item["id"]}
    assert (await hm.clear_awareness(category="flag")) == {"cleared": 0, "category": "flag"}
    audit = await hm.cleanup_entities("audit")
    assert audit["action"] == "audit" and audit["total_entities"] == 2
    assert isinstance(audit["noise_sample"], list)


# -- actors/ orchestrates; SQL lives in mind/ ------------------------------------------------

SQL = re.compile(r"\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE TABLE)\b")
DB_CALLS = {"execute", "executemany", "executescript", "fetchval", "fetchone", "fetchall"}


def test_no_sql_in_actors() -> None:
    found: list[str] = []
    for path in sorted((ROOT / "actors").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and SQL.search(node.value):
                found.append(f"{path.name}:{node.lineno}: {node.value[:60]!r}")
            if isinstance(node, ast.Attribute) and node.attr in DB_CALLS:
                found.append(f"{path.name}:{node.lineno}: .{node.attr}(…)")
    assert found == []
