"""What identifies a harvest input: a path label and a content hash (resume and "unchanged")."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Final

from mind.harvest.errors import HarvestError
from mind.harvest.inputs import check_archive

CHUNK: Final = 1 << 20
RAW_TEXT_LABEL: Final = "<text>"
TEXT_SOURCES: Final = ("markdown", "plaintext")  # may be given raw text instead of a path


def _file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            while chunk := fh.read(CHUNK):
                digest.update(chunk)
    except OSError as exc:
        raise HarvestError(f"cannot read ({exc.strerror or exc})", path=str(path)) from exc
    return digest.hexdigest()


def _tree_hash(root: Path) -> str:
    """Names, sizes and modification times of every file under a directory (not contents:
    a ``~/.claude`` tree can be large and only changed files matter)."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            full = Path(dirpath) / name
            try:
                st = full.stat()
            except OSError:
                continue
            rel = full.relative_to(root).as_posix()
            digest.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def fingerprint_target(source: str, target: Path | str) -> tuple[str, str]:
    """``(label, content_hash)``: the absolute path (or URL, or ``<text>``) and a hash of what
    it holds now (empty for URLs: their content is only known after fetching)."""
    if source == "url":
        return str(target), ""
    if isinstance(target, str) and source in TEXT_SOURCES and not _is_path(target):
        return RAW_TEXT_LABEL, hashlib.sha256(target.encode("utf-8")).hexdigest()
    path = Path(target).expanduser().resolve()
    if path.is_dir():
        return str(path), _tree_hash(path)
    if not path.exists():
        raise HarvestError("no such file or directory", path=str(path))
    check_archive(path)
    return str(path), _file_hash(path)


def _is_path(text: str) -> bool:
    """A string names a path when it is short, single-line and exists on disk."""
    if len(text) > 4096 or "\n" in text or "\0" in text:
        return False
    try:
        return Path(text).expanduser().exists()
    except OSError:
        return False
