"""Which network addresses the URL fetcher may connect to (no SSRF through URL ingest).

A fetch connects only to public unicast addresses. Refused: loopback, private (RFC 1918,
fc00::/7), link-local (169.254/16 with the cloud metadata service at 169.254.169.254,
fe80::/10), unspecified, multicast, reserved, documentation and benchmark ranges, CGNAT
100.64/10, deprecated site-local fec0::/10, and IPv6 forms that carry one of those IPv4
addresses (IPv4-mapped ``::ffff:a.b.c.d``, IPv4-compatible ``::a.b.c.d``, 6to4 ``2002::/16``,
NAT64 ``64:ff9b::/96``). A host written as a number in any form ``inet_aton`` reads
(``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``127.1``) is the address it spells and never goes
to a resolver; an all-numeric host that spells no address is refused.

:func:`vetted_addresses` resolves a name and returns its addresses only when every one of them
is allowed; :mod:`mind.harvest.fetch` connects to exactly those, on every redirect hop, so a
name cannot answer a public address to the check and a private one to the connection (DNS
rebinding).

:class:`FetchPolicy` ``allow_private=True`` lifts the address rule (setting
``fetch_private_addresses``, env ``HIVE_MIND_FETCH_PRIVATE_ADDRESSES``); the scheme rule, the
redirect limit and the deadline stay. :func:`configure` sets the process default, which the
facade does from its settings when it opens; a caller may pass a policy instead. ``resolver``
is the name lookup (``socket.getaddrinfo`` by default; tests give their own).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from mind.harvest.errors import HarvestError

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Sequence[str]]

ALLOW_HINT: Final = "set HIVE_MIND_FETCH_PRIVATE_ADDRESSES=true to allow private addresses"
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")
_CGNAT: Final = ipaddress.IPv4Network("100.64.0.0/10")
_NUMBER: Final = re.compile(r"^(?:[0-9]+|0x[0-9a-f]*)$", re.I)


def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``getaddrinfo`` gives for ``host`` (TCP), in its order, without repeats."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class BlockedAddressError(HarvestError):
    """A host that is, or resolves to, an address the policy refuses."""

    def __init__(self, host: str, address: Address, reason: str) -> None:
        inner = _embedded_ipv4(address)
        shown = f"{address}, i.e. {inner}" if inner is not None else str(address)
        if _literal(host) is None:
            what = f"{host} resolves to {reason} address ({shown})"
        else:
            what = f"{host} is {reason} address" + ("" if shown == host else f" ({shown})")
        super().__init__(f"refusing to fetch: {what}; {ALLOW_HINT}")
        self.host, self.address, self.blocked = host, address, reason


def _embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv4-mapped, 6to4 or NAT64 address reaches (None otherwise)."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None or address.sixtofour is not None:
        return address.ipv4_mapped or address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def blocked_reason(address: Address) -> str | None:
    """Why ``address`` is off limits (``"a loopback"``, ``"a private"``, …), or None. An IPv6
    address carrying an IPv4 one is judged by that IPv4 address (it is where packets go);
    IPv4-compatible ``::a.b.c.d`` is reserved and refused."""
    inner = _embedded_ipv4(address)
    if inner is not None:
        return blocked_reason(inner)
    checks = (
        (address.is_unspecified, "an unspecified"), (address.is_loopback, "a loopback"),
        (address.is_link_local, "a link-local"), (address.is_multicast, "a multicast"),
        (isinstance(address, ipaddress.IPv4Address) and address in _CGNAT, "a shared (CGNAT)"),
        (isinstance(address, ipaddress.IPv6Address) and address.is_site_local, "a site-local"),
        (address.is_private, "a private"), (address.is_reserved, "a reserved"),
        (not address.is_global, "a non-public"),
    )
    return next((reason for hit, reason in checks if hit), None)


@dataclass(frozen=True, slots=True)
class FetchPolicy:
    """``allow_private`` lifts the address rule; ``resolver`` looks names up; ``classify``
    says why an address is refused (tests swap it to let one loopback address pass as
    public, so that a redirect from it can be refused by the real rule)."""

    allow_private: bool = False
    resolver: Resolver = system_resolver
    classify: Callable[[Address], str | None] = blocked_reason


_default = FetchPolicy()


def configure(*, allow_private: bool) -> None:
    """Set the process-wide default policy (the facade calls this at open from its settings)."""
    global _default
    _default = FetchPolicy(allow_private=allow_private)


def default_policy() -> FetchPolicy:
    return _default


def numeric_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address a host ending in a number spells, read like ``inet_aton`` and the WHATWG URL
    parser do (1–4 parts, each decimal, ``0``-octal or ``0x``-hex, the last filling the
    remaining bytes); None for a name. Such a host that spells no address is refused."""
    parts = host[:-1].split(".") if host.endswith(".") else host.split(".")
    if not _NUMBER.match(parts[-1]):
        return None
    try:
        if len(parts) > 4 or not all(_NUMBER.match(p) for p in parts):
            raise ValueError
        values = [int(p[2:] or "0", 16) if p[:2].lower() == "0x"
                  else int(p, 8) if len(p) > 1 and p.startswith("0") else int(p, 10)
                  for p in parts]
        *head, last = values
        if any(v > 255 for v in head) or last >= 256 ** (4 - len(head)):
            raise ValueError
    except ValueError:
        raise HarvestError(f"{host!r} is neither a host name nor an IPv4 address") from None
    value = last
    for i, part in enumerate(head):
        value |= part << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


def _literal(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return numeric_ipv4(host)


def check_literal(host: str, policy: FetchPolicy | None = None) -> None:
    """Refuse a host written as a blocked address, without any lookup."""
    policy = policy or _default
    address = _literal(host)
    if address is not None and not policy.allow_private:
        reason = policy.classify(address)
        if reason is not None:
            raise BlockedAddressError(host, address, reason)


def vetted_addresses(host: str, port: int, policy: FetchPolicy | None = None) -> list[str]:
    """The addresses to connect to for ``host``; :class:`BlockedAddressError` when any of them
    is refused (a name answering both public and private addresses is refused whole).
    Lookup failures are ``OSError`` (``socket.gaierror``)."""
    policy = policy or _default
    literal = _literal(host)
    found = [literal] if literal is not None else [
        ipaddress.ip_address(a) for a in policy.resolver(host, port)]
    if not found:
        raise socket.gaierror(f"no address for {host}")
    if not policy.allow_private:
        for address in found:
            reason = policy.classify(address)
            if reason is not None:
                raise BlockedAddressError(host, address, reason)
    return [str(a) for a in found]
