"""Workspaces: the personal mind plus one mind per workspace (ids checked before any path).

Layout under the data dir: ``personal.mind``; ``workspaces/<id>/workspace.json`` (metadata) and
``workspaces/<id>/workspace.mind``; ``workspaces-meta.json`` holds the default workspace.

Decisions:
- ids are slugs validated before they touch the filesystem; a caller-given id that is not a
  slug is refused (never used as a path), never "auto-created" from a traversal string.
- ``slugify`` transliterates accents (``Café Zürich`` → ``cafe-zurich``); a name with no ASCII
  letters at all (``日本語``) gets ``ws-<8 hex of its sha256>`` instead of an empty id.
- ``delete`` removes the workspace directory; the caller (facade) closes the mind first.
- ``name``, ``group``, ``icon`` and ``model`` are names (:func:`mind.bounds.name_text`): short
  (:data:`LIMITS`), no control or bidi characters, so a listing shows what is stored. An empty
  group is ``general``; an empty icon or model is none.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import re
import shutil
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from actors.constants import WORKSPACE_META, WORKSPACES_DIR
from mind.bounds import name_text
from mind.errors import (
    ConflictError,
    InvalidIdError,
    InvalidTimestampError,
    NotFoundError,
    ValidationError,
)
from mind.ids import validate_slug
from mind.storage.private_files import make_private_dir, write_private_text
from mind.timeutil import normalize_ts, now_iso
from vocabulary.ids import split_mind_id, workspace_mind_id
from vocabulary.limits import MAX_GROUP_CHARS, MAX_ICON_CHARS, MAX_SHORT_NAME_CHARS

INDEX_FILE: Final = "workspaces-meta.json"
LIMITS: Final = {"name": MAX_SHORT_NAME_CHARS, "group": MAX_GROUP_CHARS,
                 "icon": MAX_ICON_CHARS, "model": MAX_SHORT_NAME_CHARS}
_FIELDS: Final = tuple(LIMITS)


_NOT_FOUND: Final = re.compile(r'^Workspace "(.+)" not found$')


def unknown_workspace(exc: BaseException) -> str | None:
    """The id an unknown-workspace error names (this process's or a server's), else None:
    the interfaces add how to create one."""
    if not isinstance(exc, NotFoundError):
        return None
    found = _NOT_FOUND.match(" ".join(str(exc).split()))
    return found.group(1) if found else None


def slugify(name: str) -> str:
    """A filesystem-safe id for a display name (never empty)."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")[:56].strip("-")
    if not slug:
        slug = "ws-" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return slug


def candidate_ids(base: str) -> Iterator[str]:
    """The ids a new workspace of slug ``base`` tries in turn: ``base``, ``base-2``, …."""
    yield base
    for n in itertools.count(2):
        yield f"{base[:60]}-{n}"


def mind_id(workspace_id: str) -> str:
    return workspace_mind_id(validate_slug(workspace_id))


def clean_field(key: str, value: object) -> str | None:
    """A workspace's ``name``, ``group``, ``icon`` or ``model`` as stored (see the module
    docstring); :class:`ValidationError` naming the field and its limit otherwise."""
    if value is None or value == "":
        if key == "name":
            raise ValidationError("workspace name must not be empty")
        return "general" if key == "group" else None
    return name_text(value, f"workspace {key}", LIMITS[key]).strip()


def moved_metadata(mind: str, text: str) -> str:
    """A moving workspace's metadata as its new host stores it: a JSON object whose fields
    pass the workspace rules (:func:`clean_field`); its id is the mind's, whatever the text
    says, and other keys are dropped. :class:`ValidationError` otherwise."""
    _, slug = split_mind_id(mind)
    if slug is None:
        raise ValidationError("only a workspace mind carries metadata")
    try:
        data = json.loads(text)
    except ValueError:
        raise ValidationError("workspace metadata must be a JSON object") from None
    if not isinstance(data, dict):
        raise ValidationError("workspace metadata must be a JSON object")
    meta: dict[str, Any] = {"id": slug}
    meta.update({key: clean_field(key, data.get(key)) for key in _FIELDS})
    created = data.get("created")
    try:
        meta["created"] = normalize_ts(created) if isinstance(created, str) else now_iso()
    except InvalidTimestampError:
        meta["created"] = now_iso()
    return json.dumps(meta, indent=2, ensure_ascii=False)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    write_private_text(path, json.dumps(data, indent=2, ensure_ascii=False))


