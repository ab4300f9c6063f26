"""MemoryLinker: "which memories are related to this text?" (seed §6, engine-spec a.14, f.3).

A thin wrapper over :class:`mind.search.HybridSearch` used by the cognify step after a frame is
indexed. It differs from a recall in three ways:

* linking is not an access: the search runs with ``touch=False``, so linking never bumps
  ``access_count``/``last_accessed`` (which would skew the popularity and recency signals);
* catch-up detection is off: a frame whose text says "where were we" is linked by similarity,
  not answered with the briefing;
* the frame itself never links to itself: ids in ``exclude_ids`` and any frame whose content is
  identical (ignoring surrounding whitespace) to the text are dropped.

Threshold (fixes f.3). The original filtered raw RRF ``finalScore`` (≈ 0.01–0.04) with 0.1, so it
never linked anything. Here the threshold applies to the normalized ``score`` in [0, 1]
(:mod:`mind.scoring`, :mod:`mind.search`): 1.0 = top of both lanes for a fresh, normal memory;
a hit from only one lane scores at most 0.5 (rank r of one lane: 0.5 × 10/(10 + r)). The
default :data:`DEFAULT_LINK_THRESHOLD` = 0.3 therefore keeps memories found by both lanes and
single-lane hits within the top 6 of their lane, and drops single-lane hits further down.
Scores are rank-based: in a tiny mind every frame is somebody's nearest neighbour, so callers
that need "truly similar" should raise the threshold (≥ 0.6 ≈ found by both lanes).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from mind.errors import ValidationError
from mind.search import MAX_LIMIT, HybridSearch

DEFAULT_LINK_LIMIT = 5
DEFAULT_LINK_THRESHOLD = 0.3


@dataclass(frozen=True, slots=True)
class MemoryLink:
    """A related frame: its id, its text and the normalized search score in [0, 1]."""

    frame_id: int
    content: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _validate(limit: int, threshold: float) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ValidationError(f"limit must be an integer between 1 and {MAX_LIMIT}")
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise ValidationError("threshold must be a number in [0, 1]")
    if not 0.0 <= float(threshold) <= 1.0:
        raise ValidationError(
            f"threshold {threshold} is outside [0, 1]; it applies to the normalized score"
        )


class MemoryLinker:
    """Finds frames related to a text, on the normalized score scale."""

    def __init__(self, search: HybridSearch) -> None:
        self._search = search

    async def find_related(
        self,
        content: str,
        limit: int = DEFAULT_LINK_LIMIT,
        threshold: float = DEFAULT_LINK_THRESHOLD,
        *,
        exclude_ids: Iterable[int] = (),
        session: str | None = None,
    ) -> list[MemoryLink]:
        """Up to ``limit`` related frames with ``score >= threshold``, best first.

        ``exclude_ids`` (typically the new frame's own id) and frames whose content equals
        ``content`` are never returned. ``session`` restricts candidates to one session.
        """
        if not isinstance(content, str):
            raise ValidationError("content must be text")
        _validate(limit, threshold)
        if not content.strip():
            return []
        excluded = {int(i) for i in exclude_ids}
        # Ask for a few more than needed: the excluded frames (and self-duplicates) come back
        # from the search too, usually at the very top.
        fetch = min(MAX_LIMIT, limit + len(excluded) + 2)
        response = await self._search.search(
            content, limit=fetch, session=session, touch=False, catch_up=False
        )
        own_text = content.strip()
        links: list[MemoryLink] = []
        for result in response.results:
            frame = result.frame
            if frame.id in excluded or frame.content.strip() == own_text:
                continue
            if result.score < threshold:
                continue
            links.append(MemoryLink(frame.id, frame.content, result.score))
            if len(links) >= limit:
                break
        return links
