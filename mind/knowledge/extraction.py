"""Heuristic entity and relation extraction for the cognify pipeline (engine-spec b.3–b.5).

Pure functions, no I/O. Follows the original regex extractor with its defects (f.9, f.10) fixed:

- **Technology** (confidence 0.9): the original 59 ``TECH_TERMS`` plus a few spellings
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

:func:`extract_relations` reads the verb phrase between two adjacent mentions of the given
entities (table in :mod:`mind.knowledge.relation_patterns`); :func:`co_occurrence_pairs` pairs
distinct
entities for ``co_occurs_with`` edges, capped at 45 pairs.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Final

from mind.knowledge.normalizer import STOP_TOKENS, count_arg, is_noise_name, normalize_entity_name
from mind.knowledge.relation_patterns import ROLE_WORDS, find_mentions, match_gap


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


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_TECH = (
    "javascript:JavaScript typescript:TypeScript python:Python rust:Rust go:Go java:Java "
    "ruby:Ruby react:React vue:Vue angular:Angular svelte:Svelte nextjs:Next.js nuxt:Nuxt "
    "node:Node.js nodejs:Node.js deno:Deno bun:Bun postgresql:PostgreSQL postgres:PostgreSQL "
    "sqlite:SQLite mysql:MySQL mongodb:MongoDB redis:Redis qdrant:Qdrant docker:Docker "
    "kubernetes:Kubernetes aws:AWS gcp:GCP azure:Azure git:Git github:GitHub gitlab:GitLab "
    "fastify:Fastify express:Express flask:Flask django:Django tauri:Tauri electron:Electron "
    "graphql:GraphQL rest:REST grpc:gRPC openai:OpenAI anthropic:Anthropic litellm:LiteLLM "
    "claude:Claude gpt:GPT vitest:Vitest jest:Jest pytest:pytest drizzle:Drizzle prisma:Prisma "
    "sequelize:Sequelize bullmq:BullMQ clerk:Clerk stripe:Stripe webpack:webpack vite:Vite "
    "esbuild:esbuild rollup:Rollup"
)
TECH_TERMS: Final[dict[str, str]] = dict(pair.split(":") for pair in _TECH.split())
TECH_VARIANTS: Final[dict[str, str]] = dict(pair.split(":") for pair in (
    "golang:go node.js:node next.js:nextjs vue.js:vue vuejs:vue react.js:react reactjs:react "
    "express.js:express expressjs:express k8s:kubernetes rustlang:rust postgresql.org:postgresql"
).split())
AMBIGUOUS_TECH: Final = _set(
    "go rest express node claude rust ruby react angular electron jest stripe clerk drizzle "
    "rollup bun azure flask"
)
_TECH_NOUNS = _set(
    "code codebase app apps application api apis server servers service services backend "
    "frontend module modules package packages library libraries lib framework sdk runtime binary "
    "compiler toolchain crate crates script scripts component components project projects version "
    "versions endpoint endpoints client clients cli developer developers dev devs programmer "
    "programming program programs test tests config plugin plugins router routes route middleware "
    "stack process worker workers function functions handler handlers bindings repo repos bundle "
    "bundler generics hooks native js dom account dashboard webhook webhooks model models sonnet "
    "opus haiku docs install release image cluster instance lambda bucket subscription checkout "
    "payments auth orm schema query queries mutation resolvers"
)
_TECH_CUES = _set(
    "in using use uses used via learn learning learned learnt write writes writing wrote rewrite "
    "rewriting rewrote rewritten port ported porting migrate migrated migrating switch switched "
    "switching import imports require install installed installing upgrade upgraded prefer "
    "deploy deployed deploying"
)
_MOVE_VERBS = _set("migrate migrated migrating switch switched switching move moved moving port "
                   "ported porting upgrade upgraded rewrite rewrote")
_VERB_MARKERS = _set("to let's lets let let’s will would can could should must might shall "
                     "gotta wanna i'll we'll you'll i’ll we’ll don't didn't don’t didn’t")
_COORD = _set("and or vs versus plus")

PERSON_FIRST_NAMES: Final = _set(
    # the original 61
    "james john robert michael david william richard joseph thomas charles mary patricia "
    "jennifer linda elizabeth barbara susan jessica sarah karen daniel matthew anthony mark "
    "donald steven paul andrew joshua kenneth maria anna lisa nancy betty margaret sandra ashley "
    "emily donna alice alex sam chris jordan taylor casey morgan riley jamie drew marko ana mia "
    "stefan nikola elena ivan peter georg hans "
    # short and international names (f.9)
    "bob amy li joe tim tom ben dan max eve ian kim jim jon sue ann liz ted fred zoe zoë jose "
    "josé lukasz łukasz luka lucas luca juan carlos luis pedro miguel sofia sophie olivia emma "
    "liam noah oliver ethan mohammed muhammad ahmed ali fatima aisha omar hassan wei jun mei yuki "
    "hiroshi priya raj amit arjun ravi olga sergei dmitri katarina ivana marija giulia marco "
    "francesca pierre marie jean françois klaus jürgen sven lars ingrid björn søren carol dave "
    "steve kate claire hannah rachel laura julia nina eva lena leo hugo felix oscar adam eric "
    "kevin brian jason ryan nick greg alan henry jack harry george anne helen ruth lucy jane "
    "tony mike matt alfred bruno diego ines"
)
ORG_WORDS: Final = _set(
    "inc corp ltd llc gmbh group company foundation institute university team department "
    "ministry agency council board association partnership venture capital lab labs studio "
    "consulting bank co plc ag holdings partners technologies software solutions airlines "
    "hospital college school ventures corporation incorporated limited"
)
CONCEPT_WORDS: Final = _set(
    "analysis assessment review strategy planning framework methodology approach decision "
    "pattern principle design optimization evaluation implementation migration integration "
    "configuration architecture pipeline workflow summary overview comparison benchmark audit "
    "standard guideline requirement specification matrix model protocol phase milestone roadmap"
)
PROJECT_PREFIXES: Final = _set(
    "project initiative program programme campaign operation mission sprint milestone phase "
    "version"
)
LOCATION_WORDS: Final = _set(
    "city town village county province district region street avenue road boulevard square "
    "river lake mount mountain mountains island islands bay valley beach airport station coast "
    "harbor harbour peninsula desert canyon"
)
KNOWN_PLACES: Final = frozenset(p.replace("_", " ") for p in (
    "the_hague amsterdam rotterdam london paris berlin munich vienna zurich zürich geneva rome "
    "madrid barcelona lisbon dublin brussels prague warsaw kraków krakow budapest belgrade zagreb "
    "ljubljana sarajevo athens istanbul moscow kyiv stockholm oslo copenhagen helsinki new_york "
    "new_york_city san_francisco los_angeles seattle chicago boston toronto vancouver montreal "
    "mexico_city são_paulo buenos_aires tokyo beijing shanghai hong_kong singapore seoul mumbai "
    "rio_de_janeiro delhi bangalore bengaluru sydney melbourne cairo nairobi lagos dubai tel_aviv "
    "europe asia africa north_america south_america america united_states usa united_kingdom uk "
    "england scotland ireland france germany spain portugal italy the_netherlands netherlands "
    "belgium switzerland austria poland hungary serbia croatia slovenia greece turkey ukraine "
    "russia sweden norway denmark finland canada mexico brazil argentina china japan korea india "
    "australia egypt kenya nigeria israel"
).split())
_LOCATION_CUES = _set("based located born headquartered lives live living moved moving "
                      "relocated flew flying travelled traveled trip visiting visited")
# Not in STOP_TOKENS (which already holds starters, verbs, weekdays and months).
JUNK_WORDS: Final = _set(
    "i i'm i've i'd i'll im me my we we're our us you you're your he he's him his she she's her "
    "it it's its they they're them their there here not no yes yeah yep nope ok okay hi hey "
    "hello dear thanks thank please sorry sure well oh also just now then all any each some "
    "every both another other such only even very really maybe perhaps actually basically "
    "anyway however meanwhile still finally next last lately recently again always never "
    "sometimes often today yesterday tomorrow tonight has have had was were are is be been do "
    "does did let let's lets see switch error great good nice cool awesome cheers regards lol "
    "btw fyi asap a an sept tues thur thurs everyone someone everything something nothing after "
    "before while since until during because although though once"
)
_SENTENCE_VERBS = _set(
    "met meet ask asked tell told call called email emailed ping pinged thank thanked send sent "
    "invite invited talk talked spoke saw went got said say says gave give took take bought made "
    "heard thought found left came knew felt kept paid spent visited joined contacted messaged "
    "texted reviewed approved signed hired remind remember"
)
_TITLES = _set("mr mrs ms mx dr prof sir dame")
_ABBREVIATIONS = _TITLES | _set("st jr sr vs e.g i.e approx cf")
_DETERMINERS = _set("the a an this that these those my our your his her its their it them all")
_CONNECTORS = _set("of de da di du del der den van von la")
_STOP = frozenset(token.casefold() for token in STOP_TOKENS)
_SPLITTERS = _STOP | ROLE_WORDS  # end a name run
_EDGE_JUNK = JUNK_WORDS | _TITLES  # stripped from the ends of a name run
_COORD_LEFT = _COORD | {"to"}  # "from node to go": evidence flows rightwards only
_CUE_ONLY = ORG_WORDS | CONCEPT_WORDS | PROJECT_PREFIXES | LOCATION_WORDS | ROLE_WORDS

_WORD = re.compile(r"[^\W_](?:[^\W_]|[.'’\-](?=[^\W_]))*")
_BOUNDARY = re.compile(r"[.!?:\n…]")
_PLAIN = re.compile(r"[^\S\n]+")
_AMPERSAND = re.compile(r"[^\S\n]*&[^\S\n]*")
_LIST_SEP = re.compile(r"[^\S\n]*[,/+&][^\S\n]*")
_TITLE_GAP = re.compile(r"\.?[^\S\n]+")  # "Dr. Smith", "Dr Smith"
_LOOSE = re.compile(r"[^\S\n]*\(?['\"]?")
_VERSION = re.compile(r"v?\d+(?:\.\d+)*x?")
_SUFFIXED = re.compile(r"([a-z]+)v?\d[\d.]*")
_CODE = re.compile(
    r"```[\s\S]*?(?:```|\Z)|`[^`\n]+`|\bhttps?://\S+|\bwww\.\S+"
    r"|(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.]+"
    r"|^[ \t]*(?:def|class|import|return|function|fn|func)\s[^\n]*"
    r"|^[^\n]*(?:\w\(|\s=\s|==|=>|[{}]|;[ \t]*$)[^\n]*",
    re.MULTILINE,
)
# each branch of _CODE needs one of these; most messages have none (a search of _CODE tries its
# seven branches at every character: ~20 us a chat message, this test ~1)
_CODE_SIGNS = "`@{}=;"
_CODE_CALL = re.compile(r"\((?<=\w\()")  # "f(": from each "(", the character before it
_CODE_KEYWORD = re.compile(r"^[ \t]*(?:def|class|import|return|function|fn|func)\s", re.MULTILINE)
_POSSESSIVE = re.compile(r"['’]s$")
_ACRONYMS = re.compile(r"[A-Z]{2,6}s")  # "APIs", "LLMs"
_PIECES = re.compile(r"[.\-]")  # "node.js", "rest-api"

MAX_NAME_WORDS: Final = 6  # longer Capitalized runs are headings or shouting, not names
MAX_CO_OCCURRENCE_PAIRS: Final = 45  # all pairs of the first ten distinct entities


WORD_CACHE: Final = 1 << 14  # distinct words whose forms are remembered (:func:`_word_forms`)
CACHED_WORD_CHARS: Final = 64  # longer words (hashes, sequences) are not remembered


@dataclass(slots=True)  # not frozen: a frozen init costs 5x, and a text has hundreds of tokens
class _Token:
    text: str
    low: str  # case-folded, possessive stripped
    start: int
    end: int
    initial: bool  # first word of the text, a sentence, a line or a list item
    code: bool  # inside code, a URL or an e-mail address
    member: bool  # can be a word of a name: name-shaped, not code, not a splitter


def _word_forms(text: str) -> tuple[str, bool]:
    """``(low, member)`` of a word outside code (:func:`_tokenize` remembers those of short
    words: a chat repeats its words)."""
    low = (text[:-2] if text.endswith(("'s", "’s")) else text).casefold()
    return low, _name_shaped(text) and low not in _SPLITTERS


_cached_word = functools.lru_cache(maxsize=WORD_CACHE)(_word_forms)


def _name_shaped(text: str) -> bool:
    """Capitalized ("Bob", "McDonald") or camel ("iPhone"), with a letter, no dot, and not a
    shouted word of more than six capitals."""
    if not (text[0].isupper() or (len(text) > 1 and text[0].islower() and text[1].isupper())):
        return False
    if "." in text or not any(ch.isalpha() for ch in text):
        return False
    return not (text.isupper() and len(text) > 6)


def _may_hold_code(text: str) -> bool:
    """False when :data:`_CODE` cannot match ``text`` (a quick test before the search)."""
    return (any(sign in text for sign in _CODE_SIGNS) or "http" in text or "www." in text
            or _CODE_CALL.search(text) is not None or _CODE_KEYWORD.search(text) is not None)


def _tokenize(text: str) -> list[_Token]:
    spans = [m.span() for m in _CODE.finditer(text)] if _may_hold_code(text) else []
    starts = [s for s, _ in spans]
    breaks = [m.start() for m in _BOUNDARY.finditer(text)]  # sentence and line ends, in order
    breaks.append(len(text))
    b = 0  # the first break at or after the previous token's end
    tokens: list[_Token] = []
    prev: _Token | None = None
    for m in _WORD.finditer(text):
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
                prev.low in _ABBREVIATIONS and text.startswith(".", prev.end, start))
        word = m.group()
        low, member = _cached_word(word) if len(word) <= CACHED_WORD_CHARS else _word_forms(word)
        prev = _Token(word, low, start, end, initial, code, member and not code)
        tokens.append(prev)
    return tokens


class _Extractor:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
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
        return prev is not None and self.tokens[prev].low in _VERB_MARKERS

    def tech_context(self, i: int, term: str) -> bool:
        tok, prev, nxt = self.tokens[i], self.near(i, -1), self.near(i, 1)
        prev2 = self.near(prev, -1) if prev is not None else None
        if (prev is not None and prev2 is not None and self.tokens[prev].low in ("to", "from")
                and self.tokens[prev2].low in _MOVE_VERBS):
            return True
        if self.verb_marked(i):
            return False
        if nxt is not None and (self.tokens[nxt].low in _TECH_NOUNS
                                or _VERSION.fullmatch(self.tokens[nxt].low)):
            return True
        cue = self.near(i, -1, _LOOSE)
        if cue is not None and self.tokens[cue].low in _TECH_CUES:
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
                and low not in _TITLES)

    def coord(self, i: int, step: int) -> int | None:
        j = self.near(i, step, _LIST_SEP)
        if j is not None:
            return j
        j = self.near(i, step)
        allowed = _COORD_LEFT if step < 0 else _COORD
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
        if nxt is None or self.tokens[nxt].text not in _CONNECTORS:
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
            while run and (toks[run[0]].low in _EDGE_JUNK or not self.member(run[0])):
                titled = titled or toks[run[0]].low in _TITLES
                run.pop(0)
            while run and (toks[run[-1]].low in _EDGE_JUNK or not self.member(run[-1])):
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
        return j is not None and self.tokens[j].low in _TITLES

    def _sentence_start(self, run: list[int], mid_caps: set[str]) -> list[int]:
        first = self.tokens[run[0]].low
        if len(run) == 1:
            nxt = self.near(run[0], 1)
            imperative = nxt is not None and self.tokens[nxt].low in _DETERMINERS
            keep = (first in mid_caps or first in KNOWN_PLACES
                    or (first in PERSON_FIRST_NAMES and not imperative))
            return run if keep else []
        second = self.tokens[run[1]].low
        if first in _SENTENCE_VERBS or (second in PERSON_FIRST_NAMES and first not in mid_caps
                                        and first not in PERSON_FIRST_NAMES):
            run = run[1:]
            while run and not self.member(run[0]):
                run.pop(0)
        return run

    def _worth(self, words: list[int]) -> bool:
        lows = [self.tokens[k].low for k in words]
        if len(words) == 1:
            t = self.tokens[words[0]]
            return (_tech_term(t.low) is None and t.low not in _CUE_ONLY and not t.text.isupper()
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
                and self.tokens[prev2].low in _LOCATION_CUES)


def _tech_term(low: str) -> tuple[str, bool] | None:
    """``(term, strong)`` when a lowercased token names a technology; ``strong`` = the spelling
    itself is evidence even for an ambiguous term ("node.js", "golang", "node18", "rest-api")."""
    return _cached_term(low) if len(low) <= CACHED_WORD_CHARS else _find_tech_term(low)


def _find_tech_term(low: str) -> tuple[str, bool] | None:
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
            return piece, any(o in _TECH_NOUNS or o in TECH_TERMS or o[:1].isdigit()
                              for o in others)
    return None


_cached_term = functools.lru_cache(maxsize=WORD_CACHE)(_find_tech_term)


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


def extract_entities(text: str, *, max_chars: int = 10_000,
                     known: Collection[str] = ()) -> list[ExtractedEntity]:
    """Entities named in the first ``max_chars`` characters of ``text``, in first-seen order.

    ``known``: lowercase words already seen as names elsewhere (the other messages of the same
    conversation batch): a sentence-initial word among them counts as a name, as it would if
    this text itself used it mid-sentence ("Biscuit pulls on the leash" after "we adopted
    Biscuit")."""
    return Extraction(text, max_chars=max_chars).entities(known)


class Extraction:
    """:func:`extract_entities` of one text, to be asked again with other ``known`` words (the
    second pass over a cognify batch, :mod:`workers.cognify`): what does not depend on them
    (tokens, technologies, name runs) is found once."""

    def __init__(self, text: str, *, max_chars: int = 10_000) -> None:
        text = unicodedata.normalize("NFC", text[: count_arg(max_chars, "max_chars")])
        self._extractor = _Extractor(text)
        self._technologies = self._extractor.technologies()

    def entities(self, known: Collection[str] = ()) -> list[ExtractedEntity]:
        """See :func:`extract_entities`."""
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
    :func:`extract_entities` takes as ``known`` for the texts around them."""
    return {e.name.casefold() for e in entities
            if " " not in e.name and e.entity_type != "technology"}


def _surface_names(entities: Sequence[ExtractedEntity]) -> tuple[list[str], list[int]]:
    """Names to look for and the entity each one means: every entity name, plus the lone first
    or last name of a multi-word person when no other entity claims that word ("Alice" →
    "Alice Johnson", mirroring the folding of partial names in :func:`extract_entities`)."""
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


def co_occurrence_pairs(
    entities: Sequence[ExtractedEntity], *, max_pairs: int = MAX_CO_OCCURRENCE_PAIRS
) -> list[tuple[int, int]]:
    """Unordered index pairs ``(i, j)``, ``i < j``, of entities with distinct normalized names.

    Repeats of a name are represented by their first index. Pairs come in the order
    (0,1), (0,2), (1,2), (0,3), … so the cap of ``max_pairs`` (default 45) keeps exactly all
    pairs among the first ten distinct entities instead of one entity's pairs with everything.
    """
    count_arg(max_pairs, "max_pairs")
    firsts: list[int] = []
    seen: set[str] = set()
    for index, entity in enumerate(entities):
        key = normalize_entity_name(entity.name)
        if key not in seen:
            seen.add(key)
            firsts.append(index)
    pairs: list[tuple[int, int]] = []
    for jj, j in enumerate(firsts):
        for i in firsts[:jj]:
            if len(pairs) >= max_pairs:
                return pairs
            pairs.append((i, j))
    return pairs
