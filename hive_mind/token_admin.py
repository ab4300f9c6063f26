"""Making, listing and revoking scoped tokens across a deployment, and resolving them.

One host (or a CLI next to its data dir): the data dir's :class:`~hive_mind.tokens.TokenStore`.
A sharded deployment: every shard host keeps the same records — a token made (or revoked) on
any host, gateway or CLI with ``HIVE_MIND_SHARDS`` is installed on (removed from) every shard
with the admin's credentials, all or none — so each shard checks a forwarded call's token
itself. A gateway keeps no state: it asks the shards which scope a token it is shown has
(``GET /v1/tokens/self`` with that token), and remembers the answer for
:data:`INTROSPECT_SECONDS`. In client mode (``--url``) the CLI asks the server's admin API.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import httpx

from hive_mind.forwarding import FORWARDED_HEADER
from hive_mind.remote import error_of
from hive_mind.settings import Settings
from hive_mind.tokens import Scope, TokenRecord, TokenStore, digest, mind_ids, new_token
from mind.errors import ValidationError
from mind.timeutil import format_ts, normalize_ts

INTROSPECT_SECONDS: Final = 30.0
HTTP_SECONDS: Final = 10.0
_DURATION: Final = re.compile(r"([1-9][0-9]{0,5})([mhd])")
_UNITS: Final = {"m": "minutes", "h": "hours", "d": "days"}


def expiry(text: str | None) -> str | None:
    """``30d``, ``12h``, ``90m`` from now, or an ISO-8601 time, as the house timestamp."""
    if text is None or not text.strip():
        return None
    found = _DURATION.fullmatch(text.strip())
    if found:
        delta = timedelta(**{_UNITS[found.group(2)]: int(found.group(1))})
        return format_ts(datetime.now(UTC) + delta)
    return normalize_ts(text.strip())


def token_store(settings: Settings) -> TokenStore | None:
    """This process's store: a host's (one host, or a shard host); none on a gateway or a
    machine of a sharded deployment that is no shard (it reaches the shards instead)."""
    shards = settings.shard_map()
    if settings.cluster.gateway or (shards is not None
                                    and settings.cluster.host_id not in shards.shards):
        return None
    return TokenStore(settings.data_dir)


async def remote_tokens(settings: Settings, method: str, path: str = "",
                        **kwargs: Any) -> Any:
    """The admin API of the server at ``settings.url`` (the CLI's client mode)."""
    headers = {} if settings.security.api_token is None else {
        "Authorization": f"Bearer {settings.security.api_token.get_secret_value()}"}
    async with httpx.AsyncClient(timeout=HTTP_SECONDS, headers=headers) as client:
        answer = await client.request(method, f"{settings.url}/v1/tokens{path}", **kwargs)
    if answer.status_code >= 400:
        raise error_of(answer)
    return answer.json()


class TokenAdmin:
    """Token records of this deployment (see the module docstring). ``auth``: the admin's
    ``Authorization`` header, sent to the other hosts."""

    def __init__(self, settings: Settings, auth: str | None) -> None:
        self.settings = settings
        self.auth = auth
        shards = settings.shard_map()
        self.local = token_store(settings)
        self.peers = [] if shards is None else [
            url for shard, url in sorted(shards.shards.items())
            if settings.cluster.gateway or shard != settings.cluster.host_id]

    async def _each_peer(self, method: str, path: str, **kwargs: Any) -> list[str]:
        """``method path`` on every other shard (marked forwarded: each acts on its own
        store only); the URLs that took it."""
        done: list[str] = []
        headers = {FORWARDED_HEADER: "1", **({"Authorization": self.auth} if self.auth else {})}
        async with httpx.AsyncClient(timeout=HTTP_SECONDS, headers=headers) as client:
            for url in self.peers:
                answer = await client.request(method, f"{url}/v1/tokens{path}", **kwargs)
                if answer.status_code >= 400:
                    raise error_of(answer, f"{url}: ")
                done.append(url)
        return done

    async def create(self, workspaces: list[str], *, read_only: bool = False,
                     expires: str | None = None, label: str | None = None
                     ) -> dict[str, Any]:
        token, record = new_token(mind_ids(workspaces), read_only=read_only,
                                  expires=expiry(expires), label=label)
        if self.local is not None:
            self.local.install(record)
        try:
            await self._each_peer("PUT", f"/{record.id}", json=asdict(record))
        except Exception:  # all or none: a shard without it would refuse its holder
            await self.revoke(record.id, quiet=True)
            raise
        return {"token": token, **record.shown()}

    def install(self, record: dict[str, Any]) -> dict[str, Any]:
        """A record made on another host (``PUT /v1/tokens/{id}``)."""
        if self.local is None:
            raise ValidationError("a gateway keeps no tokens: install them on the shards")
        made = TokenRecord(**record)
        mind_ids(made.minds)
        self.local.install(made)
        return made.shown()

    async def revoke(self, token_id: str, *, quiet: bool = False) -> dict[str, Any]:
        gone = None
        if self.local is not None:
            try:
                gone = self.local.revoke(token_id)
            except Exception:
                if not quiet:
                    raise
        await asyncio.gather(self._each_peer("DELETE", f"/{token_id}"),
                             return_exceptions=quiet)
        return {"id": token_id, "revoked": True, **({} if gone is None else gone.shown())}

    async def listing(self) -> list[dict[str, Any]]:
        if self.local is not None:
            return [r.shown() for r in self.local.records().values()]
        async with httpx.AsyncClient(timeout=HTTP_SECONDS, headers={
                FORWARDED_HEADER: "1", **({"Authorization": self.auth} if self.auth else {})
        }) as client:
            answer = await client.get(f"{self.peers[0]}/v1/tokens")
            if answer.status_code >= 400:
                raise error_of(answer, f"{self.peers[0]}: ")
            found: list[dict[str, Any]] = answer.json()["tokens"]
            return found


class TokenResolver:
    """The scope of a bearer token that is not the admin token (None: unknown): this host's
    store, or on a gateway the shards' answer (cached :data:`INTROSPECT_SECONDS`)."""

    def __init__(self, settings: Settings) -> None:
        self.store = token_store(settings)
        shards = settings.shard_map()
        self.shards = [] if shards is None else [u for _, u in sorted(shards.shards.items())]
        self._cache: dict[str, tuple[float, Scope | None]] = {}

    async def __call__(self, token: str) -> Scope | None:
        if self.store is not None:
            return await asyncio.to_thread(self.store.scope_of, token)
        key = digest(token)
        known = self._cache.get(key)
        if known is not None and time.monotonic() - known[0] < INTROSPECT_SECONDS:
            return known[1]
        scope = await self._introspect(token)
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[key] = (time.monotonic(), scope)
        return scope

    async def _introspect(self, token: str) -> Scope | None:
        headers = {"Authorization": f"Bearer {token}", FORWARDED_HEADER: "1"}
        async with httpx.AsyncClient(timeout=HTTP_SECONDS, headers=headers) as client:
            for url in self.shards:
                try:
                    answer = await client.get(f"{url}/v1/tokens/self")
                except httpx.HTTPError:
                    continue  # that shard is down: ask the next
                if answer.status_code != 200:
                    return None
                data = answer.json()
                if data.get("admin"):
                    return None  # the admin token is checked locally, never by a shard's word
                return Scope(frozenset(data["minds"]), bool(data["read_only"]),
                             str(data["token_id"]))
        return None
