from __future__ import annotations

from collections.abc import Collection

import pytest

from mind.errors import ValidationError
from mind.knowledge.extraction import (
    ExtractedEntity,
    ExtractedRelation,
    Extraction,
    extract_relations,
    name_words,
)
from mind.knowledge.lexicon import AMBIGUOUS_TECH, JUNK_WORDS, TECH_TERMS, TECH_VARIANTS
from mind.knowledge.normalizer import STOP_TOKENS, normalize_entity_name
from mind.knowledge.relation_patterns import find_mentions, match_gap
from mind.knowledge.tokens import CODE, may_hold_code

P, ORG, J, C, L, T = "person", "organization", "project", "concept", "location", "technology"


def extract_entities(text: str, *, max_chars: int = 10_000,
                     known: Collection[str] = ()) -> list[ExtractedEntity]:
    """One text's entities, as the cognify batch asks its :class:`Extraction`."""
    return Extraction(text, max_chars=max_chars).entities(known)

PROBE_4 = (
    "Alice Johnson approved the Budget Plan. Project Apollo depends on Data Platform. "
    "Alice Johnson works at Acme Labs. We use PostgreSQL and React with Node."
)

ENTITY_CASES: list[tuple[str, list[tuple[str, str]]]] = [
    # -- sentence starts, acronyms and junk names ------------------------------------------
    ("Yesterday I had lunch with Alice Johnson at Acme Corp.",
     [("Alice Johnson", P), ("Acme Corp", ORG)]),
    ("Met the CEO of Bank of America in The Hague.",
     [("Bank of America", ORG), ("The Hague", L)]),
    ("When Alice arrived, Bob left. JSON API Update.", [("Alice", P), ("Bob", P)]),
    (PROBE_4, [("Alice Johnson", P), ("Budget Plan", C), ("Project Apollo", J),
               ("Data Platform", C), ("Acme Labs", ORG), ("PostgreSQL", T), ("React", T),
               ("Node.js", T)]),
    # -- short real names and non-ASCII names ----------------------------------------------------
    ("Bob leads Alice.", [("Bob", P), ("Alice", P)]),
    ("I think OK. On Monday in March we met Li and Amy.", [("Li", P), ("Amy", P)]),
    ("Joe and Tim fixed it on Friday.", [("Joe", P), ("Tim", P)]),
    ("José met Zoë and Łukasz in Kraków.", [("José", P), ("Zoë", P), ("Łukasz", P),
                                           ("Kraków", L)]),
    ("Notes from Zoe\u0308 and Jürgen Müller.", [("Zoë", P), ("Jürgen Müller", P)]),
    ("The Hague is nice and so is Zürich.", [("The Hague", L), ("Zürich", L)]),
    # -- sentence-start junk -------------------------------------------------------------------
    ("Mark the ticket as done.", []),
    ("Mark the ticket as done. Mark said it was fine.", [("Mark", P)]),
    ("Met Bob at the station.", [("Bob", P)]),
    ("Called Acme Corp today.", [("Acme Corp", ORG)]),
    ("Acme is great. We love Acme.", [("Acme", C)]),
    ("Sounds good. Awesome, let me know.", []),
    ("Hi Bob, thanks! Thanks Alice.", [("Bob", P), ("Alice", P)]),
    ("Tuesday was busy, Sept too. May I ask? Will do.", []),
    ("I. OK. Ok. Yes. No. Done. Update.", []),
    ("PLEASE FIX THE BUILD ASAP, IMPORTANT!!!", []),
    ("Rust is great for CLIs. We need more APIs and LLMs.", []),
    # -- organizations, titles, roles, particles -------------------------------------------------
    ("Alice Johnson, CEO of Acme Corp, agreed.", [("Alice Johnson", P), ("Acme Corp", ORG)]),
    ("- Dr. Smith joined.\n- CEO Alice Johnson spoke.", [("Smith", P), ("Alice Johnson", P)]),
    ("She moved to Rio de Janeiro after Johnson & Johnson hired her.",
     [("Rio de Janeiro", L), ("Johnson & Johnson", C)]),
    ("We compared prices at McDonald and on eBay with an iPhone.",
     [("McDonald", C), ("eBay", C), ("iPhone", C)]),
    ("Carol from Initech Inc met the team at Stark Industries Group.",
     [("Carol", P), ("Initech Inc", ORG), ("Stark Industries Group", ORG)]),
    ("He is based in Gotham and the Security Review is due.",
     [("Gotham", L), ("Security Review", C)]),
    ("Sprint planning moved; Project Zeus Phase Two starts.", [("Project Zeus Phase Two", J)]),
    ("Alice arrived. Later Alice Johnson and Acme visited Acme Corp.",
     [("Alice Johnson", P), ("Acme Corp", ORG)]),
    # -- technology ---------------------------------------------------------------------------
    ("let's go grab lunch, then rest a bit", []),
    ("Let's Go! Go to the store.", []),
    ("we wrote the service in go and deploy it with docker", [("Go", T), ("Docker", T)]),
    ("talked to bob about the postgres migration, he wants to use go for the new service",
     [("PostgreSQL", T), ("Go", T)]),
    ("REST APIs are fine. The rest of the team agreed.", [("REST", T)]),
    ("I want to express my thanks. Each node in the graph is a claude of rust.", []),
    ("We run node 18, write Go code and migrated from python3 to golang.",
     [("Node.js", T), ("Go", T), ("Python", T)]),
    ("react, node and postgres; also Next.js and k8s on AWS with gpt-4 via github.com",
     [("React", T), ("Node.js", T), ("PostgreSQL", T), ("Next.js", T), ("Kubernetes", T),
      ("AWS", T), ("GPT", T), ("GitHub", T)]),
    ("How will users react? I asked claude code to refactor it.", [("Claude", T)]),
    ("American Express called about the Express server.", [("American Express", C),
                                                             ("Express", T)]),
    ("rust on the car; rewrite it in rust", [("Rust", T)]),
    ("Postgres, postgresql and PG are one database. So are Node and nodejs.",
     [("PostgreSQL", T), ("Node.js", T)]),
    # -- code, URLs, e-mail ------------------------------------------------------------------
    ("```python\nfrom redis import Redis\nclient = Redis(host='localhost')\n```\n"
     "Ask Alice about it.", [("Python", T), ("Redis", T), ("Alice", P)]),
    ("```go\nfunc Main() { Foo() }\n```", [("Go", T)]),
    ("import express from 'express'\nconst App = express();", [("Express", T)]),
    ("def main():\n    Result = Parser()\nBob said hi to Carol.", [("Bob", P), ("Carol", P)]),
    ("Visit https://example.com/Foo/Bar or mail Alice.Smith@example.com, see `FooBar`.", []),
    # -- empty / degenerate ---------------------------------------------------------------------
    ("", []),
    ("   \n\t ", []),
    ("... !!! 123 456", []),
]


