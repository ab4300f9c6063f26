"""Gemini adapter (mind/harvest/gemini.py): Takeout My Activity (file, directory, zip) and the
original simple JSON dump."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from mind.harvest import gemini, takeout_html
from mind.harvest.detect import detect
from mind.harvest.errors import HarvestError
from mind.harvest.registry import adapter
from mind.harvest.takeout_html import CHUNK, first_header
from mind.harvest.takeout_time import looks_like_time, parse_time
from mind.harvest.types import stable_id

DATA = Path(__file__).parent / "data" / "harvest" / "gemini"
TAKEOUT = DATA / "MyActivity.json"
LOCALIZED = Path(__file__).parent / "data" / "harvest" / "gemini_de"
HTML_PAGE = Path(__file__).parent / "data" / "harvest" / "gemini_html" / "MyActivity.html"
MEMBER = "Takeout/My Activity/Gemini Apps/MyActivity.json"


def _takeout_dir(root: Path) -> Path:
    target = root / "Takeout" / "My Activity" / "Gemini Apps"
    target.mkdir(parents=True)
    shutil.copy(TAKEOUT, target / "MyActivity.json")
    search = root / "Takeout" / "My Activity" / "Search"
    search.mkdir(parents=True)
    (search / "MyActivity.json").write_text(json.dumps([
        {"header": "Search", "title": "Searched for sqlite", "time": "2025-01-01T00:00:00Z",
         "products": ["Search"]}]))
    return root


def test_takeout_file_prompts_become_exchanges() -> None:
    items = list(gemini.parse(TAKEOUT))
    # 3 "Prompted" records; "Used Gemini Apps", "Created Gem", "Gave feedback" are skipped
    assert len(items) == 3
    wal, report, joke = items
    assert all(i.source == "gemini" and i.kind == "conversation" for i in items)

    assert wal.title == "How do I configure WAL mode in SQLite and why would I want it?"
    assert wal.timestamp == "2025-03-14T09:12:33.123Z"
    assert wal.metadata["day"] == "2025-03-14"
    assert wal.position == "MyActivity.json: record 1"
    user, model = wal.turns
    assert (user.role, user.speaker) == ("user", "User")
    assert user.text == "How do I configure WAL mode in SQLite and why would I want it?"
    assert (model.role, model.speaker) == ("assistant", "Gemini")
    assert model.text.startswith("Write-ahead logging (WAL) lets readers")
    assert "## How to enable it" in model.text
    assert "```\nPRAGMA journal_mode=WAL;\n# it persists across connections\n```" in model.text
    assert "- Needs shared memory, so no network file systems" in model.text
    assert model.text.endswith("Checkpoints move pages back into the main file & keep the log small.")

    # multi-line prompt kept whole, attachments noted, several html items joined
    assert report.title == "Summarise the attached quarterly report"
    assert report.turns[0].text == (
        "Summarise the attached quarterly report\nFocus on churn and revenue.\n\n"
        "[Attached file: Q4-report.pdf]"
    )
    assert report.turns[0].metadata["attached_files"] == ["Q4-report.pdf"]
    assert report.turns[1].text == (
        "Revenue grew 12% quarter over quarter.\n\nChurn fell to 3.1 % after the pricing change."
    )
    assert report.metadata["subtitles"] == ["Gem: Analyst"]
    assert report.timestamp == "2025-03-13T17:45:00.500Z"

    # a prompt without a recorded response is still the user's turn
    assert [t.role for t in joke.turns] == ["user"]
    assert joke.timestamp == "2025-03-12T08:00:00.000Z"


def test_localized_takeout_is_read_by_its_structure() -> None:
    """A German Takeout ("Gemini-Apps", "Eingegebener Prompt: …"): records with an answer or
    a prompt label are exchanges, the localized markers are skipped."""
    items = list(gemini.parse(LOCALIZED / "MeineAktivitäten.json"))
    assert [(i.title, [t.role for t in i.turns]) for i in items] == [
        ("Wie lange muss ein Pizzateig im Kühlschrank ruhen?", ["user", "assistant"]),
        ("Fasse den Bericht zusammen", ["user", "assistant"]),
        ("Eine Frage ohne gespeicherte Antwort", ["user"]),
    ]
    pizza, report, _ = items
    assert pizza.turns[1].text == "Mindestens 24 Stunden, besser 48."
    assert pizza.timestamp == "2026-03-12T08:00:00.000Z"
    assert report.turns[0].text == ("Fasse den Bericht zusammen\n\n"
                                    "[Attached file: Quartalsbericht.pdf]")
    assert pizza.item_id == stable_id("gemini", "takeout", "2026-03-12T08:00:00.000Z",
                                      "Wie lange muss ein Pizzateig im Kühlschrank ruhen?")
    assert detect(LOCALIZED / "MeineAktivitäten.json").source == "gemini"


def test_unknown_label_stays_in_the_prompt(tmp_path: Path) -> None:
    path = tmp_path / "activity.json"
    path.write_text(json.dumps([{"header": "Applis Gemini", "title": "Requête : Bonjour ?",
                                 "time": "2026-01-02T03:04:05Z", "products": ["Gemini Apps"],
                                 "safeHtmlItem": [{"html": "<p>Salut !</p>"}]}]))
    (item,) = gemini.parse(path)
    assert [t.text for t in item.turns] == ["Requête : Bonjour ?", "Salut !"]


def test_activity_without_an_exchange_is_an_error() -> None:
    path = LOCALIZED / "markers_only.json"
    with pytest.raises(HarvestError, match="2 Gemini Apps activity records and not one prompt "
                                           "or answer among them: nothing to import") as err:
        list(gemini.parse(path))
    assert err.value.path == str(path)


def test_takeout_ids_stable_and_distinct(tmp_path: Path) -> None:
    first = list(gemini.parse(TAKEOUT))
    copy = tmp_path / "copy.json"
    shutil.copy(TAKEOUT, copy)
    second = list(gemini.parse(str(copy)))
    assert [i.item_id for i in first] == [i.item_id for i in second]
    assert [t.turn_id for i in first for t in i.turns] == [
        t.turn_id for i in second for t in i.turns
    ]
    ids = [i.item_id for i in first] + [t.turn_id for i in first for t in i.turns]
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 40 for i in ids)


def test_takeout_directory_picks_gemini_member(tmp_path: Path) -> None:
    items = list(gemini.parse(_takeout_dir(tmp_path)))
    assert [i.item_id for i in items] == [i.item_id for i in gemini.parse(TAKEOUT)]


def test_takeout_zip(tmp_path: Path) -> None:
    root = _takeout_dir(tmp_path / "src")
    archive = tmp_path / "takeout-20250315.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(root.rglob("*.json")):
            zf.write(path, path.relative_to(root).as_posix())
    items = list(adapter("gemini")(archive))
    assert [i.item_id for i in items] == [i.item_id for i in gemini.parse(TAKEOUT)]
    assert items[0].turns[1].text == next(gemini.parse(TAKEOUT)).turns[1].text


def test_takeout_zip_without_gemini(tmp_path: Path) -> None:
    archive = tmp_path / "t.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("Takeout/My Activity/Search/MyActivity.json", "[]")
        zf.writestr("Takeout/My Activity/Gemini Apps/MyActivity.html", "<html></html>")
    with pytest.raises(HarvestError, match=r"nothing importable as gemini: found 2 files: .*"
                                           r"Gemini Apps/MyActivity\.html \(text\)") as err:
        list(gemini.parse(archive))
    assert err.value.path == str(archive)


@pytest.mark.parametrize("language", ["en", "de"])
def test_html_my_activity_is_read(language: str, tmp_path: Path) -> None:
    """Takeout's default format: the HTML page, in English and German, given as the file, in
    its Takeout folder under a localized name, or in the zip; markers skipped, each time read
    from its localized line (an ambiguous zone gives none rather than a guess)."""
    page = HTML_PAGE if language == "en" else LOCALIZED / "MeineAktivitäten.html"
    items = list(gemini.parse(page))
    exchanges = [(i.title, i.timestamp, [t.text for t in i.turns]) for i in items]
    if language == "en":
        assert exchanges == [
            ("How do I enable WAL mode in SQLite?", "2025-03-14T09:12:33.000Z",
             ["How do I enable WAL mode in SQLite?",
              "Run PRAGMA journal_mode=WAL; once per database.\n\n"
              "- Readers never block the writer\n- Not for network file systems"]),
            ("Summarise the attached report", "2025-03-13T17:45:00.000Z",
             ["Summarise the attached report\n\n1 attachment.\n- report-q4.pdf",
              "Revenue grew 12% & churn fell."]),
            ("Tell me a joke about databases", None, ["Tell me a joke about databases"]),
        ]
        assert items[2].metadata["time"] == "Mar 12, 2025, 8:00:00 AM CST"
    else:
        assert exchanges == [
            ("Wie lange muss ein Pizzateig ruhen?", "2026-03-12T08:00:00.000Z",
             ["Wie lange muss ein Pizzateig ruhen?", "Mindestens 24 Stunden im Kühlschrank."]),
            ("Fasse den Bericht zusammen", "2026-03-11T17:45:00.000Z",
             ["Fasse den Bericht zusammen\n\n2 Dateien angehängt.\n- a.pdf\n- b.pdf",
              "Der Umsatz stieg um 12 %."]),
        ]
    assert items[0].position == f"{page.name}: activity 1"
    assert items[0].metadata["format"] == "takeout-my-activity-html"
    folder = tmp_path / "Takeout" / "Meine Aktivitäten" / "Gemini-Apps"
    folder.mkdir(parents=True)
    shutil.copy(page, folder / "Aktivität.html")
    archive = tmp_path / "takeout.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(folder / "Aktivität.html", "Takeout/Meine Aktivitäten/Gemini-Apps/x.html")
    for where in (tmp_path, archive):
        assert [i.item_id for i in adapter("gemini")(where)] == [i.item_id for i in items]
        assert detect(where).source == "gemini"


def test_html_page_of_another_product_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "MyActivity.html"
    page.write_text(HTML_PAGE.read_text().replace("Gemini Apps<br></p>", "Search<br></p>"))
    with pytest.raises(HarvestError, match="My Activity of 1 other product, not of Gemini"):
        list(gemini.parse(page))
    with pytest.raises(HarvestError, match="cannot tell which export this is"):
        detect(page.parent)


def test_directory_without_takeout(tmp_path: Path) -> None:
    with pytest.raises(HarvestError, match=r"nothing importable as gemini: found no files; "
                                           r"expected Gemini Apps activity .*MyActivity\.json"):
        list(gemini.parse(tmp_path))
    (tmp_path / "MyActivity.json").write_text(json.dumps([  # the name alone is not enough
        {"header": "Search", "title": "Searched for x", "products": ["Search"]}]))
    with pytest.raises(HarvestError, match=r"MyActivity\.json \(JSON array: header, title, "
                                           r"products\)") as err:
        list(gemini.parse(tmp_path))
    assert err.value.path == str(tmp_path)


def test_renamed_takeout_is_found_by_content(tmp_path: Path) -> None:
    """Takeout renamed its file before; the Gemini records are found under any name, in a
    directory and in a zip, and another product's My Activity beside them is left alone."""
    expected = [i.item_id for i in gemini.parse(TAKEOUT)]
    root = _takeout_dir(tmp_path / "src")
    folder = root / "Takeout" / "My Activity" / "Gemini Apps"
    (folder / "MyActivity.json").rename(folder / "Activité.json")
    assert not list(root.rglob("MyActivity.json"))[1:]  # only Search's keeps the old name
    items = list(gemini.parse(root))
    assert [i.item_id for i in items] == expected
    assert items[0].position == "Activité.json: record 1"
    archive = tmp_path / "takeout-2026.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(root.rglob("*.json")):
            zf.write(path, f"Takeout/export-{len(zf.namelist())}.json")
    zipped = list(adapter("gemini")(archive))
    assert [i.item_id for i in zipped] == expected
    assert [t.text for i in zipped for t in i.turns] == [t.text for i in items for t in i.turns]
    for where in (root, archive, folder / "Activité.json"):
        assert detect(where).source == "gemini"


