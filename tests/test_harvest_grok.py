"""Grok adapter (mind/harvest/grok.py) on a prod-grok-backend.json export: both sender
vocabularies, MongoDB $date timestamps, the kept branch of a regenerated answer; as the file,
the unpacked directory and the .zip; round trips through the real driver."""

from __future__ import annotations

import copy
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from mind.harvest import grok
from mind.harvest.errors import HarvestError
from mind.harvest.types import HarvestItem, stable_id
from tests.harvest_roundtrip import import_path, runtime, stored

FIXTURE = Path(__file__).parent / "fixtures" / "harvest" / "grok" / "prod-grok-backend.json"
C1, C2 = "0b1c2d3e-1111-4000-8000-00000000000a", "0b1c2d3e-2222-4000-8000-00000000000b"
MEMBER = "ttl/30d/export_data/5d6e7f80-aaaa-4000-8000-000000000001/prod-grok-backend.json"


def export() -> dict[str, Any]:
    return dict(json.loads(FIXTURE.read_text()))


def write_zip(path: Path, document: dict[str, Any]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("ttl/30d/export_data/5d6e7f80-aaaa-4000-8000-000000000001/"
                    "prod-mc-asset-server.json", "[]")
        zf.writestr(MEMBER, json.dumps(document))
    return path


@pytest.fixture
def items() -> list[HarvestItem]:
    return list(grok.parse(FIXTURE))


def test_conversations_and_turns(items: list[HarvestItem]) -> None:
    assert [(i.title, i.metadata["conversation_id"], len(i.turns)) for i in items] == [
        ("Sourdough starter schedule", C1, 4), ("Trip to Porto", C2, 2)]  # the empty one: none
    first, second = items
    assert first.item_id == stable_id("grok", "conversation", C1)
    assert first.timestamp == "2025-03-01T09:00:00.123Z"
    # human/assistant, {"$date": {"$numberLong": ms}}; the regenerated answer r-1b is not kept
    assert [(t.turn_id, t.role, t.speaker, t.timestamp) for t in first.turns] == [
        ("r-1a", "user", "User", "2025-03-01T09:00:00.000Z"),
        ("r-1c", "assistant", "Grok", "2025-03-01T09:01:00.000Z"),
        ("r-1d", "user", "User", "2025-03-01T09:01:40.000Z"),
        ("r-1e", "assistant", "Grok", "2025-03-01T09:01:45.000Z")]
    assert first.turns[1].text == "Once a day, 1:5:5, if you keep it warm."
    assert first.turns[1].metadata == {"model": "grok-3"}
    assert "PRIVATE THINKING" not in "".join(t.text for t in first.turns)
    # USER/ASSISTANT, {"$date": ISO}; the empty partial answer is skipped
    assert [(t.role, t.text, t.timestamp) for t in second.turns] == [
        ("user", "Plan two days in Porto for a food lover.", "2025-04-10T18:00:01.000Z"),
        ("assistant", "Day 1: Bolhão market, francesinha at lunch. Day 2: Gaia cellars.",
         "2025-04-10T18:00:09.500Z")]


@pytest.mark.parametrize(("value", "expected"), [
    ({"$date": {"$numberLong": "1740819600000"}}, "2025-03-01T09:00:00.000Z"),
    ({"$date": "2025-03-01T10:00:00+01:00"}, "2025-03-01T09:00:00.000Z"),
    ({"$date": 1740819600000}, "2025-03-01T09:00:00.000Z"),
    ("2025-03-01T09:00:00.123456Z", "2025-03-01T09:00:00.123Z"),
    ({"$date": {"$numberLong": "x"}}, None), ({"$oid": "abc"}, None), (None, None),
])
def test_timestamps(value: object, expected: str | None) -> None:
    assert grok.timestamp(value) == expected


def test_file_directory_and_zip_give_the_same_items(tmp_path: Path,
                                                    items: list[HarvestItem]) -> None:
    unpacked = tmp_path / "unpacked" / MEMBER
    unpacked.parent.mkdir(parents=True)
    unpacked.write_text(FIXTURE.read_text())
    archive = write_zip(tmp_path / "grok-export.zip", export())
    for target in (tmp_path / "unpacked", archive):
        assert [(i.item_id, i.turns) for i in grok.parse(target)] == [
            (i.item_id, i.turns) for i in items]


def test_not_a_grok_export(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"conversations": [{"mapping": {}, "title": "x"}]}))
    with pytest.raises(HarvestError, match="not a Grok conversation"):
        list(grok.parse(other))
    other.write_text("[]")
    with pytest.raises(HarvestError, match="expected an object with a 'conversations' array"):
        list(grok.parse(other))


async def test_round_trip_reimport_and_newer_export(tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    try:
        archive = write_zip(tmp_path / "export-1.zip", export())
        first = await import_path(rt, "grok", archive)
        assert (first.status, first.items, first.frames_created) == ("completed", 2, 6)
        assert await stored(rt, "grok") == (2, 6)
        again = await import_path(rt, "grok", archive)
        assert (again.status, again.frames_created) == ("unchanged", 0)
        unpacked = await import_path(rt, "grok", FIXTURE)  # the same export, unzipped
        assert (unpacked.status, unpacked.frames_created) == ("completed", 0)
        newer = copy.deepcopy(export())  # a later export: one more exchange in "Trip to Porto"
        responses = newer["conversations"][1]["responses"]
        responses += [{"response": {"_id": "r-2d", "message": "And a rainy day?",
                                    "sender": "USER", "create_time": {"$date": "2025-04-12T08:00:00Z"}}},
                      {"response": {"_id": "r-2e", "message": "Serralves museum and tea.",
                                    "sender": "ASSISTANT",
                                    "create_time": {"$date": "2025-04-12T08:00:05Z"}}}]
        later = await import_path(rt, "grok", write_zip(tmp_path / "export-2.zip", newer))
        assert (later.status, later.frames_created, later.duplicates_skipped) == (
            "completed", 2, 6)
        assert await stored(rt, "grok") == (2, 8)
    finally:
        await rt.close()
