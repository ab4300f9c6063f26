"""Vector indexing of frames: chunk, embed in one batch, store, clear the outbox.

:func:`plan_embeddings` is pure (which texts to embed for which frames); :func:`apply_vectors`
stores a batch of vectors idempotently (upserts; chunks replaced; outbox rows cleared);
:func:`index_pending` runs both in-process for the standalone engine. The queued pipeline
(workers) embeds the plan elsewhere and sends the vectors back to the mind's owner, which calls
:func:`apply_vectors`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mind.chunker import MIN_CHUNK_CHARS, chunk_text
from mind.db import Database
from mind.embeddings.base import DEFAULT_MAX_CHARS, Embedder, cap_text
from mind.errors import ConfigurationError
from mind.frame_queries import FrameQueries
from mind.outbox import Outbox
from mind.vectors import ChunkSpan, VectorStore


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


async def apply_vectors(
    db: Database,
    fingerprint: tuple[str, str, int],
    items: Sequence[EmbedItem],
    vectors: np.ndarray,
) -> IndexResult:
    """Store vectors for planned items in one transaction and clear their outbox rows."""
    if len(items) != len(vectors):
        raise ValueError(f"{len(items)} items but {len(vectors)} vectors")
    store = VectorStore(db)
    async with db.transaction():
        await store.ensure_fingerprint(*fingerprint)
        whole = [(it.frame_id, vectors[i]) for i, it in enumerate(items) if it.chunk is None]
        stored = await store.upsert_frame_vectors(whole)
        by_frame: dict[int, tuple[list[ChunkSpan], list[np.ndarray]]] = {}
        for i, it in enumerate(items):
            if it.chunk is not None:
                spans, vecs = by_frame.setdefault(it.frame_id, ([], []))
                spans.append(it.chunk)
                vecs.append(vectors[i])
        chunks = 0
        for frame_id, (spans, vecs) in by_frame.items():
            chunks += await store.replace_chunks(frame_id, spans, vecs)
        await Outbox(db).clear(list(dict.fromkeys(it.frame_id for it in items)))
    return IndexResult(stored, chunks)


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
    return await apply_vectors(db, fp, items, vectors)


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
