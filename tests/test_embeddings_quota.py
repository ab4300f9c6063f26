"""Tiers, quotas and the embedding_usage counter (real mind file), alone and through the chain."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime

import pytest

from mind.embeddings import (
    TIERS,
    EmbeddingConfig,
    EmbeddingError,
    EmbeddingProviderChain,
    QuotaExceeded,
    TierError,
    UsageStore,
    check_provider_allowed,
)
from mind.embeddings.quota import UNLIMITED, provider_allowed, year_month
from mind.errors import HiveMindError, ValidationError
from mind.storage.db import Database
from tests.test_embeddings_http import KEY, FakeServer, Handler, closed_port, protocol

UPGRADE = "https://example.test/upgrade"


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[Handler], Awaitable[FakeServer]]]:
    servers: list[FakeServer] = []

    async def start(handler: Handler) -> FakeServer:
        servers.append(await FakeServer(handler).start())
        return servers[-1]

    yield start
    for server in servers:
        await server.close()


async def rows(db: Database) -> list[tuple[str, str, int]]:
    found = await db.fetchall(
        "SELECT user_id, year_month, count FROM embedding_usage ORDER BY user_id, year_month"
    )
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


# -- the usage store ----------------------------------------------------------------------------


async def test_usage_is_counted_per_user_per_utc_month(db: Database) -> None:
    now = {"t": datetime(2026, 1, 31, 23, 30, tzinfo=UTC)}
    store = UsageStore(db, clock=lambda: now["t"])
    assert await store.current("alice") == 0
    assert await store.add("alice", 3) == 3
    assert await store.add("alice", 4) == 7
    assert await store.add("bob", 1) == 1
    now["t"] = datetime(2026, 2, 1, 0, 30, tzinfo=UTC)
    assert await store.current("alice") == 0
    assert await store.add("alice", 5) == 5
    assert await rows(db) == [
        ("alice", "2026-01", 7),
        ("alice", "2026-02", 5),
        ("bob", "2026-01", 1),
    ]
    assert await store.current("alice", "2026-01") == 7
    updated = await db.fetchval("SELECT updated_at FROM embedding_usage WHERE user_id = 'bob'")
    assert updated.endswith("Z")
    assert await store.release("alice", 99) == 0  # never negative
    with pytest.raises(ValidationError):
        await store.add("alice", -1)


def test_year_month_is_utc() -> None:
    from datetime import timedelta, timezone

    east = timezone(timedelta(hours=5))
    assert year_month(datetime(2026, 3, 1, 2, 0, tzinfo=east)) == "2026-02"


async def test_reserve_enforces_the_monthly_quota(db: Database) -> None:
    store = UsageStore(db)
    await store.add("u", 9_998)
    assert await store.reserve("u", "free", 2) == 10_000
    with pytest.raises(QuotaExceeded) as info:
        await store.reserve("u", "free", 1, upgrade_url=UPGRADE)
    err = info.value
    assert (err.tier, err.quota, err.current, err.requested) == ("free", 10_000, 10_000, 1)
    assert err.upgrade_url == UPGRADE and err.code == "quota_exceeded"
    assert await store.current("u") == 10_000  # a refused reservation counts nothing
    assert await store.reserve("u", "team", 1_000_000) == 1_010_000  # unlimited


async def test_reserve_inside_an_outer_transaction(db: Database) -> None:
    store = UsageStore(db)
    async with db.transaction():
        await store.reserve("u", "pro", 5)
        with pytest.raises(QuotaExceeded):
            await store.reserve("u", "free", 20_000)
    assert await store.current("u") == 5


# -- through the chain --------------------------------------------------------------------------


async def test_chain_counts_usage_without_a_tier(db: Database) -> None:
    async with EmbeddingProviderChain(
        EmbeddingConfig(provider="test", user_id="alice"), usage=db
    ) as chain:
        await chain.embed_batch(["a", "b", "c"])
        await chain.embed_batch([])
        await chain.embed("d")
        quota = await chain.quota_status()
    month = year_month(datetime.now(UTC))
    assert await rows(db) == [("alice", month, 4)]  # the probe is not counted
    assert quota == {
        "user_id": "alice",
        "tier": None,
        "month": month,
        "current": 4,
        "quota": UNLIMITED,
    }


async def test_chain_quota_exceeded_carries_tier_quota_current(db: Database) -> None:
    await UsageStore(db).add("bob", 9_999)
    cfg = EmbeddingConfig(provider="test", tier="free", user_id="bob", upgrade_url=UPGRADE)
    async with EmbeddingProviderChain(cfg, usage=db) as chain:
        await chain.embed_batch(["one"])
        with pytest.raises(QuotaExceeded) as info:
            await chain.embed_batch(["two", "three"])
    err = info.value
    assert (err.tier, err.quota, err.current, err.requested) == ("free", 10_000, 10_000, 2)
    assert err.upgrade_url == UPGRADE
    assert await UsageStore(db).current("bob") == 10_000


async def test_eval_mode_disables_gating(
    db: Database, serve: Callable[..., Awaitable[FakeServer]]
) -> None:
    await UsageStore(db).add("eve", 10_000)
    openai = await serve(protocol("openai", key=KEY))
    cfg = EmbeddingConfig(
        provider="openai",
        openai_url=openai.url,
        openai_api_key=KEY,
        tier="free",
        user_id="eve",
        eval_mode=True,
    )
    async with EmbeddingProviderChain(cfg, usage=db) as chain:
        assert chain.provider == "openai"
        await chain.embed_batch(["over quota, but eval"])
    assert await UsageStore(db).current("eve") == 10_001  # still counted, never refused


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
    db: Database,
    serve: Callable[..., Awaitable[FakeServer]],
) -> None:
    state = {"up": True}
    healthy = protocol("ollama")
    server = await serve(lambda r: healthy(r) if state["up"] else (500, "down"))
    cfg = EmbeddingConfig(provider="ollama", ollama_url=server.url, tier="free", user_id="c")
    async with EmbeddingProviderChain(cfg, usage=UsageStore(db)) as chain:
        await chain.embed_batch(["ok"])
        state["up"] = False
        with pytest.raises(EmbeddingError):
            await chain.embed_batch(["fails", "too"])
    assert await UsageStore(db).current("c") == 1
