"""What every console page shares: sign-in and sign-out, the static assets, the error page."""

from __future__ import annotations

import hmac
import logging
import secrets
from typing import Annotated, Final

import pydantic
from fastapi import APIRouter, FastAPI, Form, Request
from fastapi.exceptions import RequestValidationError
from starlette.responses import FileResponse, RedirectResponse, Response

from hive_mind.api.exposure import api_token
from hive_mind.console.render import HEADERS, HERE, page
from hive_mind.console.sessions import (
    LOGIN_COOKIE,
    PREFIX,
    SESSION_COOKIE,
    SESSION_SECONDS,
    check_csrf,
    is_console,
    set_cookie,
)
from hive_mind.token_admin import TokenResolver
from mind.errors import HiveMindError

log = logging.getLogger(__name__)
STATIC: Final = HERE / "static"
ASSETS: Final = {  # served name: media type
    "console.css": "text/css", "console.js": "text/javascript", "htmx.min.js": "text/javascript",
    "cytoscape.min.js": "text/javascript", "graph.js": "text/javascript",
}
LOGIN_PATH: Final = f"{PREFIX}/login"
PUBLIC_PATHS: Final = frozenset({LOGIN_PATH, *(f"{PREFIX}/static/{n}" for n in ASSETS)})
MAX_TOKEN_CHARS: Final = 512

router = APIRouter(include_in_schema=False)


@router.get(PREFIX)
@router.get(PREFIX + "/")
async def home(request: Request) -> RedirectResponse:
    return RedirectResponse(f"{request.scope.get('root_path', '')}{PREFIX}/search",
                            status_code=303)


@router.get(LOGIN_PATH)
async def login_page(request: Request) -> Response:
    nonce = secrets.token_urlsafe(32)
    needs_token = api_token(request.app.state.settings) is not None
    response = page(request, "login.html", login_csrf=nonce, needs_token=needs_token,
                    error=None)
    set_cookie(response, request, LOGIN_COOKIE, nonce, max_age=3600)
    return response


async def _token_ok(request: Request, given: str) -> bool:
    admin = api_token(request.app.state.settings)
    if admin is None:
        return True
    if hmac.compare_digest(given.encode(), admin.encode()):
        return True
    if not given.isascii() or not given.isprintable():
        return False
    return await TokenResolver(request.app.state.settings)(given) is not None


@router.post(LOGIN_PATH)
async def login(request: Request, csrf: Annotated[str, Form(max_length=100)],
                token: Annotated[str, Form(max_length=MAX_TOKEN_CHARS)] = "") -> Response:
    cookie = request.cookies.get(LOGIN_COOKIE, "")
    if not cookie or not hmac.compare_digest(cookie.encode(), csrf.encode()):
        return page(request, "login.html", status=403, login_csrf=cookie, needs_token=True,
                    error="The sign-in form is out of date: try again.")
    token = token.strip()
    needs_token = api_token(request.app.state.settings) is not None
    if not await _token_ok(request, token):
        log.warning("console sign-in refused: wrong token")
        return page(request, "login.html", status=401, login_csrf=cookie,
                    needs_token=needs_token, error="That token is not valid here.")
    session_id, _ = request.app.state.console_sessions.open(token if needs_token else None)
    response = RedirectResponse(f"{request.scope.get('root_path', '')}{PREFIX}/search",
                                status_code=303, headers={"Cache-Control": "no-store"})
    set_cookie(response, request, SESSION_COOKIE, session_id, max_age=SESSION_SECONDS)
    response.delete_cookie(LOGIN_COOKIE, path=PREFIX)
    return response


@router.post(PREFIX + "/logout")
async def logout(request: Request, csrf: Annotated[str, Form(max_length=100)]) -> Response:
    check_csrf(request, csrf)
    request.app.state.console_sessions.close(request.cookies.get(SESSION_COOKIE))
    response = RedirectResponse(f"{request.scope.get('root_path', '')}{LOGIN_PATH}",
                                status_code=303)
    response.delete_cookie(SESSION_COOKIE, path=PREFIX)
    return response


@router.get(PREFIX + "/static/{name}")
async def asset(name: str) -> Response:
    media_type = ASSETS.get(name)
    if media_type is None:
        return Response(status_code=404, headers=HEADERS)
    return FileResponse(STATIC / name, media_type=media_type,
                        headers={**HEADERS, "Cache-Control": "public, max-age=3600"})


def install_errors(app: FastAPI) -> None:
    """Errors on console paths become the error page; elsewhere the API's JSON stays."""
    for kind in (HiveMindError, RequestValidationError, pydantic.ValidationError):
        api_handler = app.exception_handlers[kind]

        async def handler(request: Request, exc: Exception, api: object = api_handler
                          ) -> Response:
            if not is_console(request.url.path):
                return await api(request, exc)  # type: ignore[operator,no-any-return]
            return error_page(request, exc)

        app.add_exception_handler(kind, handler)


def error_page(request: Request, exc: Exception) -> Response:
    if isinstance(exc, HiveMindError):
        status, message = exc.status, str(exc) or exc.code
    elif isinstance(exc, RequestValidationError):
        status = 422
        message = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ())[1:])}: "
                            f"{e.get('msg', '')}" for e in exc.errors()[:5])
    else:
        status, message = 400, "invalid value"
    return page(request, "error.html", status=status, message=message)
