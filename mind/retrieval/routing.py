"""Choosing the minds a scope-wide recall searches, when there are too many to search all.

A recall over every workspace of a deployment with a thousand of them cannot run a hybrid
search in each (one search of a small mind costs milliseconds, opening a closed one tens), and
need not: the normalized score that merges the minds' results is rank-based within each mind,
so the head of every mind's list looks alike, and which minds hold the answer is decided by
absolute evidence. Each mind gets a small routing summary (:class:`RouteSummary`, ~48 bytes a
vector plus 8 a distinct keyword-index term):

* **vector evidence** — the sign bits of every frame and chunk vector; a query is scored
  against all of them at once with the quantized estimate of :mod:`mind.retrieval.vector_scan`
  (the query kept at 4 bits), and minds are ranked by their best row;
* **keyword evidence** — the hashes of the terms in the mind's FTS index (the stems FTS5 made;
  the query goes through the same tokenizer, :class:`QueryStemmer`); minds are ranked by the
  query terms they hold, each weighted by its rarity across minds (``log((N + 1) / (df +
  0.5))``), so a word every workspace uses counts for little.

:func:`select` interleaves the two rankings (vector first) until it has the number of minds
asked for; those are then searched in full and merged as any recall. Everything here is plain
functions over NumPy arrays except :func:`read_summary` (SQL next to it) and the stemmer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mind.census import Version, has_vector_tables, tables
from mind.constants import T_CHUNKS_VEC, T_FRAMES_VEC
from mind.retrieval.keyword_index import Stemmer
from mind.retrieval.text_query import query_terms
from mind.retrieval.vector_scan import QueryPlanes, blocks, ones, quantized_scores, sign_codes

LOAD_ROWS = 4096
ROUTED_CANDIDATES = 40  # per lane and mind in a routed recall (a single mind's search: 70)
_VOCAB = "temp.hm_route_vocab"


def term_hashes(terms: Iterable[str]) -> np.ndarray:
    """Sorted distinct 64-bit hashes of ``terms`` (this process's string hash: summaries are
    never stored)."""
    return np.unique(np.fromiter((hash(t) for t in terms), dtype=np.int64))


@dataclass(frozen=True, slots=True)
class RouteSummary:
    version: Version
    dim: int  # 0: no vectors
    codes: np.ndarray  # (words, rows) uint64 sign bits of the frame and chunk vectors
    ones: np.ndarray  # (rows,) set bits per row
    terms: np.ndarray  # sorted int64 term hashes

    @property
    def rows(self) -> int:
        return int(self.ones.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes + self.ones.nbytes + self.terms.nbytes)


def read_summary(conn: Any, version: Version) -> RouteSummary:
    """The routing summary of the mind open on ``conn`` (blocking; sqlite-vec loaded)."""
    present = tables(conn)
    parts: list[np.ndarray] = []
    dim = 0
    if has_vector_tables(present):
        for table in (T_FRAMES_VEC, T_CHUNKS_VEC):
            cursor = conn.execute(f"SELECT embedding FROM {table}")
            while batch := cursor.fetchmany(LOAD_ROWS):
                blob = b"".join(row[0] for row in batch)
                dim = len(batch[0][0]) // 4
                parts.append(sign_codes(np.frombuffer(blob, dtype="<f4").reshape(len(batch), dim)))
    codes = (np.concatenate(parts, axis=1) if parts
             else np.zeros((0, 0), dtype=np.uint64))
    terms: list[str] = []
    if "memory_frames_fts" in present:
        conn.execute("PRAGMA query_only=0")  # the temp schema only: the file is not written
        try:
            conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {_VOCAB} USING "
                         "fts5vocab(main, 'memory_frames_fts', 'row')")
            terms = [str(r[0]) for r in conn.execute(f"SELECT term FROM {_VOCAB}")]
        finally:
            conn.execute("PRAGMA query_only=1")
    return RouteSummary(version, dim, codes,
                        ones(codes) if parts else np.zeros(0, dtype=np.int32),
                        term_hashes(terms))


class QueryStemmer:
    """A query's terms as the keyword index holds them: stop words out as the keyword lane
    does (:func:`query_terms`), then FTS5's own tokenizer (porter stems, diacritics folded,
    :class:`~mind.retrieval.keyword_index.Stemmer`)."""

    def __init__(self) -> None:
        self._stemmer = Stemmer()

    def stems(self, query: str) -> list[str]:
        """The distinct tokens of the query's terms."""
        return list(dict.fromkeys(t for tokens in self._stemmer.tokens(query_terms(query))
                                  for t in tokens))

    def close(self) -> None:
        self._stemmer.close()


