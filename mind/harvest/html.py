"""HTML → readable text with the stdlib parser, by the document's structure.

Chrome is dropped (script, style, nav, page-level header/footer, noscript, svg, template, …);
``h1``–``h6`` become ``#``…``######`` lines so :func:`mind.harvest.markdown.split_sections` can
cut the page at its headings; paragraphs, ``br``, list items and table rows keep their line
structure, ``pre`` blocks become fenced code (keeping their whitespace); entities are decoded by
the parser; elsewhere runs of whitespace collapse to one space. ``<title>`` and the meta
description are extracted separately. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Final

SKIP_TAGS: Final = frozenset({
    "script", "style", "nav", "footer", "header", "noscript", "svg", "template", "iframe",
    "object", "canvas", "select", "button", "dialog",
})
# header/footer inside an article or main are the article's own (its h1, byline): kept.
_CONTEXTUAL_SKIP: Final = frozenset({"header", "footer"})
_CONTENT_ROOTS: Final = frozenset({"article", "main"})
_PARAGRAPH_TAGS: Final = frozenset({
    "p", "blockquote", "ul", "ol", "dl", "table", "figure", "address", "details", "hr",
})
_LINE_TAGS: Final = frozenset({
    "div", "section", "article", "main", "li", "tr", "dt", "dd", "figcaption", "caption",
    "summary", "thead", "tbody", "tfoot", "body", "center",
})
_HEADINGS: Final = {f"h{n}": n for n in range(1, 7)}
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class HtmlDocument:
    title: str
    description: str
    text: str  # markdown-ish: "# Heading" lines, "- item" lines, blank lines between blocks


def collapse(text: str) -> str:
    """Whitespace runs (incl. NBSP) → one space, trimmed."""
    return _SPACE.sub(" ", text).strip()


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []  # "" marks a paragraph break
        self.title_parts: list[str] = []
        self.meta: dict[str, str] = {}
        self._inline: list[str] = []
        self._prefix = ""
        self._skip: list[str] = []
        self._roots = 0
        self._in_title = False
        self._pre = 0
        self._pre_buf: list[str] = []
        self._lists: list[list[int]] = []  # per open list: [is_ordered, counter]
        self._cells = 0

    # -- output helpers -------------------------------------------------------------------
    def _flush(self) -> None:
        text = collapse("".join(self._inline))
        if text:
            self.lines.append(self._prefix + text)
        self._inline = []
        self._prefix = ""

    def _paragraph(self) -> None:
        self._flush()
        if self.lines and self.lines[-1] != "":
            self.lines.append("")

    def _break(self, *, nested: bool) -> None:
        if nested:
            self._flush()
        else:
            self._paragraph()

    # -- parser callbacks -----------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skip:
            if tag == self._skip[-1] or tag in SKIP_TAGS:
                self._skip.append(tag)
            return
        if tag in SKIP_TAGS and not (tag in _CONTEXTUAL_SKIP and self._roots):
            self._skip.append(tag)
            return
        if tag == "meta":
            self._meta(dict(attrs))
        elif tag == "title":
            self._in_title = True
        elif tag in _CONTENT_ROOTS:
            self._roots += 1
        if self._pre:
            if tag == "br":
                self._pre_buf.append("\n")
            return
        self._open_block(tag)

    def _open_block(self, tag: str) -> None:
        if tag in _HEADINGS:
            self._paragraph()
            self._prefix = "#" * _HEADINGS[tag] + " "
        elif tag == "pre":
            self._paragraph()
            self._pre += 1
        elif tag == "br":
            self._flush()
        elif tag in ("ul", "ol"):
            self._break(nested=bool(self._lists))
            self._lists.append([tag == "ol", 0])
        elif tag == "li":
            self._flush()
            indent = "  " * max(len(self._lists) - 1, 0)
            if self._lists and self._lists[-1][0]:
                self._lists[-1][1] += 1
                self._prefix = f"{indent}{self._lists[-1][1]}. "
            else:
                self._prefix = f"{indent}- "
        elif tag == "tr":
            self._flush()
            self._cells = 0
        elif tag in ("td", "th"):
            if self._cells:
                self._inline.append(" | ")
            self._cells += 1
        elif tag in _PARAGRAPH_TAGS:
            self._paragraph()
        elif tag in _LINE_TAGS:
            self._flush()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SKIP_TAGS or tag in _CONTENT_ROOTS:
            return  # <svg/>, <main/>: empty either way
        self.handle_starttag(tag, attrs)
        if tag not in ("br", "hr", "meta", "img", "input", "link", "wbr"):
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._skip:
            if tag == self._skip[-1]:
                self._skip.pop()
            return
        if tag == "title":
            self._in_title = False
        elif tag in _CONTENT_ROOTS and self._roots:
            self._roots -= 1
        if tag == "pre" and self._pre:
            self._pre -= 1
            if not self._pre:
                block = "".join(self._pre_buf).strip("\n")
                self._pre_buf = []
                if block.strip():  # fenced, so a "# comment" in code never reads as a heading
                    fence = "````" if "```" in block else "```"
                    self.lines.extend([fence, *(ln.rstrip() for ln in block.split("\n")), fence])
                self._paragraph()
            return
        if self._pre:
            return
        if tag in ("ul", "ol") and self._lists:
            self._lists.pop()
            self._break(nested=bool(self._lists))
        elif tag in _HEADINGS or tag in _PARAGRAPH_TAGS:
            self._paragraph()
        elif tag in _LINE_TAGS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
        elif self._skip:
            return
        elif self._pre:
            self._pre_buf.append(data)
        else:
            self._inline.append(data)

    def _meta(self, attrs: dict[str, str | None]) -> None:
        key = (attrs.get("name") or attrs.get("property") or "").strip().lower()
        content = attrs.get("content")
        if key and content and key not in self.meta:
            self.meta[key] = collapse(content)

    def result(self) -> HtmlDocument:
        self._paragraph()
        lines = self.lines
        while lines and lines[-1] == "":
            lines.pop()
        title = collapse("".join(self.title_parts)) or self.meta.get("og:title", "")
        description = self.meta.get("description") or self.meta.get("og:description", "")
        return HtmlDocument(title=title, description=description, text="\n".join(lines))


def extract(html: str) -> HtmlDocument:
    """Title, meta description and the body as structured text."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    return parser.result()


def html_to_text(html: str) -> str:
    """Just the body text of :func:`extract`."""
    return extract(html).text
