from __future__ import annotations

import hashlib

import pytest

from mind.frames.content_hash import hash_frame_content, strip_hm_prefix


@pytest.mark.parametrize(
    ("raw", "stripped"),
    [
        ("[hm session:a src:b event:c] hello", "hello"),
        ("[hm x]\n\n  hello", "hello"),
        ("[hm]hello", "[hm]hello"),  # needs the space after "hm"
        ("hello [hm session:a] x", "hello [hm session:a] x"),  # only at position 0
        ("[hm a] [hm b] twice", "[hm b] twice"),  # one block only
        ("[HM a] upper", "[HM a] upper"),
        ("[hm a", "[hm a"),  # unterminated
    ],
)
def test_strip_prefix(raw: str, stripped: str) -> None:
    assert strip_hm_prefix(raw) == stripped


def test_hash_is_sha256_of_trimmed_stripped_text() -> None:
    expected = hashlib.sha256(b"hello").hexdigest()
    assert hash_frame_content("hello") == expected
    assert hash_frame_content("  hello\n") == expected
    assert hash_frame_content("\ufeffhello\u00a0") == expected  # JS trim semantics: BOM, NBSP
    assert hash_frame_content("[hm s:1] hello") == expected
    assert hash_frame_content("Hello") != expected
    assert hash_frame_content("Zürich") == hashlib.sha256("Zürich".encode()).hexdigest()
