from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mind.db import Database
from mind.migrate import migrate


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    """A fully migrated mind file on disk, writer connection."""
    database = await Database.open(tmp_path / "test.mind")
    await migrate(database)
    yield database
    await database.close()
