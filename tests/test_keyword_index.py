"""The in-memory keyword index ranks exactly as FTS5's bm25 does, and stays fresh."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from mind.frames.model import NewFrame
from mind.mind import Mind
from mind.retrieval import keyword_index as ki
from mind.retrieval.keyword_index import KeywordIndex
from mind.retrieval.search import HybridSearch
from mind.retrieval.text_query import fts_match_expression, query_terms
from mind.storage.connection import connect_peek

# words that exercise FTS5's tokenizer: case, diacritics, stems, a curly apostrophe (a
# separator inside one of our words), digits, CJK, marks
_WORDS = ("Zürich zurich ZURICH café cafe running runs ran runner don’t won't Q2 2023 "
          "naïve résumé resume budget budgets budgeting salad salads homemade desserts "
          "日本語 テスト áb x_y e-mail co-op tea Tea coffee plans planning Berlin berlin").split()


def _text(rng: random.Random) -> str:
    return " ".join(rng.choices(_WORDS, k=rng.randint(3, 18))) + rng.choice([".", "?", "!"])


def _fts(path: Path, query: str, n: int, weight: float) -> list[tuple[int, float]]:
    conn = connect_peek(path)
    try:
        rows = conn.execute(
            f"SELECT rowid, -bm25(memory_frames_fts, 1.0, {weight!r}) AS s "
            "FROM memory_frames_fts WHERE memory_frames_fts MATCH ? ORDER BY s DESC LIMIT ?",
            (fts_match_expression(query_terms(query)), n)).fetchall()
    finally:
        conn.close()
    return [(int(r[0]), float(r[1])) for r in rows]


def _same(ours: list[tuple[int, float]], theirs: list[tuple[int, float]]) -> None:
    """Same scores (to rounding) and the same frames, but for ties at the cut."""
    assert len(ours) == len(theirs)
    assert [s for _, s in ours] == pytest.approx([s for _, s in theirs], rel=1e-12, abs=1e-12)
    cut = theirs[-1][1] if theirs else 0.0
    above = {f for f, s in theirs if s > cut + 1e-9}
    assert above <= {f for f, _ in ours}
    ours_scores = dict(ours)
    for fid, score in theirs:
        if fid in ours_scores:
            assert ours_scores[fid] == pytest.approx(score, rel=1e-12)


def _matches_fts(index: KeywordIndex, path: Path, query: str, n: int, weight: float = 0.3
                 ) -> None:
    ours = index.search_sync(query, n, weight)
    assert ours is not None, query
    _same(ours, _fts(path, query, n, weight))


def _wait_ready(index: KeywordIndex) -> None:
    deadline = time.monotonic() + 30
    while not index.ready and time.monotonic() < deadline:
        time.sleep(0.01)
    assert index.ready


@contextlib.contextmanager
def _index(path: Path, min_rows: int = 0, background: bool = False
           ) -> Iterator[KeywordIndex]:
    index = KeywordIndex(path, min_rows=min_rows, background=background)
    try:
        yield index
    finally:
        index.close()


async def _fill(mind: Mind, rng: random.Random, count: int, sessions: int = 7) -> list[int]:
    saved = await mind.frames.insert_many([
        NewFrame(f"s{rng.randrange(sessions)}", _text(rng), dedup=False) for _ in range(count)])
    return [r.frame.id for r in saved]


def test_sorted_and_array_sums_are_the_same_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    """Few postings are summed by sorting, many in an array a row: the same rows, in row order,
    with the same sums (to rounding: NumPy's ``reduceat`` may add a run in another order)."""
    rng = np.random.default_rng(3)
    rows = 5_000
    parts = [(np.sort(rng.choice(rows, size, replace=False)).astype(np.int32), rng.random(size))
             for size in (40, 300, 7, 1200, 300)]
    monkeypatch.setattr(ki, "SPARSE_SHARE", 0)
    few = ki._accumulate(parts, rows)
    monkeypatch.setattr(ki, "SPARSE_SHARE", 10**9)
    many = ki._accumulate(parts, rows)
    every = np.unique(np.concatenate([r for r, _ in parts]))
    reference: dict[int, float] = {}
    for at, values in parts:  # term by term, as the index adds them
        for row, value in zip(at.tolist(), values.tolist(), strict=True):
            reference[row] = reference.get(row, 0.0) + value
    for found, sums in (few, many):
        assert np.array_equal(found, every) and found.dtype == np.int64
        assert sums.tolist() == pytest.approx([reference[row] for row in every.tolist()],
                                              rel=1e-12)
    assert ki._accumulate([], rows)[0].size == 0


QUERIES = ("zurich cafe", "Running budgets", "don’t resume", "日本語 tea", "naive e-mail plans",
           "Q2 2023 salads", "coffee berlin homemade", "unknownword tea", "x_y co-op")


@pytest.mark.parametrize("share", [0, 10**9], ids=["sorted", "array"])
@pytest.mark.parametrize("weight", [0.3, 1.0])
async def test_scores_match_fts5(tmp_path: Path, weight: float, share: int,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Either way of summing a query's postings (:func:`ki._accumulate`) ranks as FTS5 does."""
    monkeypatch.setattr(ki, "SPARSE_SHARE", share)
    path = tmp_path / "m.mind"
    rng = random.Random(7)
    async with await Mind.open(path) as mind:
        await _fill(mind, rng, 600)
    with _index(path) as index:
        assert index.prepare() and index.nbytes > 0
        for query in QUERIES:
            _matches_fts(index, path, query, 40, weight)
        assert index.search_sync("the of and", 10, weight) == []  # stop words only
        learned = (len(index._stemmer.single), len(index._stemmer.terms))
        assert index.search_sync("zyxwv qwertyuiop", 10, weight) == []  # words no frame has
        assert (len(index._stemmer.single), len(index._stemmer.terms)) == learned  # not cached


async def test_stays_fresh_through_writes_edits_and_deletions(tmp_path: Path) -> None:
    path = tmp_path / "m.mind"
    rng = random.Random(11)
    async with await Mind.open(path) as mind:
        ids = await _fill(mind, rng, 300)
        with _index(path) as index:
            assert index.prepare()
            built = index.nbytes
            new = await _fill(mind, rng, 40)  # past the highest id the build saw
            await mind.frames.update(ids[5], content="zurich zurich cafe budget resume")
            await mind.frames.update(new[3], content="salads and a Berlin café")
            await mind.frames.delete(ids[9])
            await mind.frames.delete(new[0])
            for query in QUERIES:
                _matches_fts(index, path, query, 60)
            assert index.nbytes == built  # the changes live beside the arrays
            found = dict(index.search_sync("zurich cafe budget resume", 600, 0.3) or [])
            assert ids[5] in found and ids[9] not in found and new[0] not in found


async def test_writes_between_the_builds_pieces_are_seen(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The build reads the frames a piece at a time, each piece its own read (no transaction
    held for the whole build): frames edited or deleted between two pieces, before or after
    the build read them, and frames written meanwhile are answered for as FTS5 does."""
    monkeypatch.setattr(ki, "BUILD_PIECE", 40)
    path = tmp_path / "m.mind"
    rng = random.Random(13)
    async with await Mind.open(path) as mind:
        ids = await _fill(mind, rng, 200)
        loop = asyncio.get_running_loop()
        pieces: list[int] = []

        async def write() -> None:
            await mind.frames.update(ids[3], content="zurich zurich cafe budget resume")  # read
            await mind.frames.update(ids[150], content="salads and a Berlin café")  # not yet
            await mind.frames.delete(ids[10])
            await mind.frames.delete(ids[160])
            await _fill(mind, rng, 30)

        def between_pieces() -> None:  # where the build steps aside for requests
            pieces.append(1)
            if len(pieces) == 2:
                asyncio.run_coroutine_threadsafe(write(), loop).result()

        monkeypatch.setattr(ki, "step_aside", between_pieces)
        with _index(path) as index:
            assert await asyncio.to_thread(index.prepare)
            assert len(pieces) >= 5
            for query in QUERIES:
                _matches_fts(index, path, query, 60)
            found = dict(index.search_sync("zurich cafe budget resume", 600, 0.3) or [])
            assert ids[3] in found and ids[10] not in found and ids[160] not in found
            assert ids[150] in dict(index.search_sync("salads berlin", 600, 0.3) or [])


async def test_rebuilds_after_many_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    monkeypatch.setattr(ki, "MAX_DELTA_ROWS", 10)
    path = tmp_path / "m.mind"
    rng = random.Random(3)
    async with await Mind.open(path) as mind:
        await _fill(mind, rng, 100)
        with _index(path) as index:
            assert index.prepare()
            rows = len(index._postings.ids) if index._postings is not None else 0
            await _fill(mind, rng, 5)
            assert index.search_sync("tea", 10, 0.3) is not None  # 5 changed: beside the arrays
            assert index._postings is not None and len(index._postings.ids) == rows
            await _fill(mind, rng, 30)
            _matches_fts(index, path, "zurich tea", 50)  # 35 changed: arrays rebuilt
            assert index._postings is not None and len(index._postings.ids) == rows + 35


async def test_small_minds_and_background_builds(tmp_path: Path) -> None:
    path = tmp_path / "m.mind"
    rng = random.Random(5)
    async with await Mind.open(path) as mind:
        await _fill(mind, rng, 50)
    with _index(path, 1000) as small:
        assert small.search_sync("tea", 10, 0.3) is None and not small.ready
        assert not small.worth_asking()  # not counted again at once
    with _index(path, 10, True) as index:
        assert index.search_sync("tea", 10, 0.3) is None  # not built: FTS5 answers
        assert not index.worth_asking()
        index.warm()  # a recall starts the build after answering
        _wait_ready(index)
        _matches_fts(index, path, "tea", 10)


async def test_hybrid_search_keyword_lane_uses_it(tmp_path: Path) -> None:
    """The keyword lane through the index returns what it returns through FTS5; a filtered
    query still goes to FTS5."""
    path = tmp_path / "m.mind"
    rng = random.Random(9)
    async with await Mind.open(path) as mind:
        await _fill(mind, rng, 400)
        with _index(path) as index:
            with_index = HybridSearch(mind.db, keyword_index=index)
            plain = HybridSearch(mind.db)
            for query in QUERIES[:5]:
                a = await with_index.search(query, limit=20, lanes="keyword", touch=False)
                b = await plain.search(query, limit=20, lanes="keyword", touch=False)
                assert [r.frame.id for r in a.results] == [r.frame.id for r in b.results]
            assert index.ready and index.worth_asking()
            filtered = await with_index.search("tea", limit=5, lanes="keyword", session="s1",
                                               touch=False)
            assert filtered.results and all(r.frame.gop_id == "s1" for r in filtered.results)
        with _index(path, background=True) as warmed:  # a served mind's: built after a recall
            await HybridSearch(mind.db, keyword_index=warmed).search("tea", touch=False)
            _wait_ready(warmed)


def test_tokenizer_is_the_fts_tables() -> None:
    from mind.storage.schema import SEARCH_CONTEXT

    assert f"tokenize='{ki.FTS_TOKENIZER}'" in SEARCH_CONTEXT


async def test_closing_during_a_build_is_quiet(tmp_path: Path, caplog: pytest.LogCaptureFixture
                                              ) -> None:
    """A one-shot CLI recall warms the index and closes the mind right after answering: the
    build it started ends without a warning, and a closed index starts none."""
    path = tmp_path / "m.mind"
    async with await Mind.open(path) as mind:
        await _fill(mind, random.Random(2), 3000)
    index = KeywordIndex(path, min_rows=10)
    index.warm()
    thread = index._building
    index.close()
    if thread is not None:
        thread.join(30)
    assert not [r for r in caplog.records if r.name == ki.__name__ and r.levelname == "WARNING"]
    index.warm()
    assert index._building is None


async def test_a_warm_up_waiting_for_a_build_stops_waiting_when_the_index_closes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A server shutting down during its warm-up closes the minds: the warm-up's wait for a
    keyword index build ends, and the build stops at its next piece, quietly."""
    import threading

    path = tmp_path / "m.mind"
    async with await Mind.open(path) as mind:
        await _fill(mind, random.Random(4), 600)
    monkeypatch.setattr(ki, "BUILD_PIECE", 100)
    paused, go_on = threading.Event(), threading.Event()

    def between_pieces() -> None:  # the build holds here until the test lets it go on
        paused.set()
        go_on.wait(60)

    monkeypatch.setattr(ki, "step_aside", between_pieces)
    index = KeywordIndex(path, min_rows=10)
    waiter = threading.Thread(target=index.build_and_wait)
    waiter.start()
    assert paused.wait(60)
    build = index._building
    assert build is not None
    index.close()
    waiter.join(60)
    assert not waiter.is_alive() and build.is_alive()  # it did not wait for the build
    go_on.set()
    build.join(60)
    assert not build.is_alive() and not index.ready
    assert not [r for r in caplog.records if r.name == ki.__name__ and r.levelname == "WARNING"]


def test_closing_during_a_build_is_an_error_of_the_build_not_a_crash() -> None:
    """A mind closed while its keyword index builds: the build's next lookup fails (and the
    build is dropped), where closing the connection under a running statement crashed the
    process."""
    import threading

    for trial in range(6):
        stemmer = ki.Stemmer()
        words = [f"word{i}x{trial}" for i in range(100_000)]
        errors: list[Exception] = []

        def build(stemmer: ki.Stemmer = stemmer, words: list[str] = words,
                  errors: list[Exception] = errors) -> None:  # a build, piece by piece
            try:
                for k in range(0, len(words), 20_000):
                    stemmer.learn(words[k:k + 20_000])
            except Exception as exc:  # the connection, once closed
                errors.append(exc)

        thread = threading.Thread(target=build)
        thread.start()
        time.sleep(0.005 * trial)
        stemmer.close()
        thread.join()
        assert errors or len(stemmer.single) == len(words)
