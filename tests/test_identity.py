from __future__ import annotations

from dataclasses import asdict

import pytest

from mind.errors import ConflictError, NotFoundError, ValidationError
from mind.identity import Identity, IdentityLayer
from mind.storage.db import Database


@pytest.fixture
def layer(db: Database) -> IdentityLayer:
    return IdentityLayer(db)


async def test_absent_identity(layer: IdentityLayer) -> None:
    assert await layer.exists() is False
    assert await layer.find() is None
    with pytest.raises(NotFoundError, match=r"^No identity configured$"):
        await layer.get()
    with pytest.raises(NotFoundError, match="No identity configured"):
        await layer.update(role="x")


async def test_create_and_get(layer: IdentityLayer) -> None:
    created = await layer.create("Ada", role="Engineer", capabilities="math")
    assert isinstance(created, Identity)
    assert (created.name, created.role, created.capabilities) == ("Ada", "Engineer", "math")
    assert created.department == created.personality == created.system_prompt == ""
    assert created.created_at == created.updated_at
    assert created.created_at.endswith("Z") and "T" in created.created_at
    assert await layer.exists() is True
    assert await layer.get() == created
    assert asdict(created)["name"] == "Ada"


async def test_second_create_conflicts(layer: IdentityLayer) -> None:
    await layer.create("Ada")
    with pytest.raises(ConflictError):
        await layer.create("Bob")
    assert (await layer.get()).name == "Ada"


@pytest.mark.parametrize("name", ["", "   "])
async def test_create_requires_name(layer: IdentityLayer, name: str) -> None:
    with pytest.raises(ValidationError):
        await layer.create(name)
    assert await layer.exists() is False


async def test_update_partial(layer: IdentityLayer) -> None:
    created = await layer.create("Ada", role="Engineer")
    updated = await layer.update(role="Lead", department="R&D", personality=None)
    assert (updated.name, updated.role, updated.department) == ("Ada", "Lead", "R&D")
    assert updated.personality == ""
    assert updated.created_at == created.created_at
    assert updated.updated_at >= created.updated_at


async def test_update_nothing_returns_current(layer: IdentityLayer) -> None:
    created = await layer.create("Ada")
    assert await layer.update() == created
    assert await layer.update(role=None, name=None) == created


async def test_update_rejects_bad_values(layer: IdentityLayer) -> None:
    await layer.create("Ada")
    with pytest.raises(ValidationError):
        await layer.update(name="")
    with pytest.raises(ValidationError):
        await layer.update(role=42)
    assert (await layer.get()).name == "Ada"


async def test_update_whitelist_blocks_sql_in_keys(layer: IdentityLayer, db: Database) -> None:
    """Column names never come from caller keys."""
    await layer.create("Ada")
    with pytest.raises(ValidationError, match="unknown identity field"):
        await layer.update(**{"name; DROP TABLE identity": "x"})
    with pytest.raises(ValidationError):
        await layer.update(**{"name = 'pwned', role": "x"})
    with pytest.raises(ValidationError):
        await layer.update(id=2)
    with pytest.raises(ValidationError):
        await layer.set(created_at="2020-01-01T00:00:00Z")
    assert await db.fetchval("SELECT name FROM identity WHERE id = 1") == "Ada"
    assert (await layer.get()).name == "Ada"


async def test_set_upserts(layer: IdentityLayer) -> None:
    with pytest.raises(ValidationError, match="name is required"):
        await layer.set(role="Engineer")
    first = await layer.set(name="Ada", role="Engineer")
    assert (first.name, first.role) == ("Ada", "Engineer")
    second = await layer.set(role="Lead")
    assert (second.name, second.role) == ("Ada", "Lead")
    assert second.created_at == first.created_at


async def test_identity_survives_reopen(layer: IdentityLayer, db: Database) -> None:
    await layer.create("Ada", role="Engineer")
    other = await Database.open(db.path)
    try:
        assert (await IdentityLayer(other).get()).role == "Engineer"
    finally:
        await other.close()
