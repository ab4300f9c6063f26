"""Content hashing for frame de-duplication."""

from __future__ import annotations

import hashlib
import re

_HM_PREFIX = re.compile(r"^\[hm [^\]]*\]\s*")
# JS String.prototype.trim strips Unicode whitespace and the BOM; str.strip() keeps the BOM.
_TRIM = (
    " \t\n\r\x0b\x0c\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def strip_hm_prefix(content: str) -> str:
    """Remove a leading ``[hm session:… src:… event:…]`` provenance block and the space after it."""
    return _HM_PREFIX.sub("", content, count=1)


def hash_frame_content(content: str) -> str:
    """Lowercase hex SHA-256 of the prefix-stripped, trimmed content."""
    text = strip_hm_prefix(content).strip(_TRIM)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
