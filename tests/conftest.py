from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing may download weights in tests

from mind.embeddings.inprocess import InProcessEmbedder
from mind.storage.db import Database
from mind.storage.migrate import migrate
from workers.queue import connect


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    """A fully migrated mind file on disk, writer connection."""
    database = await Database.open(tmp_path / "test.mind")
    await migrate(database)
    yield database
    await database.close()


@pytest.fixture(scope="session")
def real_model() -> Iterator[InProcessEmbedder]:
    """The real all-MiniLM-L6-v2, loaded offline from its package once per test session."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    embedder = InProcessEmbedder()
    asyncio.run(embedder.load())
    yield embedder
    asyncio.run(embedder.close())


REDIS_URL = os.environ.get("HIVE_MIND_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def redis_db_url(db: int) -> str:
    """The test Redis with another db number (a test file's own, flushed freely)."""
    return f"{REDIS_URL.rsplit('/', 1)[0]}/{db}"


@asynccontextmanager
async def flushed_redis(url: str = REDIS_URL) -> AsyncIterator[Any]:
    """A pool on ``url``, its db flushed before and after; the test is skipped without Redis."""
    try:
        pool = await connect(url)
        await pool.ping()
    except Exception as exc:  # make test starts a Redis; plain pytest may not have one
        pytest.skip(f"no Redis at {url}: {exc}")
    await pool.flushdb()
    try:
        yield pool
    finally:
        await pool.flushdb()
        await pool.aclose()


@pytest.fixture
async def redis() -> AsyncIterator[Any]:
    async with flushed_redis() as pool:
        yield pool


@pytest.fixture(scope="session", autouse=True)
def shared_model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One ONNX export for the whole run (each test's data dir would export its own), unless
    the caller chose a cache; subprocesses inherit it through the environment."""
    if os.environ.get("HIVE_MIND_EMBEDDING_CACHE_DIR"):
        yield
        return
    os.environ["HIVE_MIND_EMBEDDING_CACHE_DIR"] = str(tmp_path_factory.mktemp("model-cache"))
    yield
    os.environ.pop("HIVE_MIND_EMBEDDING_CACHE_DIR", None)
