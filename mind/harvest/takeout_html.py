"""Google Takeout's My Activity in HTML (Takeout's default format) → activity cards.

Every product writes the same card, whatever the account's language::

    <div class="outer-cell …">
      <div class="header-cell …"><p class="mdl-typography--title">Gemini Apps<br></p></div>
      <div class="content-cell mdl-cell--6-col mdl-typography--body-1">
        Prompted&nbsp;the prompt<br>[1 attachment.<br>- <a>name</a><br>]
        Mar 15, 2025, 4:49:42 PM EET<br><p>the answer …</p></div>
      <div class="content-cell … mdl-typography--text-right">[a preview image]</div>
      <div class="content-cell … mdl-typography--caption"><b>Products:</b> … </div>
    </div>

:func:`cards` streams a page (read in chunks with the stdlib parser, one card held at a time)
into :class:`Card`: the header, the lines of the body cell before its time line (the first
holds the title, e.g. the prompt after its label), the time line, and the markup after it (the
answer). The time line is found by its shape (a clock and a year,
:func:`mind.harvest.takeout_time.looks_like_time`), never by words of one language; the answer
starts at the time line or at the first block element of the body, whichever comes first.
:func:`first_header` reads a page's first card header from its opening bytes, for recognising a
page by its content.
"""

from __future__ import annotations

import codecs
import html
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import IO, Final

from mind.harvest.errors import HarvestError
from mind.harvest.inputs import CountingReader
from mind.harvest.takeout_time import looks_like_time
from vocabulary.limits import MAX_FRAME_CHARS

CHUNK: Final = 1 << 16
HEAD_BYTES: Final = 1 << 20  # the page's <style> comes before its first card
MAX_CARD_CHARS: Final = 4 * MAX_FRAME_CHARS  # one card's text and answer markup
_BLOCKS: Final = frozenset({
    "p", "div", "ul", "ol", "dl", "pre", "table", "blockquote", "hr", "img", "figure",
    "section", "h1", "h2", "h3", "h4", "h5", "h6",
})
_VOID: Final = frozenset({"br", "img", "hr", "wbr", "input", "meta", "link", "source",
                          "area", "col", "embed", "track"})
_SPACE: Final = re.compile(r"[ \t\r\n\u00a0\u202f]+")


@dataclass
class Card:
    """One activity of a My Activity page."""

    header: str = ""
    lines: list[str] = field(default_factory=list)  # the body's lines before its time
    time_text: str | None = None
    answer_html: str = ""


