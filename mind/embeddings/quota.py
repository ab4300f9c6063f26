"""Embedding tiers, monthly quotas and the usage counter in the ``embedding_usage`` table.

====================  =============================================  =====================
tier                  embedding providers                            embeddings / month
====================  =============================================  =====================
``free``              inprocess, ollama, test, mock (local only)     10,000
``pro``               free + openai, voyage, litellm                 1,000,000
``team``              all                                            unlimited (-1)
``enterprise``        all                                            unlimited (-1)
====================  =============================================  =====================

Gating applies only when a tier is configured (local use without a tier is never
limited) and never in eval mode. Usage is counted per ``user_id`` per UTC calendar month
(``YYYY-MM``). :meth:`UsageStore.reserve` checks and counts in one write transaction, so two
concurrent callers cannot both slip under the limit; :meth:`UsageStore.release` gives a
reservation back when the embedding call then fails.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from mind.errors import HiveMindError, ValidationError
from mind.storage.db import Database
from mind.timeutil import now_iso

log = logging.getLogger(__name__)

UNLIMITED = -1
WARN_FRACTION = 0.8
LOCAL_PROVIDERS = frozenset({"inprocess", "ollama", "test", "mock"})
REMOTE_PROVIDERS = frozenset({"openai", "voyage", "litellm"})


@dataclass(frozen=True, slots=True)
class Tier:
    name: str
    providers: frozenset[str]
    monthly_quota: int  # UNLIMITED = -1


TIERS: dict[str, Tier] = {
    "free": Tier("free", LOCAL_PROVIDERS, 10_000),
    "pro": Tier("pro", LOCAL_PROVIDERS | REMOTE_PROVIDERS, 1_000_000),
    "team": Tier("team", LOCAL_PROVIDERS | REMOTE_PROVIDERS, UNLIMITED),
    "enterprise": Tier("enterprise", LOCAL_PROVIDERS | REMOTE_PROVIDERS, UNLIMITED),
}


class TierError(HiveMindError):
    """The configured tier does not include the requested provider (or is unknown)."""

    code = "tier_forbidden"
    status = 403

    def __init__(
        self,
        message: str,
        *,
        tier: str,
        provider: str | None = None,
        upgrade_url: str | None = None,
    ) -> None:
        super().__init__(message)
        self.tier = tier
        self.provider = provider
        self.upgrade_url = upgrade_url


class QuotaExceeded(HiveMindError):
    """This month's embedding quota would be exceeded."""

    code = "quota_exceeded"
    status = 429

    def __init__(
        self,
        *,
        tier: str,
        quota: int,
        current: int,
        requested: int,
        upgrade_url: str | None = None,
    ) -> None:
        hint = f"; upgrade at {upgrade_url}" if upgrade_url else ""
        super().__init__(
            f"embedding quota exceeded for tier {tier!r}: {current} of {quota} used this month, "
            f"{requested} more requested{hint}"
        )
        self.tier = tier
        self.quota = quota
        self.current = current
        self.requested = requested
        self.upgrade_url = upgrade_url


def get_tier(name: str) -> Tier:
    try:
        return TIERS[name]
    except KeyError:
        raise TierError(f"unknown tier {name!r} (known: {', '.join(TIERS)})", tier=name) from None


def provider_allowed(tier: str, provider: str) -> bool:
    return provider in get_tier(tier).providers


def check_provider_allowed(tier: str, provider: str, *, upgrade_url: str | None = None) -> None:
    """Raise :class:`TierError` unless ``tier`` may use ``provider``."""
    if not provider_allowed(tier, provider):
        hint = f"; upgrade at {upgrade_url}" if upgrade_url else ""
        raise TierError(
            f"embedding provider {provider!r} is not included in tier {tier!r} (allowed: "
            f"{', '.join(sorted(get_tier(tier).providers))}){hint}",
            tier=tier,
            provider=provider,
            upgrade_url=upgrade_url,
        )


def _count(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValidationError(f"an embedding count must be a non-negative integer, got {n!r}")
    return n


def year_month(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m")


class UsageStore:
    """Monthly embedding counts per user in one mind file's ``embedding_usage`` table."""

    def __init__(
        self, db: Database, *, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self._db = db
        self._clock = clock

    def month(self) -> str:
        return year_month(self._clock())

    async def current(self, user_id: str, month: str | None = None) -> int:
        value = await self._db.fetchval(
            "SELECT count FROM embedding_usage WHERE user_id = ? AND year_month = ?",
            (user_id, month or self.month()),
            default=0,
        )
        return int(value)

    async def add(self, user_id: str, n: int, *, month: str | None = None) -> int:
        """Count ``n`` embeddings for this month; returns the new monthly count."""
        month = month or self.month()
        async with self._db.transaction():
            await self._db.execute(
                "INSERT INTO embedding_usage(user_id, year_month, count, updated_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT(user_id, year_month) DO UPDATE SET "
                "count = count + excluded.count, updated_at = excluded.updated_at",
                (user_id, month, _count(n), now_iso()),
            )
            return await self.current(user_id, month)

    async def release(self, user_id: str, n: int) -> int:
        """Give back ``n`` reserved embeddings (never below zero)."""
        month = self.month()
        async with self._db.transaction():
            await self._db.execute(
                "UPDATE embedding_usage SET count = MAX(count - ?, 0), updated_at = ? "
                "WHERE user_id = ? AND year_month = ?",
                (_count(n), now_iso(), user_id, month),
            )
            return await self.current(user_id, month)

    async def reserve(
        self, user_id: str, tier: str, n: int, *, upgrade_url: str | None = None
    ) -> int:
        """Check the tier's monthly quota and count ``n``; raises :class:`QuotaExceeded`."""
        quota, n = get_tier(tier).monthly_quota, _count(n)
        month = self.month()
        async with self._db.transaction():
            current = await self.current(user_id, month)
            if quota != UNLIMITED and current + n > quota:
                raise QuotaExceeded(
                    tier=tier, quota=quota, current=current, requested=n, upgrade_url=upgrade_url
                )
            total = await self.add(user_id, n, month=month)
        if quota != UNLIMITED and current < WARN_FRACTION * quota <= total:
            log.warning(
                "embedding usage for %s reached %d of %d (tier %s)", user_id, total, quota, tier
            )
        return total

    async def status(self, user_id: str, tier: str | None) -> dict[str, object]:
        quota = get_tier(tier).monthly_quota if tier else UNLIMITED
        return {
            "user_id": user_id,
            "tier": tier,
            "month": self.month(),
            "current": await self.current(user_id),
            "quota": quota,
        }
