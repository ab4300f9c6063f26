"""Helpers and fakes shared by the test modules (a test module imports from here, never from
another test module)."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import socket
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import anyio.from_thread
import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import CallToolResult

from actors.actor import MindActor
from actors.handlers import HANDLERS as OP_HANDLERS
from actors.results import FramesSaved, expect
from mind.embeddings import TestEmbedder
from mind.embeddings.base import Embedder
from mind.errors import ValidationError
from mind.frames.model import NewFrame
from mind.mind import Mind
from mind.storage.db import Database
from mind.timeutil import now_iso
from queue_schemas import ops
from vocabulary.ids import PERSONAL_MIND
from workers.batcher import EmbeddingBatcher
from workers.cognify import run_index_job
from workers.constants import COGNIFY_BATCH_FRAMES
from workers.followups import cognify_jobs, fingerprint_hint, pending_items

# -- from test_actor --------------------


@dataclass(frozen=True)
class Save:
    text: str
    gop: str = "g"
    kind: str = "save"
    op_id: str = field(default_factory=lambda: uuid.uuid4().hex)


@dataclass(frozen=True)
class Boom:
    kind: str = "boom"
    op_id: str = field(default_factory=lambda: uuid.uuid4().hex)


async def save_handler(mind: Mind, op: Save) -> int:
    return (await mind.frames.create_i_frame(op.gop, op.text)).frame.id


async def boom_handler(mind: Mind, op: Boom) -> None:
    await mind.frames.create_i_frame("g", "written then rolled back")
    raise ValidationError("this op is bad")


HANDLERS: dict[str, Any] = {"save": save_handler, "boom": boom_handler}



# -- from test_knowledge --------------------


async def add_frames(db: Database, count: int) -> list[int]:
    """Insert ``count`` bare frames (and their session) directly with SQL; returns their ids."""
    now = now_iso()
    ids: list[int] = []
    async with db.transaction():
        await db.execute("INSERT OR IGNORE INTO sessions(gop_id) VALUES ('g')")
        start = int(await db.fetchval("SELECT coalesce(max(t), -1) + 1 FROM memory_frames"))
        for t in range(start, start + count):
            frame_id, _ = await db.execute(
                "INSERT INTO memory_frames (frame_type, gop_id, t, content, created_at, "
                "recorded_at, last_accessed, content_hash) VALUES ('I', 'g', ?, ?, ?, ?, ?, ?)",
                (t, f"frame {t}", now, now, now, f"hash-{t}"),
            )
            ids.append(frame_id)
    return ids


async def active_relation_rows(db: Database) -> int:
    return int(await db.fetchval(
        "SELECT COUNT(*) FROM knowledge_relations WHERE valid_to IS NULL"))



# -- from test_harvest_documents --------------------


def _pdf_string(text: str) -> str:
    return "(" + text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def make_pdf(pages: list[list[str]], *, title: str | None = None, author: str | None = None,
             created: str | None = None) -> bytes:
    """PDF 1.4 bytes: one Helvetica text line per string, one page per list."""
    page_ids = [4 + 2 * i for i in range(len(pages))]
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{' '.join(f'{p} 0 R' for p in page_ids)}] "
        f"/Count {len(pages)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    for page_id, lines in zip(page_ids, pages, strict=True):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {page_id + 1} 0 R >>".encode()
        )
        ops = ["BT", "/F1 10 Tf", "12 TL", "40 760 Td", *(f"{_pdf_string(ln)} Tj T*" for ln in lines),
               "ET"]
        stream = "\n".join(ops).encode("latin-1")
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    info = [f"/{key} {_pdf_string(value)}" for key, value in
            (("Title", title), ("Author", author), ("CreationDate", created)) if value]
    if info:
        objects.append(("<< " + " ".join(info) + " >>").encode("latin-1"))
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R"
    trailer += f" /Info {len(objects)} 0 R >>\n" if info else " >>\n"
    out += trailer.encode() + b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)



# -- from test_cluster --------------------


CLUSTER_TOKEN = "cluster-test-token"


async def mcp_call(url: str, tool: str, arguments: dict[str, Any],
                   headers: dict[str, str] | None = None, ok: bool = True) -> str:
    """One tool call with a real MCP client over streamable HTTP, with the caller's token
    (``headers``, default the cluster's); ``ok``: the call must not be an error result."""
    from mcp import ClientSession
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    async with (create_mcp_http_client(headers=headers or {"Authorization": f"Bearer {CLUSTER_TOKEN}"}) as http,
                streamable_http_client(f"{url}/mcp", http_client=http) as streams,
                ClientSession(streams[0], streams[1]) as session):
        await session.initialize()
        result = await session.call_tool(tool, arguments)
        assert result.is_error is not ok, result.content
        return str(result.content[0].text)  # type: ignore[union-attr]



# -- from test_security_http --------------------


def refused(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    assert "access-control-allow-origin" not in response.headers  # never any CORS
    return str(body["error"]["message"])



# -- from test_embeddings_http --------------------


DIM = 32

@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

Reply = tuple[int, Any]

def wrap_rows(provider: str, rows: list[Any]) -> Any:
    """The provider's response body for these vectors (OpenAI-style data shuffled by index)."""
    if provider == "ollama":
        return {"model": "nomic-embed-text", "embeddings": rows}
    data = [{"object": "embedding", "index": i, "embedding": r} for i, r in enumerate(rows)]
    return {"object": "list", "data": data[::-1], "model": "m", "usage": {"total_tokens": 1}}

PATHS = {
    "ollama": "/api/embed",
    "openai": "/v1/embeddings",
    "voyage": "/v1/embeddings",
    "litellm": "/v1/embeddings",
}


KEY = "sk-test-123"


EmbeddingHandler = Callable[[Request], Reply | Awaitable[Reply]]


@dataclass
class FakeServer:
    """A tiny HTTP/1.1 server (keep-alive, Content-Length bodies) that records every request."""

    handler: EmbeddingHandler
    requests: list[Request] = field(default_factory=list)
    port: int = 0
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> FakeServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        if self._server is not None:
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while line := await reader.readline():
                method, target, _ = line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while (raw := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, value = raw.decode("latin-1").split(":", 1)
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                request = Request(method, target, headers, body)
                self.requests.append(request)
                reply = self.handler(request)
                status, payload = await reply if inspect.isawaitable(reply) else reply
                data = (
                    payload
                    if isinstance(payload, bytes)
                    else (
                        payload.encode()
                        if isinstance(payload, str)
                        else json.dumps(payload).encode()
                    )
                )
                writer.write(
                    f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(data)}\r\n\r\n".encode()
                    + data
                )
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()


def protocol(
    provider: str,
    *,
    key: str | None = None,
    dim: int = DIM,
    rows: Callable[[list[list[float]]], list[Any]] | None = None,
) -> EmbeddingHandler:
    """A handler speaking ``provider``'s protocol with TestEmbedder vectors.

    Wrong paths → 404, a missing/wrong Bearer key (when ``key``) → 401, a malformed body → 400.
    ``rows`` may tamper with the vectors before they are wrapped.
    """
    embedder = TestEmbedder(dim)

    def handle(request: Request) -> Reply:
        if request.method != "POST" or request.path != PATHS[provider]:
            return 404, {"error": f"no route {request.method} {request.path}"}
        if key is not None and request.headers.get("authorization") != f"Bearer {key}":
            return 401, {"error": {"message": "Incorrect API key provided"}}
        body = request.json()
        texts = body.get("input")
        if not isinstance(texts, list) or not isinstance(body.get("model"), str):
            return 400, {"error": "model and input[] are required"}
        if provider == "voyage" and body.get("input_type") != "document":
            return 400, {"error": "input_type must be document"}
        vectors = embedder.encode(texts).tolist()
        return 200, wrap_rows(provider, rows(vectors) if rows else vectors)

    return handle


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])



