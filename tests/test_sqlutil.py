from __future__ import annotations

import pytest

from mind.storage.sqlutil import chunked, escape_like, placeholders, split_statements


@pytest.mark.parametrize(
    ("size", "n", "expected"),
    [(3, 0, []), (3, 2, [[0, 1]]), (3, 7, [[0, 1, 2], [3, 4, 5], [6]]), (500, 1001, None)],
)
def test_chunks(size: int, n: int, expected: list[list[int]] | None) -> None:
    parts = [list(p) for p in chunked(list(range(n)), size)]
    if expected is not None:
        assert parts == expected
    assert [x for p in parts for x in p] == list(range(n))
    assert all(len(p) <= size for p in parts)


@pytest.mark.parametrize(("count", "text"), [(0, ""), (1, "?"), (3, "?,?,?")])
def test_placeholders(count: int, text: str) -> None:
    assert placeholders(count) == text


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [("plain", "plain"), ("50%", "50\\%"), ("a_b", "a\\_b"), ("back\\slash", "back\\\\slash")],
)
def test_escape_like(raw: str, escaped: str) -> None:
    assert escape_like(raw) == escaped


def test_split_statements_keeps_trigger_bodies_whole() -> None:
    script = """
    CREATE TABLE a(x);
    CREATE TRIGGER t AFTER INSERT ON a BEGIN
      INSERT INTO a VALUES (1); INSERT INTO a VALUES ('semi;colon');
    END;
    CREATE INDEX i ON a(x);
    """
    parts = split_statements(script)
    assert len(parts) == 3
    assert parts[1].startswith("CREATE TRIGGER") and parts[1].endswith("END;")
