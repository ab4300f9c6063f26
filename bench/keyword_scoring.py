"""The in-memory keyword index's scoring, its two ways of summing a query's postings side by
side (``keyword_index._accumulate``): sorted and summed run by run (what a query with postings
below 1/``SPARSE_SHARE`` of the rows gets) against one score a row in an array (what every
query got before).

A shortcut, labelled as such: the keyword index alone (``KeywordIndex.search_sync``, no recall
around it) over a kept ``bench/product/serve_recall.py`` mind and its queries; the two ways alternate
query by query (which one goes first too) and must return the same frames.

    .venv/bin/python -m bench.product.serve_recall --frames 1000000 --keep /tmp/m1m --no-write
    .venv/bin/python -m bench.keyword_scoring /tmp/m1m/personal.mind [--queries 300]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from bench.product.serve_recall import queries, vocabulary

from mind.retrieval import keyword_index as ki
from mind.retrieval.search import CANDIDATES, KEYWORD_RESERVE

WEIGHT = 0.3  # the context column's weight (the default signals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mind", type=Path, help="a mind file built by bench/product/serve_recall.py")
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    index = ki.KeywordIndex(args.mind, min_rows=0, background=False)
    try:
        start = time.perf_counter()
        if not index.prepare():
            raise SystemExit(f"no keyword index for {args.mind}")
        print(f"built in {time.perf_counter() - start:.1f} s")
        ways = {f"sorted below 1/{ki.SPARSE_SHARE} of the rows": ki.SPARSE_SHARE,
                "an array a row, always": 10**9}
        times: dict[str, list[float]] = {name: [] for name in ways}
        for i, query in enumerate(queries(vocabulary(), args.queries)):
            found = []
            for name, share in list(ways.items())[:: 1 if i % 2 else -1]:
                ki.SPARSE_SHARE = share
                began = time.perf_counter()
                hits = index.search_sync(query, CANDIDATES * KEYWORD_RESERVE, WEIGHT) or []
                times[name].append((time.perf_counter() - began) * 1000)
                found.append([fid for fid, _ in hits])
            if found[0] != found[1]:
                raise SystemExit(f"{query!r}: the two ways found different frames")
        for name, values in times.items():
            print(f"  {name:34s} p50 {np.percentile(values, 50):5.2f} ms  "
                  f"p95 {np.percentile(values, 95):5.2f} ms")
    finally:
        index.close()


if __name__ == "__main__":
    main()
