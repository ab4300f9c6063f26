"""The interactive API docs at ``/docs``: Swagger UI served from the package, no CDN.

The page, its assets and ``/openapi.json`` are public (:data:`PUBLIC_PATHS`: a browser opening
``/docs`` sends no token), like the code they describe; every API call made from the page
still needs one — Swagger's *Authorize* button takes the bearer token (the schema declares
it), kept in the page's memory only (not stored in the browser). The Host/Origin guard covers
these paths like every other.

Swagger UI (``swagger-ui-dist``, Apache-2.0; name, version and licence in THIRD_PARTY.md) is
vendored in ``static/swagger-ui``: the bundle, its stylesheet and icon, its licence files.
The page loads only from this server (its Content-Security-Policy: scripts and styles from
'self', no inline script — the start-up script is ``static/docs-init.js`` —, connections to
'self', no framing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from fastapi import APIRouter, FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse, HTMLResponse, Response

STATIC: Final = Path(__file__).parent / "static"
SWAGGER: Final = STATIC / "swagger-ui"
DOCS_PATH: Final = "/docs"
ASSETS: Final = {  # served name: (file, media type)
    "swagger-ui-bundle.js": (SWAGGER / "swagger-ui-bundle.js", "text/javascript"),
    "swagger-ui.css": (SWAGGER / "swagger-ui.css", "text/css"),
    "favicon-32x32.png": (SWAGGER / "favicon-32x32.png", "image/png"),
    "docs-init.js": (STATIC / "docs-init.js", "text/javascript"),
}
PUBLIC_PATHS: Final = (DOCS_PATH, "/openapi.json", *(f"{DOCS_PATH}/{n}" for n in ASSETS))
CSP: Final = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
              "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; "
              "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS: Final = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                  "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"}
BEARER: Final = "bearer"

# relative URLs: the page works under a reverse proxy's path prefix too
PAGE: Final = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hive-mind API</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
<link rel="icon" type="image/png" href="docs/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/docs-init.js"></script>
</body>
</html>
"""

router = APIRouter(include_in_schema=False)


@router.get(DOCS_PATH)
async def docs_page() -> HTMLResponse:
    return HTMLResponse(PAGE, headers={**HEADERS, "Cache-Control": "no-cache"})


@router.get(DOCS_PATH + "/{name}")
async def docs_asset(name: str) -> Response:
    found = ASSETS.get(name)
    if found is None:
        return Response(status_code=404, headers=HEADERS)
    path, media_type = found
    return FileResponse(path, media_type=media_type,
                        headers={**HEADERS, "Cache-Control": "public, max-age=86400"})


def install(app: FastAPI, public: tuple[str, ...]) -> None:
    """Serve the docs on ``app`` (created with ``docs_url=None, redoc_url=None``) and make its
    schema declare the bearer token (every operation but the ``public`` paths needs it), so
    that Swagger's Authorize sends it."""
    app.include_router(router)

    def schema() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = get_openapi(title=app.title, version=app.version,
                               description=app.description, routes=app.routes)
            spec.setdefault("components", {})["securitySchemes"] = {
                BEARER: {"type": "http", "scheme": "bearer",
                         "description": "HIVE_MIND_API_TOKEN or a scoped token"}}
            spec["security"] = [{BEARER: []}]
            for path, operations in spec.get("paths", {}).items():
                if path in public:
                    for operation in operations.values():
                        operation["security"] = []
            app.openapi_schema = spec
        return app.openapi_schema

    app.openapi = schema  # type: ignore[method-assign]
