"""What a frame's indexing embeds: the whole frame, and the chunks of a long one.

:func:`plan_embeddings` is pure (which texts to embed for which frames); the cognify job
(:mod:`workers.cognify`) embeds the plan in one batch and the mind's owner stores the vectors
(:func:`mind.cognify_apply.apply_index`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mind.embeddings.base import DEFAULT_MAX_CHARS, cap_text
from mind.retrieval.chunker import MAX_CHARS, chunk_text
from mind.retrieval.vectors import ChunkSpan


@dataclass(frozen=True, slots=True)
class EmbedItem:
    frame_id: int
    text: str
    chunk: ChunkSpan | None = None  # None = the whole-frame vector


def plan_embeddings(
    frames: Sequence[tuple[int, str]], *, max_chars: int = DEFAULT_MAX_CHARS
) -> list[EmbedItem]:
    """One whole-frame item per frame (text capped), plus chunk items for a frame longer than
    one window (:mod:`mind.retrieval.chunker`)."""
    items: list[EmbedItem] = []
    for frame_id, content in frames:
        items.append(EmbedItem(frame_id, cap_text(content, max_chars)))
        if len(content) > MAX_CHARS:
            for c in chunk_text(content):
                items.append(
                    EmbedItem(
                        frame_id,
                        cap_text(c.text, max_chars),
                        ChunkSpan(c.index, c.text, c.char_start, c.char_end),
                    )
                )
    return items
