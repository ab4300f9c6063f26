"""``/docs`` on a server with a token: the page, its assets and the schema load without the
token and from the server alone (no CDN: it works offline), under a strict CSP; every API
call still needs the token, and the Host guard covers the docs too."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urljoin

import httpx
import pytest

from hive_mind.api.docs_page import ASSETS, SWAGGER
from tests.http_server import running_server, server_settings
from tests.procs import ROOT

pytestmark = pytest.mark.integration
TOKEN = "docs-token"


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    data = tmp_path_factory.mktemp("docs") / "data"
    with running_server(server_settings(data, api_token=TOKEN)) as url, \
            httpx.Client(base_url=url, timeout=30) as client:
        yield client


def test_the_page_and_everything_it_loads_come_without_a_token(http: httpx.Client) -> None:
    page = http.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self';" in csp
    assert "connect-src 'self'" in csp and "frame-ancestors 'none'" in csp
    loaded = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert loaded and all("//" not in url for url in loaded), loaded  # nothing from elsewhere
    assert "<script>" not in page.text  # no inline script: the CSP allows none
    for url in loaded:
        asset = http.get(urljoin(str(http.base_url.join("/docs")), url))
        assert asset.status_code == 200, url
        assert asset.headers["x-content-type-options"] == "nosniff"
    init = http.get("/docs/docs-init.js").text
    assert "openapi.json" in init and "SwaggerUIBundle(" in init


def test_the_schema_declares_the_token_for_swaggers_authorize(http: httpx.Client) -> None:
    spec = http.get("/openapi.json")
    assert spec.status_code == 200
    body = spec.json()
    assert body["components"]["securitySchemes"]["bearer"] == {
        "type": "http", "scheme": "bearer", "description": "HIVE_MIND_API_TOKEN or a scoped token"}
    assert body["security"] == [{"bearer": []}]
    assert body["paths"]["/healthz"]["get"]["security"] == []
    assert "/docs" not in body["paths"]


def test_api_calls_still_need_the_token(http: httpx.Client) -> None:
    assert http.get("/v1/stats").status_code == 401
    assert http.post("/v1/recall", json={"query": "x"}).status_code == 401
    assert http.get("/docs/swagger-ui.css.map").status_code == 401  # only the listed assets
    assert http.get("/docs/..%2Fv1%2Fstats").status_code == 401
    assert http.get("/redoc").status_code == 401  # no CDN page either
    ok = http.get("/v1/stats", headers={"Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200


def test_the_host_guard_covers_the_docs(http: httpx.Client) -> None:
    assert http.get("/docs", headers={"Host": "attacker.example"}).status_code == 421
    cross = http.get("/openapi.json", headers={"Origin": "https://attacker.example"})
    assert cross.status_code == 403


def test_the_vendored_swagger_ui_is_listed_with_its_licence() -> None:
    third_party = (ROOT / "THIRD_PARTY.md").read_text(encoding="utf-8")
    version = re.search(r"swagger-ui-dist\]\([^)]*\) \| ([\d.]+) \| Apache-2.0", third_party)
    assert version, third_party
    bundle = (SWAGGER / "swagger-ui-bundle.js").read_text(encoding="utf-8")
    assert f'PACKAGE_VERSION:"{version.group(1)}"' in bundle  # the version listed is the one here
    assert "Apache License" in (SWAGGER / "LICENSE").read_text(encoding="utf-8")
    assert all(path.is_file() for path, _ in ASSETS.values())
    assert {p.name for p in SWAGGER.iterdir()} == {
        "swagger-ui-bundle.js", "swagger-ui-bundle.js.LICENSE.txt", "swagger-ui.css",
        "favicon-32x32.png", "LICENSE", "NOTICE"}


def test_the_docs_files_are_package_data() -> None:
    """An installed hive-mind (a wheel, no checkout) serves the same files."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["hive_mind.api"]
    package = ROOT / "hive_mind" / "api"
    shipped = {path for pattern in globs for path in package.glob(pattern)}
    assert {path for path, _ in ASSETS.values()} <= shipped
    assert {SWAGGER / "LICENSE", SWAGGER / "NOTICE"} <= shipped
