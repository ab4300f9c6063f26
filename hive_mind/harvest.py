"""Facade glue for harvest (chat exports, documents) and ingest (a path, a URL or raw text).

The driver itself is :mod:`workers.harvest`; this module picks the mind, validates the
source, detects ingest types, and waits for indexing when asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from mind.errors import ValidationError
from mind.harvest.registry import SOURCES, adapter
from vocabulary.enums import IMPORTANCES, INGEST_TYPES
from workers.harvest import HarvestOptions, Progress, harvest

if TYPE_CHECKING:
    from hive_mind.facade import HiveMind

_EXTENSIONS: Final = {".pdf": "pdf", ".md": "markdown", ".markdown": "markdown",
                      ".txt": "plaintext", ".text": "plaintext"}


def detect_type(content: str) -> str:
    """The ingest type of ``content`` (spec d, ``ingest_source`` auto-detection)."""
    text = content.strip()
    if text.lower().startswith(("http://", "https://")) and "\n" not in text:
        return "url"
    single_line = "\n" not in text and len(text) < 4096
    if single_line:
        suffix = Path(text).suffix.lower()
        if suffix in _EXTENSIONS:
            return _EXTENSIONS[suffix]
        try:
            if Path(text).expanduser().is_file():
                return "plaintext"
        except OSError:
            pass
    return detect_text_type(text)


def detect_text_type(text: str) -> str:
    """markdown or plaintext for text that is the document itself (never a path or URL)."""
    text = text.strip()
    if text.startswith("#") or "\n## " in text or "\n### " in text:
        return "markdown"
    return "plaintext"


async def run_harvest(
    hm: HiveMind, source: str, path: str | Path, *, workspace: str | None = None,
    progress: Progress | None = None, auto_sync: bool | None = None,
    interval_hours: int | None = None, wait: bool = True, importance: str = "normal",
    tags: list[str] | None = None, label: str | None = None, rereadable: bool | None = None,
) -> dict[str, Any]:
    """``label``: what the import is shown as; a labelled ``path`` is taken for a private copy
    (a temp file) that auto-sync cannot read again, unless ``rereadable`` (the caller named
    ``path`` itself and shows it under another name)."""
    if source not in SOURCES:
        raise ValidationError(f"unknown harvest source {source!r}; use one of: "
                              f"{', '.join(SOURCES)}")
    if importance not in IMPORTANCES:
        raise ValidationError(f"importance must be one of {list(IMPORTANCES)}")
    mind_id = hm.mind_id(workspace)
    await hm.resume_pending(mind_id)
    target: Path | str = path if isinstance(path, str) and source in (
        "url", "markdown", "plaintext") else Path(path).expanduser()
    options = HarvestOptions(importance=importance, tags=list(tags or []),
                             auto_sync=auto_sync, interval_hours=interval_hours, label=label,
                             rereadable=rereadable)
    summary = await harvest(
        hm.runtime.host, mind_id, source, target, options=options, progress=progress,
        wait_idle=hm.runtime.wait_idle if wait else None, parse=adapter(source))
    summary["workspace"] = workspace or "personal"
    return summary


async def run_ingest(
    hm: HiveMind, content: str, *, type_hint: str = "auto", importance: str = "normal",
    tags: list[str], workspace: str | None = None, wait: bool = True,
    label: str | None = None,
) -> dict[str, Any]:
    """``label``: ``content`` is a private copy (a temp file) shown under this name."""
    if not isinstance(content, str) or not content.strip():
        raise ValidationError("content must be a path, a URL or non-empty text")
    if type_hint not in INGEST_TYPES:
        raise ValidationError(f"type_hint must be one of {list(INGEST_TYPES)}")
    kind = detect_type(content) if type_hint == "auto" else type_hint
    target = content.strip() if kind in ("url", "pdf") or "\n" not in content.strip() \
        else content
    summary = await run_harvest(hm, kind, target, workspace=workspace, wait=wait,
                                importance=importance, tags=tags, label=label)
    out = {"source_type": kind, "items_parsed": summary["items"],
           "frames_created": summary["frames_created"],
           "duplicates_skipped": summary["duplicates_skipped"],
           "pending_index": summary.get("pending_index", 0), "status": summary["status"],
           "workspace": summary["workspace"]}
    if tags:
        out["tags"] = tags
    return out
