"""A real ``hive-mind`` HTTP server on 127.0.0.1 (random port) in a background thread."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

from hive_mind.api import create_app
from hive_mind.server import bound_port, uvicorn_config
from hive_mind.settings import Settings


def server_settings(data_dir: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"data_dir": data_dir, "embedding_provider": "test",
                              "redis_url": None, "url": None, "api_token": None}
    values.update(overrides)
    return Settings(**values)


@contextmanager
def running_server(settings: Settings, facade: Any = None, timeout: float = 30.0,
                   bind_host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve ``create_app(settings, facade)`` (without a facade the app's lifespan opens one);
    yields the base URL. ``bind_host``: the address the app is told it serves on (it still
    listens on 127.0.0.1 only); ``port``: 0 for any free one."""
    app = create_app(settings, facade, bind_host=bind_host)
    server = uvicorn.Server(uvicorn_config(app, settings, "127.0.0.1", port,
                                           log_level="warning", lifespan="on",
                                           log_config=uvicorn.config.LOGGING_CONFIG))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{bound_port(server)}"
    finally:
        server.should_exit = True
        thread.join(timeout)