@pytest.mark.parametrize(("text", "expected"), ENTITY_CASES)
def test_extract_entities(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(e.name, e.entity_type) for e in extract_entities(text)] == expected


@pytest.mark.parametrize(
    ("text", "name", "confidence"),
    [
        (PROBE_4, "PostgreSQL", 0.9),  # unambiguous technology
        (PROBE_4, "React", 0.8),  # ambiguous technology, evidenced
        (PROBE_4, "Alice Johnson", 0.7),  # multi-word proper noun
        ("Carol joined.", "Carol", 0.6),  # single word
        ("It happened in The Hague.", "The Hague", 0.7),
    ],
)
def test_confidence(text: str, name: str, confidence: float) -> None:
    by_name = {e.name: e.confidence for e in extract_entities(text)}
    assert by_name[name] == confidence


@pytest.mark.parametrize(
    ("text", "max_chars", "expected"),
    [
        ("Alice met Bob.", 10_000, ["Alice", "Bob"]),
        ("Alice met Bob.", 9, ["Alice"]),
        ("Alice met Bob.", 0, []),
        ("x" * 20 + " Carol", 20, []),
    ],
)
def test_max_chars(text: str, max_chars: int, expected: list[str]) -> None:
    assert [e.name for e in extract_entities(text, max_chars=max_chars)] == expected


@pytest.mark.parametrize("bad", [-1, True, 2.5])
def test_bad_limits_raise(bad: object) -> None:
    with pytest.raises(ValidationError):
        extract_entities("Alice", max_chars=bad)  # type: ignore[arg-type]


def test_result_is_deduplicated_and_never_noise() -> None:
    text = "Alice met Bob. ALICE, alice and Alice again. Bob! Node, node.js and NodeJS."
    entities = extract_entities(text)
    keys = [(e.entity_type, normalize_entity_name(e.name)) for e in entities]
    assert len(keys) == len(set(keys))
    assert [e.name for e in entities] == ["Alice", "Bob", "Node.js"]


