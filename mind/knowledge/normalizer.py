"""Pure rules of the knowledge graph: entity names (normalization, aliases, noise filter,
word-boundary mentions) and input checks (arguments, properties).

Pure functions only; :mod:`mind.knowledge.store`, :mod:`mind.knowledge.graph` and
:mod:`mind.knowledge.dedupe` apply
them to SQLite. ``normalize_entity_name`` is the identity key of an entity (together with
its lower-cased type): it case-folds, collapses whitespace and maps known aliases onto their
canonical spelling, so "Postgres", "PG" and "postgresql" are one entity.

Decisions:

- ``is_noise_name`` no longer drops every name shorter than four characters: "Bob", "Amy", "Li"
  and "Joe" are real names. Noise is only: empty, no letters at all (punctuation / digits),
  a stop token or weekday / month name (matched case-insensitively), or a single-token all-caps
  acronym of at most six letters that is not in :data:`TECH_ALLOWLIST`.
- ``mentions`` matches on Unicode word boundaries, so "hive" is not found in "archive".
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mind.errors import ValidationError
from mind.storage.jsonfields import dump_object, load_object
from mind.storage.sqlutil import escape_like

Props = dict[str, Any]

ALIAS_GROUPS: Final[tuple[tuple[str, ...], ...]] = (
    ("postgresql", "postgres", "pg"),
    ("javascript", "js"),
    ("typescript", "ts"),
    ("kubernetes", "k8s"),
    ("new york city", "nyc"),
    ("nodejs", "node.js", "node"),
    ("react.js", "reactjs", "react"),
    ("vue.js", "vuejs", "vue"),
    ("python", "py"),
    ("mongodb", "mongo"),
)

# alias (and canonical) -> canonical; the first member of each group is canonical.
ALIASES: Final[dict[str, str]] = {alias: group[0] for group in ALIAS_GROUPS for alias in group}

_TECH = (
    "go php bun deno npm pip gem vim git vue zod nuxt vite hono ai ml db os ui ux io ci cd "
    "k8s sdk orm jwt ssh dns gpu cpu"
)
TECH_ALLOWLIST: Final[frozenset[str]] = frozenset(_TECH.split())

_STARTERS = (
    "The This That These Those When Where Why How What Who Which If And But Or So For Nor Yet "
    "As At By On In To From With Without Into Onto Upon Over Under Between Among"
)
_VERBS = (
    "Add Remove Set Get Update Delete Create List Search Find Run Build Use Make Test Check Read "
    "Write Edit Save Load Open Close Start Stop Show Hide Push Pull Fix Done Skip Wait Try Note "
    "Warn Info Debug Trace Todo Fixme Should Could Would Must Will Shall Can May Might"
)
_WEEKDAYS = "Mon Tue Wed Thu Fri Sat Sun Monday Tuesday Wednesday Thursday Friday Saturday Sunday"
_MONTHS = (
    "Jan Feb Mar Apr Jun Jul Aug Sep Oct Nov Dec January February March April June July August "
    "September October November December"
)

STOP_TOKENS: Final[frozenset[str]] = frozenset(
    f"{_STARTERS} {_VERBS} {_WEEKDAYS} {_MONTHS}".split()
)
_STOP_FOLDED: Final[frozenset[str]] = frozenset(t.casefold() for t in STOP_TOKENS)

_ACRONYM = re.compile(r"[A-Z]+")
MIN_MENTION_CHARS: Final = 2


def fold(text: str) -> str:
    """Case-fold and collapse runs of whitespace to one space (trimmed)."""
    return " ".join(text.casefold().split())


def normalize_entity_name(name: str) -> str:
    """The identity key of a name: folded, whitespace-collapsed, alias mapped to canonical."""
    folded = fold(name)
    return ALIASES.get(folded, folded)


def normalize_entity_type(entity_type: str) -> str:
    """Entity types are case-insensitive: stored folded and whitespace-collapsed."""
    return fold(entity_type)


def is_likely_acronym(token: str) -> bool:
    """All ASCII capitals and at most six of them ("API", "NASA")."""
    return len(token) <= 6 and _ACRONYM.fullmatch(token) is not None


def is_noise_name(name: str) -> bool:
    """True when a candidate entity name is junk rather than a thing worth remembering."""
    text = " ".join(name.split())
    if not text:
        return True
    if text.casefold() in TECH_ALLOWLIST:
        return False
    if not any(ch.isalpha() for ch in text):
        return True
    if text.casefold() in _STOP_FOLDED:
        return True
    return " " not in text and is_likely_acronym(text)


def find_duplicates(refs: Sequence[tuple[str, str]]) -> list[list[int]]:
    """Group ``(name, type)`` pairs by identity key; returns index groups incl. singletons.

    Groups come in order of first appearance, members in input order.
    """
    groups: dict[tuple[str, str], list[int]] = {}
    for index, (name, entity_type) in enumerate(refs):
        key = (normalize_entity_name(name), normalize_entity_type(entity_type))
        groups.setdefault(key, []).append(index)
    return list(groups.values())


def mentions(folded_text: str, needle: str) -> bool:
    """Whether ``needle`` occurs in ``folded_text`` (already passed through :func:`fold`) as a
    whole word or phrase: not preceded or followed by a Unicode letter, digit or underscore.

    Needles shorter than two characters never match.
    """
    key = fold(needle)
    if len(key) < MIN_MENTION_CHARS:
        return False
    pattern = r"(?<!\w)" + re.escape(key) + r"(?!\w)"
    return re.search(pattern, folded_text) is not None


# -- input checks ------------------------------------------------------------------------------


def text_arg(value: object, what: str) -> str:
    """A non-empty string, trimmed and whitespace-collapsed."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{what} must be a non-empty string")
    return " ".join(value.split())


def count_arg(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValidationError(f"{what} must be a non-negative integer, got {value!r}")
    return value


def confidence_arg(value: object) -> float:
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or not math.isfinite(value) or not 0.0 <= value <= 1.0):
        raise ValidationError(f"confidence must be a number in [0, 1], got {value!r}")
    return float(value)


def props_arg(value: Mapping[str, Any] | None) -> Props:
    """A copy of caller properties; must be a JSON-serializable mapping with string keys."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ValidationError("properties must be a mapping with string keys")
    props = dict(value)
    dump_props(props)
    return props


def dump_props(props: Mapping[str, Any]) -> str:
    return dump_object(props, "properties")


load_props = load_object


def seen_count(props: Mapping[str, Any]) -> int:
    """``properties.seen_count`` as a positive int (absent or malformed counts as 1)."""
    value = props.get("seen_count", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def like_pattern(query: str) -> str:
    """``%query%`` with LIKE wildcards escaped, for ``LIKE ? ESCAPE '\\'``."""
    return f"%{escape_like(query)}%"


# -- validation schema -------------------------------------------------------------------------