def test_other_product_activity_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "MyActivity.json"
    path.write_text(json.dumps([{"header": "Search", "title": "Searched for x",
                                 "time": "2025-01-01T00:00:00Z", "products": ["Search"]}]))
    with pytest.raises(HarvestError, match="My Activity of 1 other product, not of Gemini"):
        list(gemini.parse(path))


def test_simple_conversations_format() -> None:
    items = list(gemini.parse(DATA / "conversations.json"))
    assert len(items) == 2
    trip, math = items
    assert trip.title == "Trip planning"
    assert trip.metadata["conversation_id"] == "conv-001"
    assert trip.metadata["model"] == "gemini-1.5-pro"
    assert trip.timestamp == "2024-06-01T10:00:00.000Z"
    # system turn skipped, unknown role dropped
    assert [t.role for t in trip.turns] == ["user", "assistant", "user"]
    assert trip.turns[0].text == "Plan three days in Lisbon.\n[Shared file: gs://bucket/itinerary.pdf]"
    assert trip.turns[0].timestamp == "2024-06-01T10:00:05.000Z"
    assert trip.turns[1].text == "Day 1: Alfama and the castle.\nDay 2: Belém.\nDay 3: Sintra."
    assert trip.turns[1].speaker == "Gemini"
    assert trip.turns[2].text == "[Shared media: image/png]"
    assert [t.text for t in math.turns] == ["What is 2+2?", "4"]
    assert math.title == "Untitled chat"
    assert trip.item_id == stable_id("gemini", "conv-001")


