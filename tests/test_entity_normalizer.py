from __future__ import annotations

import math
from typing import Any

import pytest

from mind.errors import ValidationError
from mind.knowledge.normalizer import (
    ALIAS_GROUPS,
    STOP_TOKENS,
    TECH_ALLOWLIST,
    confidence_arg,
    count_arg,
    find_duplicates,
    fold,
    is_likely_acronym,
    is_noise_name,
    like_pattern,
    load_props,
    mentions,
    normalize_entity_name,
    normalize_entity_type,
    props_arg,
    seen_count,
    text_arg,
)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("PostgreSQL", "postgresql"),
        ("Postgres", "postgresql"),
        ("PG", "postgresql"),
        ("  New   York\tCity ", "new york city"),
        ("NYC", "new york city"),
        ("Node.js", "nodejs"),
        ("node", "nodejs"),
        ("React", "react.js"),
        ("ReactJS", "react.js"),
        ("Vue", "vue.js"),
        ("py", "python"),
        ("Mongo", "mongodb"),
        ("K8s", "kubernetes"),
        ("TS", "typescript"),
        ("JS", "javascript"),
        ("Acme Corp", "acme corp"),
        ("ACME", "acme"),
        ("pg admin", "pg admin"),  # aliases apply to whole names only
        ("Zürich", "zürich"),
        ("STRASSE", "strasse"),
        ("Straße", "strasse"),  # case folding, not just lower()
        ("", ""),
    ],
)
def test_normalize_entity_name(name: str, expected: str) -> None:
    assert normalize_entity_name(name) == expected


def test_every_alias_maps_to_its_canonical() -> None:
    for group in ALIAS_GROUPS:
        for alias in group:
            assert normalize_entity_name(alias.upper()) == group[0]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("Person", "person"), ("  Tech  Stack ", "tech stack"), ("ORG", "org")],
)
def test_normalize_entity_type(raw: str, expected: str) -> None:
    assert normalize_entity_type(raw) == expected


@pytest.mark.parametrize(
    ("name", "noise"),
    [
        # short real names are entities
        ("Bob", False),
        ("Amy", False),
        ("Li", False),
        ("Joe", False),
        ("Tim", False),
        ("Ana", False),
        ("Alice", False),
        ("O'Brien", False),
        ("Ünal", False),
        ("Acme Corp", False),
        ("IBM Watson", False),  # multi-word: not an acronym
        ("R2D2", False),
        ("ABCDEFG", False),  # seven capitals: longer than an acronym
        # allowlisted tech, any case
        ("Go", False),
        ("AI", False),
        ("ml", False),
        ("K8S", False),
        ("GPU", False),
        # noise
        ("", True),
        ("   ", True),
        ("...", True),
        ("123", True),
        ("2024-05-01", True),
        ("#!", True),
        ("The", True),
        ("the", True),
        ("THE", True),
        ("Monday", True),
        ("Mon", True),
        ("Jan", True),
        ("December", True),
        ("May", True),
        ("Should", True),
        ("NASA", True),
        ("API", True),
        ("C", True),
    ],
)
def test_is_noise_name(name: str, noise: bool) -> None:
    assert is_noise_name(name) is noise


def test_word_lists_match_the_original() -> None:
    assert len(STOP_TOKENS) == 122
    assert len(TECH_ALLOWLIST) == 31
    assert all(is_noise_name(token) for token in STOP_TOKENS)
    assert not any(is_noise_name(term) or is_noise_name(term.upper()) for term in TECH_ALLOWLIST)


@pytest.mark.parametrize(
    ("token", "expected"),
    [("API", True), ("NASA", True), ("ABCDEF", True), ("ABCDEFG", False), ("Api", False),
     ("A1", False), ("", False)],
)
def test_is_likely_acronym(token: str, expected: bool) -> None:
    assert is_likely_acronym(token) is expected


