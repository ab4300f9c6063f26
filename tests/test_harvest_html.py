"""HTML → text (mind/harvest/html.py): table-tested structure, chrome removal, metadata."""

from __future__ import annotations

import pytest

from mind.harvest.html import collapse, extract, html_to_text

CASES = [
    ("paragraphs", "<p>One</p><p>Two</p>", "One\n\nTwo"),
    ("headings", "<h1>A</h1><p>x</p><h2>B</h2><h3>C</h3><h4>D</h4>",
     "# A\n\nx\n\n## B\n\n### C\n\n#### D"),
    ("br", "<p>line one<br>line two<br/>line three</p>", "line one\nline two\nline three"),
    ("whitespace collapsed", "<p>  a \n\t b   <i>c</i>  </p>", "a b c"),
    ("entities decoded", "<p>&lt;tag&gt; &amp; &quot;q&quot; &#39;s&#39; caf&eacute; a&nbsp;b &#x263A;</p>",
     "<tag> & \"q\" 's' café a b ☺"),
    ("unordered list", "<ul><li>one</li><li>two</li></ul>", "- one\n- two"),
    ("ordered list", "<ol><li>first</li><li>second</li></ol>", "1. first\n2. second"),
    ("nested list", "<ul><li>a<ul><li>a1</li></ul></li><li>b</li></ul>", "- a\n  - a1\n- b"),
    ("table", "<table><tr><th>k</th><th>v</th></tr><tr><td>x</td><td>1</td></tr></table>",
     "k | v\nx | 1"),
    ("script and style dropped",
     "<style>p{color:red}</style><p>kept</p><script>var s = '<p>gone</p>';</script>", "kept"),
    ("chrome dropped",
     "<header>Site</header><nav><a>Home</a></nav><p>body</p><footer>(c)</footer>"
     "<noscript>enable js</noscript><svg><text>icon</text></svg>", "body"),
    ("article header kept", "<article><header><h1>Post</h1></header><p>text</p></article>",
     "# Post\n\ntext"),
    ("pre fenced with whitespace", "<pre>def f():\n    # comment\n    return 1</pre>",
     "```\ndef f():\n    # comment\n    return 1\n```"),
    ("divs are lines", "<div>a</div><div>b</div>", "a\nb"),
    ("inline run-together", "Hello<b>World</b>!", "HelloWorld!"),
    ("empty", "", ""),
    ("unclosed tags", "<p>one<p>two<li>three", "one\n\ntwo\n- three"),
]


@pytest.mark.parametrize(("name", "html", "expected"), CASES, ids=[c[0] for c in CASES])
def test_html_to_text(name: str, html: str, expected: str) -> None:
    assert html_to_text(html) == expected


def test_title_and_description() -> None:
    doc = extract(
        "<html><head><title>\n  My   Page \n</title>"
        '<meta name="Description" content="All about  &amp; more">'
        "</head><body><p>x</p></body></html>"
    )
    assert doc.title == "My Page"
    assert doc.description == "All about & more"
    assert doc.text == "x"


def test_og_fallbacks() -> None:
    doc = extract('<meta property="og:title" content="OG"><meta property="og:description" '
                  'content="desc"><p>x</p>')
    assert (doc.title, doc.description) == ("OG", "desc")


def test_title_not_in_body() -> None:
    assert extract("<title>T</title><p>body</p>").text == "body"


def test_long_content_kept_whole() -> None:
    words = " ".join(f"w{i}" for i in range(5000))
    assert html_to_text(f"<p>{words}</p>") == words


def test_collapse() -> None:
    assert collapse(" a\u00a0\n b ") == "a b"
