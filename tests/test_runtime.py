from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mind.embeddings.registry import EmbeddingConfig
from mind.mind import Mind
from mind.retrieval.search import HybridSearch
from queue_schemas import ops
from queue_schemas.base import new_op_id
from workers.runtime import EmbeddedRuntime, RuntimeConfig


def config(tmp_path: Path, **kw: object) -> RuntimeConfig:
    return RuntimeConfig(data_dir=tmp_path, embedding=EmbeddingConfig(provider="test", test_dimensions=64), **kw)  # type: ignore[arg-type]


def save(texts: list[str], gop: str = "s1", mind: str = "personal") -> ops.SaveFrames:
    return ops.SaveFrames(mind_id=mind, frames=[ops.NewFrameOp(gop_id=gop, content=t) for t in texts])


async def counts(path: Path) -> dict[str, int]:
    async with await Mind.open(path, readonly=True) as m:
        return {
            "frames": await m.frames.count(),
            "pending": await m.outbox.count(),
            "vectors": (await m.vectors.counts())["frame_vectors"],
            "entities": await m.knowledge.get_entity_count(),
        }


async def test_save_then_cognify_indexes_everything(tmp_path: Path) -> None:
    async with EmbeddedRuntime(config(tmp_path)) as rt:
        result = await rt.submit("personal", save([
            "Alice Johnson approved the Budget Plan for Project Apollo.",
            "Project Apollo depends on the Data Platform team.",
            "Bob reports to Alice Johnson since March.",
        ]))
        assert [f.created for f in result.frames] == [True, True, True]
        assert await rt.wait_idle(30)
        c = await counts(tmp_path / "personal.mind")
        assert c["frames"] == 3 and c["pending"] == 0 and c["vectors"] == 3
        assert c["entities"] >= 4
        reader = await rt.host.reader("personal")
        search = HybridSearch(reader.db, rt.embedder, vector_index=await reader.vector_index())
        resp = await search.search("who approved the budget", touch=False)
        assert resp.mode == "hybrid" and "approved" in resp.results[0].frame.content
        kg = reader.knowledge
        alice = await kg.find_entity_by_name("Alice Johnson")
        assert alice is not None
        assert {r.relation_type for r in await kg.get_relations_from(alice.id)} >= {"approved", "co_occurs_with"}


async def test_many_concurrent_savers_and_batched_embedding(tmp_path: Path) -> None:
    async with EmbeddedRuntime(config(tmp_path)) as rt:
        await asyncio.gather(*(rt.submit("personal", save([f"saver {i} note {j}" for j in range(5)], gop="shared"))
                               for i in range(40)))
        assert await rt.wait_idle(60)
        c = await counts(tmp_path / "personal.mind")
        assert c == {**c, "frames": 200, "pending": 0, "vectors": 200}
        reader = await rt.host.reader("personal")
        ts = [f.t for f in await reader.frames.get_gop_frames("shared")]
        assert ts == list(range(200))
        assert rt.batcher.stats.batches < 200  # texts from many jobs shared embed calls


async def test_duplicate_job_delivery_changes_nothing(tmp_path: Path) -> None:
    from workers.cognify import run_index_job
    from workers.followups import pending_items

    async with EmbeddedRuntime(config(tmp_path)) as rt:
        rt.runner.dispatch_many = _hold  # type: ignore[method-assign]  # keep jobs to replay them
        await rt.submit("personal", save(["Carol leads the Atlas project at Initech."]))
        reader = await rt.host.reader("personal")
        from queue_schemas import jobs

        waiting = [p.frame_id for p in await reader.outbox.pending()]
        job = jobs.CognifyJob(mind_id="personal", items=await pending_items(reader, waiting))
        await rt.embedder_ready()
        op = await run_index_job(job, rt.batcher)
        first = await rt.submit("personal", op)
        again = await rt.submit("personal", op)  # same op id: applied once
        fresh = await rt.submit("personal", op.model_copy(update={"op_id": new_op_id()}))
        assert first.applied == 1
        assert fresh.applied == 0 and fresh.stale == 1  # no longer pending
        assert type(again).__name__ == "Duplicate"
        c = await counts(tmp_path / "personal.mind")
        assert c["vectors"] == 1
        rels = await reader.db.fetchval("SELECT COUNT(*) FROM knowledge_relations")
        ents = await reader.db.fetchall("SELECT properties FROM knowledge_entities")
        assert rels >= 1 and all('"seen_count"' not in e[0] for e in ents)


async def _hold(mind_id: str, queued: object) -> None:
    return None


