"""JSON Schema → Markdown: the type, default and properties table of a schema, as the
generated references show them (OpenAPI bodies, MCP tool arguments, settings).

Pure functions over plain JSON data. ``link`` turns a ``$ref``'s name into the text shown for
it (a Markdown link in docs/http.md); without it the name is shown in backticks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

Link = Callable[[str], str]
Schema = Mapping[str, Any]


def cell(text: str) -> str:
    """``text`` fit for one Markdown table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def slug(title: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def _ref_name(schema: Schema) -> str:
    return str(schema["$ref"]).rsplit("/", 1)[-1]


def _value(value: Any) -> str:
    return f"`{value}`" if isinstance(value, str) else f"`{json.dumps(value)}`"


def _number(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _bounds(schema: Schema) -> list[str]:
    """The constraints a schema puts on a value, as short phrases."""
    out = []
    low, high = schema.get("minLength"), schema.get("maxLength")
    if low is not None or high is not None:
        out.append(f"at least {low} characters" if high is None
                   else f"at most {high} characters" if not low else f"{low}–{high} characters")
    for key, sign in (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"),
                      ("exclusiveMaximum", "<")):
        if key in schema:
            out.append(f"{sign} {_number(schema[key])}")
    if "maxItems" in schema:
        out.append(f"at most {schema['maxItems']} items")
    if "pattern" in schema:
        out.append(f"pattern `{schema['pattern']}`")
    return out


def _base(schema: Schema, link: Link | None) -> str:
    """The type of one non-union schema, without its bounds."""
    if "$ref" in schema:
        name = _ref_name(schema)
        return link(name) if link else f"`{name}`"
    if "enum" in schema:
        return "one of " + ", ".join(_value(v) for v in schema["enum"])
    if "const" in schema:
        return _value(schema["const"])
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        if isinstance(items, Mapping) and "enum" in items:
            return "list of " + ", ".join(_value(v) for v in items["enum"])
        return "list of " + (type_text(items, link) if isinstance(items, Mapping) else "any")
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping) and extra:
            return "object of " + type_text(extra, link)
        return "object"
    fmt = schema.get("format")
    if kind == "string" and fmt == "password":
        return "secret string"
    if kind == "string" and (fmt == "binary" or "contentMediaType" in schema):
        return "file"
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    if kind is None:
        return "any"
    return f"{kind} ({fmt})" if fmt else str(kind)


def type_text(schema: Schema, link: Link | None = None) -> str:
    """``integer (≥ 1, ≤ 4096)``, ``string or null``, ``list of one of `a`, `b```, a link …"""
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [o for o in schema[key] if o.get("type") != "null"]
            parts = list(dict.fromkeys(type_text(o, link) for o in options))
            nullable = len(options) < len(schema[key])
            return " or ".join(parts + (["null"] if nullable else []))
    if "allOf" in schema and len(schema["allOf"]) == 1:
        return type_text(schema["allOf"][0], link)
    bounds = _bounds(schema)
    base = _base(schema, link)
    return f"{base} ({', '.join(bounds)})" if bounds else base


def default_text(schema: Schema) -> str:
    """The schema's default in backticks, or '' when it has none."""
    return _value(schema["default"]) if "default" in schema else ""


def properties_table(schema: Schema, link: Link | None = None) -> list[str]:
    """A Markdown table of an object schema's properties: name, type, required, default,
    description (in the schema's order)."""
    properties: Mapping[str, Schema] = schema.get("properties", {})
    if not properties:
        return []
    required = set(schema.get("required", ()))
    rows = ["| field | type | required | default | description |", "|---|---|---|---|---|"]
    for name, prop in properties.items():
        rows.append(f"| `{name}` | {cell(type_text(prop, link))} | "
                    f"{'yes' if name in required else ''} | {cell(default_text(prop))} | "
                    f"{cell(str(prop.get('description', '')))} |")
    return rows
