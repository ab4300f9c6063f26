"""The monthly embedding counter of a distributed deployment, in Redis: every host (query
encodes) and every worker (batched cognify encodes) counts into the same key per user and
month, ``hm:embedding-usage:<YYYY-MM>:<user id>``, so the quota holds deployment-wide. A
reservation is one Lua script (check and count at once); a key expires 400 days after its last
write. The tiers, quotas and the SQLite counter of one data dir are :mod:`mind.embeddings.quota`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from mind.embeddings.quota import UsageCounter
from mind.errors import StorageError
from mind.redact import mask_text
from queue_schemas.constants import USAGE_KEY_PREFIX

KEEP_SECONDS = 400 * 86_400  # a month's count outlives its year

# KEYS[1] the count; ARGV: n, quota (-1 unlimited), ttl -> {counted 0/1, count}
CLAIM = """
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local n, quota = tonumber(ARGV[1]), tonumber(ARGV[2])
if quota >= 0 and current + n > quota then return {0, current} end
local total = redis.call('INCRBY', KEYS[1], n)
redis.call('EXPIRE', KEYS[1], ARGV[3])
return {1, total}
"""
# KEYS[1] the count; ARGV: n -> the count after giving n back (never below zero)
RELEASE = """
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local left = math.max(current - tonumber(ARGV[1]), 0)
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('SET', KEYS[1], left, 'KEEPTTL') end
return left
"""


def usage_key(user_id: str, month: str) -> str:
    return f"{USAGE_KEY_PREFIX}{month}:{user_id}"


class RedisUsage(UsageCounter):
    """:class:`UsageCounter` over a Redis connection the caller owns (and closes)."""

    def __init__(
        self, redis: Redis, *, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        super().__init__(clock=clock)
        self._redis = redis

    async def close(self) -> None:
        """Nothing: the connection is the caller's."""

    async def _call(self, what: str, work: Any) -> Any:
        try:
            return await work
        except (RedisError, OSError) as exc:
            raise StorageError(f"embedding usage counter: {what}: "
                               f"{mask_text(str(exc))}") from exc

    async def current(self, user_id: str, month: str | None = None) -> int:
        value = await self._call("read", self._redis.get(usage_key(user_id, month or self.month())))
        return int(value or 0)

    async def release(self, user_id: str, n: int) -> int:
        key = usage_key(user_id, self.month())
        left = await self._call("release", self._redis.eval(RELEASE, 1, key, str(n)))
        return int(left)

    async def _claim(self, user_id: str, month: str, n: int, quota: int) -> tuple[bool, int]:
        key = usage_key(user_id, month)
        counted, total = await self._call(
            "count", self._redis.eval(CLAIM, 1, key, str(n), str(quota), str(KEEP_SECONDS)))
        return bool(counted), int(total)