# -- from test_harvest_url --------------------


LONG_SECTION = "\n".join(f"<p>Paragraph {i}: " + "detail " * 60 + "</p>" for i in range(30))
PAGE = f"""<!doctype html>
<html><head><title>SQLite  Notes</title>
<meta name="description" content="Notes on SQLite &amp; WAL">
<script>window.track = "<h1>no</h1>";</script></head>
<body><header><a href="/">Home</a></header>
<nav><ul><li>Docs</li><li>Blog</li></ul></nav>
<main><h1>SQLite notes</h1><p>Intro with <b>bold</b> text.</p>
<h2>WAL mode</h2><p>Readers and a writer.</p><pre># journal_mode
PRAGMA journal_mode=WAL;</pre>
<h2>Long section</h2>{LONG_SECTION}
<h3>Empty heading</h3>
</main><footer>© 2025</footer></body></html>"""

PLAIN = "\n\n".join(f"Plain paragraph {i}. " + "text " * 100 for i in range(10))

MARKDOWN = "# Readme\n\nHello.\n\n## Usage\n\nRun it."

LATIN1 = "<html><head><title>Caf\xe9</title></head><body><p>cr\xe8me br\xfbl\xe9e</p></body></html>"


class PageHandler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, ctype: str, body: bytes, headers: dict[str, str] | None = None,
              length: bool = True) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if length:
            self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path
        if path == "/page.html":
            self._send(200, "text/html; charset=utf-8", PAGE.encode(),
                       {"Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"})
        elif path == "/ua":
            self._send(200, "text/plain", f"agent: {self.headers['User-Agent']}".encode())
        elif path == "/notes.txt":
            self._send(200, "text/plain; charset=utf-8", PLAIN.encode())
        elif path == "/readme.md":
            self._send(200, "text/markdown", MARKDOWN.encode())
        elif path == "/latin1":
            self._send(200, "text/html; charset=iso-8859-1", LATIN1.encode("latin-1"))
        elif path == "/paper.pdf":
            self._send(200, "application/pdf",
                       make_pdf([["Fetched PDF text."]], title="Remote paper"))
        elif path == "/redirect":
            self._send(302, "text/plain", b"", {"Location": "/page.html"})
        elif path == "/missing":
            self._send(404, "text/html", b"<p>nope</p>")
        elif path == "/boom":
            self._send(500, "text/plain", b"server error")
        elif path == "/declared-huge":  # claims 30 MB: refused before the body is read
            self._send(200, "text/plain", b"tiny", {"Content-Length": str(30 * 1024**2)},
                       length=False)
        elif path == "/stream-huge":
            self._send(200, "text/plain", b"a" * 50_000, length=False)
        elif path == "/binary":
            self._send(200, "application/octet-stream", bytes(range(256)) * 10)
        elif path == "/empty":
            self._send(200, "text/html", b"<html><body><nav>only chrome</nav></body></html>")
        elif path == "/slow":
            time.sleep(2)
            self._send(200, "text/plain", b"late")
        else:
            self._send(404, "text/plain", b"no route")