RELATION_CASES: list[tuple[str, list[tuple[str, str, str]]]] = [
    (PROBE_4, [("Alice Johnson", "approved", "Budget Plan"),
               ("Project Apollo", "depends_on", "Data Platform"),
               ("Alice Johnson", "affiliated_with", "Acme Labs")]),
    ("Yesterday I had lunch with Alice Johnson at Acme Corp.",
     [("Alice Johnson", "affiliated_with", "Acme Corp")]),
    # direction: "A leads B" means B is led by A
    ("Bob leads Alice.", [("Alice", "led_by", "Bob")]),
    ("Alice is led by Bob.", [("Alice", "led_by", "Bob")]),
    ("Bob leads Alice. Alice is led by Bob.", [("Alice", "led_by", "Bob")]),
    ("Carol manages the Data Platform.", [("Data Platform", "led_by", "Carol")]),
    ("Project Apollo, managed by Dave, ships soon.", [("Project Apollo", "led_by", "Dave")]),
    ("Alice reports to Bob.", [("Alice", "reports_to", "Bob")]),
    ("Bob works under Carol.", [("Bob", "reports_to", "Carol")]),
    ("Carol works for Acme Corp.", [("Carol", "affiliated_with", "Acme Corp")]),
    ("Project Apollo depends on the Data Platform.",
     [("Project Apollo", "depends_on", "Data Platform")]),
    ("Project Apollo requires Redis.", [("Project Apollo", "depends_on", "Redis")]),
    ("Redis is required by the Worker Service.", [("Worker Service", "depends_on", "Redis")]),
    ("Project Apollo is maintained by Alice.", [("Project Apollo", "maintained_by", "Alice")]),
    ("Project Zeus was created by Acme Labs.", [("Project Zeus", "maintained_by", "Acme Labs")]),
    ("Data Platform is owned by Carol.", [("Data Platform", "maintained_by", "Carol")]),
    ("Bob maintains Project Zeus.", [("Project Zeus", "maintained_by", "Bob")]),
    ("Alice works at Acme Labs.", [("Alice", "affiliated_with", "Acme Labs")]),
    ("Dave from Initech Inc visited.", [("Dave", "affiliated_with", "Initech Inc")]),
    ("Alice Johnson, CEO of Acme Corp, agreed.",
     [("Alice Johnson", "affiliated_with", "Acme Corp")]),
    ("Bob approved Project Apollo.", [("Bob", "approved", "Project Apollo")]),
    ("Carol signed off on the Budget Plan.", [("Carol", "approved", "Budget Plan")]),
    # alias-aware: "Postgres" is the PostgreSQL entity; a lone first name is its person
    ("We use PostgreSQL. Project Apollo depends on Postgres.",
     [("Project Apollo", "depends_on", "PostgreSQL")]),
    ("Alice Johnson joined. Alice approved the Budget Plan.",
     [("Alice Johnson", "approved", "Budget Plan")]),
    # negatives
    ("Alice approved Bob's plan.", []),
    ("We use PostgreSQL at Acme Corp.", []),  # bare "at" needs a person source
    ("Alice arrived. Bob left.", []),
    ("Alice, Bob and Carol depend on each other.", []),
    ("Alice leads. Bob follows.", []),
]


@pytest.mark.parametrize(("text", "expected"), RELATION_CASES)
def test_extract_relations(text: str, expected: list[tuple[str, str, str]]) -> None:
    relations = extract_relations(text, extract_entities(text))
    assert [(r.source, r.relation_type, r.target) for r in relations] == expected


@pytest.mark.parametrize(
    ("relation_type", "confidence"),
    [("led_by", 0.9), ("reports_to", 0.9), ("depends_on", 0.85), ("maintained_by", 0.85),
     ("affiliated_with", 0.75), ("approved", 0.8)],
)
def test_relation_confidence(relation_type: str, confidence: float) -> None:
    text = ("Bob leads Alice. Alice reports to Bob. Project Apollo depends on Redis. "
            "Redis is maintained by Carol. Carol works at Acme Corp. Bob approved Project Apollo.")
    by_type = {r.relation_type: r.confidence for r in extract_relations(
        text, extract_entities(text))}
    assert by_type[relation_type] == confidence


def test_relations_only_between_given_entities() -> None:
    entities = [ExtractedEntity("Alice", P, 0.6), ExtractedEntity("PostgreSQL", T, 0.9)]
    text = "Bob leads Alice. Alice depends on postgres. Alice depends on Carol."
    assert extract_relations(text, entities) == [
        ExtractedRelation("Alice", "PostgreSQL", "depends_on", 0.85)]


@pytest.mark.parametrize(
    "entities",
    [[], [ExtractedEntity("Alice", P, 0.6)],
     [ExtractedEntity("Alice", P, 0.6), ExtractedEntity("ALICE", C, 0.6)]],
)
def test_relations_need_two_distinct_entities(entities: list[ExtractedEntity]) -> None:
    assert extract_relations("Alice leads Alice. ALICE leads alice.", entities) == []