class WorkspaceManager:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.root = data_dir / WORKSPACES_DIR
        self._meta: dict[str, tuple[tuple[int, int, int], dict[str, Any]]] = {}

    def _dir(self, workspace_id: str) -> Path:
        return self.root / validate_slug(workspace_id)

    def exists(self, workspace_id: str) -> bool:
        try:
            return (self._dir(workspace_id) / WORKSPACE_META).is_file()
        except InvalidIdError:
            return False

    def get(self, workspace_id: str) -> dict[str, Any]:
        path = self._dir(workspace_id) / WORKSPACE_META
        if not path.is_file():
            raise NotFoundError(f'Workspace "{workspace_id}" not found')
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        data["id"] = workspace_id
        return data

    def ids(self) -> list[str]:
        """The ids of every workspace (a directory with metadata), sorted: a stat each."""
        try:
            entries = sorted(entry.name for entry in os.scandir(self.root) if entry.is_dir())
        except FileNotFoundError:
            return []
        out = []
        for name in entries:
            with contextlib.suppress(InvalidIdError):
                if os.path.isfile(os.path.join(self.root, validate_slug(name), WORKSPACE_META)):
                    out.append(name)
        return out

    def list(self) -> list[dict[str, Any]]:
        """Every workspace's metadata; a file is parsed again only when it changed."""
        out = []
        for workspace_id in self.ids():
            path = self.root / workspace_id / WORKSPACE_META
            try:
                st = os.stat(path)
                key = (st.st_mtime_ns, st.st_size, st.st_ino)
                known = self._meta.get(workspace_id)
                if known is None or known[0] != key:
                    known = (key, self.get(workspace_id))
                    self._meta[workspace_id] = known
            except (OSError, ValueError, NotFoundError):
                continue
            out.append(dict(known[1]))
        return out

    def create(self, name: str, *, group: str = "general", icon: str | None = None,
               model: str | None = None, workspace_id: str | None = None) -> dict[str, Any]:
        clean = clean_field("name", name)
        assert clean is not None
        fields = {key: clean_field(key, value)
                  for key, value in (("group", group), ("icon", icon), ("model", model))}
        if workspace_id is not None:
            base = validate_slug(workspace_id)
            if self.exists(base):
                raise ConflictError(f'Workspace "{base}" already exists')
            slug = base
        else:
            slug = next(c for c in candidate_ids(slugify(clean)) if not self.exists(c))
        folder = self._dir(slug)
        make_private_dir(folder)
        meta: dict[str, Any] = {"id": slug, "name": clean, **fields, "created": now_iso()}
        _write_json(folder / WORKSPACE_META, meta)
        return meta

    def update(self, workspace_id: str, **fields: Any) -> dict[str, Any]:
        unknown = set(fields) - set(_FIELDS)
        if unknown:
            raise ValidationError(f"unknown workspace fields: {sorted(unknown)}")
        meta = self.get(workspace_id)
        for key, value in fields.items():
            if value is not None:
                meta[key] = clean_field(key, value)
        _write_json(self._dir(workspace_id) / WORKSPACE_META, meta)
        return meta

    def delete(self, workspace_id: str) -> bool:
        folder = self._dir(workspace_id)
        if not (folder / WORKSPACE_META).is_file():
            raise NotFoundError(f'Workspace "{workspace_id}" not found')
        shutil.rmtree(folder)
        if self.default() == workspace_id:
            self._write_index({"defaultWorkspace": None})
        return True

    # -- default workspace ------------------------------------------------------------------

    def _index(self) -> dict[str, Any]:
        path = self.data_dir / INDEX_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        except ValueError:
            data = {}
        return data if isinstance(data, dict) else {}

    def _write_index(self, data: dict[str, Any]) -> None:
        make_private_dir(self.data_dir)
        _write_json(self.data_dir / INDEX_FILE, data)

    def default(self) -> str | None:
        value = self._index().get("defaultWorkspace")
        return value if isinstance(value, str) and self.exists(value) else None

    def set_default(self, workspace_id: str | None) -> None:
        if workspace_id is not None:
            self.get(workspace_id)
        self._write_index({**self._index(), "defaultWorkspace": workspace_id})
