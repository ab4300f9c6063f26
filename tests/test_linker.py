from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mind.db import Database
from mind.embeddings.testing import TestEmbedder
from mind.errors import ValidationError
from mind.frame import NewFrame
from mind.frames import FrameStore
from mind.indexer import index_pending
from mind.linker import DEFAULT_LINK_THRESHOLD, MemoryLink, MemoryLinker
from mind.search import HybridSearch

EMB = TestEmbedder(dimensions=128)
NEW = "Postgres migration plan for the billing service"
RELATED = "Billing service database: the Postgres upgrade finished"
UNRELATED = "Lunch menu on Friday: tacos and salad"


@pytest.fixture
async def search(db: Database) -> AsyncIterator[HybridSearch]:
    hs = HybridSearch(db, EMB)
    yield hs
    await hs.close()


async def save(db: Database, *texts: str, gop: str = "g", **kw: object) -> list[int]:
    res = await FrameStore(db).insert_many([NewFrame(gop, t, **kw) for t in texts])  # type: ignore[arg-type]
    await index_pending(db, EMB)
    return [r.frame.id for r in res]


async def make_stale(db: Database, frame_id: int) -> None:
    await db.execute(
        "UPDATE memory_frames SET last_accessed = ? WHERE id = ?", ("2020-01-01T00:00:00Z", frame_id)
    )


def ids(links: list[MemoryLink]) -> list[int]:
    return [link.frame_id for link in links]


async def test_excludes_the_frame_itself_by_id_and_by_identical_content(
    search: HybridSearch, db: Database
) -> None:
    new, related = await save(db, NEW, RELATED)
    linker = MemoryLinker(search)
    by_id = await linker.find_related(NEW, exclude_ids=[new])
    assert new not in ids(by_id) and related in ids(by_id)
    # no ids given: the frame with exactly this text (whitespace aside) is still not self-linked
    by_text = await linker.find_related(f"  {NEW}\n")
    assert new not in ids(by_text) and related in ids(by_text)
    # excluding the related frame too leaves it out, and the limit is still filled from the rest
    assert related not in ids(await linker.find_related(NEW, exclude_ids=(new, related)))


async def test_links_carry_content_and_normalized_scores(search: HybridSearch, db: Database) -> None:
    new, related = await save(db, NEW, RELATED)
    [link, *_] = await MemoryLinker(search).find_related(NEW, exclude_ids=[new])
    assert link == MemoryLink(related, RELATED, link.score)
    assert DEFAULT_LINK_THRESHOLD <= link.score <= 1.0
    assert link.score > 0.6  # found by both lanes: far above the old raw-RRF scale (≤ 0.034)
    assert link.to_dict() == {"frame_id": related, "content": RELATED, "score": link.score}


async def test_threshold_applies_to_the_normalized_score(search: HybridSearch, db: Database) -> None:
    new, related = await save(db, NEW, RELATED)
    # its own session: right after RELATED it would carry RELATED's words as keyword context
    [unrelated] = await save(db, UNRELATED, gop="lunch")
    linker = MemoryLinker(search)
    # a fresh frame found only by the vector lane scores ≈ 0.4: kept by the default 0.3 …
    default = await linker.find_related(NEW, exclude_ids=[new])
    assert ids(default)[0] == related and unrelated in ids(default)
    assert all(link.score >= DEFAULT_LINK_THRESHOLD for link in default)
    # … but not when both lanes are required (≥ 0.6)
    assert ids(await linker.find_related(NEW, threshold=0.6, exclude_ids=[new])) == [related]
    # not being recalled for years is no penalty (recency counts from recorded_at; being shown
    # must not decide what is shown) …
    before = (await linker.find_related(NEW, exclude_ids=[new]))[1].score
    await make_stale(db, unrelated)
    stale = await linker.find_related(NEW, exclude_ids=[new])
    assert ids(stale) == [related, unrelated] and stale[1].score == before
    # … deprecating it lowers its score a little (the balanced re-score reorders near-ties only)
    await db.execute("UPDATE memory_frames SET importance = 'deprecated' WHERE id = ?",
                     (unrelated,))
    after = (await linker.find_related(NEW, exclude_ids=[new]))[1].score
    assert before * 0.98 < after < before
    # 1.0 keeps only perfect hits; 0.0 keeps every candidate
    assert await linker.find_related(UNRELATED, threshold=1.0, exclude_ids=[unrelated]) == []
    everything = await linker.find_related(NEW, threshold=0.0, exclude_ids=[new])
    assert set(ids(everything)) == {related, unrelated}


async def test_limit_order_and_session(search: HybridSearch, db: Database) -> None:
    [new] = await save(db, NEW, gop="s1")
    near = await save(db, *[f"Postgres billing service note {i}" for i in range(8)], gop="s1")
    other = await save(db, "Postgres billing service in another session", gop="s2")
    linker = MemoryLinker(search)
    links = await linker.find_related(NEW, limit=3, exclude_ids=[new])
    assert len(links) == 3
    assert [link.score for link in links] == sorted((link.score for link in links), reverse=True)
    scoped = await linker.find_related(NEW, limit=20, exclude_ids=[new], session="s1")
    assert set(ids(scoped)) <= set(near) and other[0] not in ids(scoped)


async def test_linking_is_not_an_access_and_never_a_catch_up(search: HybridSearch, db: Database) -> None:
    [critical] = await save(db, "Production password rotates monthly", importance="critical")
    [related] = await save(db, RELATED)
    links = await MemoryLinker(search).find_related(
        "Where were we with the Postgres billing upgrade?", threshold=0.7
    )
    assert ids(links) == [related]  # similarity, not the catch-up briefing (critical first)
    for fid in (critical, related):
        frame = await FrameStore(db).get(fid)
        assert frame is not None and frame.access_count == 0


async def test_empty_mind_blank_text_and_bad_arguments(search: HybridSearch) -> None:
    linker = MemoryLinker(search)
    assert await linker.find_related(NEW) == []
    assert await linker.find_related("   ") == []
    for kwargs in ({"threshold": 1.5}, {"threshold": -0.1}, {"limit": 0}, {"limit": 5000}):
        with pytest.raises(ValidationError):
            await linker.find_related(NEW, **kwargs)
    with pytest.raises(ValidationError):
        await linker.find_related(None)  # type: ignore[arg-type]
