"""The JSON nesting limit on streamed bytes (mind.harvest.jsondepth): exact depth whatever
the chunking, brackets and escapes inside strings ignored, and a deeply nested export is a
clear error through the product path instead of a process killed for memory."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import httpx
import pytest

from mind.harvest.errors import HarvestError
from mind.harvest.jsondepth import DepthLimitedReader
from tests.http_server import running_server, server_settings

TRICKY = ['[', ']', '{', '}', '"', '\\', '\\"', '"[', '\\\\', 'a]b', '}}}', '[[[', 'é', '\n']


def _value(rng: random.Random, depth: int) -> Any:
    if depth <= 0 or rng.random() < 0.25:
        return "".join(rng.choice(TRICKY) for _ in range(rng.randint(0, 6)))
    if rng.random() < 0.5:
        return [_value(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {"".join(rng.choice(TRICKY) for _ in range(3)): _value(rng, depth - 1)
            for _ in range(rng.randint(0, 3))}


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


def _read(data: bytes, limit: int, chunk: int) -> bytes:
    reader = io.BufferedReader(DepthLimitedReader(io.BytesIO(data), "doc.json", limit), chunk)
    out = b""
    while part := reader.read(chunk):
        out += part
    return out


@pytest.mark.parametrize("seed", range(40))
def test_depth_is_exact_for_any_chunking(seed: int) -> None:
    rng = random.Random(seed)
    value = [_value(rng, 8) for _ in range(3)]
    data = json.dumps(value).encode()
    depth = _depth(value)
    for chunk in (1, 2, 3, 7, 64):
        assert _read(data, depth, chunk) == data  # passes through unchanged at the limit
        with pytest.raises(HarvestError, match=f"deeper than {depth - 1} levels"):
            _read(data, depth - 1, chunk)


@pytest.mark.parametrize("text", ['["[[[[[["]', '{"a": "\\\\"}', '["\\"[[[[\\""]',
                                  '[1, "]]]]]]]]]]", [2]]'])
def test_brackets_inside_strings_do_not_count(text: str) -> None:
    assert _read(text.encode(), 2, 1) == text.encode()


def test_pathological_nesting_refused_early() -> None:
    data = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(HarvestError, match="deeper than 128 levels") as caught:
        _read(data, 128, 1 << 16)
    assert "near byte 0" in str(caught.value)  # stopped in the first chunk


def test_deep_export_is_a_clear_error_over_http(tmp_path: Path) -> None:
    """The 200 KB upload that took `serve` down (ijson asked for ~25 GB): now a 422."""
    deep = "[" * 100_000 + "]" * 100_000
    with running_server(server_settings(tmp_path / "data")) as url, \
            httpx.Client(base_url=url, timeout=60) as client:
        for source in ("universal", "chatgpt"):
            answer = client.post("/v1/harvest", json={"source": source, "data": deep})
            assert answer.status_code == 422, answer.text
            assert "nested deeper than" in answer.json()["error"]["message"]
        assert client.get("/healthz").status_code == 200  # the server is still there
