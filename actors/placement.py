"""Which shard owns a mind: rendezvous hashing over a static shard map (issue #17).

A deployment past one host lists its shards, ``HIVE_MIND_SHARDS=shard-0=http://h0:8765,
shard-1=http://h1:8765``; shard ``k`` is served by the host whose ``HIVE_MIND_HOST_ID`` is
``shard-k``. A mind id belongs to the shard with the highest ``hash(shard id, mind id)``
(highest random weight): every process computes the same owner from the same map with no
coordination, and adding a shard moves only the minds the new shard now wins — about 1/N of
them — while removing one moves only that shard's minds.

Pure: parsing and the owner function. Routing, fencing and rebalancing build on it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from vocabulary.ids import validate_mind_id

SHARD_ID = re.compile(r"^shard-(0|[1-9][0-9]{0,3})$")
MAX_SHARDS: Final = 1024


class ShardMapError(ValueError):
    """The shard map is malformed (a configuration error naming the fix)."""


def weight(shard_id: str, mind_id: str) -> int:
    """The rendezvous weight of ``mind_id`` on ``shard_id`` (64 bits, stable across processes
    and versions: blake2b, never Python's salted ``hash``)."""
    digest = hashlib.blake2b(f"{shard_id}\x00{mind_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


@dataclass(frozen=True)
class ShardMap:
    shards: Mapping[str, str]  # shard id → base URL of the host serving it

    def owner(self, mind_id: str) -> str:
        """The shard that owns ``mind_id`` (ties, astronomically rare: the first id sorted)."""
        validate_mind_id(mind_id)
        return max(sorted(self.shards), key=lambda s: weight(s, mind_id))

    def url(self, mind_id: str) -> str:
        return self.shards[self.owner(mind_id)]

    def moved(self, other: ShardMap, mind_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        """The minds whose owner differs in ``other``: mind → (owner here, owner there)."""
        out = {}
        for mind_id in mind_ids:
            here, there = self.owner(mind_id), other.owner(mind_id)
            if here != there:
                out[mind_id] = (here, there)
        return out


def parse_shards(text: str) -> ShardMap:
    """``shard-0=http://h0:8765,shard-1=http://h1:8765`` → a :class:`ShardMap`. Every entry is
    ``shard-<n>=<http(s) URL without credentials, query or fragment>``; ids are unique."""
    shards: dict[str, str] = {}
    for raw in (part.strip() for part in text.split(",")):
        if not raw:
            continue
        shard_id, sep, url = raw.partition("=")
        shard_id, url = shard_id.strip(), url.strip().rstrip("/")
        if not sep or not SHARD_ID.fullmatch(shard_id):
            raise ShardMapError(f"bad shard entry {raw!r}: write shard-<n>=http://host:port")
        parts = urlsplit(url)
        if (parts.scheme not in ("http", "https") or not parts.hostname or parts.username
                or parts.password or parts.query or parts.fragment):
            raise ShardMapError(
                f"bad URL for {shard_id}: {url!r} (http(s)://host:port, no credentials: the "
                "callers' own token is forwarded)")
        if shard_id in shards:
            raise ShardMapError(f"{shard_id} is listed twice in the shard map")
        shards[shard_id] = url
    if not shards:
        raise ShardMapError("the shard map is empty: list at least one shard-<n>=URL")
    if len(shards) > MAX_SHARDS:
        raise ShardMapError(f"at most {MAX_SHARDS} shards")
    return ShardMap(shards)
