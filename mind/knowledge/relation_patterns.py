"""The relation table of the heuristic extractor: phrases, their direction, their relation.

Pure data and matching, used by :func:`mind.knowledge.extraction.extract_relations`. Instead of the
original's "two multi-word Capitalized phrases around a verb" regexes, relations are read between
two *consecutive mentions of already extracted entities*: :func:`find_mentions` locates every
entity name (and every alias of it, e.g. "Postgres" for "PostgreSQL") on word boundaries,
case-insensitively, and :func:`match_gap` tests the exact text between two neighbouring mentions
against the verb phrases below. So single-word names take part ("Bob leads Alice"), a phrase
never swallows a third name, and the direction is explicit per verb form:

====================  =========================================================  ============
relation (conf.)      text between the mentions (``A … B``)                      edge
====================  =========================================================  ============
led_by (0.9)          is/was led / managed / headed / run / directed by          A → B
led_by (0.9)          leads / manages / heads / runs / directs …; is the lead of B → A
reports_to (0.9)      reports to; works for / under (target an organization:     A → B
                      affiliated_with 0.75 instead)
depends_on (0.85)     depends / relies on; requires; is built on                 A → B
depends_on (0.85)     is required / needed by                                    B → A
maintained_by (0.85)  is maintained / built / created / owned / developed by     A → B
maintained_by (0.85)  maintains / owns / created / built / developed / wrote     B → A
affiliated_with       works at; joined; is based at; ", CEO of" (any role word)  A → B
(0.75)                bare "from" / "at" only when A is a person                 A → B
approved (0.8)        approved / signed (off on) / confirmed / accepted          A → B
====================  =========================================================  ============

Each verb phrase may be followed by a determiner ("depends on the Data Platform").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from mind.knowledge.normalizer import ALIAS_GROUPS, normalize_entity_name

ROLE_WORDS: Final[frozenset[str]] = frozenset(
    "ceo cto cfo coo cio cmo cpo cso vp svp evp president director head manager chief founder "
    "cofounder co-founder chair chairman chairwoman chairperson lead engineer intern mayor "
    "minister secretary professor dean governor senator officer".split()
)

MAX_GAP_CHARS: Final = 80


@dataclass(frozen=True, slots=True)
class RelationPattern:
    relation_type: str
    confidence: float
    gap: re.Pattern[str]
    reverse: bool = False  # the edge runs from the second mention to the first
    person_source: bool = False  # only when the (edge) source is a person
    org_target: bool = False  # becomes affiliated_with (0.75) when the target is an organization


def _gap(verbs: str) -> re.Pattern[str]:
    return re.compile(
        rf"\s*,?\s*(?:{verbs})\s+(?:(?:the|a|an|our|their|its|his|her)\s+)?", re.IGNORECASE
    )


_AUX = r"(?:(?:is|are|was|were|has\s+been|have\s+been|had\s+been|will\s+be|gets|got)\s+)?"
_DO = r"(?:(?:has|have|had|will|did|also)\s+)?"
_ROLES = "|".join(re.escape(role) for role in sorted(ROLE_WORDS))

RELATION_PATTERNS: Final[tuple[RelationPattern, ...]] = (
    RelationPattern("led_by", 0.9, _gap(
        _AUX + r"(?:being\s+)?(?:led|managed|headed|run|directed|supervised)\s+by")),
    RelationPattern("led_by", 0.9, _gap(
        _DO + r"(?:leads?|led|manages?|managed|heads|headed|runs|ran|directs|directed"
        r"|supervises|supervised)|(?:is|was)\s+(?:the\s+)?(?:lead|leader|head|manager)\s+(?:of|on)"),
        reverse=True),
    RelationPattern("reports_to", 0.9, _gap(
        _DO + r"(?:reports?|reported|reporting)\s+to|(?:works?|worked|working)\s+(?:for|under)"),
        org_target=True),
    RelationPattern("depends_on", 0.85, _gap(
        _DO + r"(?:depends?|depended|depending|relies|rely|relied|relying)\s+on"
        r"|requires?|required|(?:is|are|was)\s+built\s+on(?:\s+top\s+of)?")),
    RelationPattern("depends_on", 0.85, _gap(
        r"(?:is|are|was|were)\s+(?:required|needed)\s+by"), reverse=True),
    RelationPattern("maintained_by", 0.85, _gap(
        _AUX + r"(?:maintained|built|created|owned|developed|written)\s+by")),
    RelationPattern("maintained_by", 0.85, _gap(
        _DO + r"(?:maintains|maintained|owns|created|built|develops|developed|wrote)"),
        reverse=True),
    RelationPattern("affiliated_with", 0.75, _gap(
        _DO + r"(?:works?|worked|working)\s+at|joined|joins|(?:is|was)\s+(?:employed|based)\s+at"
        rf"|(?:the\s+|our\s+|a\s+)?(?:{_ROLES})\s+(?:of|at)")),
    RelationPattern("affiliated_with", 0.75, _gap(r"from|at"), person_source=True),
    RelationPattern("approved", 0.8, _gap(
        _DO + r"(?:approved|approves|approve|signed\s+off\s+on|signed|confirmed|accepted)")),
)


def match_gap(gap: str) -> RelationPattern | None:
    """The first pattern whose verb phrase is exactly the text between two mentions."""
    if len(gap) > MAX_GAP_CHARS:
        return None
    return next((p for p in RELATION_PATTERNS if p.gap.fullmatch(gap)), None)


def _variants(name: str) -> set[str]:
    key = normalize_entity_name(name)
    out = {" ".join(name.split())}
    for group in ALIAS_GROUPS:
        if key == group[0]:
            out.update(group)
    return {v for v in out if v}


def find_mentions(text: str, names: Sequence[str]) -> list[tuple[int, int, int]]:
    """Non-overlapping ``(start, end, index into names)`` of every mention, in text order.

    Case-insensitive, on word boundaries, aliases included; where mentions overlap the one
    starting first wins, then the longest ("Alice Johnson" over "Alice").
    """
    found: list[tuple[int, int, int]] = []
    for index, name in enumerate(names):
        for variant in _variants(name):
            body = r"\s+".join(re.escape(word) for word in variant.split())
            pattern = re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)
            found.extend((m.start(), m.end(), index) for m in pattern.finditer(text))
    found.sort(key=lambda m: (m[0], m[0] - m[1], m[2]))
    chosen: list[tuple[int, int, int]] = []
    for mention in found:
        if not chosen or mention[0] >= chosen[-1][1]:
            chosen.append(mention)
    return chosen
