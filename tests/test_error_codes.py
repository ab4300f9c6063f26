"""Every error class carries its wire code, HTTP status and Retry-After (the one table of
errors), and a client can turn each code the server sends back into the same class."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

from hive_mind.api.codes import (
    ERROR_MODULES,
    error_class,
    exception_for,
    retry_after_for,
    status_for,
)
from mind.errors import HiveMindError, InvalidIdError, NotFoundError

PACKAGES = ("vocabulary", "mind", "actors", "queue_schemas", "workers", "hive_mind")


def _all_error_classes() -> list[type[HiveMindError]]:
    for package in PACKAGES:
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            if not info.name.endswith("__main__"):
                importlib.import_module(info.name)
    found: list[type[HiveMindError]] = []
    todo: list[type[HiveMindError]] = [HiveMindError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return [cls for cls in found if "code" in cls.__dict__ and cls.__module__.split(".")[0]
            in PACKAGES]


def test_each_error_class_has_one_code_a_status_and_a_module_clients_import() -> None:
    classes = _all_error_classes()
    codes = [cls.code for cls in classes]
    assert len(codes) == len(set(codes)), "two classes share a wire code"
    assert [cls for cls in classes if cls.__module__ not in ERROR_MODULES] == []
    for cls in classes:
        assert cls is HiveMindError or 400 <= cls.status < 600, cls
        assert cls.retry_after is None or cls.status == 503, cls
        assert error_class(cls.code) is cls
        assert status_for(cls.code) == cls.status


@pytest.mark.parametrize(("code", "status", "retry"), [
    ("invalid_id", 400, None), ("not_found", 404, None), ("quota_exceeded", 429, None),
    ("fenced", 503, 5), ("not_ready", 503, 2), ("busy", 503, 10), ("timeout", 408, None),
    ("internal", 500, None), ("no_such_code", 500, None),
])
def test_status_and_retry_after_of_a_code(code: str, status: int, retry: int | None) -> None:
    assert (status_for(code), retry_after_for(code)) == (status, retry)


def test_a_code_comes_back_as_its_class() -> None:
    assert isinstance(exception_for("invalid_id", "bad id", 400), InvalidIdError)
    gone = exception_for("not_found", "no such frame", 404)
    assert isinstance(gone, NotFoundError) and str(gone).strip("'") == "no such frame"
