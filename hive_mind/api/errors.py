"""Exception handlers: every error leaves as ``{"error": {"code", "message"}}`` with the
HTTP status of its code (:mod:`hive_mind.api.codes`); unexpected ones as ``internal`` (500)
without a traceback (it goes to the log)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pydantic
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from hive_mind.api.codes import INTERNAL, error_body, retry_after_for, status_for
from mind.errors import HiveMindError

log = logging.getLogger(__name__)

_HTTP_CODES = {400: "invalid", 401: "unauthorized", 404: "not_found", 405: "method_not_allowed",
               408: "timeout", 413: "too_large", 422: "invalid"}


def error_response(code: str, message: str, status: int | None = None,
                   headers: Mapping[str, str] | None = None, **extra: Any) -> JSONResponse:
    return JSONResponse(error_body(code, message, **extra), status_code=status or status_for(code),
                        headers=headers)


def _where(loc: tuple[Any, ...] | list[Any]) -> str:
    return ".".join(str(part) for part in loc)


async def _hive_mind_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HiveMindError)
    code = exc.code  # a RemoteError passed on from a shard has its server's code
    status, retry = status_for(code), retry_after_for(code)
    if status >= 500:  # a retryable refusal (a shard down) is the caller's to retry
        log.log(logging.WARNING if retry else logging.ERROR, "%s %s failed: %s: %s",
                request.method, request.url.path, code, exc)
    details = getattr(exc, "details", None)  # e.g. a quota's tier, quota and count
    extra = {"details": details()} if callable(details) else {}
    return error_response(code, str(exc) or code, status,
                          headers=None if retry is None else {"Retry-After": str(retry)}, **extra)


async def _request_validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    details = [{"loc": _where(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type")}
               for e in exc.errors()]
    message = "; ".join(f"{d['loc']}: {d['msg']}" for d in details[:5]) or "invalid request"
    return error_response("invalid", message, 422, details=details)


async def _pydantic_error(request: Request, exc: Exception) -> JSONResponse:
    """Op schemas (queue_schemas) refusing a value the request models let through."""
    assert isinstance(exc, pydantic.ValidationError)
    details = [{"loc": _where(e["loc"]), "msg": e["msg"], "type": e["type"]}
               for e in exc.errors()]
    message = "; ".join(f"{d['loc']}: {d['msg']}" for d in details[:5]) or "invalid value"
    return error_response("invalid", message, 400, details=details)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    code = _HTTP_CODES.get(exc.status_code, f"http_{exc.status_code}")
    message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
    return error_response(code, message, exc.status_code, headers=exc.headers)


MAY_HAVE_APPLIED = ("it may have been applied before the failure: retry with the same "
                    "idempotency key (idempotency_key, or the Idempotency-Key header) to apply "
                    "it exactly once, or check before repeating it")


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("%s %s: unexpected error", request.method, request.url.path, exc_info=exc)
    message = "internal server error"
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        message += f" during a write; {MAY_HAVE_APPLIED}"
    return error_response(INTERNAL, message, 500)


def install(app: FastAPI) -> None:
    app.add_exception_handler(HiveMindError, _hive_mind_error)
    app.add_exception_handler(RequestValidationError, _request_validation)
    app.add_exception_handler(pydantic.ValidationError, _pydantic_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