def test_history_dump_and_stable_ids(tmp_path: Path) -> None:
    (item,) = gemini.parse(DATA / "history_dump.json")
    assert item.title == "Rust lifetimes"
    assert item.metadata["model"] == "gemini-pro"
    assert [t.role for t in item.turns] == ["user", "assistant"]
    assert item.timestamp is not None  # no time in the dump: the file's mtime
    (again,) = gemini.parse(DATA / "history_dump.json")
    assert again == item
    # a different dump with the same title and model gets a different id
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"title": "Rust lifetimes", "model": "gemini-pro", "history": [
        {"role": "user", "parts": [{"text": "Something else"}]}]}))
    (different,) = gemini.parse(other)
    assert different.item_id != item.item_id


def test_bare_message_array(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "user", "text": "hi"}, {"role": "model", "text": "hello"}]))
    (item,) = gemini.parse(path)
    assert [t.text for t in item.turns] == ["hi", "hello"]
    assert item.title == "hi"


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        (b"", "empty file"),
        (b'[{"header": "Gemini Apps", "title": "Prompted x", "time": "2025-', "malformed JSON"),
        (b'[{"mapping": {}, "title": "chatgpt"}]', "not a Gemini export"),
        (b'{"foo": 1}', "not a Gemini export"),
        (b"42", "not a Gemini export"),
        (b"\x00\x01\x02binary\xff\xfe\x00", "binary"),
    ],
)
def test_bad_inputs_name_the_file(tmp_path: Path, payload: bytes, match: str) -> None:
    path = tmp_path / "export.json"
    path.write_bytes(payload)
    with pytest.raises(HarvestError, match=match) as err:
        list(gemini.parse(path))
    assert err.value.path == str(path)


