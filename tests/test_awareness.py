from __future__ import annotations

import asyncio
from dataclasses import asdict
from datetime import UTC, datetime, timedelta

import pytest

from mind.awareness import AwarenessItem, AwarenessLayer, parse_metadata
from mind.constants import AWARENESS_MAX_ITEMS
from mind.errors import InvalidTimestampError, NotFoundError, ValidationError
from mind.storage.db import Database
from mind.timeutil import format_ts

PAST = "2000-01-01T00:00:00Z"


def future(hours: float = 1) -> str:
    return format_ts(datetime.now(UTC) + timedelta(hours=hours))


@pytest.fixture
def layer(db: Database) -> AwarenessLayer:
    return AwarenessLayer(db)


async def count_rows(db: Database) -> int:
    return int(await db.fetchval("SELECT COUNT(*) FROM awareness"))


async def test_add_and_get(layer: AwarenessLayer) -> None:
    item = await layer.add("task", "write tests", priority=3, metadata={"status": "open"})
    assert isinstance(item, AwarenessItem)
    assert (item.category, item.content, item.priority) == ("task", "write tests", 3)
    assert item.metadata == {"status": "open"}
    assert item.expires_at is None
    assert item.created_at.endswith("Z")
    assert await layer.get(item.id) == item
    assert await layer.get(999) is None
    assert asdict(item)["metadata"] == {"status": "open"}


async def test_add_defaults(layer: AwarenessLayer) -> None:
    item = await layer.add("flag", "offline")
    assert item.priority == 0 and item.metadata == {} and item.expires_at is None


async def test_add_validates_category(layer: AwarenessLayer) -> None:
    with pytest.raises(ValidationError, match="task, action, pending, flag"):
        await layer.add("todo", "x")
    with pytest.raises(ValidationError):
        await layer.get_by_category("todo")
    with pytest.raises(ValidationError):
        await layer.clear_category("todo")


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"content": ""}, ValidationError),
        ({"content": "  "}, ValidationError),
        ({"priority": "high"}, ValidationError),
        ({"priority": True}, ValidationError),
        ({"priority": 2**63}, ValidationError),
        ({"metadata": ["x"]}, ValidationError),
        ({"metadata": {"x": object()}}, ValidationError),
        ({"expires_at": "tomorrow"}, InvalidTimestampError),
        ({"expires_at": "2030-01-01T00:00:00"}, InvalidTimestampError),  # no timezone
    ],
)
async def test_add_validates_input(
    layer: AwarenessLayer, db: Database, kwargs: dict[str, object], error: type[Exception]
) -> None:
    args: dict[str, object] = {"category": "task", "content": "c", **kwargs}
    with pytest.raises(error):
        await layer.add(**args)  # type: ignore[arg-type]
    assert await count_rows(db) == 0


async def test_expires_at_is_normalized(layer: AwarenessLayer) -> None:
    item = await layer.add("task", "x", expires_at="2099-06-01T14:00:00+02:00")
    assert item.expires_at == "2099-06-01T12:00:00.000Z"


async def test_ordering_priority_then_id(layer: AwarenessLayer) -> None:
    a = await layer.add("task", "a", priority=1)
    b = await layer.add("task", "b", priority=5)
    c = await layer.add("action", "c", priority=1)
    assert [i.id for i in await layer.get_all()] == [b.id, a.id, c.id]
    assert [i.id for i in await layer.get_by_category("task")] == [b.id, a.id]
    assert [i.id for i in await layer.get_by_category("pending")] == []


async def test_expired_items_are_invisible_and_purged(layer: AwarenessLayer, db: Database) -> None:
    dead = await layer.add("task", "old", expires_at=PAST)
    alive = await layer.add("task", "soon", expires_at=future())
    forever = await layer.add("flag", "always")
    # the add of `alive` purged `dead` already (lazy purge on writes)
    assert await count_rows(db) == 2
    assert await layer.get(dead.id) is None
    assert {i.id for i in await layer.get_all()} == {alive.id, forever.id}

    # an item expiring between writes is hidden from reads, and purged by the next write
    await db.execute("UPDATE awareness SET expires_at = ? WHERE id = ?", (PAST, alive.id))
    assert [i.id for i in await layer.get_all()] == [forever.id]
    assert await layer.get(alive.id) is None
    assert await layer.get_by_category("task") == []
    assert await count_rows(db) == 2
    await layer.add("action", "trigger a write")
    assert await db.fetchval("SELECT COUNT(*) FROM awareness WHERE id = ?", (alive.id,)) == 0


async def test_writes_to_expired_item_behave_as_gone(layer: AwarenessLayer, db: Database) -> None:
    item = await layer.add("task", "x")
    await db.execute("UPDATE awareness SET expires_at = ? WHERE id = ?", (PAST, item.id))
    with pytest.raises(NotFoundError):
        await layer.update(item.id, content="y")
    assert await layer.remove(item.id) is False


async def test_cap_evicts_lowest_priority_then_oldest(layer: AwarenessLayer) -> None:
    items = [await layer.add("task", f"t{i}", priority=5) for i in range(AWARENESS_MAX_ITEMS - 2)]
    low_old = await layer.add("action", "low old", priority=1)
    low_new = await layer.add("action", "low new", priority=1)
    assert len(await layer.get_all()) == AWARENESS_MAX_ITEMS

    eleventh = await layer.add("pending", "eleventh", priority=3)
    live = await layer.get_all()
    assert len(live) == AWARENESS_MAX_ITEMS
    ids = {i.id for i in live}
    assert eleventh.id in ids and low_new.id in ids and low_old.id not in ids
    assert all(i.id in ids for i in items)

    twelfth = await layer.add("pending", "twelfth", priority=9)
    ids = {i.id for i in await layer.get_all()}
    assert twelfth.id in ids and low_new.id not in ids and len(ids) == AWARENESS_MAX_ITEMS