@pytest.mark.parametrize(
    ("text", "names", "expected"),
    [
        ("Alice Johnson met Alice", ["Alice", "Alice Johnson"], [(0, 13, 1), (18, 23, 0)]),
        ("archive of hive", ["hive"], [(11, 15, 0)]),
        ("PG and postgres", ["PostgreSQL"], [(0, 2, 0), (7, 15, 0)]),
        ("bank  of\namerica", ["Bank of America"], [(0, 16, 0)]),
        ("nothing here", ["Alice"], []),
    ],
)
def test_find_mentions(text: str, names: list[str], expected: list[tuple[int, int, int]]) -> None:
    assert find_mentions(text, names) == expected


@pytest.mark.parametrize(
    ("gap", "relation_type", "reverse"),
    [(" is led by ", "led_by", False), (" leads ", "led_by", True),
     (", run by the ", "led_by", False), (" has approved ", "approved", False),
     (" relies on ", "depends_on", False), (" built ", "maintained_by", True),
     (" and ", None, False), (" met with ", None, False), (" " * 200, None, False)],
)
def test_match_gap(gap: str, relation_type: str | None, reverse: bool) -> None:
    pattern = match_gap(gap)
    assert (pattern.relation_type if pattern else None) == relation_type
    assert (pattern.reverse if pattern else False) is reverse


def _entities(*names: str) -> list[ExtractedEntity]:
    return [ExtractedEntity(name, C, 0.7) for name in names]


def test_vocabularies() -> None:
    assert len(TECH_TERMS) == 59  # canonically cased
    assert TECH_TERMS.keys() >= AMBIGUOUS_TECH
    assert set(TECH_VARIANTS.values()) <= TECH_TERMS.keys()
    assert "java" not in AMBIGUOUS_TECH and "python" not in AMBIGUOUS_TECH
    # reuse, do not duplicate, the normalizer's stop tokens
    assert not JUNK_WORDS & {token.casefold() for token in STOP_TOKENS}
    # one canonical name per alias group
    groups: dict[str, set[str]] = {}
    for term, name in TECH_TERMS.items():
        groups.setdefault(normalize_entity_name(term), set()).add(name)
    assert all(len(names) == 1 for names in groups.values())


def test_long_degenerate_input_is_fast_and_bounded() -> None:
    text = "Alice Bob " * 2000 + "x@" * 3000
    entities = extract_entities(text)
    assert all(len(e.name.split()) <= 6 for e in entities)


def test_names_known_from_the_conversation_count_at_sentence_start() -> None:
    text = "Biscuit pulls like crazy on the leash. Walks are chaos."
    assert [e.name for e in extract_entities(text)] == []  # alone: a sentence-start word
    known = name_words(extract_entities("We adopted Biscuit from the Riverside shelter."))
    assert "biscuit" in known
    assert [e.name for e in extract_entities(text, known=known)] == ["Biscuit"]
    assert [e.name for e in extract_entities("Walks are chaos.", known=known)] == []
    assert "python" not in name_words(extract_entities("We moved the API to Python 3.12."))


@pytest.mark.parametrize("text", [
    "```go\nx\n```", "see `x`", "go to http://a.b", "www.example.org", "mail a@b.cd",
    "  def main", "return x", "f(x)", "a = b", "a == b", "a => b", "{", "}", "end;  \nnext",
    "import os", "class Foo", "function f", "fn main", "func main", "é(1)",
])
def test_the_code_pretest_lets_every_code_match_through(text: str) -> None:
    assert CODE.search(text) is not None
    assert may_hold_code(text)


@pytest.mark.parametrize("text", ["Bob met Alice (turn 3).", "Return the book, Dan.",
                                  "def-con at 5 (no call)", "See the class notes"])
def test_the_code_pretest_skips_plain_chat(text: str) -> None:
    assert CODE.search(text) is None
    assert not may_hold_code(text)


def test_long_words_are_not_remembered() -> None:
    from mind.knowledge.extraction import _tech_term
    from mind.knowledge.tokens import word_forms

    _cached_word, _cached_term = word_forms.cache, _tech_term.cache
    _cached_word.cache_clear()
    _cached_term.cache_clear()
    word = "Acgt" * 1000  # a sequence or a hash: one word of 4,000 characters
    assert extract_entities(f"{word}.") == extract_entities(f"{word}.")
    assert _cached_word.cache_info().currsize == _cached_term.cache_info().currsize == 0
    assert [e.name for e in extract_entities("Bob met Alice.")] == ["Bob", "Alice"]
    assert _cached_word.cache_info().currsize > 0
