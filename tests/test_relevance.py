"""Absolute relevance's pieces (mind/retrieval/relevance.py) as tables of cases."""

from __future__ import annotations

import pytest

from mind.retrieval.relevance import absolute_relevance, coverage_patterns, keyword_coverage


@pytest.mark.parametrize(("terms", "content", "expected"), [
    (["budgets", "lisbon"], "The budget for the Lisbon trip", 1.0),  # 5-letter prefixes
    (["cat"], "the category page", 0.0),  # a short term is a whole word
    (["cat"], "a cat on the mat", 1.0),
    (["zephyr", "apollo"], "Apollo ships on Friday", 0.5),
    (["lisbon"], "lisbonese", 1.0),  # a prefix of a longer word counts
    (["bon"], "lisbon", 0.0),  # never inside a word
    ([], "anything", 0.0),
    (["puppy"], " ".join(["puppy"] + ["word"] * 199), 0.5),  # 200 words: damped by sqrt(50/200)
])
def test_keyword_coverage(terms: list[str], content: str, expected: float) -> None:
    assert keyword_coverage(coverage_patterns(terms), content) == pytest.approx(expected)


def test_absolute_relevance_rises_with_each_piece_of_evidence() -> None:
    noise = absolute_relevance(0.25, 0.20, 0.0)
    close = absolute_relevance(0.65, 0.20, 0.0)
    worded = absolute_relevance(0.25, 0.20, 1.0)
    both = absolute_relevance(0.65, 0.20, 1.0)
    assert noise < 0.05 < 0.5 < both and noise < close < both and noise < worded < both
    assert absolute_relevance(None, 0.2, 0.0) == absolute_relevance(0.3, None, 0.0)  # no vector
    assert 0.0 < absolute_relevance(-1.0, 1.0, 0.0) < absolute_relevance(1.0, -1.0, 1.0) < 1.0
