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
limited) and never in eval mode (usage is still counted there). Usage is counted per
``user_id`` (``HIVE_MIND_USER_ID``) per UTC calendar month (``YYYY-MM``) by a
:class:`UsageCounter`: :class:`UsageStore` keeps it in the ``embedding_usage`` table of the data
dir's usage file, shared by every process on that data dir; a distributed deployment keeps it in
Redis (:mod:`workers.usage`), shared by its hosts and workers. :meth:`UsageCounter.reserve`
checks and counts in one atomic step, so two concurrent callers cannot both slip under the
limit; :meth:`UsageCounter.release` gives a reservation back when the embedding call then fails.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from mind.errors import HiveMindError, ValidationError
from mind.storage.db import Database
from mind.storage.private_files import make_private_dir
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


TIERS: dict[str, Tier] = {  # one per vocabulary.enums.EMBEDDING_TIERS, in that order
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


class EmbeddingQuotaExceededError(HiveMindError):
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

    def details(self) -> dict[str, object]:
        """What an HTTP error body carries beside the message (``error.details``)."""
        return {"tier": self.tier, "quota": self.quota, "current": self.current,
                "requested": self.requested, "upgrade_url": self.upgrade_url}


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


def monthly_quota(tier: str | None) -> int:
    """The tier's embeddings per month; no tier: :data:`UNLIMITED`."""
    return get_tier(tier).monthly_quota if tier else UNLIMITED


class UsageCounter(ABC):
    """Monthly embedding counts per user; subclasses store them (SQLite file, Redis)."""

    def __init__(self, *, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self._clock = clock

    def month(self) -> str:
        return year_month(self._clock())

    @abstractmethod
    async def current(self, user_id: str, month: str | None = None) -> int:
        """This month's (or ``month``'s) count."""

    async def add(self, user_id: str, n: int, *, month: str | None = None) -> int:
        """Count ``n`` embeddings for this month (or ``month``); returns the new count."""
        return (await self._claim(user_id, month or self.month(), _count(n), UNLIMITED))[1]

    @abstractmethod
    async def release(self, user_id: str, n: int) -> int:
        """Give back ``n`` reserved embeddings (never below zero)."""

    @abstractmethod
    async def _claim(self, user_id: str, month: str, n: int, quota: int) -> tuple[bool, int]:
        """Atomically: count ``n`` unless that passes ``quota`` (:data:`UNLIMITED`: never).
        Returns (counted, the count after) or (False, the count that refused it)."""

    @abstractmethod
    async def close(self) -> None:
        """Release what the counter holds open."""

    async def reserve(
        self, user_id: str, tier: str, n: int, *, upgrade_url: str | None = None
    ) -> int:
        """Check the tier's monthly quota and count ``n``; raises
        :class:`EmbeddingQuotaExceededError` (counting nothing) when it would be passed."""
        quota, n = get_tier(tier).monthly_quota, _count(n)
        counted, total = await self._claim(user_id, self.month(), n, quota)
        if not counted:
            raise EmbeddingQuotaExceededError(
                tier=tier, quota=quota, current=total, requested=n, upgrade_url=upgrade_url
            )
        if quota != UNLIMITED and total - n < WARN_FRACTION * quota <= total:
            log.warning(
                "embedding usage for %s reached %d of %d (tier %s)", user_id, total, quota, tier
            )
        return total

    async def check(
        self, user_id: str, tier: str, n: int = 1, *, upgrade_url: str | None = None
    ) -> None:
        """Raise :class:`EmbeddingQuotaExceededError` when ``n`` more would pass this month's
        quota, counting nothing (a write refused before it stores what it could not embed)."""
        quota, n = get_tier(tier).monthly_quota, _count(n)
        current = await self.current(user_id)
        if quota != UNLIMITED and current + n > quota:
            raise EmbeddingQuotaExceededError(
                tier=tier, quota=quota, current=current, requested=n, upgrade_url=upgrade_url
            )

    async def status(self, user_id: str, tier: str | None) -> dict[str, object]:
        return {
            "user_id": user_id,
            "tier": tier,
            "month": self.month(),
            "current": await self.current(user_id),
            "quota": monthly_quota(tier),
        }


USAGE_SCHEMA = """
CREATE TABLE IF NOT EXISTS embedding_usage (
  user_id    TEXT NOT NULL,
  year_month TEXT NOT NULL,
  count      INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL,
  UNIQUE (user_id, year_month)
);
"""


class UsageStore(UsageCounter):
    """The ``embedding_usage`` table of one SQLite file (a data dir's usage file), opened on
    first use and created if missing; every process on the data dir counts into it."""

    def __init__(
        self, path: Path, *, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        super().__init__(clock=clock)
        self.path = path
        self._db: Database | None = None
        self._opening = asyncio.Lock()

    async def _database(self) -> Database:
        if self._db is None:
            async with self._opening:
                if self._db is None:
                    make_private_dir(self.path.parent)
                    db = await Database.open(self.path)
                    try:
                        await db.executescript(USAGE_SCHEMA)
                    except BaseException:
                        await db.close()
                        raise
                    self._db = db
        return self._db

    async def close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            await db.close()

    async def current(self, user_id: str, month: str | None = None) -> int:
        if self._db is None and not self.path.exists():
            return 0  # nothing embedded yet on this data dir (a report creates no file)
        db = await self._database()
        value = await db.fetchval(
            "SELECT count FROM embedding_usage WHERE user_id = ? AND year_month = ?",
            (user_id, month or self.month()),
            default=0,
        )
        return int(value)

    async def release(self, user_id: str, n: int) -> int:
        month, db = self.month(), await self._database()
        async with db.transaction():
            await db.execute(
                "UPDATE embedding_usage SET count = MAX(count - ?, 0), updated_at = ? "
                "WHERE user_id = ? AND year_month = ?",
                (_count(n), now_iso(), user_id, month),
            )
            return await self.current(user_id, month)

    async def _claim(self, user_id: str, month: str, n: int, quota: int) -> tuple[bool, int]:
        db = await self._database()
        async with db.transaction():  # BEGIN IMMEDIATE: other processes wait, none slips by
            current = await self.current(user_id, month)
            if quota != UNLIMITED and current + n > quota:
                return False, current
            await db.execute(
                "INSERT INTO embedding_usage(user_id, year_month, count, updated_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT(user_id, year_month) DO UPDATE SET "
                "count = count + excluded.count, updated_at = excluded.updated_at",
                (user_id, month, n, now_iso()),
            )
            return True, current + n