# -- from test_mcp_server --------------------


@asynccontextmanager
async def mcp_stdio_session(data_dir: Path, errlog: Any) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "hive_mind.mcp_server"], cwd=str(data_dir),
        env={"HIVE_MIND_DATA_DIR": str(data_dir), "HIVE_MIND_EMBEDDING_PROVIDER": "test",
             "HF_HUB_OFFLINE": "1",
             "PYTHONPATH": str(Path(__file__).resolve().parents[1])},  # this checkout's code
    )
    async with stdio_client(params, errlog=errlog) as (read, write), \
            ClientSession(read, write, read_timeout_seconds=60) as session:
        await session.initialize()
        yield session


class McpClient:
    """A synchronous MCP client: the stdio session lives in a portal thread."""

    def __init__(self, portal: anyio.from_thread.BlockingPortal, session: ClientSession,
                 data_dir: Path) -> None:
        self.portal, self.session, self.data_dir = portal, session, data_dir

    def call(self, name: str, args: dict[str, Any] | None = None) -> CallToolResult:
        result = self.portal.call(self.session.call_tool, name, args or {})
        assert isinstance(result, CallToolResult)
        assert len(result.content) == 1 and result.content[0].type == "text"
        return result

    def text(self, name: str, args: dict[str, Any] | None = None) -> str:
        result = self.call(name, args)
        assert not result.is_error, result.content[0].text
        return result.content[0].text

    def json(self, name: str, args: dict[str, Any] | None = None) -> Any:
        return json.loads(self.text(name, args))

    def error(self, name: str, args: dict[str, Any] | None = None) -> str:
        result = self.call(name, args)
        text = result.content[0].text
        assert result.is_error, f"expected an error from {name}, got {text}"
        assert "\n" not in text and "Traceback" not in text
        return text

    def read(self, uri: str) -> Any:
        result = self.portal.call(self.session.read_resource, uri)
        (content,) = result.contents
        assert content.mime_type == "application/json"
        return json.loads(content.text)

    def frames(self, workspace: str | None = None) -> int:
        if workspace:
            return int(self.read(f"memory://workspace/{workspace}")["frames"])
        return int(self.read("memory://personal/stats")["frames"]["total"])

    def recall(self, query: str, **args: Any) -> list[dict[str, Any]]:
        text = self.text("recall_memory", {"query": query, **args})
        return [] if text.startswith("No memories found") else json.loads(text)


# -- the product's indexing path (retrieval tests) --------------------------------------------

async def cognify(db: Database, embedder: Embedder, *frames: NewFrame) -> list[int]:
    """Save ``frames`` (:class:`mind.frames.model.NewFrame`) and index the mind file's outbox
    the way the product does: a ``SaveFrames`` op through the mind's single-writer actor (the
    handler table, a group commit), the cognify jobs of the outbox
    (:func:`workers.followups.cognify_jobs`) each run as a worker runs it
    (:func:`workers.cognify.run_index_job`: entity and relation extraction, one batched
    embedding) and its ``ApplyIndex`` op applied by the actor (vectors, the knowledge graph,
    supersession pairs through the mind's vector index). The actor writes through its own
    connection, as another process on the data dir would; ``db`` (the test's) sees the commits.
    Returns the saved frames' ids, in order."""
    actor = MindActor(await Mind.open(db.path), OP_HANDLERS)
    batcher = EmbeddingBatcher(embedder)
    try:
        ids: list[int] = []
        if frames:
            new = [ops.NewFrameOp(**{k: v for k, v in asdict(f).items() if v is not None})
                   for f in frames]
            saved = await actor.submit(ops.SaveFrames(mind_id=PERSONAL_MIND, frames=new))
            ids = [f.id for f in expect(saved, FramesSaved).frames]
        waiting = [p.frame_id for p in await actor.mind.outbox.pending(1_000_000)]
        outbox = cognify_jobs(PERSONAL_MIND, await pending_items(actor.mind, waiting),
                              await fingerprint_hint(actor.mind), COGNIFY_BATCH_FRAMES)
        for job in outbox:
            await actor.submit(await run_index_job(job, batcher))
        return ids
    finally:
        await batcher.close()
        await actor.stop()
