"""Query text → FTS5 query, consistent with the ``unicode61`` tokenizer.

Tokens are runs of Unicode letters, digits and marks (what unicode61 keeps; everything else
separates), lowercased. Stop words are dropped, tokens of one character are kept only when
nothing longer remains, so "AI", "Go", "Q2" and "Zürich" all survive. Each token is quoted, so
no user text ever reaches FTS5 as syntax (docs/architecture.md, "Invariants"), and the tokens
are OR-joined for recall.
"""

from __future__ import annotations

import unicodedata

STOP_WORDS = frozenset(
    "the a an is are was were be been being have has had do does did will would could should "
    "may might shall can to of in for on with at by from as into about this that these those it "
    "its my your our their what which who whom how when where why all each every both some any "
    "no not and or but".split()
)
MAX_TERMS = 32
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"  # memory_frames_fts's (a test checks)


def _is_token_char(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat[0] in ("L", "N", "M") or cat == "Co"


def tokenize(text: str) -> list[str]:
    """Split like unicode61: token characters are letters, numbers, marks, private use."""
    tokens: list[str] = []
    buf: list[str] = []
    for ch in text:
        if _is_token_char(ch):
            buf.append(ch)
        elif buf:
            tokens.append("".join(buf).lower())
            buf = []
    if buf:
        tokens.append("".join(buf).lower())
    return tokens


def query_terms(query: str) -> list[str]:
    """Distinct search terms of a query: stop words out, 1-char tokens only as a last resort."""
    tokens = [t for t in dict.fromkeys(tokenize(query)) if t not in STOP_WORDS]
    longer = [t for t in tokens if len(t) > 1]
    return (longer or tokens)[:MAX_TERMS]


def fts_match_expression(terms: list[str]) -> str:
    """``"a" OR "b"`` — every term quoted (quotes inside are doubled, though tokens have none)."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
