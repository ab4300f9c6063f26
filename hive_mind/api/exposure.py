"""Who may serve without a token: the rule ``serve`` checks before it binds a socket.

On a loopback address only the user's own machine reaches the API, so the token is optional
(the Host/Origin guard, :mod:`hive_mind.api.guard`, keeps web pages out). On any other address
(``0.0.0.0``, ``::``, a LAN IP, a host name) whoever reaches the port would read, write and
delete every mind: ``HIVE_MIND_API_TOKEN`` is required there, unless ``--insecure-no-auth``
(env ``HIVE_MIND_API_INSECURE_NO_AUTH``) says otherwise, which is logged as a warning.
:func:`create_app` applies the rule, so every way to start the API (``hive-mind serve``,
``python -m hive_mind.server``, an embedding application) is held to it.
"""

from __future__ import annotations

from hive_mind.server_reads import is_loopback
from hive_mind.settings import Settings
from mind.errors import ConfigurationError

WILDCARD_BINDS = frozenset({"", "*", "0.0.0.0", "::", "[::]"})


def is_wildcard(bind_host: str) -> bool:
    """``0.0.0.0`` / ``::``: every interface of the machine."""
    return bind_host.strip().lower() in WILDCARD_BINDS


def api_token(settings: Settings) -> str | None:
    if settings.security.api_token is None:
        return None
    return settings.security.api_token.get_secret_value() or None


def check_exposure(settings: Settings, bind_host: str) -> str | None:
    """Raise :class:`ConfigurationError` when ``bind_host`` is beyond loopback and no token is
    set; return the warning to log when ``api_insecure_no_auth`` overrides that, else None."""
    if is_loopback(bind_host) or api_token(settings) is not None:
        return None
    if settings.security.insecure_no_auth:
        return (f"INSECURE: serving on {bind_host or '*'} WITHOUT authentication "
                f"(--insecure-no-auth / HIVE_MIND_API_INSECURE_NO_AUTH): anyone who can reach "
                f"this address can read, write and delete every mind")
    raise ConfigurationError(
        f"refusing to serve on {bind_host or '*'} without an API token: anyone who can reach "
        f"that address could read and write every mind. Set HIVE_MIND_API_TOKEN (printable "
        f"ASCII, e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))'), listen on "
        f"127.0.0.1, or pass --insecure-no-auth (env HIVE_MIND_API_INSECURE_NO_AUTH=true) to "
        f"accept the risk")
