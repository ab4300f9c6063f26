"""Limits of caller input and of job/op payloads (docs/security.md, "Limits").

The engine checks caller input against them in :mod:`mind.bounds`, the job/op schemas in
:mod:`queue_schemas.fields`, the HTTP and MCP schemas announce them (:mod:`hive_mind.limits`).
"""

from __future__ import annotations

from typing import Final

# Integers: every id is an SQLite INTEGER; durations stay inside the calendar datetime can do.
INT64_MAX: Final = 2**63 - 1  # largest frame / entity / relation / awareness item id
MAX_TTL_MINUTES: Final = 3653 * 24 * 60  # awareness ttl: 10 years
MAX_AGE_DAYS: Final = 36_525  # compaction ages (max_temp_age_days, …): 100 years
MAX_SYNC_INTERVAL_HOURS: Final = 3653 * 24  # harvest auto-sync interval: 10 years
AWARENESS_PRIORITY_MAX: Final = 10  # priority 0-10 at every public surface

# Text, in characters (str length). Names refuse control and bidi characters (mind.bounds).
MAX_FRAME_CHARS: Final = 2_000_000  # one frame's content
MAX_ID_CHARS: Final = 200  # session (GOP) ids, op ids, job ids, model names
MAX_EXTERNAL_ID_CHARS: Final = 512  # a harvested item's stable external id
MAX_QUERY_CHARS: Final = 10_000  # recall query
MAX_NAME_CHARS: Final = 500  # entity names, relation endpoints, entity search query
MAX_LABEL_CHARS: Final = 100  # entity / relation types, providers, harvest sources
MAX_SHORT_NAME_CHARS: Final = 200  # identity name/role/department, workspace name and model
MAX_GROUP_CHARS: Final = 100  # workspace group
MAX_ICON_CHARS: Final = 32  # workspace icon (an emoji sequence)
MAX_PROFILE_TEXT_CHARS: Final = 16_384  # identity personality, capabilities
MAX_SYSTEM_PROMPT_CHARS: Final = 65_536  # identity system_prompt
MAX_AWARENESS_CHARS: Final = 4_096  # awareness item content
MAX_JSON_BYTES: Final = 65_536  # metadata / properties of one frame, entity, relation, item
MAX_TAGS: Final = 32  # ingest tags: how many
MAX_TAG_CHARS: Final = 100  # ingest tags: each
MAX_FRAME_REFERENCES: Final = 100  # frames one B-frame cross-references

# Job / op payloads (queue_schemas)
MAX_VECTOR_DIM: Final = 16_384
MAX_ITEMS_PER_JOB: Final = 10_000  # cognify / reembed items in one job
MAX_FRAMES_PER_OP: Final = 10_000  # save_frames / harvest_batch frames in one op
MAX_IDS_PER_OP: Final = 100_000  # touch frame ids, harvest conversation ids

# Compaction defaults (original engine): ages after which frames go
COMPACT_TEMP_DAYS: Final = 30
COMPACT_DEPRECATED_DAYS: Final = 90

_SHOWN: Final = 40  # characters of a refused value quoted in a message


def shown(value: object) -> str:
    """A refused value as quoted in a message: short, whatever its size."""
    if isinstance(value, int) and value.bit_length() > 128:  # repr may even refuse it
        return f"an integer of {value.bit_length():,} bits"
    if isinstance(value, str) and len(value) > _SHOWN:
        return f"{value[:_SHOWN]!r}… ({len(value):,} characters)"
    text = repr(value)
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}…"


def frame_text(value: object) -> str:
    """Frame content: non-blank text of at most :data:`MAX_FRAME_CHARS` characters, no NUL
    and no lone surrogates (it must encode as UTF-8)."""
    if not isinstance(value, str):
        raise ValueError(f"frame content must be text, got {type(value).__name__}")
    if not value.strip():
        raise ValueError("frame content is empty")
    if len(value) > MAX_FRAME_CHARS:
        raise ValueError(
            f"frame content is {len(value):,} characters; the limit is {MAX_FRAME_CHARS:,} "
            "(split the document before saving)"
        )
    if "\x00" in value:
        raise ValueError("frame content contains NUL bytes (binary data is not text)")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"frame content is not valid Unicode text: {exc.reason}") from None
    return value
