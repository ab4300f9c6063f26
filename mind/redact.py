"""Secrets out of URLs before they are shown, stored or logged (stdlib only).

:func:`mask_url` replaces a URL's userinfo (``user:pass@``, or a token given as the user name)
and the values of query / fragment parameters whose names look secret (``api_key``, ``token``,
``sig``, ``password`` …, see :func:`is_secret_name`) with ``***``; the rest stays as written so
the URL is still recognisable. It works on the text, never raising on a malformed URL.
:func:`mask_text` does the same to every URL inside free text (error messages, log lines);
:func:`has_secrets` tells whether a URL carries anything to mask (such a URL cannot be stored
as given, so it is never re-fetched later). :class:`RedactingFilter` masks log records.

Used by ``Settings.redacted()`` (``hive-mind status``), the harvest driver (run and source
rows, summaries, errors) and the process log configuration.
"""

from __future__ import annotations

import logging
import re
from typing import Final
from urllib.parse import unquote_plus

MASK: Final = "***"
_EXACT: Final = frozenset({
    "key", "sig", "auth", "pass", "pwd", "session", "sessionid", "sid", "jwt", "bearer",
    "authorization", "hmac", "otp",
})
_SUFFIXES: Final = ("token", "secret", "password", "passwd", "signature", "apikey",
                    "accesskey", "secretkey", "privatekey", "credential", "credentials")
_URL: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>`]+")
_AUTHORITY_END: Final = re.compile(r"[/?#]")


def is_secret_name(name: str) -> bool:
    """``api_key``, ``X-Amz-Signature``, ``access_token``, ``sig``, ``password`` … (compared
    without case, ``-`` or ``_``)."""
    norm = re.sub(r"[^a-z0-9]", "", unquote_plus(name).lower())
    return norm in _EXACT or norm.endswith(_SUFFIXES)


def _mask_params(params: str) -> str:
    out = []
    for part in re.split(r"([&;])", params):  # separators kept: odd items
        name, eq, value = part.partition("=")
        out.append(f"{name}={MASK}" if eq and value and is_secret_name(name) else part)
    return "".join(out)


def mask_url(url: str) -> str:
    """``url`` with its userinfo and secret-looking parameter values replaced by ``***``."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    end = _AUTHORITY_END.search(rest)
    authority, tail = (rest[:end.start()], rest[end.start():]) if end else (rest, "")
    if "@" in authority:
        authority = f"{MASK}@{authority.rsplit('@', 1)[1]}"
    tail, hash_, fragment = tail.partition("#")
    path, question, query = tail.partition("?")
    if question:
        query = _mask_params(query)
    if hash_ and "=" in fragment:  # OAuth implicit flow: #access_token=…
        fragment = _mask_params(fragment)
    return f"{scheme}://{authority}{path}{question}{query}{hash_}{fragment}"


def has_secrets(url: str) -> bool:
    return mask_url(url) != url


def mask_text(text: str) -> str:
    """Every URL inside ``text`` masked (see :func:`mask_url`)."""
    return _URL.sub(_mask_match, text) if "://" in text else text


def _mask_match(match: re.Match[str]) -> str:
    url = match.group(0)
    core = url.rstrip(".,:;)]}")  # sentence punctuation after a URL is not part of it
    return mask_url(core) + url[len(core):]


class RedactingFilter(logging.Filter):
    """Masks URLs in a log record's final message (installed on handlers and on the HTTP
    client loggers by the process log configuration)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format: leave it to the handler's own error path
            return True
        masked = mask_text(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True
