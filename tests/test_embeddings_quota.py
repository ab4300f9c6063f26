"""Tiers, quotas and the monthly usage counter (a real SQLite usage file, real Redis), alone and
through the chain."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from mind.embeddings import (
    TIERS,
    EmbeddingConfig,
    EmbeddingError,
    EmbeddingProviderChain,
    EmbeddingQuotaExceededError,
    TierError,
    UsageCounter,
    UsageStore,
    check_provider_allowed,
)
from mind.embeddings.quota import UNLIMITED, provider_allowed, year_month
from mind.errors import HiveMindError, ValidationError
from mind.storage.db import Database
from tests.conftest import flushed_redis
from tests.support import KEY, EmbeddingHandler, FakeServer, closed_port, protocol
from workers.usage import RedisUsage, usage_key

UPGRADE = "https://example.test/upgrade"


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[EmbeddingHandler], Awaitable[FakeServer]]]:
    servers: list[FakeServer] = []

    async def start(handler: EmbeddingHandler) -> FakeServer:
        servers.append(await FakeServer(handler).start())
        return servers[-1]

    yield start
    for server in servers:
        await server.close()


Clock = Callable[[], datetime]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[UsageStore]:
    usage = UsageStore(tmp_path / "usage.db")
    yield usage
    await usage.close()


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.integration)])
async def counter(request: pytest.FixtureRequest, tmp_path: Path
                  ) -> AsyncIterator[Callable[[Clock], UsageCounter]]:
    """Makes counters of one kind over one store (the same file, the same Redis db)."""
    made: list[UsageCounter] = []
    async with contextlib.AsyncExitStack() as stack:
        if request.param == "redis":
            redis = await stack.enter_async_context(flushed_redis())

            def make(clock: Clock) -> UsageCounter:
                made.append(RedisUsage(redis, clock=clock))
                return made[-1]
        else:
            def make(clock: Clock) -> UsageCounter:
                made.append(UsageStore(tmp_path / "usage.db", clock=clock))
                return made[-1]
        yield make
        for usage in made:
            await usage.close()


def now() -> datetime:
    return datetime.now(UTC)


async def rows(path: Path) -> list[tuple[str, str, int]]:
    db = await Database.open(path, readonly=True)
    try:
        found = await db.fetchall(
            "SELECT user_id, year_month, count FROM embedding_usage ORDER BY user_id, year_month"
        )
    finally:
        await db.close()
    return [(r[0], r[1], r[2]) for r in found]


# -- the tier table -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tier", "provider", "allowed"),
    [
        ("free", "inprocess", True),
        ("free", "ollama", True),
        ("free", "test", True),
        ("free", "mock", True),
        ("free", "openai", False),
        ("free", "voyage", False),
        ("free", "litellm", False),
        ("pro", "openai", True),
        ("pro", "voyage", True),
        ("pro", "litellm", True),
        ("team", "litellm", True),
        ("enterprise", "openai", True),
    ],
)
def test_tier_table(tier: str, provider: str, allowed: bool) -> None:
    assert provider_allowed(tier, provider) is allowed
    if allowed:
        check_provider_allowed(tier, provider)
    else:
        with pytest.raises(TierError) as info:
            check_provider_allowed(tier, provider, upgrade_url=UPGRADE)
        assert (info.value.tier, info.value.provider) == (tier, provider)
        assert info.value.upgrade_url == UPGRADE and UPGRADE in str(info.value)


def test_quotas_and_unknown_tier() -> None:
    assert {name: t.monthly_quota for name, t in TIERS.items()} == {
        "free": 10_000,
        "pro": 1_000_000,
        "team": UNLIMITED,
        "enterprise": UNLIMITED,
    }
    with pytest.raises(TierError, match="unknown tier 'gold'") as info:
        check_provider_allowed("gold", "test")
    assert info.value.tier == "gold" and isinstance(info.value, HiveMindError)


# -- the usage counters ------------------------------------------------------------------------


async def test_usage_is_counted_per_user_per_utc_month(
    counter: Callable[[Clock], UsageCounter],
) -> None:
    moment = {"t": datetime(2026, 1, 31, 23, 30, tzinfo=UTC)}
    usage = counter(lambda: moment["t"])
    assert await usage.current("alice") == 0
    assert await usage.add("alice", 3) == 3
    assert await usage.add("alice", 4) == 7
    assert await usage.add("bob", 1) == 1
    moment["t"] = datetime(2026, 2, 1, 0, 30, tzinfo=UTC)
    assert await usage.current("alice") == 0
    assert await usage.add("alice", 5) == 5
    assert await usage.current("alice", "2026-01") == 7
    assert await usage.current("bob", "2026-01") == 1
    assert await usage.release("alice", 99) == 0  # never negative
    with pytest.raises(ValidationError):
        await usage.add("alice", -1)


async def test_the_sqlite_counter_keeps_rows_in_embedding_usage(
    store: UsageStore, tmp_path: Path
) -> None:
    assert await store.current("nobody") == 0
    assert not store.path.exists()  # reading creates no file
    await store.add("alice", 2)
    await store.add("bob", 1)
    month = year_month(now())
    assert await rows(tmp_path / "usage.db") == [("alice", month, 2), ("bob", month, 1)]
    db = await Database.open(tmp_path / "usage.db", readonly=True)
    try:
        updated = await db.fetchval("SELECT updated_at FROM embedding_usage WHERE user_id = 'bob'")
    finally:
        await db.close()
    assert updated.endswith("Z")
    assert (store.path.stat().st_mode & 0o077) == 0  # owner-only, like a mind file


async def test_redis_counter_keys_expire(redis: Any) -> None:
    usage = RedisUsage(redis)
    await usage.add("alice", 2)
    key = usage_key("alice", usage.month())
    assert int(await redis.get(key)) == 2
    assert 0 < await redis.ttl(key) <= 400 * 86_400
    await usage.release("alice", 1)
    assert await redis.ttl(key) > 0  # giving back keeps the expiry


def test_year_month_is_utc() -> None:
    from datetime import timedelta, timezone

    east = timezone(timedelta(hours=5))
    assert year_month(datetime(2026, 3, 1, 2, 0, tzinfo=east)) == "2026-02"


async def test_reserve_enforces_the_monthly_quota(
    counter: Callable[[Clock], UsageCounter],
) -> None:
    usage = counter(now)
    await usage.add("u", 9_998)
    assert await usage.reserve("u", "free", 2) == 10_000
    with pytest.raises(EmbeddingQuotaExceededError) as info:
        await usage.reserve("u", "free", 1, upgrade_url=UPGRADE)
    err = info.value
    assert (err.tier, err.quota, err.current, err.requested) == ("free", 10_000, 10_000, 1)
    assert err.upgrade_url == UPGRADE and err.code == "quota_exceeded"
    assert "10000 of 10000 used this month" in str(err) and UPGRADE in str(err)
    assert await usage.current("u") == 10_000  # a refused reservation counts nothing
    with pytest.raises(EmbeddingQuotaExceededError):
        await usage.check("u", "free")
    await usage.check("u", "team", 5)  # a check counts nothing either
    assert await usage.reserve("u", "team", 1_000_000) == 1_010_000  # unlimited


async def test_concurrent_reservations_never_pass_the_quota(
    counter: Callable[[Clock], UsageCounter],
) -> None:
    """Two counters (two processes) reserving at once: exactly the quota is granted."""
    first, second = counter(now), counter(now)
    await first.add("u", 9_900)

    async def take(usage: UsageCounter) -> int:
        try:
            await usage.reserve("u", "free", 10)
        except EmbeddingQuotaExceededError:
            return 0
        return 10

    granted = await asyncio.gather(*(take(first if i % 2 else second) for i in range(30)))
    assert sum(granted) == 100
    assert await first.current("u") == 10_000


# -- through the chain --------------------------------------------------------------------------


async def test_chain_counts_usage_without_a_tier(store: UsageStore) -> None:
    async with EmbeddingProviderChain(
        EmbeddingConfig(provider="test", user_id="alice"), usage=store
    ) as chain:
        await chain.embed_batch(["a", "b", "c"])
        await chain.embed_batch([])
        await chain.embed("d")
        quota = await chain.quota_status()
    month = year_month(datetime.now(UTC))
    assert await rows(store.path) == [("alice", month, 4)]  # the probe is not counted
    assert quota == {
        "user_id": "alice",
        "tier": None,
        "month": month,
        "current": 4,
        "quota": UNLIMITED,
        "gated": False,
    }


async def test_chain_quota_exceeded_carries_tier_quota_current(store: UsageStore) -> None:
    await store.add("bob", 9_999)
    cfg = EmbeddingConfig(provider="test", tier="free", user_id="bob", upgrade_url=UPGRADE)
    async with EmbeddingProviderChain(cfg, usage=store) as chain:
        await chain.embed_batch(["one"])
        with pytest.raises(EmbeddingQuotaExceededError) as info:
            await chain.embed_batch(["two", "three"])
    err = info.value
    assert (err.tier, err.quota, err.current, err.requested) == ("free", 10_000, 10_000, 2)
    assert err.upgrade_url == UPGRADE
    assert await store.current("bob") == 10_000


async def test_eval_mode_disables_gating(
    store: UsageStore, serve: Callable[..., Awaitable[FakeServer]]
) -> None:
    await store.add("eve", 10_000)
    openai = await serve(protocol("openai", key=KEY))
    cfg = EmbeddingConfig(
        provider="openai",
        openai_url=openai.url,
        openai_api_key=KEY,
        tier="free",
        user_id="eve",
        eval_mode=True,
    )
    async with EmbeddingProviderChain(cfg, usage=store) as chain:
        assert chain.provider == "openai"
        await chain.embed_batch(["over quota, but eval"])
        await chain.check_quota(5)  # no refusal in eval mode
    assert await store.current("eve") == 10_001  # still counted, never refused


async def test_explicit_provider_outside_the_tier_is_refused_before_any_request(
    serve: Callable[..., Awaitable[FakeServer]],
) -> None:
    openai = await serve(protocol("openai", key=KEY))
    cfg = EmbeddingConfig(provider="openai", openai_url=openai.url, openai_api_key=KEY, tier="free")
    with pytest.raises(TierError) as info:
        await EmbeddingProviderChain(cfg).start()
    assert (info.value.tier, info.value.provider) == ("free", "openai")
    assert openai.requests == []


@pytest.mark.slow
async def test_auto_skips_providers_outside_the_tier(
    serve: Callable[..., Awaitable[FakeServer]],
) -> None:
    voyage = await serve(protocol("voyage", key=KEY))
    openai = await serve(protocol("openai", key=KEY))
    cfg = EmbeddingConfig(
        inprocess_model="hive-mind/definitely-not-a-model",
        ollama_url=f"http://127.0.0.1:{closed_port()}",
        voyage_url=voyage.url,
        voyage_api_key=KEY,
        openai_url=openai.url,
        openai_api_key=KEY,
        tier="free",
    )
    async with EmbeddingProviderChain(cfg) as chain:
        assert chain.provider == "mock" and chain.degraded
        probes = chain.status()["probes"]
    assert isinstance(probes, dict)
    assert probes["voyage"] == "skipped: not in tier 'free'"
    assert voyage.requests == [] and openai.requests == []
    cfg.tier = "pro"
    async with EmbeddingProviderChain(cfg) as chain:
        assert chain.provider == "voyage"
    assert openai.requests == []


async def test_failed_batch_gives_the_reservation_back(
    store: UsageStore,
    serve: Callable[..., Awaitable[FakeServer]],
) -> None:
    state = {"up": True}
    healthy = protocol("ollama")
    server = await serve(lambda r: healthy(r) if state["up"] else (500, "down"))
    cfg = EmbeddingConfig(provider="ollama", ollama_url=server.url, tier="free", user_id="c")
    async with EmbeddingProviderChain(cfg, usage=store) as chain:
        await chain.embed_batch(["ok"])
        state["up"] = False
        with pytest.raises(EmbeddingError):
            await chain.embed_batch(["fails", "too"])
    assert await store.current("c") == 1


def test_the_tier_table_has_one_row_per_vocabulary_tier() -> None:
    from vocabulary.enums import EMBEDDING_TIERS

    assert tuple(TIERS) == EMBEDDING_TIERS