async def test_cap_keeps_new_item_even_if_lowest(layer: AwarenessLayer, db: Database) -> None:
    first = [await layer.add("task", f"t{i}", priority=5) for i in range(AWARENESS_MAX_ITEMS)]
    new = await layer.add("flag", "low but new", priority=-1)
    ids = {i.id for i in await layer.get_all()}
    assert new.id in ids and first[0].id not in ids
    assert await count_rows(db) == AWARENESS_MAX_ITEMS


async def test_cap_ignores_expired_items(layer: AwarenessLayer, db: Database) -> None:
    for i in range(AWARENESS_MAX_ITEMS):
        await layer.add("task", f"t{i}")
    # expire three of them behind the layer's back: they no longer count against the cap
    await db.execute(
        "UPDATE awareness SET expires_at = ? WHERE id IN (SELECT id FROM awareness LIMIT 3)",
        (PAST,),
    )
    for i in range(3):
        await layer.add("action", f"a{i}")
    assert len(await layer.get_all()) == AWARENESS_MAX_ITEMS
    assert await count_rows(db) == AWARENESS_MAX_ITEMS  # the expired ones were purged


async def test_reads_cap_at_ten_for_foreign_rows(layer: AwarenessLayer, db: Database) -> None:
    await db.executemany(
        "INSERT INTO awareness (category, content, priority) VALUES ('task', ?, ?)",
        [(f"t{i}", i) for i in range(15)],
    )
    items = await layer.get_all()
    assert len(items) == AWARENESS_MAX_ITEMS
    assert [i.priority for i in items] == list(range(14, 4, -1))
    assert len(await layer.get_by_category("task")) == AWARENESS_MAX_ITEMS


async def test_update_fields(layer: AwarenessLayer) -> None:
    item = await layer.add("task", "x", priority=1, expires_at=future())
    updated = await layer.update(item.id, content="y", priority=7)
    assert (updated.content, updated.priority, updated.expires_at) == ("y", 7, item.expires_at)
    permanent = await layer.update(item.id, expires_at=None)
    assert permanent.expires_at is None
    later = await layer.update(item.id, expires_at="2099-01-01T00:00:00Z")
    assert later.expires_at == "2099-01-01T00:00:00.000Z"
    assert await layer.update(item.id) == later
    assert await layer.update(item.id, content=None, priority=None) == later


async def test_update_validation_and_unknown_id(layer: AwarenessLayer) -> None:
    item = await layer.add("task", "x")
    with pytest.raises(NotFoundError, match="Awareness item 12345 not found"):
        await layer.update(12345, content="y")
    with pytest.raises(ValidationError):
        await layer.update(item.id, content="")
    with pytest.raises(InvalidTimestampError):
        await layer.update(item.id, expires_at="soon")
    assert (await layer.get(item.id)) == item


async def test_tolerant_metadata_parse(layer: AwarenessLayer, db: Database) -> None:
    await db.execute(
        "INSERT INTO awareness (category, content, metadata) VALUES ('flag', 'bad', 'not json')"
    )
    await db.execute(
        "INSERT INTO awareness (category, content, metadata) VALUES ('flag', 'l', '[1]')"
    )
    assert [i.metadata for i in await layer.get_all()] == [{}, {}]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("{}", {}), ('{"a": 1}', {"a": 1}), ("[1]", {}), ("nope", {}), ("", {}), (None, {}),
     ("null", {})],
)
def test_parse_metadata(raw: object, expected: dict[str, object]) -> None:
    assert parse_metadata(raw) == expected


async def test_remove_and_clear(layer: AwarenessLayer) -> None:
    a = await layer.add("task", "a")
    await layer.add("task", "b")
    await layer.add("flag", "c")
    await layer.add("flag", "d", expires_at=PAST)
    assert await layer.remove(a.id) is True
    assert await layer.remove(a.id) is False
    assert await layer.clear_category("flag") == 1
    assert await layer.clear_category("pending") == 0
    assert await layer.clear() == 1
    assert await layer.clear() == 0
    assert await layer.get_all() == []


async def test_update_rejects_unknown_columns(layer: AwarenessLayer, db: Database) -> None:
    """update takes a fixed set of keywords; nothing else can reach the SQL."""
    item = await layer.add("task", "x")
    with pytest.raises(TypeError):
        await layer.update(item.id, **{"content = 'x'; DROP TABLE awareness; --": "y"})  # type: ignore[arg-type]
    assert (await layer.get(item.id)) == item
    assert await db.fetchval("SELECT COUNT(*) FROM awareness") == 1


async def test_cap_holds_under_concurrent_adds(db: Database) -> None:
    other = await Database.open(db.path)
    try:
        layers = [AwarenessLayer(db), AwarenessLayer(other)]
        await asyncio.gather(
            *(lay.add("task", f"t{i}", priority=i % 3) for i in range(15) for lay in layers)
        )
        assert len(await layers[0].get_all()) == AWARENESS_MAX_ITEMS
        assert await db.fetchval("SELECT COUNT(*) FROM awareness") == AWARENESS_MAX_ITEMS
    finally:
        await other.close()
