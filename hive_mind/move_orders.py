"""Where a mind moving between shards may be sent (issue #45): only where the operator's
configuration says.

A ``release`` names the receiving shard; its URL is taken from this host's shard map, or from
a *move order* signed with the deployment key (``HIVE_MIND_CLUSTER_KEY``) by
``hive-mind cluster rebalance`` from the new map it was given (:func:`sign_order`). A URL a
client merely states is never used: with the API token alone, a caller can move a mind only to
a shard this host already knows, at the URL it knows. Afterwards the departed mind's requests
(with each caller's ``Authorization``) go to that URL only (:func:`departure_url`); a departure
recorded before this rule, naming a shard outside the map, is not followed. A released mind's
copy is deleted only once the new owner answers that it holds the mind fenced for itself
(:func:`confirm_arrival`): a release then retire alone can never destroy a mind.
"""

from __future__ import annotations

import time

import httpx

from actors.moves import MOVE_ORDER, ORDER_SECONDS, Authority, Departure, order_payload
from actors.placement import ShardMap, ShardMapError, parse_shards
from hive_mind.forwarding import stamp
from hive_mind.tokens import ForbiddenError
from mind.errors import ConflictError, ValidationError
from mind.storage.fencing import FencedError
from vocabulary.signing import sign, verify


def sign_order(key: str, mind_id: str, to: str, epoch: int, url: str) -> dict[str, object]:
    """The ``release`` fields of a signed move order (valid ``ORDER_SECONDS``)."""
    expires = int(time.time()) + ORDER_SECONDS
    return {"to": to, "epoch": epoch, "url": url, "expires": expires,
            "signature": sign(key, MOVE_ORDER, order_payload(mind_id, to, epoch, url, expires))}


def authorize(key: str | None, shards: ShardMap, mind_id: str, to: str, epoch: int,
              url: str | None, expires: int | None, signature: str | None
              ) -> tuple[str, Authority]:
    """The URL ``mind_id`` may be released to, and what authorized it; ForbiddenError for a
    shard or URL the operator's configuration does not name."""
    if signature is not None:
        if url is None or expires is None:
            raise ValidationError("a signed move order carries its url and expires")
        if expires < time.time():
            raise ForbiddenError("the move order expired: run the rebalance again")
        if not verify(key, MOVE_ORDER, order_payload(mind_id, to, epoch, url, expires),
                      signature):
            raise ForbiddenError("the move order's signature does not verify with this "
                                 "host's HIVE_MIND_CLUSTER_KEY")
        try:
            parse_shards(f"{to}={url}")
        except ShardMapError as exc:
            raise ValidationError(str(exc)) from None
        return url, "order"
    mapped = shards.shards.get(to)
    if mapped is None:
        raise ForbiddenError(
            f"{to} is not in this host's shard map: a move to a shard outside it needs a move "
            "order signed with HIVE_MIND_CLUSTER_KEY (`hive-mind cluster rebalance` signs "
            "them when the key is set on the hosts and in its environment)")
    if url is not None and url.rstrip("/") != mapped:
        raise ForbiddenError(f"that is not the URL this host's shard map names for {to}")
    return mapped, "map"


def departure_url(shards: ShardMap, gone: Departure) -> str:
    """Where a departed mind's requests go: the signed order's URL, else the shard map's;
    FencedError for a departure neither authorized."""
    if gone.authorized == "order":
        return gone.url
    mapped = shards.shards.get(gone.to)
    if mapped is not None:
        return mapped
    raise FencedError(
        f"mind {gone.mind_id} was released to {gone.to} at a URL this host's configuration "
        f"does not name: cancel the departure (DELETE /v1/cluster/minds/<id>/release) or run "
        f"this host with a shard map naming {gone.to}", owner=gone.to)


CONFIRM_SECONDS = 10.0


async def confirm_arrival(url: str, gone: Departure) -> None:
    """ConflictError unless the host at ``url`` holds ``gone``'s mind, fenced for
    ``gone.to`` (asked with the caller's own credentials)."""
    where = f"{url}/v1/cluster/minds"
    try:
        async with httpx.AsyncClient(timeout=CONFIRM_SECONDS,
                                     event_hooks={"request": [stamp]}) as client:
            answer = await client.get(where)
            rows = answer.json().get("minds", []) if answer.status_code == 200 else []
    except (httpx.HTTPError, ValueError, AttributeError):
        rows = []
    if not any(_holds(row, gone) for row in rows):
        raise ConflictError(f"{gone.to} does not hold {gone.mind_id} yet: admit it there "
                            "before retiring this copy (or cancel the release)")


def _holds(row: object, gone: Departure) -> bool:
    """A holdings row of ``gone``'s mind: a file fenced for ``gone.to`` at its epoch or later."""
    if not isinstance(row, dict) or row.get("mind_id") != gone.mind_id or "bytes" not in row:
        return False
    fence = row.get("fence")
    return isinstance(fence, dict) and fence.get("shard") == gone.to and isinstance(
        fence.get("epoch"), int) and fence["epoch"] >= gone.epoch
