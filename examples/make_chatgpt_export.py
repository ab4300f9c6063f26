"""Generate examples/chatgpt-export/conversations.json: a small, realistic ChatGPT export.

One fictional user (Maya Lindqvist, a backend developer in Oakland with a beagle mix called
Biscuit) across 12 conversations from March 2025 to March 2026. The file follows the real
export format: a JSON array of conversations, newest first, each with a ``mapping`` tree of
nodes (root node without a message, a hidden system message first), ``current_node`` on the
branch the user kept. It exercises what an importer must handle: a code message sent to the
python tool and its ``execution_output``, a DALL·E ``multimodal_text`` image result, an edited
user message (two children of one node; the abandoned branch says "Quasar Pickle", which must
never be imported), and one message whose ``create_time`` is null.

Deterministic (fixed ids, times and jitter; stdlib only):

    .venv/bin/python examples/make_chatgpt_export.py
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "chatgpt-export" / "conversations.json"
NAMESPACE = uuid.UUID("5d3c6a8e-2f0b-4c1e-9a57-3b8f1d2e4c60")
MODEL = "gpt-4o"
HIDDEN_SYSTEM = ""
DALLE_PROMPT = (
    "A minimalist flat vector logo of a beagle silhouette walking along a single wave line, "
    "navy blue (#1B2A41) and warm sand (#E6D3A3), generous negative space, no text"
)


@dataclass(frozen=True)
class Msg:
    """One message spec; ``kind`` picks the content shape."""

    role: str  # user | assistant | tool
    text: str = ""
    kind: str = "text"  # text | code | execution_output | dalle
    language: str = ""
    recipient: str = "all"
    name: str | None = None
    null_time: bool = False


@dataclass(frozen=True)
class Conv:
    title: str
    start: datetime
    messages: list[Msg]
    branch_at: int = -1  # index in ``messages`` whose user message was edited
    abandoned: list[Msg] = field(default_factory=list)  # the first, abandoned continuation


def U(text: str) -> Msg:
    """A user message."""
    return Msg("user", text)


def A(text: str, **kw: Any) -> Msg:
    """An assistant message."""
    return Msg("assistant", text, **kw)


def at(y: int, mo: int, d: int, h: int, mi: int) -> datetime:
    return datetime(y, mo, d, h, mi, tzinfo=UTC)


CONVERSATIONS: list[Conv] = [
    Conv("Adopting a beagle mix", at(2025, 3, 9, 17, 42), [
        U("I just adopted a dog from the Riverside Animal Shelter! She's a 3-year-old beagle "
          "mix and I named her Biscuit. Any tips for the first week at home?"),
        A("Congratulations on adopting Biscuit! For the first week:\n\n1. **Keep it quiet.** "
          "Limit visitors so she can decompress.\n2. **Set a routine** for meals, walks and "
          "bedtime right away.\n3. **Give her a safe spot** — a crate or bed in a calm "
          "corner.\n4. **Short walks, lots of sniffing.** Beagles explore with their nose.\n"
          "5. **Expect accidents** and reward outdoor potty breaks immediately."),
        U("She weighs 11 kg and the shelter said she's very food-motivated. How much should "
          "I feed her?"),
        A("For an adult beagle mix around 11 kg, most dry foods suggest roughly 1 to 1¼ cups "
          "a day, split into two meals. Check the bag's chart and adjust so you can feel (but "
          "not see) her ribs. Because she's food-motivated, count training treats as part of "
          "the daily total."),
        U("Her first vet appointment is with Dr. Amara Okafor at Bayview Vet Clinic on March "
          "14. What should I bring?"),
        A("Bring the shelter's vaccination and deworming records, any microchip paperwork, a "
          "fresh stool sample, and a list of questions (diet, flea and tick prevention, "
          "spaying status). A few treats help keep the visit positive."),
        U("Last thing: what crate size fits her?"),
        A("A 36-inch crate is usually right for a beagle mix: she should be able to stand, "
          "turn around and lie stretched out. Use a divider if she starts using one end as "
          "a bathroom."),
    ]),
    Conv("Tidewatch: Postgres vs MongoDB", at(2025, 4, 2, 9, 15), [
        U("I'm the backend lead on Tidewatch, the tide-gauge dashboard we build at "
          "Harborlight. We're choosing between PostgreSQL and MongoDB for the readings "
          "store: about 40 million readings a year from 120 stations. Thoughts?"),
        A("That is classic time-series data: append-mostly, queried by station and time "
          "range, aggregated into intervals. PostgreSQL with a time-series extension fits "
          "better than MongoDB here: strong indexing on (station_id, time), SQL window "
          "functions for tide curves, and mature backups. MongoDB's time-series collections "
          "work, but you'd give up joins with your station metadata."),
        U("Would TimescaleDB be overkill at 40 million rows a year?"),
        A("Not really. Hypertables partition by time automatically, compression typically "
          "cuts storage 90%+ for sensor data, and continuous aggregates give you hourly and "
          "daily views for the dashboard without cron jobs. It's still plain PostgreSQL, so "
          "you can drop it later."),
        U("OK, decision made with Jonas (our CTO): PostgreSQL 16 with the TimescaleDB "
          "extension, self-hosted on our Hetzner box. MongoDB is out."),
        A("Solid choice. Plan a nightly pg_dump plus WAL archiving to object storage, and "
          "pin the TimescaleDB version in your migrations so upgrades are deliberate."),
        U("Can you sketch the hypertable schema?"),
        A("```sql\nCREATE TABLE readings (\n    station_id INTEGER NOT NULL REFERENCES "
          "stations(id),\n    observed_at TIMESTAMPTZ NOT NULL,\n    water_level_m DOUBLE "
          "PRECISION NOT NULL,\n    quality SMALLINT NOT NULL DEFAULT 0\n);\nSELECT "
          "create_hypertable('readings', 'observed_at', chunk_time_interval => INTERVAL "
          "'7 days');\nCREATE INDEX ON readings (station_id, observed_at DESC);\n```"),
        U("Thanks, that's what we'll ship."),
        A("Good luck with the migration! If the dashboard needs 10-minute resolution, add a "
          "continuous aggregate on time_bucket('10 minutes', observed_at) per station.",
          null_time=True),
    ]),
    Conv("Learning Rust: where to start", at(2025, 5, 18, 20, 5), [
        U("I want to learn Rust this year. Concrete goal: port our tidewatch-cli tool from "
          "Python to Rust by the end of 2025. I have about 5 hours a week."),
        A("A good plan for 5 hours a week:\n\n- **Weeks 1-4:** *The Rust Programming "
          "Language* (\"the Book\"), chapters 1-10.\n- **Weeks 5-6:** Rustlings exercises "
          "alongside.\n- **Weeks 7-10:** rewrite one tidewatch-cli subcommand with `clap` "
          "and `reqwest`.\n- **Then:** port the rest, add tests, compare startup time."),
        U("I learn best with small exercises, not videos. So: the Book first, then "
          "Rustlings."),
        A("Noted — text and exercises it is. Rustlings pairs well with chapters 4 "
          "(ownership) and 8 (collections)."),
        U("Can you explain borrowing with a tiny example?"),
        A("```rust\nfn length(s: &String) -> usize {\n    s.len() // we borrow, we don't "
          "own\n}\n\nfn main() {\n    let station = String::from(\"Alameda\");\n    let n = "
          "length(&station);\n    println!(\"{station} has {n} letters\");\n}\n```\n"
          "`&station` lends the string to `length`; ownership stays in `main`, so "
          "`station` is still usable afterwards."),
        U("Why does this fail? `let s = String::from(\"tide\"); let t = s; "
          "println!(\"{}\", s);`"),
        A("`let t = s;` *moves* the String into `t`; `s` is no longer valid, so using it is "
          "a compile error (E0382: borrow of moved value). Use `let t = s.clone();` for a "
          "copy, or `let t = &s;` to borrow."),
    ]),
    Conv("Lisbon trip budget", at(2025, 6, 10, 19, 30), [
        U("My partner Noor and I are going to Lisbon, September 12-19, 2025. TAP flights are "
          "booked at €410 each. We're staying in an Airbnb in Alfama, €145 per night for 7 "
          "nights."),
        A("Lovely — mid-September is a great time for Lisbon: warm, and the summer crowds "
          "are thinning. Want me to put together a budget?"),
        U("Yes: compute a total if we spend €90 a day on food and €35 a day on transport "
          "and museums."),
        A("flights = 2 * 410\nlodging = 145 * 7\ndaily = (90 + 35) * 7\ntotal = flights + "
          "lodging + daily\nprint(f\"Flights: €{flights}\")\nprint(f\"Lodging: "
          "€{lodging}\")\nprint(f\"Food + transport: €{daily}\")\nprint(f\"Total: "
          "€{total}\")", kind="code", language="python", recipient="python"),
        Msg("tool", "Flights: €820\nLodging: €1015\nFood + transport: €875\nTotal: €2710",
            kind="execution_output", name="python"),
        A("For the two of you the estimated total is **€2,710**: €820 flights, €1,015 "
          "lodging and €875 for food, transport and museums."),
        U("OK, let's cap the whole trip at €2,800."),
        A("That leaves a €90 buffer. A Lisboa Card for the museum days and lunch-time "
          "*prato do dia* menus will keep you comfortably under the cap."),
        U("Must-see list so far: Tram 28, the Belém tower, and a day trip to Sintra."),
        A("Good list. Go to Sintra on a weekday and take the early train from Rossio; "
          "book Pena Palace tickets online for the first slot."),
    ]),
    Conv("Naming my side project", at(2025, 7, 5, 11, 20), [
        U("I'm building a weekend side project: a little web app that logs Biscuit's walks "
          "and shows the tide at Ocean Beach, so I know when the beach is wide enough for a "
          "dog walk. Help me name it?"),
        A("Some ideas:\n\n- **Tidepaw**\n- **Driftwood**\n- **Low Tide Walks**\n- **Sandprint**"),
        U("I like Driftwood: calm and beachy. Let's go with Driftwood. The domain "
          "driftwood.dog is still available, so I bought it."),
        A("Driftwood it is — and driftwood.dog is a great domain. Want help with the stack?"),
        U("Stack: SvelteKit for the frontend and a Rust backend with Axum, as a Rust "
          "learning project."),
        A("Nice pairing. Keep the Axum API small: `/walks` (GET/POST) and `/tides?date=`, "
          "fetching NOAA predictions for station 9414290 and caching them per day."),
    ], branch_at=2, abandoned=[
        U("Honestly, none of those. Let's call it Quasar Pickle and make the mascot a "
          "pickle in a raincoat."),
        A("Quasar Pickle it is! A pickle in a raincoat is a very memorable mascot."),
    ]),
    Conv("Lisbon trip: new dates", at(2025, 8, 21, 8, 50), [
        U("Change of plans: the Lisbon trip moved. We're now going October 3-10, 2025, "
          "because Noor's conference in September was rescheduled. TAP rebooked us for a "
          "€60 change fee each."),
        A("Updated: Lisbon, October 3-10, 2025. The €120 in change fees fits inside your "
          "€2,800 cap, though it eats most of the buffer."),
        U("Also, the Alfama Airbnb couldn't move our dates, so we booked Casa do Largo in "
          "Graça instead, €160 a night."),
        A("Graça is a great base: quieter than Alfama and close to the Miradouro da "
          "Senhora do Monte. At €160 × 7 the lodging is €1,120, so trim the daily spend a "
          "little to stay under €2,800."),
        U("Anything different about Lisbon in early October?"),
        A("Slightly cooler evenings (bring a light jacket), fewer tourists, and a chance of "
          "the first autumn rain. Sintra can be misty, so check the forecast first."),
    ]),
    Conv("Biscuit pulls on the leash", at(2025, 9, 14, 16, 5), [
        U("Biscuit pulls like crazy on the leash. We started Saturday 9 am classes with a "
          "trainer called Tomás Reyes at Good Dog Academy."),
        A("Great step. Between classes: stop the moment the leash goes tight, reward her "
          "when she's next to you, and let her sniff as a reward for walking nicely."),
        U("Vet check yesterday: she's 13.5 kg now, up from 11, so Dr. Okafor wants her on a "
          "diet."),
        A("Beagles gain weight easily. Cut her kibble by about 10%, weigh treats into the "
          "daily ration, and re-weigh in four weeks."),
        U("Which training treats are low in calories?"),
        A("Small pieces of carrot or green beans, freeze-dried chicken broken into tiny "
          "bits, or a portion of her regular kibble kept in a treat pouch."),
    ]),
    Conv("Driftwood logo", at(2025, 10, 28, 21, 10), [
        U("Can you make a logo for Driftwood? A minimalist beagle silhouette walking on a "
          "wave line, navy and sand colors."),
        A(json.dumps({"prompt": DALLE_PROMPT, "size": "1024x1024", "n": 1}),
          recipient="dalle.text2im"),
        Msg("tool", "", kind="dalle", name="dalle.text2im"),
        A("Here's a first logo for Driftwood: a beagle silhouette walking along a wave "
          "line in navy and sand."),
        U("Love it. Brand colors: navy #1B2A41 and sand #E6D3A3."),
        A("Noted. Use the sand on navy for the app header and navy on white for "
          "documents."),
    ]),
    Conv("Birthday gift for Priya", at(2025, 11, 20, 18, 25), [
        U("My sister Priya's birthday is on December 2. She just got into ceramics. Ideas "
          "under $150?"),
        A("Ideas for a new potter:\n\n- a wheel-throwing class\n- a good trimming tool set\n"
          "- a book like *The Ceramics Bible*\n- a gift card to a local studio"),
        U("Going with a wheel-throwing class at Clayroom Studio in Berkeley: $120 for a "
          "4-week course."),
        A("Great gift. Pair it with a handwritten card promising to visit her first open "
          "studio night."),
    ]),
    Conv("Half marathon plan", at(2026, 1, 12, 7, 40), [
        U("I signed up for the Oakland Half Marathon on March 22, 2026. Goal: under 1:55. "
          "I'm running about 25 km a week right now."),
        A("Ten weeks is enough. Build to ~40 km a week: one long run growing to 18 km, one "
          "tempo run, one easy run. Taper in the final 10 days."),
        U("I can run Tuesday, Thursday and Saturday. Sunday is Biscuit's long beach walk."),
        A("Then: Tuesday tempo, Thursday easy with strides, Saturday long run. Sunday's "
          "beach walk is perfect active recovery."),
        U("What pace do I need for 1:55?"),
        A("About 5:27 per km (8:46 per mile). Do your tempo runs around 5:10 per km."),
    ]),
    Conv("tidewatch-cli Rust port", at(2026, 2, 9, 13, 0), [
        U("Update: the Rust port of tidewatch-cli is done! clap for arguments, reqwest for "
          "HTTP. The binary is 4.2 MB and cold start dropped from 480 ms to 35 ms."),
        A("Congratulations — you hit the goal you set in May. A 14× faster cold start is "
          "a great headline for the team demo."),
        U("How do I publish it to crates.io as `tidewatch`?"),
        A("Run `cargo login` with an API token, fill in `description`, `license` and "
          "`repository` in Cargo.toml, try `cargo publish --dry-run`, then `cargo "
          "publish`. Check first that the name `tidewatch` is free."),
    ]),
    Conv("Moving to Alder Street", at(2026, 3, 1, 10, 15), [
        U("Noor and I are moving on April 1, 2026, to an apartment on Alder Street in "
          "Oakland, closer to Lake Merritt for Biscuit's walks."),
        A("Exciting! Update Biscuit's microchip address and her license with the city, and "
          "keep her routine as steady as you can during the move."),
        U("Any tips so Biscuit doesn't get stressed on moving day?"),
        A("Have a friend keep her for the day, or set up one quiet room with her bed, "
          "water and a worn T-shirt of yours before the movers arrive."),
    ]),
]


class Builder:
    """Turns one :class:`Conv` into a ChatGPT export conversation object."""

    def __init__(self, index: int, conv: Conv) -> None:
        self.conv = conv
        self.conv_id = str(uuid.uuid5(NAMESPACE, f"conversation-{index}"))
        self.rng = random.Random(index)
        self.clock = conv.start.timestamp()
        self.mapping: dict[str, dict[str, Any]] = {}
        self.count = 0

    def _node_id(self) -> str:
        self.count += 1
        return str(uuid.uuid5(NAMESPACE, f"{self.conv_id}/{self.count}"))

    def _tick(self, msg: Msg) -> float:
        self.clock += self.rng.uniform(20, 90) if msg.role == "user" else self.rng.uniform(3, 25)
        return round(self.clock + self.rng.random(), 6)

    def _add(self, parent: str | None, message: dict[str, Any] | None, node_id: str) -> str:
        self.mapping[node_id] = {"id": node_id, "message": message, "parent": parent,
                                 "children": []}
        if parent is not None:
            self.mapping[parent]["children"].append(node_id)
        return node_id

    def _append(self, parent: str, msg: Msg) -> str:
        node_id = self._node_id()
        when = self._tick(msg)
        when_or_none = None if msg.null_time else when
        return self._add(parent, message(node_id, msg, when_or_none, parent), node_id)

    def build(self) -> dict[str, Any]:
        root = self._add(None, None, str(uuid.uuid5(NAMESPACE, f"{self.conv_id}/root")))
        system_id = str(uuid.uuid5(NAMESPACE, f"{self.conv_id}/system"))
        node = self._add(root, system_message(system_id), system_id)
        for i, msg in enumerate(self.conv.messages):
            if i == self.conv.branch_at:
                branch = node
                for old in self.conv.abandoned:
                    branch = self._append(branch, old)
            node = self._append(node, msg)
        times = [n["message"]["create_time"] for n in self.mapping.values()
                 if n["message"] and n["message"]["create_time"]]
        return {
            "title": self.conv.title,
            "create_time": round(self.conv.start.timestamp() + 0.5, 6),
            "update_time": max(times),
            "mapping": self.mapping,
            "moderation_results": [],
            "current_node": node,
            "plugin_ids": None,
            "conversation_id": self.conv_id,
            "conversation_template_id": None,
            "gizmo_id": None,
            "gizmo_type": None,
            "is_archived": False,
            "is_starred": None,
            "safe_urls": [],
            "blocked_urls": [],
            "default_model_slug": MODEL,
            "conversation_origin": None,
            "voice": None,
            "async_status": None,
            "disabled_tool_ids": [],
            "is_do_not_remember": False,
            "memory_scope": "global_enabled",
            "id": self.conv_id,
        }


def system_message(node_id: str) -> dict[str, Any]:
    return {
        "id": node_id,
        "author": {"role": "system", "name": None, "metadata": {}},
        "create_time": None,
        "update_time": None,
        "content": {"content_type": "text", "parts": [HIDDEN_SYSTEM]},
        "status": "finished_successfully",
        "end_turn": True,
        "weight": 0.0,
        "metadata": {"is_visually_hidden_from_conversation": True},
        "recipient": "all",
        "channel": None,
    }


def content_of(msg: Msg, node_id: str) -> dict[str, Any]:
    if msg.kind == "code":
        return {"content_type": "code", "language": msg.language,
                "response_format_name": None, "text": msg.text}
    if msg.kind == "execution_output":
        return {"content_type": "execution_output", "text": msg.text}
    if msg.kind == "dalle":
        return {"content_type": "multimodal_text", "parts": [image_part(node_id)]}
    return {"content_type": "text", "parts": [msg.text]}


def image_part(node_id: str) -> dict[str, Any]:
    gen = str(uuid.uuid5(NAMESPACE, f"dalle/{node_id}"))
    return {
        "content_type": "image_asset_pointer",
        "asset_pointer": f"file-service://file-{gen.replace('-', '')[:22]}",
        "size_bytes": 412_288,
        "width": 1024,
        "height": 1024,
        "fovea": 512,
        "metadata": {
            "dalle": {
                "gen_id": gen[:16],
                "prompt": DALLE_PROMPT,
                "seed": 2_841_906_517,
                "parent_gen_id": None,
                "edit_op": None,
                "serialization_title": "DALL-E generation metadata",
            },
            "gizmo": None,
            "generation": None,
            "container_pixel_height": None,
            "container_pixel_width": None,
            "emu_omit_glimpse_image": None,
            "emu_patches_override": None,
            "sanitized": False,
        },
    }


def metadata_of(msg: Msg, parent_id: str) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if msg.role == "user":
        meta = {"request_id": None, "message_source": None, "timestamp_": "absolute"}
    elif msg.role == "assistant":
        meta = {"finish_details": {"type": "stop", "stop_tokens": [200002]},
                "model_slug": MODEL, "default_model_slug": MODEL, "parent_id": parent_id}
    elif msg.kind == "execution_output":
        meta = {"aggregate_result": {"status": "success", "run_id": "", "code": "",
                                     "final_expression_output": None, "messages": [],
                                     "jupyter_messages": []}, "is_complete": True}
    return meta


def message(node_id: str, msg: Msg, when: float | None, parent: str) -> dict[str, Any]:
    author: dict[str, Any] = {"role": msg.role, "name": msg.name, "metadata": {}}
    return {
        "id": node_id,
        "author": author,
        "create_time": when,
        "update_time": None,
        "content": content_of(msg, node_id),
        "status": "finished_successfully",
        "end_turn": msg.role == "assistant" and msg.recipient == "all",
        "weight": 1.0,
        "metadata": metadata_of(msg, parent),
        "recipient": msg.recipient,
        "channel": None,
    }


def build_export() -> list[dict[str, Any]]:
    convs = [Builder(i, conv).build() for i, conv in enumerate(CONVERSATIONS)]
    return sorted(convs, key=lambda c: c["update_time"], reverse=True)  # newest first


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(build_export(), indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {OUT} ({len(CONVERSATIONS)} conversations)")


if __name__ == "__main__":
    main()
