"""A save over HTTP or MCP answers before its frame is indexed (unless asked to wait), and a
recall right after it finds the frame all the same: the keyword index row is written in the
save's own transaction. Distributed mode with no worker running, so nothing indexes the frame
while the test looks (the frame is still in the outbox afterwards): the keyword lane alone
must find it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mind.mind import Mind
from tests.conftest import flushed_redis, redis_db_url
from tests.http_server import running_server, server_settings

pytestmark = pytest.mark.integration
URL = redis_db_url(13)
TOKEN = "save-recall-token"
FACT, QUESTION = "Biscuit is a beagle mix", "what breed is biscuit"


async def pending_in(data_dir: Path) -> int:
    async with await Mind.open(data_dir / "personal.mind", readonly=True) as mind:
        return int(await mind.outbox.count())


async def test_http_save_then_recall_at_once(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with flushed_redis(URL):
        with running_server(server_settings(data, redis_url=URL, api_token=TOKEN)) as url, \
                httpx.Client(base_url=url, timeout=30,
                             headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            saved = http.post("/v1/memories", json={"content": FACT})
            assert saved.status_code == 201, saved.text
            found = http.post("/v1/recall", json={"query": QUESTION, "limit": 3})
            assert found.status_code == 200, found.text
            assert [hit["id"] for hit in found.json()["results"]][:1] == [saved.json()["id"]]
            assert await pending_in(data) == 1  # not indexed: found by the keyword lane


async def test_mcp_save_then_recall_at_once(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "hive_mind.mcp_server"], cwd=str(data),
        env={"HIVE_MIND_DATA_DIR": str(data), "HIVE_MIND_EMBEDDING_PROVIDER": "test",
             "HIVE_MIND_REDIS_URL": URL, "HF_HUB_OFFLINE": "1"})
    async with flushed_redis(URL):
        with open(tmp_path / "mcp.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                saved = await session.call_tool("save_memory", {"content": FACT})
                assert not saved.is_error, saved.content
                frame_id = json.loads(saved.content[0].text)["id"]
                found = await session.call_tool("recall_memory", {"query": QUESTION,
                                                                  "limit": 3})
                assert not found.is_error, found.content
                hits = json.loads(found.content[0].text)
                assert [hit["id"] for hit in hits][:1] == [frame_id]
                assert await pending_in(data) == 1
