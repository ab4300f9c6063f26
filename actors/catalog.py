"""MindCatalog: what a host knows about every mind of its data dir without opening them.

``status``, the workspace list and the scope-wide recall's routing need a few facts about
every mind — counts (:class:`mind.census.Census`) and the routing summary
(:class:`mind.retrieval.routing.RouteSummary`) — and a deployment may have thousands. The
catalog reads them on short blocking connections in a small thread pool (no actor, no
aiosqlite thread, no place in the LRU of open minds), keeps them, and reads a mind again only
when its file stamp moved; a summary is rebuilt only when the census version moved (a recall's
access-count update moves the stamp, not the version). Minds written by another process on the
same data dir are seen the same way: their files' stamps move.

Memory: a census is a few integers; a summary ~48 bytes a vector + 8 a distinct term
(``nbytes`` in :meth:`MindCatalog.memory`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, cast

from actors.constants import CATALOG_THREADS
from mind.census import COUNTS, Census, FileStamp, Version, stamp, take_census
from mind.storage.connection import connect_peek
from mind.storage.private_files import write_private_text

if TYPE_CHECKING:  # routing (numpy) is loaded by the first recall that routes: not by a save
    from mind.retrieval.routing import QueryStemmer, RoutePool, RouteSummary

log = logging.getLogger(__name__)


def load_cache(path: Path | None) -> dict[str, tuple[FileStamp, Census]]:
    """The censuses a process saved (anything unreadable: none — they are re-read)."""
    if path is None:
        return {}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return {str(m): (cast(FileStamp, tuple(int(x) for x in entry["stamp"])), Census(
            **{k: int(entry[k]) for k in COUNTS}, version=cast(Version, tuple(
                int(x) for x in entry["version"])), modified_ns=int(entry["modified_ns"])))
            for m, entry in raw["minds"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def save_cache(path: Path, census: dict[str, tuple[FileStamp, Census]]) -> None:
    """(blocking) Replace the cache file atomically; a failure only costs the next process
    its re-reads."""
    minds = {m: {"stamp": list(st), **c.as_dict(), "version": list(c.version),
                 "modified_ns": c.modified_ns} for m, (st, c) in census.items()}
    try:
        write_private_text(path, json.dumps({"minds": minds}, separators=(",", ":")))
    except OSError as exc:
        log.info("could not write the catalog cache %s: %s", path, exc)


class MindCatalog:
    """``cache_file``: the censuses are kept there too (counts only, owner-only), so a fresh
    CLI process re-reads only the minds whose files changed since any process last looked."""

    def __init__(self, *, threads: int = CATALOG_THREADS, cache_file: Path | None = None
                 ) -> None:
        self._cache_file = cache_file
        self._census: dict[str, tuple[FileStamp, Census]] = load_cache(cache_file)
        self._summaries: dict[str, RouteSummary] = {}
        self._pool: tuple[tuple[tuple[str, object], ...], RoutePool] | None = None
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix="hm-catalog")
        self._stemmer: QueryStemmer | None = None

    async def census(self, paths: dict[str, Path]) -> dict[str, Census]:
        """The census of each mind (id → file) whose file exists, fresh as of now."""
        return await self._look(paths, summaries=False, persist=True)

    async def route_pool(self, paths: dict[str, Path]) -> tuple[list[str], RoutePool]:
        """The minds that exist, in the given order, and their summaries pooled for routing
        (the pool is rebuilt only when a mind's summary changed)."""
        from mind.retrieval.routing import RoutePool

        await self._look(paths, summaries=True, persist=False)
        ids = [m for m in paths if m in self._summaries]
        key = tuple((m, self._summaries[m].version) for m in ids)
        if self._pool is None or self._pool[0] != key:
            summaries = [self._summaries[m] for m in ids]
            self._pool = (key, await asyncio.get_running_loop().run_in_executor(
                self._executor, RoutePool, summaries))
        return ids, self._pool[1]

    def stems(self, query: str) -> list[str]:
        if self._stemmer is None:
            from mind.retrieval.routing import QueryStemmer

            self._stemmer = QueryStemmer()
        return self._stemmer.stems(query)

    def memory(self) -> dict[str, int]:
        pool = self._pool[1].nbytes if self._pool is not None else 0
        return {"minds": len(self._census),
                "summary_bytes": sum(s.nbytes for s in self._summaries.values()),
                "pool_bytes": pool}

    def forget(self, mind_id: str) -> None:
        self._census.pop(mind_id, None)
        self._summaries.pop(mind_id, None)

    async def _look(self, paths: dict[str, Path], *, summaries: bool, persist: bool
                    ) -> dict[str, Census]:
        """Re-read the minds whose stamps moved; ``persist`` rewrites the cache file (reports
        only: a recall moves a few stamps each time, its access counts, and rewrote it)."""
        loop = asyncio.get_running_loop()
        stamps = await loop.run_in_executor(
            self._executor, lambda: {m: stamp(p) for m, p in paths.items()})
        stale = []
        for mind_id, st in stamps.items():
            if st is None:
                self.forget(mind_id)
                continue
            known = self._census.get(mind_id)
            summary = self._summaries.get(mind_id)
            if (known is None or known[0] != st
                    or (summaries and (summary is None or summary.version != known[1].version))):
                stale.append((mind_id, st))
        if stale:
            looks = await asyncio.gather(*(loop.run_in_executor(
                self._executor, self._read, mind_id, paths[mind_id], st, summaries)
                for mind_id, st in stale), return_exceptions=True)
            for (mind_id, st), look in zip(stale, looks, strict=True):
                if isinstance(look, BaseException):
                    log.warning("could not read mind %s: %s", mind_id, look)
                    self.forget(mind_id)
                    continue
                census, summary = look
                self._census[mind_id] = (st, census)
                if summary is not None:
                    self._summaries[mind_id] = summary
            if persist and self._cache_file is not None:
                snapshot = dict(self._census)
                await loop.run_in_executor(self._executor, save_cache, self._cache_file,
                                           snapshot)
        return {m: self._census[m][1] for m in paths if m in self._census}

    def _read(self, mind_id: str, path: Path, st: FileStamp, summaries: bool
              ) -> tuple[Census, RouteSummary | None]:
        """(blocking) The census and, when asked and its version moved, a new summary."""
        conn = connect_peek(path)
        try:
            census = take_census(conn, st)
            known = self._summaries.get(mind_id)
            if not summaries or (known is not None and known.version == census.version):
                return census, None
            from mind.retrieval.routing import read_summary

            return census, read_summary(conn, census.version)
        finally:
            conn.close()

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        if self._stemmer is not None:
            self._stemmer.close()
            self._stemmer = None
