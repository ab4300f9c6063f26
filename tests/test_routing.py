"""Scope-wide routing (mind/retrieval/routing.py) and the catalog it reads
(actors/catalog.py): pure ranking over summaries, summaries read from real mind files, the
catalog re-reading only what changed, and a routed ``recall --scope all`` end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from actors.catalog import MindCatalog
from actors.host import mind_path
from hive_mind.facade import HiveMind
from mind.census import stamp
from mind.mind import Mind
from mind.retrieval.routing import (
    RoutePool,
    RouteSummary,
    interleave,
    select,
    term_hashes,
)
from mind.retrieval.text_query import FTS_TOKENIZER
from mind.retrieval.vector_scan import ones, sign_codes
from mind.storage.connection import driver


def unit(v: np.ndarray) -> np.ndarray:
    out: np.ndarray = (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)
    return out


def summary(vectors: np.ndarray | None, terms: list[str]) -> RouteSummary:
    if vectors is None:
        return RouteSummary((0, 0, 0), 0, np.zeros((0, 0), dtype=np.uint64),
                            np.zeros(0, dtype=np.int32), term_hashes(terms))
    codes = sign_codes(vectors)
    return RouteSummary((len(vectors), 0, 0), vectors.shape[1], codes, ones(codes),
                        term_hashes(terms))


@pytest.mark.parametrize(("rankings", "want", "expected"), [
    ([[1, 2, 3], [4, 5, 6]], 4, [1, 4, 2, 5]),
    ([[1, 2, 3], [1, 2, 7]], 4, [1, 2, 3, 7]),  # a mind both rankings name is taken once
    ([[1], [4, 5, 6]], 4, [1, 4, 5, 6]),  # a short ranking leaves its turns to the other
    ([[], []], 3, []),
    ([[3, 2, 1], []], 2, [3, 2]),
])
def test_interleave(rankings: list[list[int]], want: int, expected: list[int]) -> None:
    assert interleave(rankings, want) == expected


def test_vector_ranking_puts_the_mind_holding_the_nearest_vector_first() -> None:
    rng = np.random.default_rng(7)
    minds = [unit(rng.standard_normal((50, 384))) for _ in range(30)]
    target = minds[17][23]
    query = unit(target + 0.2 * unit(rng.standard_normal(384)))
    pool = RoutePool([summary(v, []) for v in minds])
    assert pool.by_vector(query)[0] == 17
    assert sorted(pool.by_vector(query)) == list(range(30))
    assert pool.by_vector(None) == [] and pool.by_vector(query[:100]) == []  # other model


def test_a_mind_of_another_model_does_not_switch_vector_routing_off() -> None:
    rng = np.random.default_rng(5)
    minds = [summary(unit(rng.standard_normal((4, 32))), []) for _ in range(5)]
    minds.append(summary(unit(rng.standard_normal((4, 16))), ["odd"]))
    pool = RoutePool(minds)
    assert pool.dim == 32
    assert sorted(pool.by_vector(unit(rng.standard_normal(32)))) == [0, 1, 2, 3, 4]
    assert pool.by_keyword(term_hashes(["odd"])) == [5]


def test_minds_without_vectors_are_left_to_the_keyword_ranking() -> None:
    rng = np.random.default_rng(3)
    pool = RoutePool([summary(None, ["budget"]), summary(unit(rng.standard_normal((5, 8))), [])])
    assert pool.by_vector(unit(rng.standard_normal(8))) == [1]
    assert pool.by_keyword(term_hashes(["budget"])) == [0]


def test_keyword_ranking_weighs_rare_terms_over_common_ones() -> None:
    common = ["project", "meeting"]
    minds = [summary(None, [*common, f"filler{k}"]) for k in range(20)]
    minds[5] = summary(None, [*common, "zeppelin"])  # the rare term
    minds[9] = summary(None, ["project"])  # only a common one
    pool = RoutePool(minds)
    ranked = pool.by_keyword(term_hashes(["project", "meeting", "zeppelin"]))
    assert ranked[0] == 5
    assert ranked.index(9) == len(ranked) - 1  # covers least, and only with a common term
    assert pool.by_keyword(term_hashes(["absent"])) == []


def test_select_takes_from_both_kinds_of_evidence() -> None:
    rng = np.random.default_rng(11)
    vecs = [unit(rng.standard_normal((10, 16))) for _ in range(10)]
    summaries = [summary(v, [f"t{k}"]) for k, v in enumerate(vecs)]
    pool = RoutePool(summaries)
    chosen = select(pool, vecs[2][0], ["t7"], 2)
    assert chosen == [2, 7]


async def test_summary_and_stems_match_the_keyword_index(tmp_path: Path) -> None:
    async with await HiveMind.open(data_dir=tmp_path, embedding_provider="test") as hm:
        await hm.create_workspace("Ops", workspace_id="ops")
        saved = await hm.save("The Zürich teams were running quarterly budgets",
                              workspace="ops", wait=True)
        await hm.save("x" * 50 + " long note about deployments", workspace="ops", wait=True)
        catalog = MindCatalog()
        try:
            ids, pool = await catalog.route_pool({"workspace:ops": mind_path(
                tmp_path, "workspace:ops")})
            assert ids == ["workspace:ops"]
            stems = catalog.stems("what about the running budget in zurich?")
            assert set(stems) == {"run", "budget", "zurich"}  # stop words out, porter, ü → u
            assert pool.by_keyword(term_hashes(stems)) == [0]
            assert pool.by_keyword(term_hashes(catalog.stems("spaceships"))) == []
            reader = await hm.reader("ops")
            vectors = (await reader.vectors.counts())["frame_vectors"]
            sql = await reader.db.fetchval(
                "SELECT sql FROM sqlite_master WHERE name = 'memory_frames_fts'")
        finally:
            catalog.close()
        assert saved["id"] and vectors == 2 and pool.dim == 64
        assert FTS_TOKENIZER in str(sql)  # the stemmer tokenizes as the keyword index does


async def test_catalog_rereads_a_mind_only_when_its_file_changed(tmp_path: Path) -> None:
    async with await HiveMind.open(data_dir=tmp_path, embedding_provider="test") as hm:
        await hm.create_workspace("A", workspace_id="a")
        await hm.save("alpha note", workspace="a", wait=True)
        path = mind_path(tmp_path, "workspace:a")
        paths = {"workspace:a": path, "workspace:ghost": mind_path(tmp_path, "workspace:ghost")}
        catalog = MindCatalog()
        try:
            first = await catalog.census(paths)
            assert list(first) == ["workspace:a"]  # a mind without a file is left out
            assert (first["workspace:a"].frames, first["workspace:a"].vectors) == (1, 1)
            _, pool = await catalog.route_pool(paths)
            _, again = await catalog.route_pool(paths)
            assert again is pool  # nothing changed: no look at the file, the same pool
            hit = (await hm.recall_detail("alpha", workspace="a"))["results"][0]
            assert hit["content"] == "alpha note"  # its access count was written ...
            await hm.wait_idle()
            stamped = stamp(path)
            census = await catalog.census(paths)
            _, touched = await catalog.route_pool(paths)
            assert census["workspace:a"].version == first["workspace:a"].version
            assert touched is pool  # ... which moves the stamp, not what routing reads
            await hm.save("beta note", workspace="a", wait=True)
            assert stamp(path) != stamped
            census = await catalog.census(paths)
            _, moved = await catalog.route_pool(paths)
            assert census["workspace:a"].frames == 2 and moved is not pool
        finally:
            catalog.close()


async def test_routed_scope_wide_recall_finds_the_one_workspace_that_knows(
        tmp_path: Path) -> None:
    async with await HiveMind.open(data_dir=tmp_path, embedding_provider="test",
                                   scope_minds=4, max_open_minds=6) as hm:
        for k in range(30):
            await hm.create_workspace(f"Team {k}", workspace_id=f"team-{k:02d}")
            await hm.save(f"team {k} weekly sync notes about hiring and the roadmap",
                          workspace=f"team-{k:02d}")
        await hm.save("the zeppelin hangar lease was signed on Tuesday", workspace="team-21")
        await hm.wait_idle()
        detail = await hm.recall_detail("zeppelin hangar lease", scope="all", limit=5)
        assert detail["routing"] == {"searched": 4, "workspaces": 30}
        assert detail["results"][0]["from"] == "workspace:team-21"
        assert "zeppelin" in detail["results"][0]["content"]
        assert len(hm.runtime.host.open_ids) <= 6
        # by meaning too: the vector ranking alone brings the workspace (keyword lane off)
        vector = await hm.recall_detail("zeppelins hangars leases", scope="all", limit=5,
                                        lanes="vector")
        assert vector["results"][0]["from"] == "workspace:team-21"
        # a catch-up has no content to route by: the most recently written workspaces
        await hm.save("fresh standup notes", workspace="team-03", wait=True)
        catch = await hm.recall_detail("where were we", scope="all", limit=10)
        assert catch["routing"] == {"searched": 4, "workspaces": 30}
        assert "workspace:team-03" in {r["from"] for r in catch["results"]}
        # at or under the setting every workspace is searched, as before
        few = await hm.recall_detail("zeppelin", scope="workspace", workspace="team-21")
        assert few["routing"] is None


async def test_every_workspace_searched_when_routing_is_off(tmp_path: Path) -> None:
    async with await HiveMind.open(data_dir=tmp_path, embedding_provider="test",
                                   scope_minds=0) as hm:
        for k in range(20):
            await hm.create_workspace(f"W {k}", workspace_id=f"w-{k}")
            await hm.save(f"codeword quokka{k}", workspace=f"w-{k}")
        await hm.wait_idle()
        detail = await hm.recall_detail("codeword quokka", scope="all", limit=20)
        assert detail["routing"] is None
        assert len({r["from"] for r in detail["results"]}) == 20


def test_stemmer_connection_is_this_drivers() -> None:
    conn = driver().connect(":memory:")
    try:
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{FTS_TOKENIZER}')")
    finally:
        conn.close()


async def test_reader_only_minds_open_their_writer_on_the_first_write(tmp_path: Path) -> None:
    async with await HiveMind.open(data_dir=tmp_path, embedding_provider="test") as hm:
        await hm.create_workspace("R", workspace_id="r")
        await hm.save("first", workspace="r", wait=True)
    async with await HiveMind.open(data_dir=tmp_path, embedding_provider="test") as hm:
        host = hm.runtime.host
        assert (await hm.recall_detail("first", workspace="r"))["results"]
        await hm.wait_idle()
        await hm.save("second", workspace="r", wait=True)
        assert host.queued("workspace:r") == 0
        reader: Mind = await hm.reader("r")
        assert await reader.frames.count() == 2


async def test_a_fresh_catalog_rereads_only_what_changed_since_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import actors.catalog as catalog_module

    async with await HiveMind.open(data_dir=tmp_path, embedding_provider="test") as hm:
        for slug in ("a", "b", "c"):
            await hm.create_workspace(slug.upper(), workspace_id=slug)
            await hm.save(f"{slug} note", workspace=slug, wait=True)
        paths = {f"workspace:{s}": mind_path(tmp_path, f"workspace:{s}") for s in "abc"}
        cache = tmp_path / "catalog.json"
        first = MindCatalog(cache_file=cache)
        try:
            counted = await first.census(paths)
        finally:
            first.close()
        assert cache.stat().st_mode & 0o077 == 0  # owner-only
        await hm.save("b again", workspace="b", wait=True)
        await hm.wait_idle()
        looked: list[str] = []
        real = catalog_module.connect_peek  # type: ignore[attr-defined]

        def counting(path: Path) -> object:
            looked.append(Path(path).parent.name)
            return real(path)

        monkeypatch.setattr(catalog_module, "connect_peek", counting)
        second = MindCatalog(cache_file=cache)
        try:
            fresh = await second.census(paths)
        finally:
            second.close()
        assert looked == ["b"]  # a and c came from the cache
        assert fresh["workspace:a"] == counted["workspace:a"]
        assert fresh["workspace:b"].frames == 2
        cache.write_text("{not json")
        bad = MindCatalog(cache_file=cache)
        assert bad._census == {}  # a bad cache is just re-read
        bad.close()
