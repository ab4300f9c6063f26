"""Pages of the console: Jinja2 templates, every value escaped, under a strict CSP.

Every memory is text an attacker may have written (imports come from anywhere), so the
environment escapes every value it prints (``autoescape`` on for every template, no ``|safe``
in them) and shows control and bidi characters as visible code points (``⟨U+202E⟩``), so a
memory cannot reorder what the page around it says. The pages carry no inline script or
style (:data:`CSP`): scripts and styles come from the package's ``static`` folder only.
Pages that show memory content are never cached (``Cache-Control: no-store``).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from jinja2 import Environment, FileSystemLoader
from starlette.requests import Request
from starlette.responses import HTMLResponse

from hive_mind.console.sessions import PREFIX, session_of

HERE: Final = Path(__file__).parent
CSP: Final = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
              "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
HEADERS: Final = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                  "Referrer-Policy": "same-origin", "X-Frame-Options": "DENY",
                  "Cache-Control": "no-store"}
# C0/C1 controls but tab and newline, the line/paragraph separators and the bidi controls
_INVISIBLE: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def visible(value: object) -> object:
    """``value`` with its control and bidi characters shown as ``⟨U+XXXX⟩``."""
    if isinstance(value, str):
        return _INVISIBLE.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", value)
    return value


def when(value: object) -> str:
    """A stored timestamp as ``2026-01-31 14:05`` (UTC), empty for none."""
    if not isinstance(value, str) or not value:
        return ""
    return value[:16].replace("T", " ")


def ago(ns: object) -> str:
    """A file stamp (ns since the epoch) as a UTC time, empty for none."""
    if not isinstance(ns, int) or ns <= 0:
        return ""
    return datetime.fromtimestamp(ns / 1e9, UTC).strftime("%Y-%m-%d %H:%M")


def workspace_of(origin: object) -> str:
    """The workspace id of a result's ``from`` (``workspace:acme`` → ``acme``), else ''."""
    kind, _, ident = str(origin).partition(":")
    return ident if kind == "workspace" else ""


ENV: Final = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True,
                         finalize=visible, trim_blocks=True,
                         lstrip_blocks=True)
ENV.filters["when"] = when
ENV.filters["ago"] = ago
ENV.filters["workspace_of"] = workspace_of


def page(request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
    """``template`` rendered with ``values``, the session's CSRF token and the console's
    base URL (relative to where the server is mounted), with the console's headers."""
    try:
        csrf = session_of(request).csrf
    except Exception:  # the login page: no session yet
        csrf = ""
    base = f"{request.scope.get('root_path', '')}{PREFIX}"
    html = ENV.get_template(template).render(csrf=csrf, base=base, request=request, **values)
    return HTMLResponse(html, status_code=status, headers=HEADERS)
