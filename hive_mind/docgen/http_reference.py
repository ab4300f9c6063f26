"""``docs/http.md`` from the HTTP API's OpenAPI schema: every route with its method, parameters,
request body and responses, the error statuses, and every model the schema names.

The app is built as ``hive-mind serve`` builds it (:func:`hive_mind.api.app.create_app`), with
default settings constructed without reading the environment and no facade: the schema is
the same on every machine and nothing is opened.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from hive_mind.docgen import DOCS, generated_note
from hive_mind.docgen.schema_text import cell, properties_table, slug, type_text

DOC = DOCS / "http.md"
COMMAND = "python -m hive_mind.docgen"
TEST = "tests/test_reference_docs.py"
METHODS = ("get", "post", "put", "patch", "delete")

INTRO = """\
`hive-mind serve` serves this API (default `http://127.0.0.1:8765`); the running server also
publishes the schema at `/openapi.json` and interactive docs at `/docs` (Swagger UI served by
the server itself, works offline). The MCP server is mounted at `/mcp` (streamable HTTP,
[docs/mcp.md](mcp.md)).

- **Auth.** With `HIVE_MIND_API_TOKEN` set, every request needs `Authorization: Bearer
  <token>`, except `/healthz`, `/readyz`, the docs page and `/openapi.json` (and `/metrics`
  with `HIVE_MIND_METRICS_PUBLIC`); on `/docs`, *Authorize* takes the token for the calls.
  Beyond loopback `serve` refuses to start without a token ([docs/security.md](security.md)).
- **Bodies** are JSON (`Content-Type: application/json`) unless the route says otherwise;
  `HIVE_MIND_MAX_REQUEST_BYTES` bounds them.
- **Errors** are `{"error": {"code": "...", "message": "..."}}` with a stable `code` (below).
- **Retries.** `POST /v1/memories` and `POST /v1/awareness` take an idempotency key (the body's
  `idempotency_key` or the `Idempotency-Key` header): a repeat returns the first answer with
  `Idempotent-Replayed: true` and writes nothing.
"""


def openapi() -> dict[str, Any]:
    """The OpenAPI schema of the app ``serve`` runs."""
    from hive_mind.api.app import create_app
    from hive_mind.settings import Settings

    app = create_app(Settings.model_construct(), mcp=False)
    return app.openapi()


def _link(name: str) -> str:
    return f"[`{name}`](#{slug(name)})"


def _text(description: str) -> str:
    """A docstring's reStructuredText literals and roles as Markdown code."""
    return re.sub(r":\w+:`~?([^`]+)`", r"`\1`", description.replace("``", "`")).strip()


def _operations(schema: Mapping[str, Any]) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    for path, item in schema.get("paths", {}).items():
        for method in METHODS:
            if method in item:
                yield method.upper(), path, item[method]


def _body(operation: Mapping[str, Any]) -> list[str]:
    body = operation.get("requestBody")
    if not body:
        return []
    out = []
    for content_type, media in body.get("content", {}).items():
        shape = media.get("schema", {})
        required = "" if body.get("required") else " (optional)"
        out.append(f"Request body{required}, `{content_type}`: {type_text(shape, _link)}\n")
        table = properties_table(shape, _link) if "$ref" not in shape else []
        out += [*table, ""] if table else []
    return out


def _parameters(operation: Mapping[str, Any]) -> list[str]:
    params = operation.get("parameters", [])
    if not params:
        return []
    rows = ["| parameter | in | type | required | description |", "|---|---|---|---|---|"]
    for p in params:
        rows.append(f"| `{p['name']}` | {p['in']} | {cell(type_text(p.get('schema', {}), _link))}"
                    f" | {'yes' if p.get('required') else ''} | "
                    f"{cell(p.get('description', ''))} |")
    return [*rows, ""]


def _responses(operation: Mapping[str, Any]) -> list[str]:
    out, errors = [], []
    for status, response in operation.get("responses", {}).items():
        if not str(status).startswith(("2", "3")):
            errors.append(str(status))
            continue
        shapes = [type_text(media.get("schema", {}), _link)
                  for media in response.get("content", {}).values()]
        answer = f": {', '.join(shapes)}" if shapes else ""
        out.append(f"- `{status}` {response.get('description', '')}{answer}")
    if errors:
        out.append(f"- errors: {', '.join(f'`{s}`' for s in errors)}")
    return ["Responses:\n", *out, ""]


def _operation(method: str, path: str, operation: Mapping[str, Any]) -> list[str]:
    out = [f"### {method} {path}\n"]
    if operation.get("summary"):
        out.append(_text(operation["summary"]) + ".\n" if not operation["summary"].endswith(
            ".") else _text(operation["summary"]) + "\n")
    if operation.get("description"):
        out.append(_text(operation["description"]) + "\n")
    return out + _parameters(operation) + _body(operation) + _responses(operation)


def _errors(schema: Mapping[str, Any]) -> list[str]:
    seen: dict[str, str] = {}
    for _method, _path, operation in _operations(schema):
        for status, response in operation.get("responses", {}).items():
            if not str(status).startswith(("2", "3")):
                seen.setdefault(str(status), response.get("description", ""))
    rows = ["| status | meaning |", "|---|---|"]
    rows += [f"| `{status}` | {cell(seen[status])} |" for status in sorted(seen)]
    return ["## Error statuses\n", "Every error answers an [`ErrorBody`](#errorbody).\n",
            *rows, ""]


def _models(schema: Mapping[str, Any]) -> list[str]:
    out = ["## Models\n"]
    for name, model in schema.get("components", {}).get("schemas", {}).items():
        out.append(f"### {name}\n")
        if model.get("description"):
            out.append(_text(model["description"]) + "\n")
        table = properties_table(model, _link)
        out += [*table, ""] if table else [f"{type_text(model, _link)}\n"]
    return out


def render(schema: Mapping[str, Any] | None = None) -> str:
    """The whole of docs/http.md."""
    schema = openapi() if schema is None else schema
    info = schema.get("info", {})
    parts = [f"# HTTP API ({info.get('title', 'hive-mind')} {info.get('version', '')})\n",
             generated_note(COMMAND, TEST) + "\n", INTRO, "## Routes\n",
             "| method | path | what it does |", "|---|---|---|"]
    operations = list(_operations(schema))
    for method, path, operation in operations:
        anchor = slug(f"{method} {path}")
        parts.append(f"| {method} | [`{path}`](#{anchor}) | "
                     f"{cell(_text(operation.get('summary', '')))} |")
    parts.append("")
    tags: dict[str, list[tuple[str, str, Mapping[str, Any]]]] = {}
    for method, path, operation in operations:
        tags.setdefault((operation.get("tags") or ["other"])[0], []).append(
            (method, path, operation))
    for tag, members in tags.items():
        parts.append(f"## {tag.capitalize()}\n")
        for method, path, operation in members:
            parts += _operation(method, path, operation)
    parts += _errors(schema) + _models(schema)
    return "\n".join(parts).rstrip() + "\n"
