"""The one place that opens SQLite connections for a mind file.

Every connection loads sqlite-vec, runs in WAL mode with foreign keys, a busy timeout,
``synchronous=NORMAL`` and ``secure_delete=ON`` (deleted content is overwritten with zeros, so a
forgotten memory does not stay readable in the file's free pages; ``FAST`` would leave it on
freelist pages). A mind file is created owner-only before SQLite opens it
(:mod:`mind.storage.private_files`). The stdlib ``sqlite3`` is used when it can load extensions and
is
at least SQLite ``MIN_SQLITE`` (3.42: FTS5 ``secure-delete``, migration 9); otherwise the
bundled driver (pysqlite3-binary, or sqlean.py) is used. Missing FTS5 or sqlite-vec is a
:class:`ConfigurationError` with a message saying what to install.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import importlib.util
import logging
import urllib.parse
from pathlib import Path
from types import ModuleType
from typing import Any

import aiosqlite

from mind.errors import ConfigurationError, StorageError
from mind.storage.private_files import prepare_mind_file
from mind.storage.shown import shown

BUSY_TIMEOUT_MS = 10_000
CACHE_SIZE_KIB = 16_384
MIN_SQLITE = (3, 42, 0)


log = logging.getLogger(__name__)

def _usable(module: ModuleType) -> bool:
    try:
        conn = module.connect(":memory:")
    except Exception:
        return False
    try:
        return hasattr(conn, "enable_load_extension") and module.sqlite_version_info >= MIN_SQLITE
    finally:
        conn.close()


@functools.cache
def driver() -> ModuleType:
    """The DB-API module used for every mind connection."""
    candidates = ("sqlite3", "pysqlite3.dbapi2", "sqlean")
    for name in candidates:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if _usable(module):
            return module
    raise ConfigurationError(
        "no SQLite driver that can load extensions (SQLite >= 3.42): install pysqlite3-binary "
        "or sqlean.py (this Python's sqlite3 cannot load extensions or is too old)"
    )


@functools.cache
def _vec_extension() -> str:
    """The sqlite-vec extension's file, as ``sqlite_vec.loadable_path()`` names it, found
    without importing the package: its ``__init__`` imports numpy (~0.1 s of a CLI save that
    never touches a vector)."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:  # pragma: no cover - mandatory
        raise ConfigurationError("sqlite-vec is not installed: pip install sqlite-vec")
    return str(Path(next(iter(spec.submodule_search_locations))) / "vec0")


def _load_vec(conn: Any) -> None:
    extension = _vec_extension()
    try:
        conn.enable_load_extension(True)
        conn.load_extension(extension)
        conn.enable_load_extension(False)
    except Exception as exc:
        raise ConfigurationError(f"could not load the sqlite-vec extension: {exc}") from exc


def _check_database(conn: Any, path: str | Path) -> None:
    """A file that is not an SQLite database is named as such (not as a missing feature)."""
    try:
        conn.execute("PRAGMA schema_version").fetchone()
    except Exception as exc:
        log.warning("%s is not a readable mind file (%s)", path, exc)  # the path: server log only
        raise StorageError(
            f"{shown(path)} is not a readable mind file ({exc}): restore it from a backup or "
            f"move it "
            f"away (a new, empty mind is created in its place)") from exc


def _check_fts5(conn: Any) -> None:
    try:
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp._hm_fts_probe USING fts5(x)")
        conn.execute("DROP TABLE temp._hm_fts_probe")
    except Exception as exc:
        raise ConfigurationError(
            f"this SQLite build has no FTS5 ({exc}); install pysqlite3-binary or sqlean.py"
        ) from exc


def connect_sync(path: str | Path, *, readonly: bool = False) -> Any:
    """Open and prepare one connection (blocking). Used as the aiosqlite connector."""
    mod = driver()
    if str(path) != ":memory:" and not (readonly and Path(path).exists()):
        prepare_mind_file(Path(path))  # a reader of an existing file: its writer did this
    conn = mod.connect(str(path), isolation_level=None, check_same_thread=False)
    try:
        conn.row_factory = mod.Row
        _check_database(conn, path)
        _load_vec(conn)
        if not readonly:  # the SQLite build is the same for every connection: checked once
            _check_fts5(conn)
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if str(path) != ":memory:":
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal" and not readonly:
                raise ConfigurationError(f"could not switch {shown(path)} to WAL (got {mode})")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA secure_delete=ON")
        conn.execute(f"PRAGMA cache_size=-{CACHE_SIZE_KIB}")
        conn.execute("PRAGMA temp_store=MEMORY")
        if readonly:
            conn.execute("PRAGMA query_only=1")
    except Exception:
        conn.close()
        raise
    return conn


def connect_peek(path: str | Path) -> Any:
    """A short read-only look at an existing mind file (blocking): never creates the file,
    loads sqlite-vec, changes no setting of the file — ~4× cheaper than :func:`connect_sync`,
    for reports over thousands of minds (:mod:`mind.census`)."""
    mod = driver()
    uri = "file:" + urllib.parse.quote(str(Path(path).resolve())) + "?mode=rw"
    try:
        conn = mod.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    except Exception as exc:
        raise StorageError(f"cannot open {shown(path)}: {exc}") from exc
    try:
        _check_database(conn, path)
        _load_vec(conn)
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA query_only=1")
    except Exception:
        conn.close()
        raise
    return conn


async def connect(path: str | Path, *, readonly: bool = False) -> aiosqlite.Connection:
    """Open a prepared aiosqlite connection on ``path``."""
    conn = aiosqlite.Connection(lambda: connect_sync(path, readonly=readonly), iter_chunk_size=256)
    try:
        return await conn
    except Exception as exc:
        # aiosqlite stops its thread on a failed connect; wait for it while this loop still
        # runs, or the thread's last callback lands on a closed loop.
        thread = getattr(conn, "_thread", None)
        if thread is not None:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(thread.join, 5)
        if isinstance(exc, (ConfigurationError, StorageError)):
            raise
        raise ConfigurationError(f"cannot open {shown(path)}: {exc}") from exc

