from __future__ import annotations

import pytest

from mind.retrieval.text_query import fts_match_expression, query_terms, tokenize


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Café in Zürich", ["café", "in", "zürich"]),
        ("hive-mind don't", ["hive", "mind", "don", "t"]),
        ("node.js C++ a:b", ["node", "js", "c", "a", "b"]),
        ("Москва и Київ", ["москва", "и", "київ"]),
        ("東京タワー 2024", ["東京タワー", "2024"]),
        ('"quoted" AND (x OR y*) NEAR/3', ["quoted", "and", "x", "or", "y", "near", "3"]),
        ("", []),
        ("   ...!!!   ", []),
    ],
)
def test_tokenize_like_unicode61(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("What is the AI plan for Go?", ["ai", "plan", "go"]),
        ("Q2 UX review", ["q2", "ux", "review"]),
        ("what is it", []),  # only stop words
        ("C", ["c"]),  # a lone 1-char term survives when nothing else does
        ("C and Rust", ["rust"]),
        ("deploy deploy DEPLOY", ["deploy"]),
    ],
)
def test_query_terms(query: str, terms: list[str]) -> None:
    assert query_terms(query) == terms


def test_match_expression_quotes_every_term() -> None:
    assert fts_match_expression(["ai", "near"]) == '"ai" OR "near"'
    assert fts_match_expression(['a"b']) == '"a""b"'
