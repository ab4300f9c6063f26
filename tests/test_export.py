"""``hive-mind export`` on real mind files: the universal output re-imported with ``harvest
import universal`` gives the same memories (texts, speakers, sessions, source times,
importances); the json document carries the knowledge graph with its validity; the HTTP
download and the MCP page serve the same records."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from hive_mind.cli import main
from hive_mind.facade import HiveMind
from tests.http_server import running_server, server_settings

CHAT = [
    {"conversation_id": "c1", "title": "Trip planning", "message_id": "m1", "speaker": "Alice",
     "role": "user", "text": "We fly to Lisbon on the 3rd.",
     "timestamp": "2024-03-01T09:00:00.250Z"},
    {"conversation_id": "c1", "message_id": "m2", "speaker": "Bob", "role": "assistant",
     "text": "Booked the Alfama flat\nfor four nights.", "timestamp": "2024-03-01T09:01:00Z"},
    {"conversation_id": "c2", "title": "Garden", "message_id": "m3", "speaker": "Alice",
     "text": "Repaint the fence green.", "timestamp": "2023-07-14T18:30:00Z"},
]


def _run(*args: str) -> None:
    assert main(list(args)) == 0


async def _seed(data: Path, tmp: Path) -> None:
    chat = tmp / "chat.jsonl"
    chat.write_text("\n".join(json.dumps(m) for m in CHAT) + "\n")
    async with await HiveMind.open(data_dir=data, embedding_provider="test") as hm:
        await hm.save("I moved to Porto in 2019", importance="important", session="life",
                      created_at="2019-05-01T10:00:00.123Z", metadata={"tags": ["move"]})
        await hm.save("Alice: this is not a turn, only text that starts like one ",
                      session="life", importance="temporary")
        await hm.save("Le café était très bon ☕\n\nsecond paragraph", importance="critical")
        await hm.run_harvest("universal", chat, importance="important")
        await hm.create_workspace("Project X", workspace_id="proj")
        await hm.save("The proj deadline is Friday", workspace="proj",
                      created_at="2025-01-02T03:04:05.006Z")
        porto = await hm.save_entity("location", "Porto")
        me = await hm.save_entity("person", "Me")
        await hm.create_relation(me["id"], porto["id"], "lives_in")
        await hm.wait_idle()


async def _memories(data: Path, workspace: str | None = None) -> list[dict[str, Any]]:
    """Every frame, session by session in order: what a round trip must keep."""
    async with await HiveMind.open(data_dir=data, embedding_provider="test") as hm:
        db = (await hm.reader(workspace)).db
        rows = await db.fetchall(
            "SELECT f.gop_id, coalesce(s.summary, f.gop_id), f.content, f.created_at, "
            "f.importance, f.metadata FROM memory_frames f JOIN sessions s "
            "ON s.gop_id = f.gop_id ORDER BY s.id, f.t")
    out = []
    for gop, title, content, created, importance, meta in rows:
        speaker = json.loads(meta).get("speaker")
        out.append({"session": gop, "title": title, "content": content, "created_at": created,
                    "importance": importance, "speaker": speaker})
    return out


def _same(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> None:
    assert len(after) == len(before)
    sessions: dict[str, str] = {}
    for a, b in zip(before, after, strict=True):
        assert sessions.setdefault(a["session"], b["session"]) == b["session"]  # one to one
        for key in ("content", "created_at", "importance", "title"):
            assert b[key] == a[key], (key, a, b)
        if a["speaker"] is not None:
            assert b["speaker"] == a["speaker"]
    assert len(set(sessions.values())) == len(sessions)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in ("HIVE_MIND_REDIS_URL", "HIVE_MIND_URL", "HIVE_MIND_API_TOKEN",
                "HIVE_MIND_DATA_DIR"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HIVE_MIND_EMBEDDING_PROVIDER", "test")
    data = tmp_path / "a"
    asyncio.run(_seed(data, tmp_path))
    return data


def test_universal_round_trip(env: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _run("--data-dir", str(env), "export", "--all", str(out))
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == [
        "personal.jsonl", "workspaces", "workspaces/proj.jsonl"]
    lines = [json.loads(line) for line in (out / "personal.jsonl").read_text().splitlines()]
    by_text = {m["text"]: m for m in lines}
    alice = by_text["We fly to Lisbon on the 3rd."]  # an imported turn: speaker + text
    assert alice["speaker"] == "Alice" and "verbatim" not in alice
    mimic = next(m for m in lines if m["text"].startswith("Alice: this"))
    assert mimic["verbatim"] is True  # a saved text is never split at a colon

    copy = tmp_path / "b"
    _run("--data-dir", str(copy), "harvest", "import", "universal",
         str(out / "personal.jsonl"))
    _run("--data-dir", str(copy), "workspace", "create", "Project X", "--id", "proj")
    _run("--data-dir", str(copy), "harvest", "import", "universal",
         str(out / "workspaces" / "proj.jsonl"), "--workspace", "proj")
    _same(asyncio.run(_memories(env)), asyncio.run(_memories(copy)))
    _same(asyncio.run(_memories(env, "proj")), asyncio.run(_memories(copy, "proj")))

    again = tmp_path / "again.jsonl"  # the copy exports to the same lines, bar the ids (a
    _run("--data-dir", str(copy), "export", str(again))  # saved text gets a default speaker)

    def kept(m: dict[str, Any], like: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in m.items() if k in like and k not in (
            "conversation_id", "message_id", "title")}

    relines = [json.loads(line) for line in again.read_text().splitlines()]
    assert [kept(b, a) for a, b in zip(lines, relines, strict=True)] == \
        [kept(a, a) for a in lines]


def test_json_document_has_the_graph_and_reimports(env: Path, tmp_path: Path) -> None:
    dest = tmp_path / "mind.json"
    _run("--data-dir", str(env), "export", "--format", "json", str(dest))
    doc = json.loads(dest.read_text())
    assert doc["format"] == "hive-mind" and doc["mind"] == "personal"
    assert doc["counts"]["frames"] == sum(len(c["messages"]) for c in doc["conversations"])
    names = {e["name"]: e for e in doc["entities"]}
    assert {"Porto", "Me"} <= set(names) and names["Porto"]["valid_to"] is None
    assert names["Porto"]["valid_from"].endswith("Z")
    lives = next(r for r in doc["relations"] if r["type"] == "lives_in")
    assert (lives["source"], lives["target"]) == ("Me", "Porto")
    assert lives["valid_from"] and "valid_to" in lives
    first = doc["conversations"][0]["messages"][0]
    assert {"frame_id", "frame_type", "source", "recorded_at", "timestamp"} <= set(first)

    copy = tmp_path / "b"
    _run("--data-dir", str(copy), "harvest", "import", "universal", str(dest))
    _same(asyncio.run(_memories(env)), asyncio.run(_memories(copy)))


def test_refusals(env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dest = tmp_path / "x.jsonl"
    dest.write_text("keep me")
    assert main(["--data-dir", str(env), "export", str(dest)]) != 0
    assert "exists" in capsys.readouterr().err and dest.read_text() == "keep me"
    assert main(["--data-dir", str(env), "export", "-w", "nope", str(tmp_path / "y")]) != 0
    assert main(["--data-dir", str(env), "export", "-w", "proj", "--all",
                 str(tmp_path / "z")]) != 0
    assert not (tmp_path / "y").exists() and not (tmp_path / "z").exists()
    assert main(["--data-dir", str(env), "export", "--force", str(tmp_path)]) != 0
    assert "is a directory" in capsys.readouterr().err


def test_http_download_and_pages(env: Path, tmp_path: Path) -> None:
    with running_server(server_settings(env)) as url, httpx.Client(base_url=url,
                                                                  timeout=60) as api:
        client = tmp_path / "client"  # the CLI as a client: the download, written here
        _run("--url", url, "export", "--all", "--format", "json", str(client))
        doc = json.loads((client / "workspaces" / "proj.json").read_text())
        assert doc["mind"] == "workspace:proj" and doc["counts"]["frames"] == 1
        assert json.loads((client / "personal.json").read_text())["counts"]["frames"] == 6
        with api.stream("GET", "/v1/export", params={"workspace": "proj"}) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("application/x-ndjson")
            assert 'filename="proj.jsonl"' in response.headers["content-disposition"]
            assert response.headers["cache-control"] == "no-store"
            body = b"".join(response.iter_bytes())
        assert [json.loads(line)["text"] for line in body.splitlines()] == [
            "The proj deadline is Friday"]
        assert api.get("/v1/export", params={"workspace": "../x"}).status_code == 400
        assert api.get("/v1/export", params={"format": "pickle"}).status_code == 422
        assert api.get("/v1/export/page", params={"limit": 10_000}).status_code == 422

        seen, cursor = [], None
        while True:
            params: dict[str, Any] = {"limit": 2, **({"cursor": cursor} if cursor else {})}
            page = api.get("/v1/export/page", params=params).json()
            seen += [m["text"] for m in page["records"]]
            cursor = page["next"]
            if cursor is None:
                break
        full = api.get("/v1/export").text.splitlines()
        assert seen == [json.loads(line)["text"] for line in full]
        graph = api.get("/v1/export/page", params={"part": "relations"}).json()
        assert "lives_in" in [r["type"] for r in graph["records"]]
        bad = api.get("/v1/export/page", params={"cursor": "../../etc"})
        assert bad.status_code == 400
