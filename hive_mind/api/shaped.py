"""Routes that answer with the facade's JSON as it is and document its shape.

A route's return annotation is a shape of :mod:`hive_mind.shapes` (mypy checks that the
facade's answer is one). FastAPI would make it the ``response_model`` and re-validate each
answer against it — which rewrites the JSON (an integer in a ``float`` field becomes ``1.0``,
a key the type does not list is dropped) and costs a walk of every answer. :class:`ShapedRoute`
instead serializes the answer as it is (as for a plain ``dict``) and shows the shape in the
OpenAPI schema as the route's success response.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Response
from fastapi.datastructures import DefaultPlaceholder
from fastapi.dependencies.utils import get_typed_return_annotation
from fastapi.routing import APIRoute


class ShapedRoute(APIRoute):
    """An :class:`~fastapi.routing.APIRoute` whose shape documents its answer (see the module
    docstring); a route that returns a ``Response`` or names no shape is left as it is."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **options: Any) -> None:
        shape = options.get("response_model")
        if shape is None or isinstance(shape, DefaultPlaceholder):
            shape = get_typed_return_annotation(endpoint)
        if isinstance(shape, type) and issubclass(shape, Response):
            shape = None
        if shape is not None:
            status = options.get("status_code")
            code = 200 if status is None or isinstance(status, DefaultPlaceholder) else status
            options["responses"] = {**(options.get("responses") or {}),
                                    code: {"model": shape}}
            options["response_model"] = Any  # serialized as it is, like a plain dict
        super().__init__(path, endpoint, **options)


def shaped_router(**options: Any) -> APIRouter:
    """An :class:`~fastapi.APIRouter` of :class:`ShapedRoute` routes."""
    return APIRouter(route_class=ShapedRoute, **options)