async def test_sweep_recovers_frames_whose_jobs_were_lost(tmp_path: Path) -> None:
    async with EmbeddedRuntime(config(tmp_path)) as rt:
        rt.runner.dispatch_many = _hold  # type: ignore[method-assign]  # simulate lost jobs
        await rt.submit("personal", save([f"lost job {i}" for i in range(10)]))
    assert (await counts(tmp_path / "personal.mind"))["pending"] == 10
    async with EmbeddedRuntime(config(tmp_path)) as rt:  # restart
        assert await rt.sweep("personal") == 10
        assert await rt.wait_idle(30)
    c = await counts(tmp_path / "personal.mind")
    assert c["pending"] == 0 and c["vectors"] == 10


async def test_reconcile_requeues_stale_outbox_rows(tmp_path: Path) -> None:
    async with EmbeddedRuntime(config(tmp_path)) as rt:
        original = rt.runner.dispatch_many
        rt.runner.dispatch_many = _hold  # type: ignore[method-assign]
        await rt.submit("personal", save(["forgotten by the queue"]))
        rt.runner.dispatch_many = original  # type: ignore[method-assign]
        result = await rt.reconcile("personal", grace_seconds=0)
        assert len(result.requeue) == 1
        assert await rt.wait_idle(30)
    assert (await counts(tmp_path / "personal.mind"))["vectors"] == 1


async def test_degraded_embedder_leaves_frames_pending(tmp_path: Path) -> None:
    cfg = RuntimeConfig(data_dir=tmp_path, embedding=EmbeddingConfig(provider="auto", inprocess_model="no/such-model",
                                                                       ollama_url="http://127.0.0.1:9"))
    async with EmbeddedRuntime(cfg) as rt:
        await rt.submit("personal", save(["keyword search still works"]))
        assert await rt.wait_idle(60)
        assert rt.embedder.degraded
    c = await counts(tmp_path / "personal.mind")
    assert c["frames"] == 1 and c["pending"] == 1 and c["vectors"] == 0  # no mock vectors written


async def test_bad_op_is_a_clear_error(tmp_path: Path) -> None:
    from mind.errors import InvalidIdError

    async with EmbeddedRuntime(config(tmp_path)) as rt:
        with pytest.raises(InvalidIdError):
            await rt.submit("workspace:../etc", save(["x"]))


async def test_reembed_switches_model_and_reindexes_everything(tmp_path: Path) -> None:
    from mind.embeddings.testing import TestEmbedder

    async with EmbeddedRuntime(config(tmp_path)) as rt:  # 64-dim test model
        await rt.submit("personal", save([f"memory {i} about gardening" for i in range(20)]))
        assert await rt.wait_idle(30)
    new_model = TestEmbedder(dimensions=32)
    cfg = RuntimeConfig(data_dir=tmp_path, embedding=EmbeddingConfig(provider="test", test_dimensions=32))
    async with EmbeddedRuntime(cfg) as rt:
        result = await rt.submit("personal", ops.Reembed(mind_id="personal", provider="test",
                                                        model=new_model.model_id, dim=32))
        assert result.queued == 20
        assert await rt.wait_idle(30)
        reader = await rt.host.reader("personal")
        fp = await reader.vectors.fingerprint()
        assert fp is not None and fp.dim == 32 and fp.model == new_model.model_id
        assert (await reader.vectors.counts())["frame_vectors"] == 20
        assert await reader.outbox.count() == 0
        search = HybridSearch(reader.db, rt.embedder, vector_index=await reader.vector_index())
        assert (await search.search("gardening memory", touch=False)).mode == "hybrid"


async def test_a_job_shares_names_between_its_messages(tmp_path: Path) -> None:
    async with EmbeddedRuntime(config(tmp_path)) as rt:
        await rt.submit("personal", save(["We adopted a beagle and named her Biscuit.",
                                          "Biscuit pulls like crazy on the leash."]))
        await rt.wait_idle()
        reader = await rt.host.reader("personal")
        rows = await reader.db.fetchall(
            "SELECT f.content FROM kg_entity_frames b JOIN knowledge_entities e "
            "ON e.id = b.entity_id JOIN memory_frames f ON f.id = b.frame_id "
            "WHERE e.name = 'Biscuit' ORDER BY f.id")
        assert [r[0] for r in rows] == ["We adopted a beagle and named her Biscuit.",
                                        "Biscuit pulls like crazy on the leash."]


def test_extraction_lets_go_of_the_gil_once_a_slice_has_passed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from workers import cognify

    clock = iter([0.0, 0.0001, 0.0003, 0.0003, 0.0004, 0.0006, 0.0006])
    sleeps: list[float] = []
    monkeypatch.setattr(cognify.time, "perf_counter", lambda: next(clock))
    monkeypatch.setattr(cognify.time, "sleep", sleeps.append)
    pause = cognify._releases_gil(0.00025)  # starts the slice at 0.0
    for _ in range(4):  # at 0.0001 (held), 0.0003 (pause), 0.0004 (held), 0.0006 (pause)
        pause()
    assert sleeps == [0, 0]