@pytest.mark.parametrize(
    ("refs", "groups"),
    [
        ([], []),
        ([("Acme", "org")], [[0]]),
        ([("Acme", "org"), ("ACME", "ORG"), ("Acme", "person")], [[0, 1], [2]]),
        ([("pg", "tech"), ("Bob", "person"), ("Postgres", "Tech")], [[0, 2], [1]]),
    ],
)
def test_find_duplicates(refs: list[tuple[str, str]], groups: list[list[int]]) -> None:
    assert find_duplicates(refs) == groups


@pytest.mark.parametrize(
    ("text", "needle", "found"),
    [
        ("the hive mind", "hive", True),
        ("my archive", "hive", False),  # no substring hits
        ("hive-mind rocks", "hive", True),
        ("many hives", "hive", False),
        ("i use c++ daily", "C++", True),
        ("c++x", "C++", False),
        ("café au lait", "Café", True),
        ("cafés", "café", False),
        ("东京 is big", "东京", True),
        ("x ai y", "AI", True),
        ("said: ai.", "ai", True),
        ("naïve", "na", False),
        ("a b", "a", False),  # one-character needles never match
        ("new york city", "New   York", True),
        ("", "hive", False),
    ],
)
def test_mentions(text: str, needle: str, found: bool) -> None:
    assert mentions(fold(text), needle) is found


@pytest.mark.parametrize(
    ("value", "expected"),
    [("  Acme   Corp ", "Acme Corp"), ("x", "x")],
)
def test_text_arg(value: str, expected: str) -> None:
    assert text_arg(value, "name") == expected


@pytest.mark.parametrize("value", ["", "   ", None, 3])
def test_text_arg_rejects(value: Any) -> None:
    with pytest.raises(ValidationError, match="name must be a non-empty string"):
        text_arg(value, "name")


@pytest.mark.parametrize(("value", "ok"), [(0, True), (5, True), (-1, False), (True, False),
                                           (1.5, False), ("3", False)])
def test_count_arg(value: Any, ok: bool) -> None:
    if ok:
        assert count_arg(value, "limit") == value
    else:
        with pytest.raises(ValidationError, match="limit"):
            count_arg(value, "limit")


@pytest.mark.parametrize(("value", "ok"), [(0, True), (1, True), (0.5, True), (1.01, False),
                                           (-0.1, False), (math.nan, False), (True, False),
                                           ("1", False)])
def test_confidence_arg(value: Any, ok: bool) -> None:
    if ok:
        assert confidence_arg(value) == float(value)
    else:
        with pytest.raises(ValidationError, match="confidence"):
            confidence_arg(value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, {}), ({}, {}), ({"a": 1, "b": [1, "x"]}, {"a": 1, "b": [1, "x"]})],
)
def test_props_arg(value: Any, expected: dict[str, Any]) -> None:
    assert props_arg(value) == expected


@pytest.mark.parametrize("value", [[1, 2], {1: "x"}, {"a": object()}, {"a": math.inf}, "x"])
def test_props_arg_rejects(value: Any) -> None:
    with pytest.raises(ValidationError, match="properties"):
        props_arg(value)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(None, {}), ("", {}), ("{}", {}), ('{"a": 1}', {"a": 1}), ("[1]", {}), ("not json", {})],
)
def test_load_props(raw: str | None, expected: dict[str, Any]) -> None:
    assert load_props(raw) == expected


@pytest.mark.parametrize(
    ("props", "expected"),
    [({}, 1), ({"seen_count": 4}, 4), ({"seen_count": 0}, 1), ({"seen_count": "7"}, 1),
     ({"seen_count": True}, 1), ({"seen_count": 2.5}, 1)],
)
def test_seen_count(props: dict[str, Any], expected: int) -> None:
    assert seen_count(props) == expected


@pytest.mark.parametrize(
    ("query", "pattern"),
    [("acme", "%acme%"), ("100%", "%100\\%%"), ("a_b", "%a\\_b%"), ("c:\\x", "%c:\\\\x%"),
     ("", "%%")],
)
def test_like_pattern(query: str, pattern: str) -> None:
    assert like_pattern(query) == pattern


