"""Integration with the real embedding model (all-MiniLM-L6-v2, offline from its package)."""

from __future__ import annotations

import pytest

from mind.embeddings.inprocess import InProcessEmbedder
from mind.frames.model import NewFrame
from mind.retrieval.search import HybridSearch
from mind.retrieval.text_query import query_terms, tokenize
from mind.storage.db import Database
from tests.support import cognify

FACTS = [
    "The veterinarian said my dog needs surgery on its hind leg next Tuesday.",
    "Quarterly revenue grew eleven percent thanks to the enterprise plan.",
    "Remember to water the tomato plants on the balcony every morning.",
    "The flight to Lisbon departs from terminal two at 7:40.",
    "Our Kubernetes cluster autoscaler keeps evicting the batch pods.",
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("puppy operation appointment", 0),
        ("company income increase", 1),
        ("gardening chores", 2),
        ("airplane trip to Portugal", 3),
    ],
)
async def test_paraphrase_without_shared_words_is_found(
    db: Database, real_model: InProcessEmbedder, query: str, expected: int
) -> None:
    saved = await cognify(db, real_model, *[NewFrame("g", t) for t in FACTS])
    stored_words = set(tokenize(FACTS[expected]))
    assert not set(query_terms(query)) & stored_words  # truly no keyword in common
    search = HybridSearch(db, real_model)
    resp = await search.search(query, limit=3)
    await search.close()
    assert resp.mode == "hybrid"
    assert resp.results[0].frame.id == saved[expected]
    assert resp.results[0].keyword_rank is None and resp.results[0].vector_rank == 0
