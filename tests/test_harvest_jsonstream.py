"""Streaming JSON / JSONL helpers of the harvest adapters (mind/harvest/jsonstream.py)."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mind.harvest import inputs, jsonstream
from mind.harvest.errors import HarvestError
from mind.harvest.inputs import CountingReader
from mind.harvest.jsonstream import (
    MAX_TURN_CHARS,
    JsonSource,
    check_turn,
    file_source,
    find_sources,
    iter_array,
    iter_jsonl,
    member_source,
    read_key,
    top_level,
    ts_from_any,
    ts_from_epoch,
    ts_from_iso,
)


def write(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_top_level_array_items_are_streamed_with_floats(tmp_path: Path) -> None:
    src = file_source(write(tmp_path / "a.json", ' \n [{"x": 1.5, "n": 2}, null, "s"]'))
    assert top_level(src) == "array"
    items = list(iter_array(src, what="conversation"))
    assert items == [(1, {"x": 1.5, "n": 2}), (2, None), (3, "s")]
    assert type(items[0][1]["x"]) is float  # never Decimal
    assert list(iter_array(src, "conversations")) == []  # a key of an array: nothing


def test_named_array_and_small_keys_of_an_object(tmp_path: Path) -> None:
    doc = {"conversations": [{"id": 1}, {"id": 2}], "memories": ["a", {"content": "b"}],
           "user_custom_instructions": "be brief"}
    src = file_source(write(tmp_path / "o.json", json.dumps(doc, indent=2)))
    assert top_level(src) == "object"
    assert [v for _, v in iter_array(src, "conversations")] == [{"id": 1}, {"id": 2}]
    assert list(iter_array(src, "absent")) == []
    assert read_key(src, "memories") == ["a", {"content": "b"}]
    assert read_key(src, "user_custom_instructions") == "be brief"
    assert read_key(src, "nope") is None
    with pytest.raises(HarvestError, match="expected a JSON array of conversations"):
        list(iter_array(src, what="conversation"))


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    src = file_source(write(tmp_path / "bom.json", b"\xef\xbb\xbf[1, 2]"))
    assert [v for _, v in iter_array(src)] == [1, 2]


def test_truncated_json_names_file_item_and_byte(tmp_path: Path) -> None:
    text = json.dumps([{"title": f"conversation {i}", "body": "x" * 50} for i in range(5)])
    path = write(tmp_path / "conversations.json", text[: len(text) - 40])
    seen = []
    with pytest.raises(HarvestError) as info:
        for index, _value in iter_array(file_source(path), what="conversation"):
            seen.append(index)
    assert seen == [1, 2, 3, 4]  # what came before the damage is still delivered
    err = info.value
    assert err.path == str(path)
    assert err.position.startswith("conversation 5, near byte ")
    assert "conversations.json" in str(err) and "truncated" in str(err)


def test_malformed_json_in_the_middle(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.json", '[{"a": 1}, {"b": tru}, {"c": 3}]')
    with pytest.raises(HarvestError, match="item 2, near byte"):
        list(iter_array(file_source(path)))


@pytest.mark.parametrize(("content", "message"), [
    ('"just a string"', "expected a JSON array or object"),
    ("42", "expected a JSON array or object"),
    ("   \n", "empty file"),
    ("", "empty file"),
])
def test_wrong_top_level_type(tmp_path: Path, content: str, message: str) -> None:
    with pytest.raises(HarvestError, match=message):
        list(iter_array(file_source(write(tmp_path / "x.json", content))))


def test_binary_garbage_is_refused(tmp_path: Path) -> None:
    garbage = bytes(range(256)) * 40
    with pytest.raises(HarvestError, match="binary"):
        list(iter_array(file_source(write(tmp_path / "conversations.json", garbage))))
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("conversations.json", garbage)
    with pytest.raises(HarvestError, match="binary") as info:
        list(iter_array(member_source(archive, "conversations.json")))
    assert info.value.path == f"{archive}!conversations.json"


def test_invalid_utf8_inside_a_string(tmp_path: Path) -> None:
    path = write(tmp_path / "u.json", b'[{"a": "ok"}, {"b": "\xff\xfe broken"}]' + b" " * 10)
    with pytest.raises(HarvestError, match="item 2"):
        list(iter_array(file_source(path)))


def test_iter_array_is_lazy_on_a_large_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            ) -> None:
    path = tmp_path / "big.json"
    with path.open("w") as fh:
        fh.write("[")
        for i in range(50_000):
            fh.write(("," if i else "") + json.dumps({"id": f"c{i}", "title": f"T{i}",
                                                      "body": "lorem ipsum " * 10}))
        fh.write("]")
    readers: list[CountingReader] = []
    real = inputs.open_binary

    @contextmanager
    def recording(p: Path) -> Iterator[CountingReader]:
        with real(p) as reader:
            readers.append(reader)
            yield reader

    src = JsonSource(path.name, str(path), lambda: recording(path))
    items = iter_array(src, what="conversation")
    assert next(items) == (1, {"id": "c0", "title": "T0", "body": "lorem ipsum " * 10})
    size = path.stat().st_size
    assert size > 5_000_000
    assert readers[0].position < size // 20  # only the first buffers were read
    items.close()


def test_jsonl_lines_crlf_blank_and_bad(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl",
                 b'{"a": 1}\r\n\r\n{"b": 2.5}\r\n{broken\r\n[1, 2]\r\n{"c": "\xc3\xa9"}')
    lines = list(iter_jsonl(file_source(path)))
    assert [(ln.number, ln.value) for ln in lines if ln.error is None] == [
        (1, {"a": 1}), (3, {"b": 2.5}), (5, [1, 2]), (6, {"c": "é"})]
    bad = [ln for ln in lines if ln.error]
    assert [ln.number for ln in bad] == [4] and "not valid JSON" in (bad[0].error or "")


def test_jsonl_oversized_line_is_reported_and_skipped(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", '{"a": 1}\n{"big": "' + "x" * 500 + '"}\n{"c": 3}\n')
    lines = list(iter_jsonl(file_source(path), max_line_bytes=100))
    assert [(ln.number, ln.value) for ln in lines] == [(1, {"a": 1}), (2, None), (3, {"c": 3})]
    assert "longer than 100 bytes" in (lines[1].error or "")


def test_timestamps_to_house_format() -> None:
    assert ts_from_epoch(1714550400.5) == "2024-05-01T08:00:00.500Z"
    assert ts_from_epoch(1714550400500) == "2024-05-01T08:00:00.500Z"  # milliseconds
    assert ts_from_epoch(None) is None and ts_from_epoch(True) is None
    assert ts_from_epoch(0) is None and ts_from_epoch(float("nan")) is None
    assert ts_from_epoch(1e300) is None
    assert ts_from_iso("2024-05-02T09:15:00.123456Z") == "2024-05-02T09:15:00.123Z"
    assert ts_from_iso("2024-05-03T11:00:00+02:00") == "2024-05-03T09:00:00.000Z"
    assert ts_from_iso("2024-05-03 11:00:00") == "2024-05-03T11:00:00.000Z"  # naive = UTC
    assert ts_from_iso("yesterday") is None and ts_from_iso(12) is None
    assert ts_from_any("1714550400") == "2024-05-01T08:00:00.000Z"
    assert ts_from_any("2024-05-01T08:00:00Z") == "2024-05-01T08:00:00.000Z"
    assert ts_from_any({"x": 1}) is None


def test_check_turn_limit() -> None:
    assert check_turn("x" * MAX_TURN_CHARS, "f", "p") == "x" * MAX_TURN_CHARS
    with pytest.raises(HarvestError, match="2,000,001 characters") as info:
        check_turn("x" * (MAX_TURN_CHARS + 1), "f.json", "conversation 3, message m9")
    assert info.value.position == "conversation 3, message m9" and info.value.path == "f.json"


def test_find_sources(tmp_path: Path) -> None:
    with pytest.raises(HarvestError, match="no such file"):
        find_sources(tmp_path / "missing", ("conversations.json",), "an export")
    with pytest.raises(HarvestError, match=r"no conversations\.json in this directory"):
        find_sources(tmp_path, ("conversations.json",), "an export")
    nested = tmp_path / "unpacked"
    nested.mkdir()
    write(nested / "conversations.json", "[]")
    assert [s.path for s in find_sources(tmp_path, ("conversations.json",), "x")] == [
        str(nested / "conversations.json")]
    archive = tmp_path / "e.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("chat.html", "<html></html>")
    with pytest.raises(HarvestError, match=r"the zip holds no conversations\.json"):
        find_sources(archive, ("conversations.json",), "an export")
    assert jsonstream.find_sources(nested / "conversations.json", ("x",), "y")[0].name == (
        "conversations.json")
