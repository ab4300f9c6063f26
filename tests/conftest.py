from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing may download weights in tests
# human output is checked at the CLI's piped width (120), whatever terminal ran the suite
# (pytest-xdist's workers are given its width as COLUMNS)
os.environ.pop("COLUMNS", None)

from hive_mind.facade import HiveMind
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


@pytest.fixture
async def hm(tmp_path: Path) -> AsyncIterator[HiveMind]:
    """An embedded facade on a fresh data dir, with the test embedder."""
    facade = await HiveMind.open(data_dir=tmp_path / "data", embedding_provider="test")
    yield facade
    await facade.close()


@pytest.fixture(scope="session")
def real_model() -> Iterator[InProcessEmbedder]:
    """The real all-MiniLM-L6-v2, loaded offline from its package once per test session."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    embedder = InProcessEmbedder()
    asyncio.run(embedder.load())
    yield embedder
    asyncio.run(embedder.close())


XDIST_DB_STRIDE = 8  # `make test` runs two pytest-xdist workers: the second's dbs are 8 lower


def _worker_db(db: int) -> int:
    """Db ``db`` of the test Redis as this pytest-xdist worker's own (no worker: ``db``)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    index = int(worker.removeprefix("gw")) if worker.startswith("gw") else 0
    mapped = db - XDIST_DB_STRIDE * index
    if not 0 <= mapped < 16:  # a third worker, or a db below the stride for the second
        raise RuntimeError(f"Redis db {db} has no copy for xdist worker {worker}: at most two "
                           f"workers, and tests use dbs {XDIST_DB_STRIDE}-15")
    return mapped


def redis_db_url(db: int, base: str | None = None) -> str:
    """The test Redis with another db number (a test file's own, flushed freely), this
    worker's copy of it."""
    return urlsplit(base or REDIS_URL)._replace(path=f"/{_worker_db(db)}").geturl()


# the URL the run was given, kept apart so that importing this module again maps it once
_CONFIGURED = os.environ.setdefault(
    "HIVE_MIND_TEST_REDIS_URL_GIVEN",
    os.environ.get("HIVE_MIND_TEST_REDIS_URL", "redis://127.0.0.1:6379/15"))
# set before the test modules import it (and for the servers and workers tests start)
REDIS_URL = os.environ["HIVE_MIND_TEST_REDIS_URL"] = redis_db_url(
    int(urlsplit(_CONFIGURED).path.strip("/") or 0), _CONFIGURED)


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
    if os.environ.get("PYTEST_XDIST_WORKER"):  # one for all workers: they export it once
        cache = tmp_path_factory.getbasetemp().parent / "model-cache"
        cache.mkdir(exist_ok=True)
    else:
        cache = tmp_path_factory.mktemp("model-cache")
    os.environ["HIVE_MIND_EMBEDDING_CACHE_DIR"] = str(cache)
    yield
    os.environ.pop("HIVE_MIND_EMBEDDING_CACHE_DIR", None)


# Test tiers (`make test-fast` runs `unit`; `make test` runs all three):
# - slow: takes seconds: multi-process clusters, long inputs, deadlines (marked where they are);
# - integration: a real Redis, the real embedding model, processes started by the test, or
#   HTTP servers it talks to over real sockets with deadlines (the modules below, and any test
#   asking for the `redis` or `real_model` fixture);
# - unit: everything else — in-process, on real SQLite files in tmp dirs. A unit test that
#   starts a process fails (`forbid_processes_in_unit_tests`): mark its module here instead.
INTEGRATION_FIXTURES = frozenset({"redis", "real_model"})
INTEGRATION_MODULES = frozenset({
    "test_arq_worker", "test_catchup", "test_cli", "test_cli_docs", "test_cli_startup",
    "test_codeword_drill", "test_combined", "test_console_browser", "test_conversation_signals",
    "test_demo", "test_deploy_shards", "test_distributed", "test_embeddings_chain",
    "test_embeddings_http", "test_embeddings_inprocess", "test_embeddings_onnx",
    "test_extraction", "test_fair_queue", "test_harvest_resume_process", "test_http_api",
    "test_import_graph", "test_int4_blocks", "test_int8_scan", "test_jobs_admin",
    "test_maintenance_cron", "test_mcp_drain", "test_mcp_server", "test_metrics",
    "test_multiprocess", "test_queue_schemas", "test_quota_interfaces", "test_readme",
    "test_recall_combined_interfaces", "test_recall_eval", "test_reference_docs",
    "test_relevance_interfaces", "test_remote_client", "test_runtime_contract",
    "test_save_idempotency", "test_schedule", "test_scoped_tokens", "test_search_real_model",
    "test_security_bounds", "test_security_cli", "test_security_cluster",
    "test_security_connections", "test_security_fetch", "test_security_forget",
    "test_security_harvest", "test_security_http", "test_security_imports", "test_serve_warmup",
    "test_supersession", "test_vocabulary", "test_wake",
})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("slow") or item.get_closest_marker("integration"):
            continue
        module = item.path.stem
        if module in INTEGRATION_MODULES or INTEGRATION_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.integration)
        else:
            item.add_marker(pytest.mark.unit)


class ProcessInUnitTest(AssertionError):
    """A unit-tier test started a process: its module belongs in INTEGRATION_MODULES."""


@pytest.fixture(autouse=True)
def forbid_processes_in_unit_tests(request: pytest.FixtureRequest,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("unit") is None:
        return

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise ProcessInUnitTest(f"{request.node.nodeid} starts a process; add its module to "
                                "INTEGRATION_MODULES in tests/conftest.py")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
