"""Whether remote clients may make the server read its own disk or fetch URLs.

``POST /v1/harvest {"path": ...}``, ``POST /v1/ingest`` with a path or URL, and the MCP tools
``harvest_import(file_path=...)`` / ``ingest_source`` served over HTTP would otherwise read any
file the server process can read (or fetch any URL it can reach) for whoever holds the API
token. ``HIVE_MIND_API_SERVER_READS`` decides; unset, they are allowed only while the server
listens on a loopback address (the user's own machine), and refused when it is exposed.
Refused requests get ``server_reads_disabled`` (HTTP 403) naming the upload alternative; raw
text is still ingested — through a private temp file, so no client string becomes a path.
MCP over stdio (a local agent's own process) always reads paths.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import re
import tempfile
from pathlib import Path

from hive_mind.contract import HostFacade, MindFacade
from hive_mind.harvest import detect_text_type
from hive_mind.shapes import IngestReport
from mind.errors import ConfigurationError, HiveMindError

_PATHISH = re.compile(r"^(?:~|/|\\|\.\.?[/\\]|[A-Za-z]:[/\\]|file:)", re.I)
_URLISH = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
UPLOAD_HINT = ("upload the file instead (POST /v1/harvest/upload, /v1/ingest/upload) or send "
               "its content inline")


class ServerReadsDisabledError(HiveMindError):
    """A remote client asked the server to read a path or fetch a URL, which is off."""

    code = "server_reads_disabled"
    status = 403


def is_loopback(host: str) -> bool:
    if host.strip().lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def reads_allowed(setting: bool | None, bind_host: str) -> bool:
    """The setting when given; else only when the server listens on loopback."""
    return setting if setting is not None else is_loopback(bind_host)


def refuse(what: str) -> ServerReadsDisabledError:
    return ServerReadsDisabledError(
        f"this server does not read {what} for clients (HIVE_MIND_API_SERVER_READS is off "
        f"while it listens beyond loopback); {UPLOAD_HINT}")


def text_only_kind(content: str, type_hint: str) -> str:
    """The ingest type of ``content`` taken as the document's text, refusing what the server
    would read instead: URLs, ``pdf`` (always a file), single-line path-like strings. Decided
    from the string alone: no file-system check, so answers reveal nothing about the disk."""
    text = content.strip()
    single = "\n" not in text
    if type_hint == "url" or (single and _URLISH.match(text)):
        raise refuse("URLs")
    if type_hint == "pdf":
        raise refuse("PDF files from its disk")
    if single and (_PATHISH.match(text) or (not re.search(r"\s", text) and (
            "/" in text or "\\" in text or re.search(r"\.[A-Za-z0-9]{1,10}$", text)))):
        raise refuse(f"paths ({text[:80]!r} looks like one)")
    return type_hint if type_hint in ("markdown", "plaintext") else detect_text_type(text)


async def ingest_text(hm: HostFacade, content: str, type_hint: str, *,
                      importance: str = "normal", tags: list[str] | None = None,
                      workspace: str | None = None, wait: bool = True) -> IngestReport:
    """Ingest ``content`` as the document's text only (see :func:`text_only_kind`), through a
    private temp file named by the text's digest (document adapters key items by file name:
    the same text twice is one document, two texts are two); the result reports the detected
    type like a normal ingest."""
    kind = text_only_kind(content, type_hint)
    suffix = ".md" if kind == "markdown" else ".txt"
    digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    with tempfile.TemporaryDirectory(prefix="hive-mind-ingest-") as folder:
        target = Path(folder) / f"text-{digest}{suffix}"
        await asyncio.to_thread(target.write_text, content, "utf-8")
        # shown as "inline:text", never as the temp path (and never re-read by auto-sync)
        summary = await hm.run_ingest(str(target), type_hint=kind, label="inline:text",
                                      importance=importance, tags=tags, workspace=workspace,
                                      wait=wait)
    return summary.as_dict()


async def ingest(hm: MindFacade, content: str, type_hint: str, *, server_reads: bool,
                 importance: str = "normal", tags: list[str] | None = None,
                 workspace: str | None = None, wait: bool = True) -> IngestReport:
    """A client's ingest: as the facade does it where server reads are allowed, else as text
    only (:func:`ingest_text`, on the facade of the process that holds the minds). The REST
    route and the MCP tool both call this."""
    if server_reads:
        return await hm.ingest(content, type_hint=type_hint, importance=importance, tags=tags,
                               workspace=workspace, wait=wait)
    if not isinstance(hm, HostFacade):
        raise ConfigurationError("a client of another server cannot refuse server reads: "
                                 "that server decides")
    return await ingest_text(hm, content, type_hint, importance=importance, tags=tags,
                             workspace=workspace, wait=wait)
