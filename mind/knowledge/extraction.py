"""Heuristic entity and relation extraction for the cognify pipeline.

Pure functions, no I/O. A regex extractor that keeps short real names and relation directions:

- **Technology** (confidence 0.9): 59 ``TECH_TERMS`` plus a few spellings
  ("golang", "node.js", "k8s", "python3", "gpt-4"), named canonically ("PostgreSQL", "Node.js",
  "GitHub"). Everyday words in :data:`AMBIGUOUS_TECH` ("go", "rest", "node", "claude", "rust", …;
  "java" and "python" are *not* ambiguous) count only with evidence (confidence 0.8): the canonical
  casing mid-sentence and not inside a longer Capitalized name ("in Go", not "American Express"),
  a tech noun or version after it ("go code", "node 18"), a cue before it ("using rust", "import
  express", "migrate to Go"), a fence tag (```` ```go ````), or coordination with another
  technology ("node and postgres"); never right after "to"/"let's"/a modal ("let's go").
  Curated terms are exempt from :func:`is_noise_name` ("AWS", "GPT" are real).
- **Proper nouns**: runs of Capitalized words (also "McDonald", "iPhone", "Zoë", short "Bob",
  "Li"), joined by "&" and particles ("Bank of America", "Rio de Janeiro"). Stop tokens and role
  words split a run ("CEO of Bank of America" → "Bank of America"); pronouns, greetings, titles
  and time words are stripped from its ends ("When Alice" → "Alice"). A sentence-initial word is
  kept only if it is a known first name (and not an imperative: "Mark the ticket"), a known place,
  capitalized mid-sentence elsewhere, or followed by another name word (unless it is a common
  sentence-start verb or precedes a first name: "Met Bob" → "Bob"). "The" belongs to a name only
  for known places ("The Hague"). Code blocks, inline code, code-like lines, URLs and e-mails are
  not searched for proper nouns. Lowercase chat names ("talked to bob") are not extracted.
  Multi-word names score 0.7, single words 0.6.
- **Types**: person > organization > project > concept > location, else concept.
- Result: first-seen text order (technologies are no longer listed first), deduplicated by
  ``(type, normalize_entity_name(name))``; a lone first or last name of an extracted multi-word
  person (or first word of an organization) is folded into it. No minimum text length ("Bob").

The word lists live in :mod:`mind.knowledge.lexicon`, a text's words (code spans, sentence starts,
name-shaped words) come from :mod:`mind.knowledge.tokens`.

:func:`extract_relations` reads the verb phrase between two adjacent mentions of the given
entities (table in :mod:`mind.knowledge.relation_patterns`).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Final

from mind.knowledge.lexicon import (
    AMBIGUOUS_TECH,
    CONCEPT_WORDS,
    CONNECTORS,
    COORD,
    COORD_LEFT,
    CUE_ONLY,
    DETERMINERS,
    EDGE_JUNK,
    JUNK_WORDS,
    KNOWN_PLACES,
    LOCATION_CUES,
    LOCATION_WORDS,
    MOVE_VERBS,
    ORG_WORDS,
    PERSON_FIRST_NAMES,
    PROJECT_PREFIXES,
    SENTENCE_VERBS,
    TECH_CUES,
    TECH_NOUNS,
    TECH_TERMS,
    TECH_VARIANTS,
    TITLES,
    VERB_MARKERS,
)
from mind.knowledge.normalizer import count_arg, is_noise_name, normalize_entity_name
from mind.knowledge.relation_patterns import find_mentions, match_gap
from mind.knowledge.tokens import WordMemo, tokenize


@dataclass(frozen=True, slots=True)
class ExtractedEntity:
    name: str
    entity_type: str
    confidence: float


@dataclass(frozen=True, slots=True)
class ExtractedRelation:
    source: str
    target: str
    relation_type: str
    confidence: float


_PLAIN = re.compile(r"[^\S\n]+")
_AMPERSAND = re.compile(r"[^\S\n]*&[^\S\n]*")
_LIST_SEP = re.compile(r"[^\S\n]*[,/+&][^\S\n]*")
_TITLE_GAP = re.compile(r"\.?[^\S\n]+")  # "Dr. Smith", "Dr Smith"
_LOOSE = re.compile(r"[^\S\n]*\(?['\"]?")
_VERSION = re.compile(r"v?\d+(?:\.\d+)*x?")
_SUFFIXED = re.compile(r"([a-z]+)v?\d[\d.]*")
_POSSESSIVE = re.compile(r"['’]s$")
_ACRONYMS = re.compile(r"[A-Z]{2,6}s")  # "APIs", "LLMs"
_PIECES = re.compile(r"[.\-]")  # "node.js", "rest-api"

MAX_NAME_WORDS: Final = 6  # longer Capitalized runs are headings or shouting, not names


class _Extractor:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self._runs: list[tuple[int, ...]] | None = None

    def gap(self, i: int, j: int) -> str:
        return self.text[self.tokens[i].end : self.tokens[j].start]

    def near(self, i: int, step: int, pattern: re.Pattern[str] = _PLAIN) -> int | None:
        """The neighbour ``i+step`` when only ``pattern`` separates the two tokens."""
        j = i + step
        if not 0 <= j < len(self.tokens):
            return None
        return j if pattern.fullmatch(self.gap(min(i, j), max(i, j))) else None

    # -- technology ----------------------------------------------------------------------

    def technologies(self) -> list[tuple[int, ExtractedEntity]]:
        found: dict[int, str] = {}
        evidenced: set[int] = set()
        for i, tok in enumerate(self.tokens):
            hit = _tech_term(tok.low)
            if hit is not None:
                found[i] = hit[0]
                if hit[1] or hit[0] not in AMBIGUOUS_TECH or self.tech_context(i, hit[0]):
                    evidenced.add(i)
        changed = True
        while changed:  # coordination: "react, node and postgres"
            changed = False
            for i in found.keys() - evidenced:
                if not self.verb_marked(i) and any(
                        j in evidenced for j in (self.coord(i, -1), self.coord(i, 1))):
                    evidenced.add(i)
                    changed = True
        return [(self.tokens[i].start, ExtractedEntity(
            TECH_TERMS[found[i]], "technology", 0.8 if found[i] in AMBIGUOUS_TECH else 0.9))
            for i in sorted(evidenced)]

    def verb_marked(self, i: int) -> bool:
        prev = self.near(i, -1)
        return prev is not None and self.tokens[prev].low in VERB_MARKERS

    def tech_context(self, i: int, term: str) -> bool:
        tok, prev, nxt = self.tokens[i], self.near(i, -1), self.near(i, 1)
        prev2 = self.near(prev, -1) if prev is not None else None
        if (prev is not None and prev2 is not None and self.tokens[prev].low in ("to", "from")
                and self.tokens[prev2].low in MOVE_VERBS):
            return True
        if self.verb_marked(i):
            return False
        if nxt is not None and (self.tokens[nxt].low in TECH_NOUNS
                                or _VERSION.fullmatch(self.tokens[nxt].low)):
            return True
        cue = self.near(i, -1, _LOOSE)
        if cue is not None and self.tokens[cue].low in TECH_CUES:
            return True
        if self.text[max(0, tok.start - 3) : tok.start] == "```":
            return True
        display = TECH_TERMS[term]
        if tok.text == display and display[1:] != display[1:].lower():
            return True  # REST, gRPC
        if tok.initial or tok.text not in (display, term.capitalize()):
            return False
        return not any(self.proper_word(j) for j in (prev, nxt) if j is not None)

    def proper_word(self, j: int) -> bool:
        low = self.tokens[j].low
        return (self.member(j) and low not in JUNK_WORDS and _tech_term(low) is None
                and low not in TITLES)

    def coord(self, i: int, step: int) -> int | None:
        j = self.near(i, step, _LIST_SEP)
        if j is not None:
            return j
        j = self.near(i, step)
        allowed = COORD_LEFT if step < 0 else COORD
        if j is None or self.tokens[j].low not in allowed:
            return None
        return self.near(j, step)

    # -- proper nouns --------------------------------------------------------------------

    def member(self, i: int) -> bool:
        return self.tokens[i].member

    def extend(self, j: int) -> list[int]:
        nxt = self.near(j, 1)
        if nxt is not None and self.member(nxt):
            return [nxt]
        amp = self.near(j, 1, _AMPERSAND)
        if amp is not None and self.member(amp):
            return [amp]
        if nxt is None or self.tokens[nxt].text not in CONNECTORS:
            return []
        after = self.near(nxt, 1)
        if after is not None and self.tokens[nxt].text == "of" and self.tokens[after].text == "the":
            last = self.near(after, 1)
            return [nxt, after, last] if last is not None and self.member(last) else []
        return [nxt, after] if after is not None and self.member(after) else []

    def runs(self) -> list[tuple[int, ...]]:
        """Runs of name words (token indexes), before their ends are trimmed (found once)."""
        if self._runs is None:
            self._runs = self._find_runs()
        return self._runs

    def _find_runs(self) -> list[tuple[int, ...]]:
        out: list[tuple[int, ...]] = []
        i = 0
        while i < len(self.tokens):
            if not self.member(i):
                i += 1
                continue
            run = [i]
            while more := self.extend(run[-1]):
                run.extend(more)
            out.append(tuple(run))
            i = run[-1] + 1
        return out

    def proper_nouns(self, known: frozenset[str] = frozenset()
                     ) -> list[tuple[int, ExtractedEntity]]:
        toks = self.tokens
        mid_caps = {t.low for t in toks if not t.initial and t.member} | known
        out: list[tuple[int, ExtractedEntity]] = []
        for run in map(list, self.runs()):
            titled = self._titled(run[0])
            while run and (toks[run[0]].low in EDGE_JUNK or not self.member(run[0])):
                titled = titled or toks[run[0]].low in TITLES
                run.pop(0)
            while run and (toks[run[-1]].low in EDGE_JUNK or not self.member(run[-1])):
                run.pop()
            if run and toks[run[0]].initial and not titled:
                run = self._sentence_start(run, mid_caps)
            words = [k for k in run if self.member(k)]
            if not words or len(words) > MAX_NAME_WORDS or not self._worth(words):
                continue
            start, end = toks[run[0]].start, toks[run[-1]].end
            name = _POSSESSIVE.sub("", " ".join(self.text[start:end].split()))
            before = self.near(run[0], -1)
            if (before is not None and toks[before].low == "the"
                    and f"the {name.casefold()}" in KNOWN_PLACES):
                name, start = f"The {name}", toks[before].start
            if is_noise_name(name):
                continue
            etype = "person" if titled else _classify(name, self._location_cue(run[0]))
            out.append((start, ExtractedEntity(name, etype, 0.7 if " " in name else 0.6)))
        return out

    def _titled(self, i: int) -> bool:
        j = self.near(i, -1, _TITLE_GAP)
        return j is not None and self.tokens[j].low in TITLES

    def _sentence_start(self, run: list[int], mid_caps: set[str]) -> list[int]:
        first = self.tokens[run[0]].low
        if len(run) == 1:
            nxt = self.near(run[0], 1)
            imperative = nxt is not None and self.tokens[nxt].low in DETERMINERS
            keep = (first in mid_caps or first in KNOWN_PLACES
                    or (first in PERSON_FIRST_NAMES and not imperative))
            return run if keep else []
        second = self.tokens[run[1]].low
        if first in SENTENCE_VERBS or (second in PERSON_FIRST_NAMES and first not in mid_caps
                                        and first not in PERSON_FIRST_NAMES):
            run = run[1:]
            while run and not self.member(run[0]):
                run.pop(0)
        return run

    def _worth(self, words: list[int]) -> bool:
        lows = [self.tokens[k].low for k in words]
        if len(words) == 1:
            t = self.tokens[words[0]]
            return (_tech_term(t.low) is None and t.low not in CUE_ONLY and not t.text.isupper()
                    and not _ACRONYMS.fullmatch(t.text) and sum(ch.isalpha() for ch in t.text) > 1)
        if all(_tech_term(low) is not None for low in lows):
            return False
        texts = [self.tokens[k].text for k in words]
        return not all(is_noise_name(t) or _ACRONYMS.fullmatch(t) for t in texts)

    def _location_cue(self, i: int) -> bool:
        prev = self.near(i, -1)
        if prev is not None and self.tokens[prev].low in ("visiting", "visited"):
            return True
        prev2 = self.near(prev, -1) if prev is not None else None
        return (prev is not None and prev2 is not None
                and self.tokens[prev].low in ("in", "to", "at")
                and self.tokens[prev2].low in LOCATION_CUES)


def _find_tech_term(low: str) -> tuple[str, bool] | None:
    """``(term, strong)`` when a lowercased token names a technology; ``strong`` = the spelling
    itself is evidence even for an ambiguous term ("node.js", "golang", "node18", "rest-api")."""
    if low in TECH_TERMS:
        return low, False
    if low in TECH_VARIANTS:
        return TECH_VARIANTS[low], True
    m = _SUFFIXED.fullmatch(low)
    if m and m.group(1) in TECH_TERMS:
        return m.group(1), True
    if "." not in low and "-" not in low:
        return None
    pieces = _PIECES.split(low)
    for k, piece in enumerate(pieces):
        if len(pieces) > 1 and piece in TECH_TERMS:
            others = pieces[:k] + pieces[k + 1 :]
            return piece, any(o in TECH_NOUNS or o in TECH_TERMS or o[:1].isdigit()
                              for o in others)
    return None


_tech_term = WordMemo(_find_tech_term)


def _has(words: list[str], vocab: frozenset[str]) -> bool:
    return any(w in vocab or (w.endswith("s") and w[:-1] in vocab) for w in words)


def _classify(name: str, location_cue: bool = False) -> str:
    words = [_POSSESSIVE.sub("", w) for w in name.casefold().split()]
    if words[0] in PERSON_FIRST_NAMES:
        return "person"
    if _has(words, ORG_WORDS):
        return "organization"
    if words[0] in PROJECT_PREFIXES:
        return "project"
    if _has(words, CONCEPT_WORDS):
        return "concept"
    if location_cue or name.casefold() in KNOWN_PLACES or _has(words, LOCATION_WORDS):
        return "location"
    return "concept"


def _fold_partial_names(found: list[tuple[int, ExtractedEntity]]) -> list[ExtractedEntity]:
    """Drop a lone "Alice" / "Johnson" when "Alice Johnson" (person) was also extracted, and a
    lone "Acme" next to "Acme Corp" (organization)."""
    parts: set[str] = set()
    for _, e in found:
        words = e.name.casefold().split()
        if len(words) > 1 and e.entity_type == "person":
            parts.update((words[0], words[-1]))
        elif len(words) > 1 and e.entity_type == "organization":
            parts.add(words[0])
    return [e for _, e in found
            if e.entity_type == "technology" or " " in e.name or e.name.casefold() not in parts]


class Extraction:
    """The entities named in the first ``max_chars`` characters of one text, in first-seen order,
    to be asked again with other ``known`` words (the
    second pass over a cognify batch, :mod:`workers.cognify`): what does not depend on them
    (tokens, technologies, name runs) is found once."""

    def __init__(self, text: str, *, max_chars: int = 10_000) -> None:
        text = unicodedata.normalize("NFC", text[: count_arg(max_chars, "max_chars")])
        self._extractor = _Extractor(text)
        self._technologies = self._extractor.technologies()

    def entities(self, known: Collection[str] = ()) -> list[ExtractedEntity]:
        """``known``: lowercase words already seen as names elsewhere (the other messages of
        the same conversation batch): a sentence-initial word among them counts as a name, as it
        would if this text itself used it mid-sentence ("Biscuit pulls on the leash" after "we
        adopted Biscuit")."""
        found = sorted(self._technologies + self._extractor.proper_nouns(frozenset(known)),
                       key=lambda p: p[0])
        seen: set[tuple[str, str]] = set()
        out: list[ExtractedEntity] = []
        for entity in _fold_partial_names(found):
            key = (entity.entity_type, normalize_entity_name(entity.name))
            if key in seen or (entity.entity_type != "technology" and is_noise_name(entity.name)):
                continue
            seen.add(key)
            out.append(entity)
        return out


def name_words(entities: Sequence[ExtractedEntity]) -> set[str]:
    """Lowercase single-word names of ``entities`` (technologies aside): what
    :meth:`Extraction.entities` takes as ``known`` for the texts around them."""
    return {e.name.casefold() for e in entities
            if " " not in e.name and e.entity_type != "technology"}


def _surface_names(entities: Sequence[ExtractedEntity]) -> tuple[list[str], list[int]]:
    """Names to look for and the entity each one means: every entity name, plus the lone first
    or last name of a multi-word person when no other entity claims that word ("Alice" →
    "Alice Johnson", mirroring the folding of partial names in :meth:`Extraction.entities`)."""
    names = [e.name for e in entities]
    owners = list(range(len(entities)))
    taken = {normalize_entity_name(e.name) for e in entities}
    claims: dict[str, set[int]] = {}
    for index, entity in enumerate(entities):
        words = entity.name.split()
        if entity.entity_type == "person" and len(words) > 1:
            for word in {words[0], words[-1]}:
                claims.setdefault(word, set()).add(index)
    for word, claimants in claims.items():
        if len(claimants) == 1 and normalize_entity_name(word) not in taken:
            names.append(word)
            owners.append(next(iter(claimants)))
    return names, owners


def extract_relations(
    text: str, entities: Sequence[ExtractedEntity], *, max_chars: int = 10_000
) -> list[ExtractedRelation]:
    """Relations stated between two adjacent entity mentions (see
    :mod:`mind.knowledge.relation_patterns`).

    Both ends are always among ``entities`` (named as there); no self-relations; deduplicated by
    ``(source, relation, target)`` on normalized names, first wins.
    """
    if len({normalize_entity_name(e.name) for e in entities}) < 2:
        return []
    text = unicodedata.normalize("NFC", text[: count_arg(max_chars, "max_chars")])
    names, owners = _surface_names(entities)
    mentions = find_mentions(text, names)
    seen: set[tuple[str, str, str]] = set()
    out: list[ExtractedRelation] = []
    for (_, end, a), (start, end_b, b) in itertools.pairwise(mentions):
        pattern = match_gap(text[end:start])
        if pattern is None or _POSSESSIVE.match(text[end_b : end_b + 2]):
            continue  # "Alice approved Bob's plan" is not about Bob
        first, second = entities[owners[a]], entities[owners[b]]
        src, tgt = (second, first) if pattern.reverse else (first, second)
        rel, conf = pattern.relation_type, pattern.confidence
        if pattern.person_source and src.entity_type != "person":
            continue
        if pattern.org_target and tgt.entity_type == "organization":
            rel, conf = "affiliated_with", 0.75
        key = (normalize_entity_name(src.name), rel, normalize_entity_name(tgt.name))
        if key[0] == key[2] or key in seen:
            continue
        seen.add(key)
        out.append(ExtractedRelation(src.name, tgt.name, rel, conf))
    return out


