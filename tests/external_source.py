"""A real local HTTP server speaking the external-source protocol of ``mind/retrieval/external.py``."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DOC = {
    "id": "doc-1",
    "title": "Runbook",
    "content": "Deploy pipeline runbook from the wiki",
    "score": 0.8,
    "type": "wiki",
    "url": "https://wiki.example/runbook",
}


@dataclass
class Behaviour:
    status: int = 200
    results: list[dict[str, Any]] = field(default_factory=lambda: [dict(DOC)])
    raw: bytes | None = None  # sent verbatim instead of {"results": ...}
    delay: float = 0.0
    drip: float = 0.0  # seconds between the body's bytes (a slow source)
    headers: dict[str, str] = field(default_factory=dict)


class FakeSearchServer:
    def __init__(self) -> None:
        self.behaviour = Behaviour()
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                server.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": json.loads(body)}
                )
                b = server.behaviour
                if b.delay:
                    server.release.wait(b.delay)
                payload = b.raw if b.raw is not None else json.dumps({"results": b.results}).encode()
                try:
                    self.send_response(b.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in b.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    if not b.drip:
                        self.wfile.write(payload)
                    for i in range(len(payload) if b.drip else 0):
                        self.wfile.write(payload[i:i + 1])
                        self.wfile.flush()
                        if server.release.wait(b.drip):
                            break
                except OSError:  # the client gave up (timeout test)
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeSearchServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


