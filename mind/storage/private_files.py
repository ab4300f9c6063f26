"""Owner-only files and directories: what a mind holds is private (issue #12, item 12).

* Directories this code creates (the data dir, ``workspaces/`` and each workspace folder, the
  parent of a mind file) are made ``0700``, each level explicitly, whatever the umask.
  A directory that already exists keeps its mode: it may be one the user chose and shares.
* A mind file is created ``0600`` before SQLite opens it (SQLite then gives its ``-wal`` and
  ``-shm`` files the same mode). A mind file, ``-wal`` or ``-shm`` that already exists with
  group or other bits (made by an older version under a 022 umask) is tightened to owner-only
  when it is opened; a file the process may not chmod (another user's) is left as it is, with
  a warning.
* Small metadata files (workspace registry, ``workspace.json``) are written ``0600`` through a
  temp file and an atomic rename.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path
from typing import Final

log = logging.getLogger(__name__)

PRIVATE_DIR: Final = 0o700
PRIVATE_FILE: Final = 0o600
MIND_FILE_SUFFIXES: Final = ("", "-wal", "-shm")


def make_private_dir(path: Path) -> None:
    """``path`` and any missing parents, each created owner-only (``0700``)."""
    missing: list[Path] = []
    here = path
    while not here.exists():
        missing.append(here)
        if here.parent == here:
            break
        here = here.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:  # another process made it first: not ours to chmod
            continue
        os.chmod(folder, PRIVATE_DIR)  # the umask may have removed bits from 0700
    if not path.is_dir():
        raise NotADirectoryError(f"{path} exists and is not a directory")


def tighten(path: Path) -> None:
    """Remove group and other permission bits from an existing file (no-op if none)."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return
    if mode & 0o077:
        try:
            os.chmod(path, mode & 0o700)
        except PermissionError:
            log.warning("%s is readable by other users and cannot be made private (mode %o)",
                        path, mode)


def prepare_mind_file(path: Path) -> None:
    """Create the mind file ``0600`` if it does not exist; tighten it and its WAL files."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
    for suffix in MIND_FILE_SUFFIXES:
        tighten(Path(f"{path}{suffix}"))


def write_private_text(path: Path, text: str) -> None:
    """Replace ``path`` atomically with ``text`` (UTF-8), mode ``0600``."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    try:
        os.fchmod(fd, PRIVATE_FILE)  # an older temp file may have had a wider mode
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            fd = -1
            out.write(text)
    finally:
        if fd != -1:
            os.close(fd)
    os.replace(tmp, path)
