"""The word lists entity extraction reads (:mod:`mind.knowledge.extraction`): technologies and
their spellings, first names, organization / concept / project / location words, places, and the
words that end, trim or cue a name (stop tokens, role words, titles, junk, sentence verbs).
Data only: which word means what, no matching."""

from __future__ import annotations

from typing import Final

from mind.knowledge.normalizer import STOP_TOKENS
from mind.knowledge.relation_patterns import ROLE_WORDS


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
TECH_NOUNS = _set(
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
TECH_CUES = _set(
    "in using use uses used via learn learning learned learnt write writes writing wrote rewrite "
    "rewriting rewrote rewritten port ported porting migrate migrated migrating switch switched "
    "switching import imports require install installed installing upgrade upgraded prefer "
    "deploy deployed deploying"
)
MOVE_VERBS = _set("migrate migrated migrating switch switched switching move moved moving port "
                   "ported porting upgrade upgraded rewrite rewrote")
VERB_MARKERS = _set("to let's lets let let’s will would can could should must might shall "
                     "gotta wanna i'll we'll you'll i’ll we’ll don't didn't don’t didn’t")
COORD = _set("and or vs versus plus")

PERSON_FIRST_NAMES: Final = _set(
    # common English first names
    "james john robert michael david william richard joseph thomas charles mary patricia "
    "jennifer linda elizabeth barbara susan jessica sarah karen daniel matthew anthony mark "
    "donald steven paul andrew joshua kenneth maria anna lisa nancy betty margaret sandra ashley "
    "emily donna alice alex sam chris jordan taylor casey morgan riley jamie drew marko ana mia "
    "stefan nikola elena ivan peter georg hans "
    # short and international names
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
LOCATION_CUES = _set("based located born headquartered lives live living moved moving "
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
SENTENCE_VERBS = _set(
    "met meet ask asked tell told call called email emailed ping pinged thank thanked send sent "
    "invite invited talk talked spoke saw went got said say says gave give took take bought made "
    "heard thought found left came knew felt kept paid spent visited joined contacted messaged "
    "texted reviewed approved signed hired remind remember"
)
TITLES = _set("mr mrs ms mx dr prof sir dame")
ABBREVIATIONS = TITLES | _set("st jr sr vs e.g i.e approx cf")
DETERMINERS = _set("the a an this that these those my our your his her its their it them all")
CONNECTORS = _set("of de da di du del der den van von la")
STOP = frozenset(token.casefold() for token in STOP_TOKENS)
SPLITTERS = STOP | ROLE_WORDS  # end a name run
EDGE_JUNK = JUNK_WORDS | TITLES  # stripped from the ends of a name run
COORD_LEFT = COORD | {"to"}  # "from node to go": evidence flows rightwards only
CUE_ONLY = ORG_WORDS | CONCEPT_WORDS | PROJECT_PREFIXES | LOCATION_WORDS | ROLE_WORDS
