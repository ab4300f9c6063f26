"""Tokens scoped to workspaces: the store (``<data dir>/tokens.json``) and what a token allows.

The API token (``HIVE_MIND_API_TOKEN``) opens every mind, as it always did: it is the *admin*
token. A scoped token opens only the minds it names (``workspace:<id>``, ``personal``), maybe
read-only, maybe until an expiry. It is shown once, when it is made, and stored only as its
SHA-256 (the token carries 256 random bits, so a fast hash is enough): the file, owner-only,
holds ids, hashes, scopes and dates, never a usable token.

A token reads ``hmt_<id>_<secret>``: the id finds its record without a scan, the comparison of
hashes is constant-time. An expired or revoked token is unknown.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from mind.errors import HiveMindError, NotFoundError, ValidationError
from mind.storage.private_files import make_private_dir, write_private_text
from mind.timeutil import now_iso
from vocabulary.ids import PERSONAL_MIND, validate_mind_id

TOKENS_FILE: Final = "tokens.json"
PREFIX: Final = "hmt_"
_TOKEN: Final = re.compile(r"hmt_([0-9a-f]{16})_[A-Za-z0-9_-]{43}")
MAX_MINDS: Final = 1000


class ForbiddenError(HiveMindError):
    """The caller is authenticated but may not do this (a token's scope, a move the operator's
    configuration does not authorize): HTTP 403."""

    code = "forbidden"
    status = 403


@dataclass(frozen=True)
class Scope:
    """What a request may do: everything (the admin token, or no token configured), or the
    minds of a scoped token (reads only when ``read_only``)."""

    minds: frozenset[str] = frozenset()
    read_only: bool = False
    token_id: str | None = None
    admin: bool = False

    def allows(self, mind_id: str) -> bool:
        return self.admin or mind_id in self.minds

    def as_dict(self) -> dict[str, Any]:
        return {"admin": self.admin, "token_id": self.token_id, "minds": sorted(self.minds),
                "read_only": self.read_only}


ADMIN: Final = Scope(admin=True)


@dataclass(frozen=True)
class TokenRecord:
    id: str
    hash: str
    minds: list[str] = field(default_factory=list)
    read_only: bool = False
    expires: str | None = None
    created: str = ""
    label: str | None = None

    def scope(self) -> Scope:
        return Scope(frozenset(self.minds), self.read_only, self.id)

    def shown(self) -> dict[str, Any]:
        """The record as listed: everything but the hash."""
        out = asdict(self)
        del out["hash"]
        return out

    def expired(self) -> bool:
        return self.expires is not None and self.expires <= now_iso()


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii", "replace")).hexdigest()


def mind_ids(names: Iterable[str]) -> list[str]:
    """The minds a token names from workspace ids (``personal``: the personal mind), each
    validated; at least one."""
    out = []
    for name in names:
        ident = name if name == PERSONAL_MIND or name.startswith("workspace:") \
            else f"workspace:{name}"
        try:
            validate_mind_id(ident)
        except ValueError as exc:
            raise ValidationError(f"not a workspace id: {exc}") from None
        out.append(ident)
    if not out or len(out) > MAX_MINDS:
        raise ValidationError(f"a scoped token names 1 to {MAX_MINDS} workspaces")
    return sorted(set(out))


def new_token(minds: list[str], *, read_only: bool = False, expires: str | None = None,
              label: str | None = None) -> tuple[str, TokenRecord]:
    """A new token (shown once) and the record a store keeps of it."""
    ident = secrets.token_hex(8)
    token = f"{PREFIX}{ident}_{secrets.token_urlsafe(32)}"
    return token, TokenRecord(ident, digest(token), minds, read_only, expires, now_iso(), label)


class TokenStore:
    """The scoped tokens of one data dir (re-read when the file changes)."""

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir).expanduser() / TOKENS_FILE
        self._seen: tuple[int, int] | None = None
        self._records: dict[str, TokenRecord] = {}

    def records(self) -> dict[str, TokenRecord]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._seen, self._records = None, {}
            return {}
        key = (st.st_mtime_ns, st.st_size)
        if key != self._seen:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self._records = {r["id"]: TokenRecord(**r) for r in data.get("tokens", [])}
            self._seen = key
        return self._records

    def _save(self, records: dict[str, TokenRecord]) -> None:
        make_private_dir(self.path.parent)
        write_private_text(self.path, json.dumps(
            {"tokens": [asdict(r) for r in records.values()]}, indent=2, sort_keys=True))
        self._seen = None

    def install(self, record: TokenRecord) -> None:
        """Store ``record`` (made here or on another host of the deployment)."""
        records = dict(self.records())
        records[record.id] = record
        self._save(records)

    def revoke(self, token_id: str) -> TokenRecord:
        records = dict(self.records())
        gone = records.pop(token_id, None)
        if gone is None:
            raise NotFoundError(f"no token {token_id}")
        self._save(records)
        return gone

    def scope_of(self, token: str) -> Scope | None:
        """The scope of a live token of this store (None: unknown, revoked or expired)."""
        found = _TOKEN.fullmatch(token)
        record = None if found is None else self.records().get(found.group(1))
        if record is None or not hmac.compare_digest(record.hash, digest(token)):
            return None
        return None if record.expired() else record.scope()