class RoutePool:
    """The summaries of many minds side by side, scored against a query in one pass."""

    def __init__(self, summaries: Sequence[RouteSummary]) -> None:
        self.size = len(summaries)
        dims = Counter(s.dim for s in summaries if s.rows)
        # the most common dimension (a mind indexed by another model is left to the keyword
        # ranking: this embedder's query vector cannot be compared with its vectors)
        self.dim = dims.most_common(1)[0][0] if dims else 0
        with_rows = [i for i, s in enumerate(summaries) if s.rows and s.dim == self.dim]
        self._minds = np.asarray(with_rows, dtype=np.int64)
        if with_rows:
            self._codes = np.ascontiguousarray(
                np.concatenate([summaries[i].codes for i in with_rows], axis=1))
            self._ones = np.concatenate([summaries[i].ones for i in with_rows])
            counts = [summaries[i].rows for i in with_rows]
            self._starts = np.cumsum([0, *counts[:-1]])
        self._terms = [s.terms for s in summaries]

    @property
    def nbytes(self) -> int:
        if not len(self._minds):
            return 0
        return int(self._codes.nbytes + self._ones.nbytes)

    def by_vector(self, query: np.ndarray | None) -> list[int]:
        """Minds with vectors, best row first (none without a query vector of the pool's
        dimension)."""
        if query is None or not len(self._minds) or len(query) != self.dim:
            return []
        planes = QueryPlanes(query)
        n = len(self._ones)
        scores = np.empty(n, dtype=np.int32)
        for start, stop in blocks(n):
            scores[start:stop] = quantized_scores(self._codes, self._ones, planes, start, stop)
        best = np.maximum.reduceat(scores, self._starts)
        order = np.argsort(-best, kind="stable")
        return [int(i) for i in self._minds[order]]

    def by_keyword(self, hashes: np.ndarray) -> list[int]:
        """Minds holding any of the query's terms, best idf-weighted coverage first."""
        if not len(hashes) or not self.size:
            return []
        hits = np.zeros((self.size, len(hashes)), dtype=bool)
        for i, terms in enumerate(self._terms):
            if len(terms):
                at = np.minimum(np.searchsorted(terms, hashes), len(terms) - 1)
                hits[i] = terms[at] == hashes
        df = hits.sum(axis=0)
        idf = np.log((self.size + 1) / (df + 0.5))
        score = hits @ idf
        matched = np.flatnonzero(score > 0)
        order = matched[np.argsort(-score[matched], kind="stable")]
        return [int(i) for i in order]


def interleave(rankings: Sequence[Sequence[int]], want: int) -> list[int]:
    """Take from each ranking in turn (skipping what an earlier one took) until ``want``."""
    out: list[int] = []
    seen: set[int] = set()
    heads = [0] * len(rankings)
    while len(out) < want and any(h < len(r) for h, r in zip(heads, rankings, strict=True)):
        for k, ranking in enumerate(rankings):
            while heads[k] < len(ranking) and ranking[heads[k]] in seen:
                heads[k] += 1
            if heads[k] < len(ranking) and len(out) < want:
                seen.add(ranking[heads[k]])
                out.append(ranking[heads[k]])
                heads[k] += 1
    return out


def select(pool: RoutePool, query_vector: np.ndarray | None, stems: Sequence[str],
           want: int) -> list[int]:
    """Indices of at most ``want`` minds to search: vector and keyword rankings in turn."""
    return interleave([pool.by_vector(query_vector), pool.by_keyword(term_hashes(stems))], want)
