"""``hive-mind backup DIR`` and ``hive-mind restore DIR``: every mind file of a data dir and its
workspace registry, copied online and put back checked.

**Backup** runs beside ``serve`` and the workers on the host that holds the data dir. Each mind
file is copied with SQLite's online backup in one read transaction
(:func:`mind.storage.backup.online_copy`): the copy holds every write committed before its copy
began — so every save acknowledged before the backup began, since a save is acknowledged
after its commit — while saves go on. The registry (``workspaces-meta.json``, each
``workspaces/<id>/workspace.json``) is copied as it is (written atomically, so never half).
``DIR/manifest.json``, written last, names each file with its mind id, size, SHA-256, schema
version and fencing record: a backup without a manifest is incomplete.

**Restore** reads only what the manifest names, each name checked against the data dir's
layout (a valid slug in the one place it may go: the manifest is data, never a path), and
verifies everything before it writes anything: each file's size and checksum, each mind's
``PRAGMA integrity_check`` and a schema version this build can open. It refuses to replace an
existing mind (or one this host recorded as moved away or awaited) without ``force``. Each
mind is written through SQLite's backup API into its place, and its fencing record becomes the
restoring host's own — this host's shard and epoch when sharded (a mind the shard map gives
another shard is refused), none when not — so no record of the host the backup came from
blocks or confuses the new one. Stop ``serve`` and the workers of the data dir first: a
running host keeps what it loaded of a mind.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from actors.constants import PERSONAL_FILE, WORKSPACE_FILE, WORKSPACE_META, WORKSPACES_DIR
from hive_mind.workspaces import INDEX_FILE, WorkspaceManager
from mind.errors import ConflictError, StorageError, ValidationError
from mind.storage.backup import check_copy, online_copy, read_only, restore_copy, sha256_of
from mind.storage.fencing import Fence, fence_on
from mind.storage.private_files import make_private_dir, write_private_text
from mind.storage.schema import LATEST_VERSION
from vocabulary.ids import PERSONAL_MIND, SLUG_RE, workspace_mind_id
from vocabulary.timestamps import now_iso

MANIFEST: Final = "manifest.json"
FORMAT: Final = "hive-mind-backup"
VERSION: Final = 1
MAX_MANIFEST_BYTES: Final = 16 * 1024 * 1024
_WORKSPACE_PATH: Final = re.compile(
    rf"{WORKSPACES_DIR}/([^/]+)/({re.escape(WORKSPACE_FILE)}|{re.escape(WORKSPACE_META)})")

Progress = Callable[[int, int], None]  # bytes done, bytes due


@dataclass(frozen=True, slots=True)
class Item:
    """One file of a backup: where it sits (relative, ``/``-separated, the data dir's layout)
    and the mind it is (None: a registry file)."""

    file: str
    mind: str | None

    @staticmethod
    def parse(file: object, mind: object) -> Item:
        """The manifest's entry, checked against the layout (ValidationError otherwise)."""
        if file == PERSONAL_FILE and mind == PERSONAL_MIND:
            return Item(PERSONAL_FILE, PERSONAL_MIND)
        if file == INDEX_FILE and mind is None:
            return Item(INDEX_FILE, None)
        match = _WORKSPACE_PATH.fullmatch(file) if isinstance(file, str) else None
        if match is not None and SLUG_RE.fullmatch(match[1]):
            is_mind = match[2] == WORKSPACE_FILE
            if mind == (workspace_mind_id(match[1]) if is_mind else None):
                return Item(match[0], mind if is_mind else None)
        raise ValidationError("the manifest names a file outside a data dir's layout: "
                              f"{str(file)[:80]!r}")

    def path(self, root: Path) -> Path:
        return root.joinpath(*self.file.split("/"))


def items(data_dir: Path) -> list[Item]:
    """What a backup of ``data_dir`` copies: the personal mind, the registry, and each
    workspace's metadata and mind (those that exist)."""
    out = [Item(PERSONAL_FILE, PERSONAL_MIND)] if (data_dir / PERSONAL_FILE).is_file() else []
    if (data_dir / INDEX_FILE).is_file():
        out.append(Item(INDEX_FILE, None))
    for slug in WorkspaceManager(data_dir).ids():
        folder = f"{WORKSPACES_DIR}/{slug}"
        out.append(Item(f"{folder}/{WORKSPACE_META}", None))
        if (data_dir / WORKSPACES_DIR / slug / WORKSPACE_FILE).is_file():
            out.append(Item(f"{folder}/{WORKSPACE_FILE}", workspace_mind_id(slug)))
    return out


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal"))
               if p.exists())


