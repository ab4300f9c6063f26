"""The code-word crash drill through the facade (embedded mode, the real embedding model).

200 notes "Drill note i: the code word is tok<10 hex>" are saved; the vague question "what is the
code word" is asked 38 times with ``touch`` on (as an agent would, raising the access counts of
whatever it returns); then each sampled note must come back in the top 3 when asked for its own
code word, and ``limit=3`` must be the first 3 of ``limit=20`` (issue #11). Popularity (access
count) may only break ties: it is checked on its own at the end with HybridSearch.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from hive_mind.facade import HiveMind
from mind.embeddings.inprocess import InProcessEmbedder
from mind.frames.model import NewFrame
from mind.frames.store import FrameStore
from mind.retrieval.search import HybridSearch
from mind.storage.db import Database
from tests.support import cognify

NOTES = 200
VAGUE_RECALLS = 38
SAMPLED = 10


def code_words(seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [f"tok{rng.getrandbits(40):010x}" for _ in range(NOTES)]


@dataclass
class Drill:
    hm: HiveMind
    words: list[str]
    ids: dict[str, int]  # code word → frame id


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def drill(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Drill]:
    """The drilled mind: 200 notes saved and indexed, then the vague question asked 38 times."""
    data: Path = tmp_path_factory.mktemp("drill") / "data"
    hm = await HiveMind.open(data_dir=data, embedding_provider="inprocess", redis_url=None)
    try:
        assert hm.mode == "embedded"
        words = code_words()
        saved = await asyncio.gather(*(hm.save(f"Drill note {i}: the code word is {word}")
                                       for i, word in enumerate(words)))
        ids = {word: note["id"] for word, note in zip(words, saved, strict=True)}
        await hm.wait_idle()
        stats = await hm.stats()
        assert stats["frames"] == NOTES and stats["vectors"] == NOTES
        for _ in range(VAGUE_RECALLS):
            hits = await hm.recall("what is the code word", limit=10)
            assert len(hits) == 10
        yield Drill(hm, words, ids)
    finally:
        await hm.close()


@pytest.mark.asyncio(loop_scope="module")
async def test_codeword_drill(drill: Drill) -> None:
    sample = random.Random(2024).sample(drill.words, SAMPLED)
    for word in sample:
        for query in (f"code word {word}", word):
            top3 = [h["id"] for h in await drill.hm.recall(query, limit=3)]
            top20 = [h["id"] for h in await drill.hm.recall(query, limit=20)]
            assert drill.ids[word] in top3, (query, top3)
            assert top3 == top20[:3], query
            assert len(top20) == 20


@pytest.mark.asyncio(loop_scope="module")
async def test_every_code_word_finds_its_note_in_the_top_3(drill: Drill) -> None:
    missed = []
    for word in drill.words:
        hits = await drill.hm.recall(f"code word {word}", limit=3, touch=False)
        if drill.ids[word] not in [h["id"] for h in hits]:
            missed.append((word, [h["content"] for h in hits]))
    assert missed == []


# -- popularity alone cannot reorder --------------------------------------------------------------


async def test_popularity_cannot_pass_a_better_lane_hit(
    db: Database, real_model: InProcessEmbedder
) -> None:
    words = code_words(seed=99)[:30]
    store = FrameStore(db)
    saved = await cognify(db, real_model, *[
        NewFrame("save:2024-05-01", f"Drill note {i}: the code word is {w}")
        for i, w in enumerate(words)])
    target = saved[0]
    search = HybridSearch(db, real_model)
    try:
        query = f"code word {words[0]}"
        before = (await search.search(query, limit=5, touch=False)).results
        assert before[0].frame.id == target
        assert before[0].final > before[1].final * 1.05  # clearly better in the lanes
        popular = [r.frame.id for r in before[1:]]
        await store.touch(popular * 100_000)  # each recalled 100 000 times
        after = (await search.search(query, limit=5, touch=False)).results
        assert after[0].frame.id == target
        assert after[0].factors["popularity"] == 1.0
        assert all(r.factors["popularity"] > 1.4 for r in after[1:])
        assert [r.frame.id for r in after] == [r.frame.id for r in before]
        assert [r.final for r in after] == [r.final for r in before]  # the score ignores it
    finally:
        await search.close()
