"""Frame value types: what the store returns and what callers ask it to write."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mind.storage.jsonfields import load_object
from vocabulary.enums import FrameSource, FrameType, Importance

FRAME_COLUMNS = (
    "id, frame_type, gop_id, t, base_frame_id, content, importance, source, access_count, "
    "created_at, recorded_at, last_accessed, content_hash, metadata, external_id"
)


@dataclass(slots=True)
class Frame:
    id: int
    frame_type: FrameType
    gop_id: str
    t: int
    base_frame_id: int | None
    content: str
    importance: Importance
    source: FrameSource
    access_count: int
    created_at: str
    recorded_at: str
    last_accessed: str
    content_hash: str
    metadata: dict[str, Any] = field(default_factory=dict)
    external_id: str | None = None

    @classmethod
    def from_row(cls, row: Any) -> Frame:
        return cls(
            id=row[0],
            frame_type=row[1],
            gop_id=row[2],
            t=row[3],
            base_frame_id=row[4],
            content=row[5],
            importance=row[6],
            source=row[7],
            access_count=row[8],
            created_at=row[9],
            recorded_at=row[10],
            last_accessed=row[11],
            content_hash=row[12],
            metadata=load_object(row[13]),
            external_id=row[14],
        )


class FrameToWrite(Protocol):
    """What the store reads of a frame to write: a :class:`NewFrame`, or any object with its
    attributes (the owner hands over its write-ops' frames as they are, no copy per frame)."""

    @property
    def gop_id(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def frame_type(self) -> FrameType: ...
    @property
    def importance(self) -> Importance: ...
    @property
    def source(self) -> FrameSource: ...
    @property
    def base_frame_id(self) -> int | None: ...
    @property
    def created_at(self) -> str | None: ...
    @property
    def metadata(self) -> Mapping[str, Any] | None: ...
    @property
    def external_id(self) -> str | None: ...
    @property
    def references(self) -> Sequence[int] | None: ...
    @property
    def dedup(self) -> bool: ...


@dataclass(slots=True)
class NewFrame:
    """A frame to write.

    ``frame_type`` P with no ``base_frame_id`` attaches to the session's latest I-frame
    (including one earlier in the same batch). ``dedup`` applies to I-frames without an
    ``external_id`` and matches the frames saved without one; frames with an ``external_id`` are
    idempotent by that id instead.
    """

    gop_id: str
    content: str
    frame_type: FrameType = "I"
    importance: Importance = "normal"
    source: FrameSource = "user_stated"
    base_frame_id: int | None = None
    created_at: str | None = None
    metadata: dict[str, Any] | None = None
    external_id: str | None = None
    references: list[int] | None = None
    dedup: bool = True

    @classmethod
    def of(cls, frame: FrameToWrite, metadata: Mapping[str, Any] | None) -> NewFrame:
        """``frame`` as a :class:`NewFrame` with other ``metadata``."""
        return cls(frame.gop_id, frame.content, frame.frame_type, frame.importance, frame.source,
                   frame.base_frame_id, frame.created_at, dict(metadata or {}),
                   frame.external_id, list(frame.references or ()), frame.dedup)


@dataclass(slots=True)
class SaveResult:
    frame: Frame
    created: bool
    upgraded: bool = False
