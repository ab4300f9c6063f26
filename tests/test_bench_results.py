"""Benchmarks print their results and write bench/results/<group>.<name>.json; none writes into
docs/ (bench/common.py). The current figures are kept by hand in docs/performance.md."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench import common

BENCH = Path(__file__).resolve().parents[1] / "bench"

BODY = """Command: `python -m bench.components.x --frames 10`

| run | p50 | p95 |
|---|---:|---:|
| ours | **12.6 ms** | 15.3 ms |
| flat | 84.6 ms | 100.1 ms |

Some text between the tables.

| a | b |
|---|---|
| 1 | 2 |
"""


def test_markdown_tables_become_rows_keyed_by_their_header() -> None:
    assert common.markdown_tables(BODY) == [
        [{"run": "ours", "p50": "12.6 ms", "p95": "15.3 ms"},
         {"run": "flat", "p50": "84.6 ms", "p95": "100.1 ms"}],
        [{"a": "1", "b": "2"}],
    ]
    assert common.markdown_tables("no table here\n") == []


def test_write_section_writes_json_results_and_nothing_in_docs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = BENCH.parent / "docs"
    before = {p.name: p.stat().st_mtime_ns for p in docs.iterdir()}
    monkeypatch.setattr(common, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(common, "ROOT", tmp_path)
    monkeypatch.setattr(sys, "argv", ["bench/product/serve_recall.py", "--frames", "10"])
    monkeypatch.delenv("BENCH_SECTION_SUFFIX", raising=False)

    path = common.write_section("Recall at 10 frames", BODY)
    common.write_section("Recall at 20 frames", "| a |\n|---|\n| 3 |\n")
    common.write_section("Recall at 10 frames", BODY.replace("12.6", "11.0"))
    monkeypatch.setenv("BENCH_SECTION_SUFFIX", "Zen 4")
    common.write_section("Recall at 10 frames", BODY)

    assert path == tmp_path / "results" / "product.serve_recall.json"
    written = json.loads(path.read_text(encoding="utf-8"))
    sections = written["sections"]
    assert list(sections) == ["Recall at 10 frames", "Recall at 20 frames",
                              "Recall at 10 frames (Zen 4)"]
    entry = sections["Recall at 10 frames"]  # replaced by the later run of the same name
    assert entry["tables"][0][0]["p50"] == "11.0 ms"
    assert entry["command"] == "python -m bench.product.serve_recall --frames 10"
    assert "cores" in entry["machine"] and entry["load_average"]
    assert entry["text"].startswith("Command:")
    out = capsys.readouterr().out
    assert "## Recall at 10 frames (Zen 4)" in out and "| ours | **12.6 ms** |" in out
    assert {p.name: p.stat().st_mtime_ns for p in docs.iterdir()} == before
    assert not (docs / "benchmarks.md").exists()
