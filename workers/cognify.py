"""The cognify job (split into queued work): extraction + one batched embedding.

Workers never open a mind file: a job carries the frames' text, the worker extracts entities
and relations (pure), embeds the whole frames and the chunks of long ones through the shared
micro-batcher, and returns an ``ApplyIndex`` write-op for the owning mind. Its op id is derived
from the job id, so a re-delivered job produces an op the owner has already applied.

Extraction is pure Python, so it holds the GIL while it runs: it runs on **one** thread per
process (:data:`EXTRACTION`, interactive jobs' extraction before bulk ones':
:mod:`mind.priority_executor`), not on the default pool where up to six jobs' extractions ran at
once, and it lets go of the GIL between messages once it has held it :data:`GIL_SLICE`. Several
CPU-bound threads starved the event loop and the writer's SQLite thread of the GIL at each of
the dozen hand-offs a save's commit makes: a one-frame save committed in 30-120 ms while a job's
extraction ran, 3-4 ms without (bench/product/ack_latency.py --trace). The pause is
a ``time.sleep(0)``, ~25 us of CPU on a 2-core VM: after every message (~40 us of extraction
now) it cost more than the extraction.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

import numpy as np

from mind.embeddings.base import Embedder, backend_switch_hint
from mind.errors import EmbeddingFingerprintError
from mind.frames.content_hash import hash_frame_content
from mind.knowledge.extraction import (
    ExtractedEntity,
    Extraction,
    extract_relations,
    name_words,
)
from mind.priority_executor import PriorityExecutor, work_priority
from mind.retrieval.indexer import EmbedItem, plan_embeddings
from queue_schemas import jobs, ops
from queue_schemas.vector import Fingerprint, Vector
from workers.batcher import EmbeddingBatcher
from workers.constants import INDEX_OP_PREFIX

EXTRACTION = PriorityExecutor("hm-extract")
GIL_SLICE = 0.00025  # s of extraction between two pauses: a message took that before (aa8597e)


def _releases_gil(slice_seconds: float = GIL_SLICE) -> Callable[[], None]:
    """A pause that lets go of the GIL when ``slice_seconds`` passed since the last one."""
    last = time.perf_counter()

    def pause() -> None:
        nonlocal last
        if time.perf_counter() - last >= slice_seconds:
            time.sleep(0)  # a blocking call: waiting threads (the loop, the writer) take the GIL
            last = time.perf_counter()

    return pause


def _no_pause() -> None:
    return None


def _vector(row: np.ndarray) -> Vector:
    return Vector.from_bytes(np.asarray(row, dtype="<f4").tobytes())


def extract_graphs(items: Sequence[jobs.CognifyItem], pause: Callable[[], None] = _no_pause
            ) -> list[tuple[list[ops.EntityResult], list[ops.RelationResult]]]:
    """Entities and relations of each item: the extraction half of a cognify job. Names one
    message uses mid-sentence count at the start of a sentence in the others of the same job
    (mostly one conversation): "Biscuit pulls on the leash" is about the dog another message
    named. ``pause`` runs after each item of each pass."""
    passes, first = [], []
    for item in items:
        passes.append(Extraction(item.content))
        first.append(passes[-1].entities())
        pause()
    known = set().union(*(name_words(found) for found in first))

    def entities(content: str, found: list[ExtractedEntity], extraction: Extraction
                 ) -> list[ExtractedEntity]:
        lowered = content.casefold()  # a second pass only where another message's name occurs
        if any(word in lowered for word in known - name_words(found)):
            return extraction.entities(known)
        return found

    out = []
    for item, found, extraction in zip(items, first, passes, strict=True):
        out.append(_graph(item.content, entities(item.content, found, extraction)))
        pause()
    return out


def _graph(content: str, entities: Sequence[ExtractedEntity]
           ) -> tuple[list[ops.EntityResult], list[ops.RelationResult]]:
    relations = extract_relations(content, entities)
    return (
        [ops.EntityResult(name=e.name, entity_type=e.entity_type, confidence=e.confidence)
         for e in entities],
        [ops.RelationResult(source=r.source, target=r.target, relation_type=r.relation_type,
                            confidence=r.confidence) for r in relations],
    )


def check_model(job: jobs.CognifyJob | jobs.ReembedJob, embedder: Embedder) -> Fingerprint:
    runtime = Fingerprint(
        provider=embedder.provider, model=embedder.model_id, dim=int(embedder.dimensions)
    )
    wanted = job.fingerprint if isinstance(job, jobs.ReembedJob) else job.fingerprint_hint
    if wanted is not None and wanted != runtime:
        raise EmbeddingFingerprintError(
            f"mind {job.mind_id} is indexed with {wanted.provider}/{wanted.model} "
            f"({wanted.dim} dims) but this worker embeds with {runtime.provider}/"
            f"{runtime.model} ({runtime.dim}); configure the same model or run "
            f"`hive-mind maintenance reembed`{backend_switch_hint(wanted.model, runtime.model)}",
            stored=wanted.model_dump(), runtime=runtime.model_dump(),
        )
    return runtime


async def run_index_job(
    job: jobs.CognifyJob | jobs.ReembedJob, batcher: EmbeddingBatcher
) -> ops.ApplyIndex:
    """Compute the ApplyIndex op for a cognify (or re-embed) job."""
    fingerprint = check_model(job, batcher.embedder)
    items = job.items
    plan: list[EmbedItem] = plan_embeddings([(i.frame_id, i.content) for i in items])
    extract = isinstance(job, jobs.CognifyJob)

    def graphs_of() -> list[tuple[list[ops.EntityResult], list[ops.RelationResult]]]:
        return extract_graphs(items, _releases_gil()) if extract else [([], []) for _ in items]

    with work_priority(job.priority):
        extraction = asyncio.get_running_loop().run_in_executor(EXTRACTION, graphs_of)
    graphs, vectors = await asyncio.gather(
        extraction, batcher.embed([p.text for p in plan], priority=job.priority))
    return ops.ApplyIndex(
        op_id=INDEX_OP_PREFIX + job.op_id,
        mind_id=job.mind_id,
        fingerprint=fingerprint,
        results=index_results(items, plan, vectors, graphs),
    )


def index_results(
    items: Sequence[jobs.CognifyItem],
    plan: Sequence[EmbedItem],
    vectors: np.ndarray,
    graphs: Sequence[tuple[list[ops.EntityResult], list[ops.RelationResult]]],
) -> list[ops.FrameIndexResult]:
    """The ``apply_index`` results of a job's items: each frame's vector and its chunks' (the
    rows of ``vectors``, in the order of the embedding ``plan``) with its ``graphs`` entry
    (:func:`extract_graphs`)."""
    whole: dict[int, Vector] = {}
    chunks: dict[int, list[ops.ChunkResult]] = {}
    for p, row in zip(plan, vectors, strict=True):
        if p.chunk is None:
            whole[p.frame_id] = _vector(row)
        else:
            chunks.setdefault(p.frame_id, []).append(
                ops.ChunkResult(chunk_idx=p.chunk.chunk_idx, content=p.chunk.content,
                                char_start=p.chunk.char_start, char_end=p.chunk.char_end,
                                vector=_vector(row))
            )
    return [
        ops.FrameIndexResult(
            frame_id=item.frame_id,
            content_hash=item.content_hash or hash_frame_content(item.content),
            vector=whole[item.frame_id],
            chunks=chunks.get(item.frame_id, []),
            entities=entities,
            relations=relations,
        )
        for item, (entities, relations) in zip(items, graphs, strict=True)
    ]
