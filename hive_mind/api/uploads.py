"""Uploaded or inline harvest/ingest input → a private temp file the facade can read.

Only the file's extension is taken from a caller-given name (adapters dispatch on it); the
rest of the path is ours, so no caller string becomes a path."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import UploadFile
from starlette.concurrency import run_in_threadpool

_SUFFIX = re.compile(r"^\.[a-z0-9]{1,10}$")
DEFAULT_SUFFIX = {"markdown": ".md", "plaintext": ".txt", "pdf": ".pdf", "auto": ".txt"}
CHUNK = 1 << 20


def safe_suffix(filename: str | None, kind: str) -> str:
    suffix = Path(filename or "").suffix.lower()
    return suffix if _SUFFIX.match(suffix) else DEFAULT_SUFFIX.get(kind, ".json")


@asynccontextmanager
async def temp_input(kind: str, filename: str | None, *, data: str | None = None,
                     upload: UploadFile | None = None) -> AsyncIterator[Path]:
    """A temp file holding ``data`` (text) or the ``upload``; removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="hive-mind-upload-"))
    target = folder / f"input{safe_suffix(filename, kind)}"
    try:
        if upload is not None:
            with target.open("wb") as out:
                while chunk := await upload.read(CHUNK):
                    await run_in_threadpool(out.write, chunk)
        else:
            await run_in_threadpool(target.write_text, data or "", "utf-8")
        yield target
    finally:
        await run_in_threadpool(shutil.rmtree, folder, True)
