"""Vector indexing of frames: chunk, embed in one batch, store, clear the outbox.

:func:`plan_embeddings` is pure (which texts to embed for which frames); :func:`assemble`
groups the vectors per frame; :func:`mind.cognify_apply.apply_index` stores them
idempotently.
:func:`index_pending` runs all of it in-process for the standalone engine; the queued pipeline
(workers) embeds the plan elsewhere and the mind's owner applies the results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mind.cognify_apply import FrameIndex, apply_index
from mind.embeddings.base import DEFAULT_MAX_CHARS, Embedder, cap_text
from mind.errors import ConfigurationError
from mind.frames.outbox import Outbox
from mind.frames.queries import FrameQueries
from mind.retrieval.chunker import MIN_CHUNK_CHARS, chunk_text
from mind.retrieval.vectors import ChunkSpan
from mind.storage.db import Database


@dataclass(frozen=True, slots=True)
class EmbedItem:
    frame_id: int
    text: str
    chunk: ChunkSpan | None = None  # None = the whole-frame vector


@dataclass(frozen=True, slots=True)
class IndexResult:
    frames: int
    chunks: int

    def as_dict(self) -> dict[str, int]:
        return {"frames": self.frames, "chunks": self.chunks}


def plan_embeddings(
    frames: Sequence[tuple[int, str]], *, max_chars: int = DEFAULT_MAX_CHARS
) -> list[EmbedItem]:
    """One whole-frame item per frame (text capped), plus chunk items for long frames."""
    items: list[EmbedItem] = []
    for frame_id, content in frames:
        items.append(EmbedItem(frame_id, cap_text(content, max_chars)))
        if len(content) > MIN_CHUNK_CHARS:
            for c in chunk_text(content):
                items.append(
                    EmbedItem(
                        frame_id,
                        cap_text(c.text, max_chars),
                        ChunkSpan(c.index, c.text, c.char_start, c.char_end),
                    )
                )
    return items


def assemble(
    hashes: dict[int, str], items: Sequence[EmbedItem], vectors: np.ndarray
) -> list[FrameIndex]:
    """Group planned items and their vectors into one :class:`FrameIndex` per frame."""
    if len(items) != len(vectors):
        raise ValueError(f"{len(items)} items but {len(vectors)} vectors")
    whole: dict[int, np.ndarray] = {}
    chunks: dict[int, list[tuple[ChunkSpan, np.ndarray]]] = {}
    for item, vector in zip(items, vectors, strict=True):
        if item.chunk is None:
            whole[item.frame_id] = vector
        else:
            chunks.setdefault(item.frame_id, []).append((item.chunk, vector))
    return [
        FrameIndex(fid, hashes[fid], vec, tuple(chunks.get(fid, ())))
        for fid, vec in whole.items()
        if fid in hashes
    ]


async def embed_items(embedder: Embedder, items: Sequence[EmbedItem]) -> np.ndarray:
    if embedder.degraded:
        raise ConfigurationError(
            f"embedder {embedder.provider}/{embedder.model_id} is degraded; "
            "refusing to write its vectors into a mind"
        )
    return await embedder.embed_batch([it.text for it in items])


async def index_frames(
    db: Database, embedder: Embedder, frame_ids: Sequence[int]
) -> IndexResult:
    frames = await FrameQueries(db).get_many(frame_ids)
    items = plan_embeddings([(f.id, f.content) for f in frames.values()])
    if not items:
        await Outbox(db).clear(list(frame_ids))  # frames gone: nothing left to index
        return IndexResult(0, 0)
    vectors = await embed_items(embedder, items)
    fp = (embedder.provider, embedder.model_id, int(embedder.dimensions))
    hashes = {f.id: f.content_hash for f in frames.values()}
    stats = await apply_index(db, fp, assemble(hashes, items, vectors))
    return IndexResult(stats.applied, stats.chunks)


async def index_pending(db: Database, embedder: Embedder, *, batch: int = 256) -> IndexResult:
    """Drain the outbox in batches (standalone engine; workers do this in the queued setup)."""
    frames = chunks = 0
    while True:
        pending = await Outbox(db).pending(batch)
        if not pending:
            return IndexResult(frames, chunks)
        result = await index_frames(db, embedder, [p.frame_id for p in pending])
        frames += result.frames
        chunks += result.chunks
