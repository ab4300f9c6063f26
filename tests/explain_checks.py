"""The ``explain`` object of a recall result (``recall --explain``, ``explain: true``), checked
the same way by the CLI, HTTP, MCP and client tests."""

from __future__ import annotations

from typing import Any

import pytest

EXPLAIN_KEYS = {
    "keyword_rank", "vector_rank", "similarity", "lanes", "session", "neighbour", "part", "update",
    "fused", "superseded_by", "supersedes", "spread", "decision", "path", "above_background", "coverage",
    "absolute_relevance",
    "speaker_match", "time_match", "match", "recency", "importance", "proximity", "popularity",
    "relevance", "final", "score",
}


def check_explain(hit: dict[str, Any], *, keyword: bool | None = None,
                  vector: bool | None = None) -> dict[str, Any]:
    """Assert the shape and arithmetic of ``hit["explain"]``; ``keyword`` / ``vector`` say
    whether that lane must (True) or must not (False) have found the frame."""
    e = hit["explain"]
    assert set(e) == EXPLAIN_KEYS, set(e) ^ EXPLAIN_KEYS
    for lane, found in (("keyword_rank", keyword), ("vector_rank", vector)):
        rank = e[lane]
        assert rank is None or (type(rank) is int and rank >= 1), (lane, rank)
        if found is not None:
            assert (rank is not None) is found, (lane, rank)
    assert (e["similarity"] is None) is (e["vector_rank"] is None)
    assert isinstance(e["speaker_match"], bool) and isinstance(e["time_match"], bool)
    assert e["path"] == "lanes" or e["path"].startswith("catch-up about")
    assert 0.0 <= e["absolute_relevance"] <= 1.0 and 0.0 <= e["coverage"] <= 1.0
    assert e["similarity"] is None or e["above_background"] is not None
    for name in EXPLAIN_KEYS - {"keyword_rank", "vector_rank", "similarity", "speaker_match",
                                "time_match", "superseded_by", "supersedes", "path",
                                "above_background"}:
        assert isinstance(e[name], float | int) and not isinstance(e[name], bool), name
    assert all(type(i) is int for i in e["superseded_by"] + e["supersedes"])
    assert e["fused"] == pytest.approx(
        e["lanes"] + e["session"] + e["neighbour"] + e["part"] + e["update"], abs=2e-6)
    assert e["final"] == pytest.approx(e["fused"] * e["match"] * e["relevance"],
                                       rel=1e-4, abs=1e-6)
    assert e["score"] == hit["score"]
    if "final" in hit:  # the full recall shape (the MCP tool returns a subset)
        assert e["final"] == round(hit["final"], 6) and e["lanes"] == round(hit["rrf"], 6)
        assert e["relevance"] == round(hit["relevance"], 6)
    return e  # type: ignore[no-any-return]
