"""Synthetic multi-session chats with planted facts, for the conversational retrieval eval.

A user (Sam) talks to an assistant in one-on-one sessions and with friends (Alice, Bob, Carmen,
Dev, Priya, Tom) in group chats, over the whole of 2025. Planted facts come from slot families
(whose pet is called what, which database a project chose, where the passport is, …); many
more slots of the same families are planted as distractors and chatted about without their
value, so every question has look-alike messages. Question types:

* ``fact``: one statement; gold = that message.
* ``correction``: the value changes in a later session; the question asks for the current
  value; gold = the correcting message (the stale statement is a distractor).
* ``temporal``: a project decision made two or three times in different months; the question
  names the month ("What did I decide in March …"); gold = that month's decision. Messages do
  not name their month: only the timestamp does.
* ``speaker``: a group-chat message by a named friend ("What did Alice recommend for …",
  "Who offered to handle …"); other friends say similar things about the same topic.

Output: universal JSONL, one message per line ``{conversation_id, message_id, speaker, role,
text, timestamp, title}``, and ``questions.json`` ``[{id, question, gold, type}]``.
Deterministic for a given seed. Default: 60 conversations, ~1,500 messages, 150 questions.

    .venv/bin/python -m bench.conv_data [--seed 7] [--out bench/data/conv]
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "data" / "conv"
USER = "Sam"
ASSISTANT = "Assistant"
FRIENDS = ("Alice", "Bob", "Carmen", "Dev", "Priya", "Tom")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
CONVERSATIONS = 60
GROUP_EVERY = 4  # every 4th conversation is a group chat
MESSAGES_PER_CONV = 25
COUNTS = {"fact": 50, "correction": 35, "temporal": 30, "recommend": 20, "task": 15}
DISTRACTOR_CORRECTIONS = 20
HOT_CHATTER = 0.7  # share of small talk about slots that hold planted facts

Key = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Kind:
    """A family of slots: each key (one value per field) holds one value at a time."""

    name: str
    title: str
    fields: dict[str, Sequence[str]]
    values: Sequence[str] | Mapping[str, Sequence[str]]  # mapping: keyed by the first field's value
    state: Sequence[str]
    update: Sequence[str]
    ask: Sequence[str]
    ask_now: Sequence[str]
    chatter: Sequence[str]
    reply: Sequence[str]
    ack: Sequence[str] = ("Noted.", "Got it, I'll remember that.", "Thanks for the update!")

    def slots(self) -> list[Key]:
        names = list(self.fields)
        return [tuple(zip(names, combo, strict=True))
                for combo in itertools.product(*self.fields.values())]

    def value_pool(self, key: Key) -> Sequence[str]:
        if isinstance(self.values, Mapping):
            return self.values[key[0][1].split("|")[0]]
        return self.values


COMPONENTS = {
    "database": ("PostgreSQL", "MySQL", "MongoDB", "CockroachDB", "SQLite", "DynamoDB"),
    "frontend framework": ("React", "Svelte", "Vue", "Angular", "SolidJS", "htmx"),
    "message queue": ("RabbitMQ", "Kafka", "NATS", "Redis Streams", "Amazon SQS"),
    "CI service": ("GitHub Actions", "GitLab CI", "CircleCI", "Buildkite", "Jenkins"),
    "hosting provider": ("AWS", "Fly.io", "Hetzner", "Render", "Google Cloud", "DigitalOcean"),
    "auth provider": ("Auth0", "Keycloak", "Clerk", "Okta", "Cognito"),
}
# "canonical|other surface forms": statements, chatter and questions each pick a form at random,
# so a question often words its subject differently from the message that answers it.
COMPONENT_FORMS = ("database|datastore|DB", "frontend framework|UI framework|web framework",
                   "message queue|queueing system|message broker", "CI service|CI|build pipeline",
                   "hosting provider|cloud host|hosting", "auth provider|login service|"
                   "identity provider")
PROJECTS = ("Atlas", "Beacon", "Cobalt", "Driftwood", "Ember", "Falcon", "Granite", "Harbor")
PEOPLE = ("Maria Santos", "Kenji Watanabe", "Olivia Brooks", "Rahul Mehta", "Fatima Haddad",
          "Lukas Becker", "Grace Kim", "Diego Alvarez", "Hannah Cohen", "Samuel Osei",
          "Ingrid Larsen", "Wei Zhang", "Chloe Martin", "Tariq Aziz", "Nora Fitzgerald")
WHEN = tuple(f"{d} at {t}" for d in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
             for t in ("8:30 am", "10:15 am", "1:00 pm", "3:30 pm", "5:45 pm"))

PROJECT = Kind(
    "project", "Project decisions",
    {"component": COMPONENT_FORMS, "project": PROJECTS}, COMPONENTS,
    state=("For {project} we're going with {v} as the {component}.",
           "Decision on {project}: {v} for the {component}.",
           "We settled the {component} question for {project}: it's {v}."),
    update=("Change of plan on {project}: we're switching the {component} to {v}.",
            "{project} update: we dropped the old pick and moved the {component} to {v}.",
            "Revisited the {component} for {project} today and went with {v} instead."),
    ask=("Which {component} did we pick for {project}?",
         "What did the {project} team choose as its {component}?"),
    ask_now=("What {component} is {project} using now?",
             "What is the current {component} for {project}?"),
    chatter=("The {project} team spent the whole standup arguing about the {component} again.",
             "Can you list pros and cons of changing the {component} on a project like "
             "{project}?",
             "I need to write up the {component} options for {project} before Friday.",
             "Did we ever document why {project} picked its {component}?",
             "The {component} on {project} had an outage this morning."),
    reply=("The main trade-offs are operational cost, what the team already knows, and how "
           "well it fits your scale. Want a comparison table?",
           "Write down the constraints first (budget, latency, team skills); the options "
           "usually narrow themselves.",
           "A short decision record with context, options and consequences works well."),
    ack=("Sounds like {project} is coming together.", "Noted for {project}.",
         "Good, one less open question on {project}."),
)
PET = Kind(
    "pet", "Pets",
    {"owner": ("my sister", "my brother", "my neighbor", "my cousin", "my boss",
               "my roommate", "my aunt"),
     "animal": ("dog|pup|puppy", "cat|kitty|kitten", "parrot|bird", "rabbit|bunny",
                "tortoise|turtle")},
    ("Biscuit", "Pepper", "Mochi", "Ziggy", "Waffles", "Juniper", "Nacho", "Clementine",
     "Basil", "Pickles", "Rosie", "Tofu", "Marbles", "Hazel", "Otis", "Pretzel", "Luna"),
    state=("{owner}'s {animal} is called {v}.", "Fun fact: {owner}'s {animal} is named {v}.",
           "I finally met {owner}'s {animal}, {v}. What a character."),
    update=("{owner}'s {animal} has a new name: they renamed it {v}.",
            "Correction about {owner}'s {animal}: it's called {v} now, they changed the name."),
    ask=("What is {owner}'s {animal} called?", "What's the name of {owner}'s {animal}?",
         "How did {owner} name their {animal}?"),
    ask_now=("What is {owner}'s {animal} called now?", "What name does {owner}'s {animal} "
             "go by these days?"),
    chatter=("{owner}'s {animal} got into the trash again yesterday.",
             "I'm looking after {owner}'s {animal} next weekend, any advice?",
             "Is it normal for a {animal} to sleep most of the day?",
             "I keep forgetting what {owner}'s {animal} is called, it's such a funny name.",
             "{owner} sent me ten photos of their {animal} today."),
    reply=("Usually yes; keep an eye on appetite and energy, and ask a vet if anything changes.",
           "Keep the routine the owner uses, with familiar food and bedding.",
           "Pets test new sitters. Stay calm and consistent and it settles in a day or two."),
    ack=("Cute!", "Ha, good name.", "Noted."),
)
APPT = Kind(
    "appt", "Appointments",
    {"who": ("my", "my sister's", "my dad's", "my mom's", "my son's", "my partner's"),
     "appt": ("dentist|dental", "eye doctor|optometrist|eye exam", "physiotherapy|physio",
              "haircut|barber|hair", "dermatologist|skin doctor", "allergist|allergy")},
    WHEN,
    state=("{who} {appt} appointment is on {v}.", "Booked {who} {appt} appointment for {v}.",
           "Put it in the calendar: {who} {appt} visit, {v}."),
    update=("The {appt} office called: {who} appointment moved to {v}.",
            "Heads up, {who} {appt} appointment got rescheduled to {v}."),
    ask=("When is {who} {appt} appointment?", "What time is {who} {appt} visit?"),
    ask_now=("When is {who} {appt} appointment now?",
             "What's the new time for {who} {appt} visit?"),
    chatter=("I need to find parking for {who} {appt} appointment.",
             "Remind me to ask about insurance for {who} {appt} appointment.",
             "Do {appt} appointments usually run late?",
             "I might have to move {who} {appt} appointment again, work is chaos.",
             "What should I bring to {who} {appt} visit?"),
    reply=("They often do; bring something to read and arrive ten minutes early.",
           "Good idea. Call ahead to check what the plan covers.",
           "Street parking fills up early; a garage nearby is the safe bet.",
           "Your insurance card, a list of medications, and any questions written down."),
)
BUDGET = Kind(
    "budget", "Budgets",
    {"event": ("the team offsite|the offsite", "the kitchen remodel|the kitchen renovation",
               "the wedding", "the garden project|the garden makeover",
               "the conference trip", "the holiday party|the end-of-year party",
               "the bathroom renovation|the bathroom remodel", "the family reunion",
               "the product launch party|the launch party", "the camping trip")},
    tuple(f"${n * 50:,}" for n in range(20, 400, 9)),
    state=("We set the budget for {event} at {v}.", "The budget for {event} is {v}, hard limit.",
           "We can spend {v} on {event}, not a cent more."),
    update=("The budget for {event} got bumped to {v} after the last meeting.",
            "New number for {event}: the budget is now {v}."),
    ask=("What's the budget for {event}?", "How much can we spend on {event}?"),
    ask_now=("What is the budget for {event} now?", "How much money do we have for {event} "
             "at this point?"),
    chatter=("I'm worried {event} is going to go over budget.",
             "Can you suggest ways to save money on {event}?",
             "I need to collect the receipts for {event} this week.",
             "Everyone keeps asking me how much we're spending on {event}."),
    reply=("Track every expense in one sheet and review it weekly; overruns hide in small items.",
           "Get two quotes for anything big, and keep a 10% contingency.",
           "A shared folder for receipts saves a lot of pain later."),
)
HOTEL = Kind(
    "hotel", "Travel",
    {"city": ("Lisbon", "Kyoto", "Chicago", "Barcelona", "Montreal", "Vienna", "Austin",
              "Edinburgh", "Seoul", "Oslo", "Denver", "Prague")},
    ("the Hotel Marlowe", "the Alder Inn", "the Grand Meridian", "the Copper Fox Hostel",
     "the Harborview Suites", "the Linden House", "the Riverside Lodge", "the Nightingale Hotel",
     "the Ambassador", "the Juniper Hotel", "the Blue Door B&B", "the Station Hotel"),
    state=("Booked: I'm staying at {v} while I'm in {city}.",
           "For the {city} trip I got a room at {v}."),
    update=("I cancelled the first booking; in {city} I'm now staying at {v}.",
            "Switched hotels for {city}: it's {v} now."),
    ask=("Where am I staying in {city}?", "Which hotel did I book for {city}?"),
    ask_now=("Which hotel am I staying at in {city} now?", "Where will I sleep in {city}?"),
    chatter=("What's the best way to get from the airport into {city}?",
             "Any food I must try in {city}?", "Do I need a power adapter for {city}?",
             "I still need to check the hotel's check-in time for {city}.",
             "Is it better to stay in the center of {city} or near the station?"),
    reply=("Public transport is usually the fastest; taxis are fine late at night.",
           "Ask locals where they eat lunch; that is usually the best food for the price.",
           "Check the plug type before you go and pack one spare adapter.",
           "Central is nicer for walking; near the station is easier for day trips."),
)
FAVORITE = Kind(
    "favorite", "Preferences",
    {"category": ("coffee order|coffee drink", "restaurant|place to eat",
                  "board game|tabletop game", "band|music group", "hiking trail|hike"),
     "who": ("my", "my sister's", "my dad's", "my partner's", "my boss's")},
    {"coffee order": ("an oat flat white", "a cortado", "a double espresso", "a chai latte",
                      "an iced americano", "a mocha"),
     "restaurant": ("Lucca's Trattoria", "Golden Lotus", "The Smokehouse", "Taqueria El Sol",
                    "Sakura Sushi", "Le Petit Bistro"),
     "board game": ("Wingspan", "Catan", "Ticket to Ride", "Azul", "Carcassonne", "Codenames"),
     "band": ("Radiohead", "Fleetwood Mac", "Khruangbin", "The National", "ABBA", "Phoenix"),
     "hiking trail": ("the Dipsea Trail", "Angels Landing", "the Skyline Trail",
                      "Mist Trail", "the Cascade Canyon loop", "Eagle Peak")},
    state=("{who} favorite {category} is {v}.", "Turns out {who} favorite {category} is {v}."),
    update=("Update: {who} favorite {category} is {v} these days.",),
    ask=("What is {who} favorite {category}?", "What's {who} go-to {category}?"),
    ask_now=("What is {who} favorite {category} these days?",),
    chatter=("I should plan something around {who} favorite {category} this weekend.",
             "How do people even pick a favorite {category}?",
             "We argued about the best {category} for an hour at dinner."),
    reply=("Make it a small surprise; the thought counts more than the plan.",
           "Mostly by habit and a few great memories attached to it."),
)
LOCATION = Kind(
    "location", "Where things are",
    {"item": ("spare house key|extra key", "passport", "winter tires|snow tires",
              "camping stove|camp stove", "tax documents|tax papers",
              "backup hard drive|external drive", "bike pump|bicycle pump",
              "birth certificate", "extension cord|extension cable",
              "sewing kit|needle and thread")},
    ("the blue box in the hall closet", "the top drawer of my desk",
     "the garage shelf behind the paint cans", "the filing cabinet in the study",
     "the kitchen drawer next to the oven", "a shoebox under the bed", "the glovebox of the car",
     "the basement storage cage", "the backpack in the coat closet",
     "the locked drawer at the office", "the shelf above the washing machine",
     "the red toolbox"),
    state=("I put the {item} in {v}.", "Note to self: the {item} is in {v}."),
    update=("I moved the {item}; it's in {v} now.",
            "The {item} is no longer where it was: it's in {v}."),
    ask=("Where did I put the {item}?", "Where can I find the {item}?"),
    ask_now=("Where is the {item} now?", "Where did I stash the {item} in the end?"),
    chatter=("I spent twenty minutes looking for the {item} again.",
             "Should I keep the {item} somewhere fireproof?",
             "Where do people usually keep their {item}?"),
    reply=("One fixed spot per item and a note on your phone fixes most of that.",
           "For documents, a small fireproof box is worth it."),
)
ROLE = Kind(
    "role", "Team",
    {"role": ("tech lead|lead engineer", "designer|UX designer", "product manager|PM",
              "QA contact|tester"), "project": PROJECTS},
    PEOPLE,
    state=("{v} is the {role} on {project}.", "Good news: {v} joined {project} as the {role}."),
    update=("{v} took over as {role} on {project} this week.",
            "Staffing change on {project}: the new {role} is {v}."),
    ask=("Who is the {role} on {project}?", "Who works as {role} for {project}?"),
    ask_now=("Who is the {role} on {project} now?",),
    chatter=("The {role} on {project} has way too much on their plate.",
             "Can you draft a job description for a {role}?",
             "We need the {role} of {project} in the review on Thursday."),
    reply=("Sure: responsibilities, must-have skills, nice-to-haves and who they work with.",
           "Worth raising in the next planning meeting before it becomes a bottleneck."),
)
CODE = Kind(
    "code", "Codes",
    {"item": ("gym locker|locker at the gym", "storage unit|storage locker",
              "bike lock|bicycle lock", "office supply cabinet|supply cabinet",
              "garage keypad|garage door", "luggage lock|suitcase lock")},
    tuple(f"{(n * 7919) % 10000:04d}" for n in range(3, 40)),
    state=("The code for the {item} is {v}.", "New {item}, the code is {v}."),
    update=("I changed the {item} code to {v}.",),
    ask=("What's the code for the {item}?", "What's the combination of the {item}?"),
    ask_now=("What is the {item} code now?",),
    chatter=("I almost got locked out at the {item} today.",
             "How often should I change the code on a {item}?",
             "I can never remember the {item} code."),
    reply=("Every few months, or whenever someone else might have seen it.",
           "Store it in a password manager so you are never locked out."),
)
GIFT = Kind(
    "gift", "Gifts",
    {"person": ("my mom", "my sister", "my boss", "my nephew", "my best friend"),
     "occasion": ("birthday", "anniversary", "graduation", "housewarming")},
    ("a cast-iron skillet", "a pottery class", "noise-cancelling headphones",
     "a hardcover atlas", "a sourdough starter kit", "a vintage record player",
     "a weekend spa voucher", "a leather notebook", "a chess set", "a pair of hiking boots",
     "a telescope", "an espresso machine", "a watercolor set", "a smartwatch"),
    state=("I got {person} {v} for the {occasion}.",
           "Gift sorted: {person} is getting {v} for the {occasion}."),
    update=("I returned the first gift; {person} is getting {v} for the {occasion} instead.",),
    ask=("What did I get {person} for the {occasion}?",
         "What present is {person} getting for the {occasion}?"),
    ask_now=("What is {person} getting for the {occasion} now?",),
    chatter=("I never know what to buy {person}.",
             "Is a {occasion} card enough, or do I need a gift too?",
             "Need to wrap the {occasion} present for {person} tonight."),
    reply=("Something tied to a hobby they already have is a safe bet.",
           "A thoughtful card is often enough; a small gift is a bonus."),
)
FACT_KINDS = (PET, APPT, BUDGET, HOTEL, FAVORITE, LOCATION, ROLE, CODE, GIFT, PROJECT)

RECOMMEND_TOPICS = {
    "a weekend hike|a day hike|a hike": (
        "the Dipsea Trail", "Mount Diablo summit", "Point Reyes lighthouse walk",
        "the Lost Coast trail", "Mission Peak"),
    "a Thai restaurant|Thai food|a Thai place": (
        "Kin Khao", "Lers Ros", "Farmhouse Kitchen", "Hawker Fare", "Thai House Express"),
    "a history podcast|a podcast about history": (
        "Hardcore History", "The Rest Is History", "Revolutions", "Fall of Rome",
        "History of Rome"),
    "a sci-fi novel|a science fiction book": (
        "Project Hail Mary", "The Left Hand of Darkness", "Hyperion", "Children of Time",
        "The Three-Body Problem"),
    "running shoes|trainers for running": (
        "Brooks Ghost", "Hoka Clifton", "Nike Pegasus", "Saucony Ride", "ASICS Novablast"),
    "a budget laptop|a cheap laptop": (
        "a refurbished ThinkPad T14", "the Acer Swift Go", "a used MacBook Air",
        "the ASUS Zenbook 14", "a Framework 13"),
    "a ramen place|ramen|a noodle shop": (
        "Marufuku", "Ramen Nagi", "Orenchi", "Mensho", "Hinodeya"),
    "a camping spot|a campsite|somewhere to camp": (
        "Kirk Creek", "Big Basin", "Steep Ravine cabins", "Pinnacles", "Sugarloaf Ridge"),
    "a movie for Friday|a film for Friday": (
        "Arrival", "Knives Out", "Paddington 2", "Spirited Away", "The Grand Budapest Hotel"),
    "a standing desk|a sit-stand desk": (
        "the Uplift V2", "the Fully Jarvis", "an IKEA Bekant", "the Flexispot E7",
        "the Vari Electric"),
}
TASKS = ("booking the cabin|reserving the cabin", "bringing the snacks|bringing food",
         "renting the van|getting the rental van", "ordering the cake|getting the cake",
         "printing the tickets", "reserving the tennis court|booking the court",
         "buying the card|getting a card", "setting up the projector|the projector",
         "picking up the keys|collecting the keys", "organizing the carpool|arranging rides")
OCCASIONS = ("the ski trip", "Dev's birthday", "the beach weekend", "game night",
             "the wedding shower")
RECOMMEND = ("If you want {topic}, go for {v}.", "My pick for {topic}: {v}. Trust me.",
             "For {topic} I'd recommend {v}.", "{v}. Best option for {topic}, hands down.")
RECOMMEND_ASK = ("What did {f} recommend for {topic}?", "Which option did {f} suggest for {topic}?",
                 "What was {f}'s tip for {topic}?")
OFFER = ("I'll take care of {task} for {occasion}.", "Leave {task} for {occasion} to me.",
         "Okay, I can handle {task} for {occasion} this time.")
OFFER_ASK = ("Who offered to take care of {task} for {occasion}?",
             "Who said they would handle {task} for {occasion}?",
             "Who volunteered for {task} for {occasion}?")
GROUP_CHATTER = ("Anyone have ideas for {topic}?", "Still looking for {topic}, suggestions?",
                 "I tried {v} last year for {topic}, wasn't great.",
                 "Has anyone sorted out {task} for {occasion} yet?",
                 "Last time {task} was a mess, let's not repeat that.",
                 "I did {task} for the last trip, so someone else's turn for {occasion}.",
                 "Can't do {task} for {occasion}, I'm away that week.",
                 "Who's in for {occasion}?", "Running late, sorry!", "Haha that's amazing",
                 "Can we move the call to 7?", "Sending the photos from last week now.")


@dataclass
class Message:
    speaker: str
    role: str
    text: str
    message_id: str = ""
    timestamp: str = ""


@dataclass
class Conversation:
    index: int
    group: bool
    start: datetime
    title: str = ""
    events: list[tuple[list[Message], str]] = field(default_factory=list)  # (messages, tag)
    messages: list[Message] = field(default_factory=list)

    @property
    def conversation_id(self) -> str:
        return f"conv-{self.index:03d}"


@dataclass
class Question:
    question: str
    qtype: str
    tags: list[str]  # event tags whose first message is gold


def form(rng: random.Random, value: str) -> str:
    """One surface form of ``"canonical|synonym|…"``."""
    return rng.choice(value.split("|"))


def capitalize(text: str) -> str:
    return text[0].upper() + text[1:]


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.convs = self._conversations()
        self.questions: list[Question] = []
        self.hot: list[tuple[Kind, Key]] = []  # slots the user's life revolves around
        self.tag_count = 0

    def _conversations(self) -> list[Conversation]:
        convs = []
        for i in range(CONVERSATIONS):
            month = i * 12 // CONVERSATIONS + 1
            day = 1 + (i % 5) * 5 + self.rng.randrange(5)
            hour = self.rng.randrange(8, 22)
            start = datetime(2025, month, day, hour, self.rng.randrange(60), tzinfo=UTC)
            convs.append(Conversation(i, i % GROUP_EVERY == GROUP_EVERY - 1, start))
        return convs

    def fill(self, template: str, key: Key = (), **extra: str) -> str:
        values = {name: form(self.rng, value) for name, value in (*key, *extra.items())}
        return capitalize(template.format(**values))

    def _tag(self) -> str:
        self.tag_count += 1
        return f"e{self.tag_count}"

    def _solo(self, lo: int = 0, hi: int = CONVERSATIONS, month: int | None = None) -> int:
        choices = [c.index for c in self.convs[lo:hi] if not c.group
                   and (month is None or c.start.month == month)]
        return self.rng.choice(choices)

    def _group(self) -> int:
        return self.rng.choice([c.index for c in self.convs if c.group])

    def _say(self, conv: int, kind: Kind, key: Key, template: str, value: str) -> str:
        tag = self._tag()
        msgs = [Message(USER, "user", self.fill(template, key, v=value))]
        msgs.append(Message(ASSISTANT, "assistant", self.fill(self.rng.choice(kind.ack), key)))
        self.convs[conv].events.append((msgs, tag))
        if not self.convs[conv].title:
            self.convs[conv].title = kind.title
        return tag

    def _values(self, kind: Kind, key: Key, n: int) -> list[str]:
        return self.rng.sample(list(kind.value_pool(key)), n)

    def plant_facts(self) -> None:
        slots = [(k, key) for k in FACT_KINDS for key in k.slots()]
        self.rng.shuffle(slots)
        temporal = [s for s in slots if s[0] is PROJECT][: COUNTS["temporal"]]
        rest = [s for s in slots if s not in temporal]
        n_fact, n_corr = COUNTS["fact"], COUNTS["correction"]
        for kind, key in rest[:n_fact]:
            (v,) = self._values(kind, key, 1)
            tag = self._say(self._solo(), kind, key, self.rng.choice(kind.state), v)
            self._ask("fact", kind.ask, key, [tag])
        corr = rest[n_fact : n_fact + n_corr + DISTRACTOR_CORRECTIONS]
        for i, (kind, key) in enumerate(corr):
            old, new = self._values(kind, key, 2)
            first = self._solo(0, CONVERSATIONS - 12)
            self._say(first, kind, key, self.rng.choice(kind.state), old)
            tag = self._say(self._solo(first + 8), kind, key, self.rng.choice(kind.update), new)
            if i < n_corr:
                self._ask("correction", kind.ask_now, key, [tag])
        for kind, key in rest[n_fact + len(corr):]:  # distractor facts, never asked
            (v,) = self._values(kind, key, 1)
            self._say(self._solo(), kind, key, self.rng.choice(kind.state), v)
        for kind, key in temporal:
            self._plant_temporal(kind, key)
        self.hot = slots[: len(temporal) + n_fact + len(corr)]

    def _plant_temporal(self, kind: Kind, key: Key) -> None:
        months = sorted(self.rng.sample(range(1, 13), self.rng.choice((2, 3))))
        values = self._values(kind, key, len(months))
        tags = []
        for i, (month, value) in enumerate(zip(months, values, strict=True)):
            template = self.rng.choice(kind.state if i == 0 else kind.update)
            tags.append(self._say(self._solo(month=month), kind, key, template, value))
        pick = self.rng.randrange(len(months))
        templates = ("What did I decide in {month} about the {component} for {project}?",
                     "In {month}, which {component} did we go with for {project}?",
                     "Back in {month}, what was the plan for the {project} {component}?")
        question = self.fill(self.rng.choice(templates), key, month=MONTHS[months[pick] - 1])
        self.questions.append(Question(question, "temporal", [tags[pick]]))

    def _ask(self, qtype: str, templates: Sequence[str], key: Key, tags: list[str]) -> None:
        question = self.fill(self.rng.choice(templates), key)
        self.questions.append(Question(question, qtype, tags))

    def plant_speakers(self) -> None:
        topics = [(f, t) for f in FRIENDS for t in RECOMMEND_TOPICS]
        self.rng.shuffle(topics)
        for i, (friend, topic) in enumerate(topics[:50]):
            value = self.rng.choice(RECOMMEND_TOPICS[topic])
            tag = self._group_say(friend, self.fill(self.rng.choice(RECOMMEND), topic=topic,
                                                    v=value))
            if i < COUNTS["recommend"]:
                question = self.fill(self.rng.choice(RECOMMEND_ASK), f=friend, topic=topic)
                self.questions.append(Question(question, "speaker", [tag]))
        offers = list(itertools.product(TASKS, OCCASIONS))
        self.rng.shuffle(offers)
        for i, (task, occasion) in enumerate(offers[:35]):
            text = self.fill(self.rng.choice(OFFER), task=task, occasion=occasion)
            tag = self._group_say(self.rng.choice(FRIENDS), text)
            if i < COUNTS["task"]:
                question = self.fill(self.rng.choice(OFFER_ASK), task=task, occasion=occasion)
                self.questions.append(Question(question, "speaker", [tag]))

    def _group_say(self, speaker: str, text: str) -> str:
        tag = self._tag()
        conv = self.convs[self._group()]
        conv.events.append(([Message(speaker, "user", text)], tag))
        return tag

    def fill_conversations(self) -> None:
        for conv in self.convs:
            events = list(conv.events)
            size = sum(len(m) for m, _ in events)
            while size < MESSAGES_PER_CONV + self.rng.randrange(-3, 4):
                chat = self._group_chatter() if conv.group else self._solo_chatter()
                events.append((chat, ""))
                size += len(chat)
            self.rng.shuffle(events)
            conv.events = events
            if conv.group:
                conv.title = self.rng.choice(("Weekend crew", "Friends group chat",
                                              "Trip planning", "Game night gang"))
            conv.title = conv.title or "Catch-up"

    def _solo_chatter(self) -> list[Message]:
        if self.rng.random() < HOT_CHATTER:
            kind, key = self.rng.choice(self.hot)
        else:
            kind = self.rng.choice(FACT_KINDS)
            key = self.rng.choice(kind.slots())
        return [Message(USER, "user", self.fill(self.rng.choice(kind.chatter), key)),
                Message(ASSISTANT, "assistant", self.rng.choice(kind.reply))]

    def _group_chatter(self) -> list[Message]:
        topic = self.rng.choice(list(RECOMMEND_TOPICS))
        text = self.fill(self.rng.choice(GROUP_CHATTER), topic=topic,
                         v=self.rng.choice(RECOMMEND_TOPICS[topic]), task=self.rng.choice(TASKS),
                         occasion=self.rng.choice(OCCASIONS))
        return [Message(self.rng.choice((*FRIENDS, USER)), "user", text)]

    def finalize(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        gold_of: dict[str, str] = {}
        rows = []
        for conv in self.convs:
            clock = conv.start
            n = 0
            for msgs, tag in conv.events:
                for j, msg in enumerate(msgs):
                    n += 1
                    clock += timedelta(seconds=self.rng.randrange(20, 240))
                    msg.message_id = f"{conv.conversation_id}-m{n:03d}"
                    msg.timestamp = clock.strftime("%Y-%m-%dT%H:%M:%SZ")
                    if tag and j == 0:
                        gold_of[tag] = msg.message_id
                    rows.append({"conversation_id": conv.conversation_id,
                                 "message_id": msg.message_id, "speaker": msg.speaker,
                                 "role": msg.role, "text": msg.text,
                                 "timestamp": msg.timestamp, "title": conv.title})
        questions = [{"id": f"q{i + 1:03d}", "question": q.question,
                      "gold": [gold_of[t] for t in q.tags], "type": q.qtype}
                     for i, q in enumerate(self.questions)]
        return rows, questions


def generate(seed: int = 7) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return (messages, questions) for a seed."""
    gen = Generator(seed)
    gen.plant_facts()
    gen.plant_speakers()
    gen.fill_conversations()
    return gen.finalize()


def write(out: Path, seed: int = 7) -> tuple[int, int]:
    rows, questions = generate(seed)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "messages.jsonl", "w") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    (out / "questions.json").write_text(json.dumps(questions, indent=1) + "\n")
    return len(rows), len(questions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    n_msgs, n_questions = write(args.out, args.seed)
    print(f"wrote {n_msgs} messages and {n_questions} questions to {args.out}")


if __name__ == "__main__":
    main()
