"""A text's words for entity extraction (:mod:`mind.knowledge.extraction`): each word with its
case-folded form, whether it starts a sentence, a line or a list item, whether it lies inside code
(fenced or inline code, code-like lines, URLs, e-mail addresses: never searched for names), and
whether it can be a word of a name. A word's forms are remembered per distinct word
(:class:`WordMemo`): a chat repeats its words, and extraction runs on every message an import
brings."""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Generic, TypeVar

from mind.knowledge.lexicon import ABBREVIATIONS, SPLITTERS

T = TypeVar("T")

WORD = re.compile(r"[^\W_](?:[^\W_]|[.'’\-](?=[^\W_]))*")
BOUNDARY = re.compile(r"[.!?:\n…]")
CODE = re.compile(
    r"```[\s\S]*?(?:```|\Z)|`[^`\n]+`|\bhttps?://\S+|\bwww\.\S+"
    r"|(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.]+"
    r"|^[ \t]*(?:def|class|import|return|function|fn|func)\s[^\n]*"
    r"|^[^\n]*(?:\w\(|\s=\s|==|=>|[{}]|;[ \t]*$)[^\n]*",
    re.MULTILINE,
)
# each branch of CODE needs one of these; most messages have none (a search of CODE tries its
# seven branches at every character: ~20 us a chat message, this test ~1)
_CODE_SIGNS = "`@{}=;"
_CODE_CALL = re.compile(r"\((?<=\w\()")  # "f(": from each "(", the character before it
_CODE_KEYWORD = re.compile(r"^[ \t]*(?:def|class|import|return|function|fn|func)\s", re.MULTILINE)
WORD_CACHE: Final = 1 << 14  # distinct words whose forms are remembered (:class:`WordMemo`)
CACHED_WORD_CHARS: Final = 64  # longer words (hashes, sequences) are not remembered


class WordMemo(Generic[T]):
    """``fn(word)``, remembered for the last :data:`WORD_CACHE` distinct words of up to
    :data:`CACHED_WORD_CHARS` characters (a chat repeats its words; a hash or a sequence is one
    long word that would fill the cache with long keys). ``cache`` is the LRU."""

    def __init__(self, fn: Callable[[str], T]) -> None:
        self._fn = fn
        self.cache = functools.lru_cache(maxsize=WORD_CACHE)(fn)

    def __call__(self, word: str) -> T:
        return self.cache(word) if len(word) <= CACHED_WORD_CHARS else self._fn(word)


@dataclass(slots=True)  # not frozen: a frozen init costs 5x, and a text has hundreds of tokens
class Token:
    text: str
    low: str  # case-folded, possessive stripped
    start: int
    end: int
    initial: bool  # first word of the text, a sentence, a line or a list item
    code: bool  # inside code, a URL or an e-mail address
    member: bool  # can be a word of a name: name-shaped, not code, not a splitter


def _word_forms(text: str) -> tuple[str, bool]:
    """``(low, member)`` of a word outside code (remembered: :data:`word_forms`)."""
    low = (text[:-2] if text.endswith(("'s", "’s")) else text).casefold()
    return low, _name_shaped(text) and low not in SPLITTERS


word_forms = WordMemo(_word_forms)


def _name_shaped(text: str) -> bool:
    """Capitalized ("Bob", "McDonald") or camel ("iPhone"), with a letter, no dot, and not a
    shouted word of more than six capitals."""
    if not (text[0].isupper() or (len(text) > 1 and text[0].islower() and text[1].isupper())):
        return False
    if "." in text or not any(ch.isalpha() for ch in text):
        return False
    return not (text.isupper() and len(text) > 6)


def may_hold_code(text: str) -> bool:
    """False when :data:`CODE` cannot match ``text`` (a quick test before the search)."""
    return (any(sign in text for sign in _CODE_SIGNS) or "http" in text or "www." in text
            or _CODE_CALL.search(text) is not None or _CODE_KEYWORD.search(text) is not None)


def tokenize(text: str) -> list[Token]:
    spans = [m.span() for m in CODE.finditer(text)] if may_hold_code(text) else []
    starts = [s for s, _ in spans]
    breaks = [m.start() for m in BOUNDARY.finditer(text)]  # sentence and line ends, in order
    breaks.append(len(text))
    b = 0  # the first break at or after the previous token's end
    tokens: list[Token] = []
    prev: Token | None = None
    for m in WORD.finditer(text):
        start, end = m.span()
        code = False
        if spans:
            k = bisect.bisect_right(starts, start) - 1
            code = k >= 0 and start < spans[k][1]
        if prev is None:
            initial = True
        else:
            while breaks[b] < prev.end:
                b += 1
            initial = breaks[b] < start and not (
                prev.low in ABBREVIATIONS and text.startswith(".", prev.end, start))
        word = m.group()
        low, member = word_forms(word)
        prev = Token(word, low, start, end, initial, code, member and not code)
        tokens.append(prev)
    return tokens


