"""The deployment key's one signing rule (stdlib only).

``HIVE_MIND_CLUSTER_KEY`` is a secret the hosts, workers and the operator's cluster commands of
one deployment share — never its API clients. What it signs is a small JSON object with a
*purpose* label (a move order, a destructive write-op), so a signature made for one purpose
never verifies for another: HMAC-SHA256 over the purpose, a NUL and the object as canonical
JSON (sorted keys, no spaces), as 64 lowercase hex digits. Verification is constant-time.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Final

SIGNATURE_CHARS: Final = 64


def sign(key: str, purpose: str, payload: Mapping[str, object]) -> str:
    """The signature of ``payload`` for ``purpose`` under ``key``."""
    text = json.dumps(dict(payload), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    message = purpose.encode("ascii") + b"\x00" + text.encode("ascii")
    return hmac.new(key.encode("utf-8"), message, hashlib.sha256).hexdigest()


def verify(key: str | None, purpose: str, payload: Mapping[str, object],
           signature: object) -> bool:
    """Is ``signature`` the signature of ``payload`` for ``purpose`` under ``key``? (No key,
    or a signature that is not 64 hex digits: False.)"""
    if not key or not isinstance(signature, str) or len(signature) != SIGNATURE_CHARS:
        return False
    return hmac.compare_digest(sign(key, purpose, payload), signature)