def test_malformed_json_after_good_records_has_position(tmp_path: Path) -> None:
    records = json.loads(TAKEOUT.read_text())
    text = json.dumps(records)[:-1] + ', {"header": "Gemini Apps", "title": '
    path = tmp_path / "MyActivity.json"
    path.write_text(text)
    produced = []
    with pytest.raises(HarvestError, match="malformed JSON") as err:
        for item in gemini.parse(path):
            produced.append(item)
    assert len(produced) == 3  # items before the damage were delivered
    assert "byte" in err.value.position


def test_missing_path() -> None:
    with pytest.raises(HarvestError, match="no such file"):
        list(gemini.parse("/nonexistent/MyActivity.json"))


@pytest.mark.parametrize(("line", "expected"), [
    ("Mar 15, 2025, 4:49:42\u202fPM EET", "2025-03-15T14:49:42.000Z"),
    ("Jan 5, 2025, 12:30:45\u202fAM UTC", "2025-01-05T00:30:45.000Z"),
    ("5 Jan 2024, 18:12:03 GMT-06:00", "2024-01-06T00:12:03.000Z"),
    ("18.04.2026, 17:38:51 MESZ", "2026-04-18T15:38:51.000Z"),
    ("10 de mai. de 2026, 03:46:09 BRT", "2026-05-10T06:46:09.000Z"),
    ("12 juil. 2025, 14:00:00 UTC+2", "2025-07-12T12:00:00.000Z"),
    ("2026年6月20日 00:28:51 JST", "2026-06-19T15:28:51.000Z"),
    ("2026. 6. 20. 오후 3:28:51 KST", "2026-06-20T06:28:51.000Z"),
    ("13/04/2026, 10:00:00 UTC", "2026-04-13T10:00:00.000Z"),
    ("2026年6月20日 00:28:51 CST", None),  # China or US Central: not guessed
    ("03/04/2026, 10:00:00 UTC", None),  # March 4th or 3 April
    ("What is 10:30 in words?", None),
])
def test_localized_time_lines(line: str, expected: str | None) -> None:
    assert parse_time(line) == expected
    assert looks_like_time(line) == (not line.startswith("What"))


def test_a_page_is_recognised_past_its_style_and_other_html_cheaply() -> None:
    page = HTML_PAGE.read_bytes()
    styled = page.replace(b"</style>", b".x{color:red}" * 30_000 + b"</style>")  # ~400 kB
    assert first_header(io.BytesIO(styled)) == "Gemini Apps"
    other = io.BytesIO(b"<html><head></head><body>" + b"<p>Some article text.</p>" * 200_000)
    assert first_header(other) is None
    assert other.tell() <= 3 * CHUNK  # not the whole 5 MB


def test_an_oversized_activity_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    monkeypatch.setattr(takeout_html, "MAX_CARD_CHARS", 5_000)
    page = tmp_path / "MyActivity.html"
    page.write_text(HTML_PAGE.read_text().replace("Summarise the attached report",
                                                  "Summarise " + "very " * 2_000))
    with pytest.raises(HarvestError, match="one activity holds more than 5,000 characters") as err:
        list(gemini.parse(page))
    assert err.value.position == "activity 3"