def backup(data_dir: Path, dest: Path, *, progress: Progress | None = None,
           host: str = "") -> dict[str, Any]:
    """(blocking) Copy every mind and the registry of ``data_dir`` into the new or empty
    directory ``dest``; returns the manifest."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ValidationError(f"{dest} is not an empty directory: back up into a new one")
    started = now_iso()
    todo = items(data_dir)
    due = sum(_size(item.path(data_dir)) for item in todo)
    make_private_dir(dest)
    entries: list[dict[str, Any]] = []
    done = 0
    for item in todo:
        source, copy = item.path(data_dir), item.path(dest)
        make_private_dir(copy.parent)
        try:
            if item.mind is None:
                write_private_text(copy, source.read_text(encoding="utf-8"))
            else:
                online_copy(source, copy)
        except (OSError, StorageError):
            if item.mind != PERSONAL_MIND and not source.exists():
                continue  # a workspace deleted meanwhile
            raise
        entries.append(_entry(item, copy))
        done += _size(source) if source.exists() else 0
        if progress is not None:
            progress(min(done, due), due)
    manifest = {"format": FORMAT, "version": VERSION, "host": host, "started_at": started,
                "finished_at": now_iso(), "latest_schema_version": LATEST_VERSION,
                "files": entries}
    write_private_text(dest / MANIFEST, json.dumps(manifest, indent=2))
    return manifest


def _entry(item: Item, copy: Path) -> dict[str, Any]:
    entry: dict[str, Any] = {"file": item.file, "mind": item.mind}
    if item.mind is None:
        entry.update(size=copy.stat().st_size, sha256=sha256_of(copy))
        return entry
    check = check_copy(copy)
    conn = read_only(copy)
    try:
        found = fence_on(conn)
    finally:
        conn.close()
    fence = None if found is None else {"shard": found.shard, "epoch": found.epoch}
    entry.update(size=check.size, sha256=check.sha256, schema_version=check.schema_version,
                 frames=check.frames, fence=fence)
    return entry


# -- restore -----------------------------------------------------------------------------------

def read_manifest(root: Path) -> tuple[dict[str, Any], list[tuple[Item, dict[str, Any]]]]:
    """The manifest of the backup at ``root`` and its checked entries."""
    path = root / MANIFEST
    if not path.is_file():
        raise ValidationError(f"{root} holds no {MANIFEST}: not a complete hive-mind backup")
    if path.stat().st_size > MAX_MANIFEST_BYTES:
        raise ValidationError(f"{MANIFEST} is larger than {MAX_MANIFEST_BYTES:,} bytes")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValidationError(f"{MANIFEST} is not valid JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValidationError(f"{MANIFEST} is not a hive-mind backup manifest")
    if manifest.get("version") != VERSION:
        raise ValidationError(f"backup format version {manifest.get('version')!r} is not "
                              f"{VERSION}: restore it with the hive-mind that made it")
    files = manifest.get("files")
    if not isinstance(files, list):
        raise ValidationError(f"{MANIFEST} lists no files")
    entries = []
    for raw in files:
        if not isinstance(raw, dict):
            raise ValidationError(f"{MANIFEST}: a file entry is not an object")
        entries.append((Item.parse(raw.get("file"), raw.get("mind")), raw))
    if len({item.file for item, _ in entries}) != len(entries):
        raise ValidationError(f"{MANIFEST} names a file twice")
    return manifest, entries


def verify(root: Path, entries: list[tuple[Item, dict[str, Any]]],
           progress: Progress | None = None) -> list[str]:
    """(blocking) What is wrong with the backup's files (empty: nothing): sizes, checksums,
    integrity, schema versions."""
    problems: list[str] = []
    due = sum(int(raw.get("size") or 0) for _, raw in entries)
    done = 0
    for item, raw in entries:
        path = item.path(root)
        if not path.is_file():
            problems.append(f"{item.file}: missing")
            continue
        if path.stat().st_size != raw.get("size"):
            problems.append(f"{item.file}: {path.stat().st_size:,} bytes, the manifest says "
                            f"{raw.get('size')!r}")
            continue
        if item.mind is None:
            good = sha256_of(path) == raw.get("sha256")
            if good:
                try:
                    json.loads(path.read_text(encoding="utf-8"))
                except (ValueError, UnicodeDecodeError):
                    problems.append(f"{item.file}: not JSON")
        else:
            check = check_copy(path)
            good = check.sha256 == raw.get("sha256")
            if good and check.integrity != "ok":
                problems.append(f"{item.file}: PRAGMA integrity_check: {check.integrity}")
            elif good and check.schema_version != raw.get("schema_version"):
                problems.append(f"{item.file}: schema version {check.schema_version}, the "
                                f"manifest says {raw.get('schema_version')!r}")
            elif good and check.schema_version > LATEST_VERSION:
                problems.append(f"{item.file}: schema version {check.schema_version} is newer "
                                f"than this hive-mind's {LATEST_VERSION}: upgrade it first")
        if not good:
            problems.append(f"{item.file}: SHA-256 does not match the manifest (corrupted or "
                            "changed since the backup)")
        done += path.stat().st_size
        if progress is not None:
            progress(min(done, due), due)
    return problems


@dataclass(frozen=True, slots=True)
class Target:
    """The host a restore writes for: its data dir, fencing record (None: unsharded) and the
    owner of a mind by its shard map."""

    data_dir: Path
    fence: Fence | None = None
    owner: Callable[[str], str] | None = None


def restore(root: Path, target: Target, *, force: bool = False,
            progress: Progress | None = None) -> dict[str, Any]:
    """(blocking) Put the backup at ``root`` into ``target``'s data dir (module docstring);
    returns a summary. Nothing is written unless every check passes."""
    manifest, entries = read_manifest(root)
    problems = verify(root, entries, progress)
    if target.fence is not None and target.owner is not None:
        problems += [f"{item.mind} belongs to {target.owner(item.mind)} by the shard map, not "
                     f"to this host's {target.fence.shard}: restore it there"
                     for item, _ in entries
                     if item.mind is not None and target.owner(item.mind) != target.fence.shard]
    if problems:
        raise ValidationError("the backup was not restored, nothing was written: "
                              + "; ".join(problems[:20]))
    minds = [item for item, _ in entries if item.mind is not None]
    moves = _move_book(target.data_dir)
    existing = [item.mind for item in minds if item.mind is not None and (
        _exists(item, target.data_dir)
        or (moves is not None and moves.refusal(item.mind) is not None))]
    if existing and not force:
        raise ConflictError(f"{', '.join(existing[:10])} exist(s) here already (or moved away "
                            "or are awaited): give --force to replace them with the backup")
    for item in minds:
        assert item.mind is not None
        dest = item.path(target.data_dir)
        make_private_dir(dest.parent)
        restore_copy(item.path(root), dest, None if target.fence is None
                     else (target.fence.shard, target.fence.epoch))
        if moves is not None:
            if item.mind in moves.departed:
                moves.cancel_departure(item.mind)
            moves.cancel_arrival(item.mind)
    kept = []
    for item, _ in entries:
        if item.mind is None:
            dest = item.path(target.data_dir)
            if item.file == INDEX_FILE and dest.exists() and not force:
                kept.append(item.file)
                continue
            make_private_dir(dest.parent)
            write_private_text(dest, item.path(root).read_text(encoding="utf-8"))
    return {"restored": [item.mind for item in minds], "replaced": existing, "kept": kept,
            "fence": None if target.fence is None else {"shard": target.fence.shard,
                                                        "epoch": target.fence.epoch},
            "backup_started_at": manifest.get("started_at")}


def _exists(item: Item, data_dir: Path) -> bool:
    """The mind is in ``data_dir`` already: its file, or (a workspace) its registry entry."""
    dest = item.path(data_dir)
    return dest.exists() or (item.mind != PERSONAL_MIND and (dest.parent / WORKSPACE_META).exists())


def _move_book(data_dir: Path) -> Any:
    from actors.moves import MOVES_DIR, MoveBook

    return MoveBook(data_dir) if (data_dir / MOVES_DIR).is_dir() else None
