"""The engine's input limits (:mod:`vocabulary.limits`, checked by :mod:`mind.bounds`) as pydantic
field types, so the HTTP request models and the MCP tool schemas announce them (``maximum``,
``maxLength`` in OpenAPI / the tool's input schema) and refuse out-of-range values before any
work (HTTP 422 ``invalid``; an ``invalid`` tool result). The engine checks again: these are the
schema's mirror, not the rule."""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import Field

from mind.storage.idempotency import MAX_KEY_CHARS
from vocabulary.limits import (
    AWARENESS_PRIORITY_MAX,
    INT64_MAX,
    MAX_AGE_DAYS,
    MAX_AWARENESS_CHARS,
    MAX_FRAME_CHARS,
    MAX_FRAME_REFERENCES,
    MAX_GROUP_CHARS,
    MAX_ICON_CHARS,
    MAX_ID_CHARS,
    MAX_LABEL_CHARS,
    MAX_NAME_CHARS,
    MAX_PROFILE_TEXT_CHARS,
    MAX_QUERY_CHARS,
    MAX_SHORT_NAME_CHARS,
    MAX_SYNC_INTERVAL_HOURS,
    MAX_SYSTEM_PROMPT_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TTL_MINUTES,
)

MAX_PATH_CHARS: Final = 4096  # a server path or URL (harvest, ingest)
MAX_FILENAME_CHARS: Final = 255
MAX_TIMESTAMP_CHARS: Final = 64

RowId = Annotated[int, Field(ge=1, le=INT64_MAX)]
FrameRefs = Annotated[list[RowId], Field(min_length=1, max_length=MAX_FRAME_REFERENCES)]
"""A frame, entity or awareness item id: an SQLite INTEGER (``1 … 2**63-1``)."""
TtlMinutes = Annotated[int, Field(ge=1, le=MAX_TTL_MINUTES)]
AgeDays = Annotated[int, Field(ge=1, le=MAX_AGE_DAYS)]
IntervalHours = Annotated[int, Field(ge=1, le=MAX_SYNC_INTERVAL_HOURS)]
Priority = Annotated[int, Field(ge=0, le=AWARENESS_PRIORITY_MAX)]

Content = Annotated[str, Field(min_length=1, max_length=MAX_FRAME_CHARS)]
Query = Annotated[str, Field(max_length=MAX_QUERY_CHARS)]
SessionId = Annotated[str, Field(max_length=MAX_ID_CHARS)]
Timestamp = Annotated[str, Field(max_length=MAX_TIMESTAMP_CHARS)]
IdempotencyKey = Annotated[str, Field(min_length=1, max_length=MAX_KEY_CHARS,
                                      pattern=r"^[!-~]+$")]
"""A client's name for one write (printable ASCII, no spaces): :mod:`mind.storage.idempotency`."""
EntityName = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]
EntityQuery = Annotated[str, Field(max_length=MAX_NAME_CHARS)]
TypeName = Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS)]
ShortName = Annotated[str, Field(max_length=MAX_SHORT_NAME_CHARS)]
ProfileText = Annotated[str, Field(max_length=MAX_PROFILE_TEXT_CHARS)]
SystemPrompt = Annotated[str, Field(max_length=MAX_SYSTEM_PROMPT_CHARS)]
AwarenessText = Annotated[str, Field(min_length=1, max_length=MAX_AWARENESS_CHARS)]
GroupName = Annotated[str, Field(max_length=MAX_GROUP_CHARS)]
Icon = Annotated[str, Field(max_length=MAX_ICON_CHARS)]
Tag = Annotated[str, Field(min_length=1, max_length=MAX_TAG_CHARS)]
Tags = Annotated[list[Tag], Field(max_length=MAX_TAGS)]
PathText = Annotated[str, Field(max_length=MAX_PATH_CHARS)]
FileName = Annotated[str, Field(max_length=MAX_FILENAME_CHARS)]
