"""Absolute relevance: how likely a result answers the query at all, in [0, 1]. Pure functions.

A result's ``score`` is a rank score: the best result of any query scores ~1.0, so "quantum
chromodynamics lattice gauge" asked of a mind about a dog and a trip still gets 0.84-0.96, and
an agent cannot tell a match from noise. ``absolute_relevance`` is comparable across queries
and minds instead, from two pieces of evidence recall already has:

* **above background** — the result's cosine to the query minus the query's *background*: the
  mean cosine of the query to this mind's frames (an evenly spaced sample of 256,
  :meth:`mind.retrieval.vector_index.VectorIndex.background`). A generic query is close to
  everything in a mind about its topic; what counts is how far a frame stands out from that;
* **keyword coverage** — the share of the query's words the frame contains (prefixes of 5
  letters stand in for stems): an exact rare word ("the code word is Quasar") is evidence even
  when the sentence embeddings are far apart.

``absolute_relevance = sigmoid(COSINE_WEIGHT × above + COVERAGE_WEIGHT × coverage + BIAS)``.
"Relevant" means a match rather than noise: the three numbers were fitted by logistic regression
on the synthetic chats the project ships (``bench/data/conv``: evidence turns against the
results of unrelated questions), never on LoCoMo or SciFact, which measure it
(``bench/evals/relevance_calibration.py``; figures in docs/architecture.md, "What the numbers
mean").
BM25 was tried as the keyword evidence and dropped: its scale is the mind's (SciFact's long
abstracts put every unrelated question's top result above 0.9). Without a vector lane
(degraded embedder) only coverage speaks.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Final

COSINE_WEIGHT: Final = 9.11
COVERAGE_WEIGHT: Final = 7.95
BIAS: Final = -4.60
PREFIX: Final = 5
LENGTH_PIVOT: Final = 50
_WORD_START: Final = r"(?<![^\W_])"  # not right after a letter or digit
_WORD_END: Final = r"(?![^\W_])"


Pattern = tuple[str, re.Pattern[str]]


def coverage_patterns(terms: Sequence[str]) -> list[Pattern]:
    """One ``(stem, pattern)`` per distinct query term: a word starting with its first
    :data:`PREFIX` letters (the whole word for a shorter term). Made once per recall."""
    stems = {t.lower()[:PREFIX]: len(t) < PREFIX for t in terms if t}
    return [(stem, re.compile(_WORD_START + re.escape(stem) + (_WORD_END if whole else "")))
            for stem, whole in stems.items()]


def keyword_coverage(patterns: Sequence[Pattern], content: str) -> float:
    """Share of the query's terms (:func:`coverage_patterns`) that occur as words of
    ``content``, damped for a text longer than :data:`LENGTH_PIVOT` words by sqrt(pivot /
    length): a long text holds any given word by chance more often (SciFact's 250-word
    abstracts matched the words of unrelated chat questions)."""
    if not patterns:
        return 0.0
    lowered = content.lower()
    found = sum(1 for stem, p in patterns if stem in lowered and p.search(lowered))
    damping = min(1.0, math.sqrt(LENGTH_PIVOT / max(1, len(lowered.split()))))
    return damping * found / len(patterns)


def absolute_relevance(cosine: float | None, background: float | None, coverage: float) -> float:
    above = 0.0 if cosine is None or background is None else cosine - background
    x = COSINE_WEIGHT * above + COVERAGE_WEIGHT * coverage + BIAS
    return 1.0 / (1.0 + math.exp(-x))