class _Cards(HTMLParser):
    """Cards as they close, in :attr:`done`; the rest of the page is ignored."""

    def __init__(self, name: str) -> None:
        super().__init__(convert_charrefs=True)
        self.name = name
        self.done: list[Card] = []
        self.closed = 0  # cards closed so far
        self._divs = 0
        self._card: Card | None = None
        self._card_at = 0
        self._cell: str | None = None  # "header" | "body" | "other" while inside a cell
        self._cell_at = 0
        self._header: list[str] = []
        self._line: list[str] = []
        self._nest = 0  # open elements inside the body, before its answer
        self._answer: list[str] | None = None
        self._size = 0  # markup of the open card's answer
        self.first_header: str | None = None
        self.in_body = False

    # -- the card and its cells ------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":
            self.in_body = True
        if tag == "div":
            self._divs += 1
            classes = (dict(attrs).get("class") or "").split()
            if self._card is None and "outer-cell" in classes:
                self._card, self._card_at, self._size = Card(), self._divs, 0
                return
            if self._card is not None and self._cell is None:
                if "header-cell" in classes:
                    self._cell, self._cell_at, self._header = "header", self._divs, []
                    return
                if ("content-cell" in classes and "mdl-typography--body-1" in classes
                        and "mdl-typography--text-right" not in classes):
                    self._cell, self._cell_at = "body", self._divs
                    self._line, self._nest, self._answer = [], 0, None
                    return
                if "content-cell" in classes:
                    self._cell, self._cell_at = "other", self._divs
                    return
        if self._cell == "body":
            self._body_start(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "div":
            if self._cell is not None and self._divs == self._cell_at:
                self._close_cell()
                self._divs -= 1
                return
            if self._card is not None and self._cell is None and self._divs == self._card_at:
                self.done.append(self._card)
                self.closed += 1
                self._card = None
                self._divs -= 1
                return
            self._divs -= 1
        if self._cell == "body":
            if self._answer is not None:
                self._add(f"</{tag}>")
            elif tag not in _VOID:
                self._nest = max(0, self._nest - 1)

    def handle_data(self, data: str) -> None:
        if self._cell == "header":
            self._charge(len(data))
            self._header.append(data)
        elif self._cell == "body":
            if self._answer is not None:
                self._add(html.escape(data, quote=False))
            else:
                self._charge(len(data))
                self._line.append(data)

    def _close_cell(self) -> None:
        card = self._card
        assert card is not None
        if self._cell == "header":
            card.header = _SPACE.sub(" ", "".join(self._header)).strip()
            if self.first_header is None:
                self.first_header = card.header
        elif self._cell == "body":
            if self._answer is None:
                self._end_line()
            card.answer_html = "".join(self._answer or [])
        self._cell = None

    # -- the body: lines, the time line, the answer ------------------------------------------

    def _body_start(self, tag: str) -> None:
        if self._answer is not None:
            self._add(self.get_starttag_text() or f"<{tag}>")
            return
        if tag == "br":
            self._end_line()
        elif tag in _BLOCKS and self._nest == 0:
            self._end_line()
            self._answer = [self.get_starttag_text() or f"<{tag}>"]
        elif tag not in _VOID:
            self._nest += 1

    def _end_line(self) -> None:
        line = _SPACE.sub(" ", "".join(self._line)).strip()
        self._line = []
        card = self._card
        if not line or card is None or self._answer is not None:
            return
        if card.lines and card.time_text is None and looks_like_time(line):
            card.time_text = line
            self._answer = []
        else:
            card.lines.append(line)

    def _add(self, markup: str) -> None:
        assert self._answer is not None
        self._charge(len(markup))
        self._answer.append(markup)

    def _charge(self, chars: int) -> None:
        """Count what the open card holds: more than :data:`MAX_CARD_CHARS` is an error."""
        self._size += chars
        if self._size > MAX_CARD_CHARS:
            raise HarvestError(f"one activity holds more than {MAX_CARD_CHARS:,} characters",
                               path=self.name, position=f"activity {self.closed + 1}")

    def take(self) -> list[Card]:
        out, self.done = self.done, []
        return out


def _text(stream: IO[bytes] | CountingReader) -> Iterator[str]:
    """UTF-8 text of ``stream`` in chunks (a BOM skipped; bad bytes replaced)."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")("replace")
    while chunk := stream.read(CHUNK):
        yield decoder.decode(chunk)
    yield decoder.decode(b"", final=True)


def cards(stream: IO[bytes] | CountingReader, name: str) -> Iterator[Card]:
    """The cards of one page, in page order, each as soon as it closes."""
    parser = _Cards(name)
    for text in _text(stream):
        parser.feed(text)
        yield from parser.take()
    parser.close()
    yield from parser.take()


def first_header(stream: IO[bytes] | CountingReader) -> str | None:
    """The header of a page's first card; ``None`` when the page holds no My Activity card
    where Takeout puts the first one: within :data:`HEAD_BYTES` (its style sheet comes
    first) and :data:`CHUNK` bytes into its body — so other HTML costs little to rule out."""
    parser = _Cards("")
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    read = body_at = 0
    while parser.first_header is None and read < HEAD_BYTES and (chunk := stream.read(CHUNK)):
        read += len(chunk)
        parser.feed(decoder.decode(chunk))
        if parser.in_body and not body_at:
            body_at = read
        elif body_at and read - body_at >= CHUNK:
            break
    return parser.first_header
