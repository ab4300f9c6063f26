"""Shared plumbing of the CLI: global state, settings, opening the facade, output helpers.

Machine output (``--json``) is one JSON document on stdout; human output is rich tables and
panels on stdout; progress bars and logs go to stderr. User text is never parsed as rich markup.
``rich`` is imported by the helpers that draw, so a ``--json`` command never loads it.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
import re
import sys
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from mind.errors import ConfigurationError, ValidationError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID
    from rich.table import Table
    from rich.text import Text

    from hive_mind.contract import MindFacade
    from hive_mind.settings import Settings
    from hive_mind.shapes import JsonInput

T = TypeVar("T")

# -- options shared by many commands --------------------------------------------------------

JsonOpt = Annotated[bool, typer.Option(
    "--json", metavar="", help="Print one JSON document on stdout.")]
WorkspaceOpt = Annotated[
    str | None,
    typer.Option("--workspace", "-w", metavar="ID",
                 help="Workspace id (default: the personal mind)."),
]
IdempotencyKeyOpt = Annotated[str | None, typer.Option(
    "--idempotency-key", metavar="KEY",
    help="Name this write (e.g. a UUID): repeating it with the same key returns the first "
         "result and writes nothing, even after a crash; the same key with other arguments "
         "is an error. Use it to retry after an error that says the write may have been "
         "applied.")]


# -- global state ---------------------------------------------------------------------------

@dataclass
class CliState:
    """What the global options collected; commands turn it into :class:`Settings`."""

    overrides: dict[str, object] = field(default_factory=dict)
    debug: bool = False
    log_level: str | None = None
    _settings: Settings | None = None

    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = settings_from(self.overrides)
        return self._settings


def settings_from(overrides: dict[str, object]) -> Settings:
    """Environment and the data dir's ``.env`` first, CLI flags on top; bad values become one
    clean error."""
    import pydantic

    from hive_mind.settings import env_var, load_settings

    try:
        return load_settings(**overrides)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        env = env_var(tuple(first.get("loc", ())))
        raise ConfigurationError(f"invalid configuration {env}: {first.get('msg')}") from None


def state(ctx: typer.Context) -> CliState:
    root = ctx.find_root()
    if not isinstance(root.obj, CliState):
        root.obj = CliState()
    return root.obj


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Logs to whatever ``sys.stderr`` is right now (tests swap it per test)."""

    @property
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, value: object) -> None:
        pass


_HANDLER = _StderrHandler()
_HANDLER.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))


class _NoticeHandler(_StderrHandler):
    """Shows the records marked ``notice`` (what the user should know about: the embedding
    model prepared once per machine, a backlog an earlier process left unindexed) as their
    bare message."""

    def filter(self, record: logging.LogRecord) -> bool:
        return bool(getattr(record, "notice", False))


_NOTICES = _NoticeHandler()
_NOTICES.setFormatter(logging.Formatter("%(message)s"))
_NOTICE_LOGGERS = ("mind.embeddings.onnx_export", "workers.runtime")


def configure_cli_logging(level: str | None) -> None:
    """Warnings only for short commands (stdout stays clean); processes pick INFO. With a
    terminal on stderr, notices of long waits are shown whatever the level."""
    root = logging.getLogger()
    if _HANDLER not in root.handlers:
        root.addHandler(_HANDLER)
    chosen = getattr(logging, (level or "WARNING").upper(), logging.WARNING)
    root.setLevel(chosen)
    _HANDLER.setLevel(chosen)
    for name in _NOTICE_LOGGERS:
        logger = logging.getLogger(name)
        if sys.stderr.isatty() and chosen > logging.INFO:  # else the log shows them anyway
            logger.setLevel(logging.INFO)
            if _NOTICES not in logger.handlers:
                logger.addHandler(_NOTICES)
        else:
            logger.setLevel(logging.NOTSET)
            logger.removeHandler(_NOTICES)
    # arq logs every connection retry; a short command reports the final error in one line
    logging.getLogger("arq").setLevel(logging.ERROR if level is None else logging.NOTSET)


# -- a process starting -----------------------------------------------------------------------

_GC_WHILE_STARTING = {"pause": False}  # True once main() runs as the process (not a test's call)


def pause_gc_while_starting() -> None:
    """Make :func:`starting` pause the collector: called by ``main()`` when it is the process."""
    _GC_WHILE_STARTING["pause"] = True


@contextlib.contextmanager
def starting() -> Iterator[None]:
    """A block that imports and builds what the process keeps (modules, classes, pydantic
    schemas, the command tree): hundreds of thousands of long-lived objects, which Python's
    cyclic collector would walk again and again as they pile up — a third of a one-shot
    command's CPU (bench/product/cli_latency.py --importtime). In a CLI process, collection pauses
    for the block, and what the block built is then frozen (``gc.freeze``: left out of later
    collections, the one at exit included) before collection resumes, so a long command
    collects its own garbage as usual. A no-op when ``main()`` is called in another process
    (tests): freezing their objects would keep their cycles forever."""
    if not _GC_WHILE_STARTING["pause"]:
        yield
        return
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


# -- running the facade ---------------------------------------------------------------------

def run(coro: Awaitable[T]) -> T:
    """Run one coroutine to completion (each CLI command is one event loop)."""
    return asyncio.run(coro)  # type: ignore[arg-type]


async def open_facade(settings: Settings, *, one_shot: bool = False) -> MindFacade:
    from hive_mind.facade import HiveMind

    try:
        return await HiveMind.open(settings, one_shot=one_shot)
    except ModuleNotFoundError as exc:
        if settings.url and "remote" in str(exc):
            raise ConfigurationError(
                "client mode (--url / HIVE_MIND_URL) is not available in this build") from None
        raise


def with_facade(ctx: typer.Context, action: Callable[[MindFacade], Awaitable[T]], *,
                writes: bool = False, bulk: bool = False) -> T:
    """Open the facade, run ``action(hm)``, and (for writes in embedded mode) wait until the
    background indexing this process caused is applied, so a later ``recall`` finds it.

    A write that is not ``bulk`` (one save, one entity) embeds its few texts at once: the
    micro-batcher's wait for a fuller batch (``HIVE_MIND_BATCHER_MAX_WAIT_MS``) would only
    delay the answer, as nothing else in this process adds to the batch. A command that is not
    ``bulk`` is one-shot: beside another process keeping the mind's writer open (an import,
    ``serve``, an MCP server) the frames it saves are indexed by that process, which has the
    model loaded, and the command returns once they are committed (:mod:`actors.handoff`)."""
    settings = state(ctx).settings()
    if writes and not bulk:
        settings = settings.replace(batcher_max_wait_ms=0.0)

    async def go() -> T:
        with starting():  # imports the facade and the runtime
            hm = await open_facade(settings, one_shot=not bulk)
        async with hm:
            result = await action(hm)
            if writes:
                await hm.wait_idle()
            return result

    return run(go())


# -- output ---------------------------------------------------------------------------------

def console() -> Console:
    """Human output on stdout; piped output is 120 columns wide (or $COLUMNS), not 80."""
    from rich.console import Console

    out = Console(file=sys.stdout, highlight=False, soft_wrap=False)
    if not out.is_terminal and "COLUMNS" not in os.environ:
        out.width = 120
    return out


def err_console() -> Console:
    from rich.console import Console

    return Console(file=sys.stderr, highlight=False)


def emit_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


# C0/C1 controls (ESC would let stored text drive the terminal) and bidi overrides
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """User text made safe for a terminal: newlines and tabs become spaces, every other control
    or bidi-override character is shown escaped (``\\x1b``), never emitted raw."""
    return _UNSAFE.sub(
        lambda m: " " if m.group() in "\n\t" else m.group().encode("unicode_escape").decode(),
        text)


def cell(value: object, limit: int | None = None) -> Text:
    """A table cell that never interprets markup nor emits control characters (see
    :func:`printable`); ``limit`` shortens long text."""
    from rich.text import Text

    if value is None:
        return Text("-", style="dim")
    if isinstance(value, (dict, list)):
        value = json.dumps(value, ensure_ascii=False) if value else "-"
    text = printable(str(value))
    if limit and len(text) > limit:
        text = text[: limit - 1] + "…"
    return Text(text)


_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?")


def table(title: str | None, columns: Iterable[str], rows: Iterable[Iterable[object]],
          *, limits: dict[str, int] | None = None, whole: Iterable[str] = ()) -> Table:
    """Columns of timestamps, and those named in ``whole``, are never wrapped: the others
    fold first to make room."""
    from rich.table import Table

    cols = list(columns)
    data = [list(row) for row in rows]
    keep = set(whole) | {name for i, name in enumerate(cols) if _timestamps(r[i] for r in data)}
    out = Table(title=title, title_justify="left", show_lines=False)
    for name in cols:
        out.add_column(name, overflow="fold", no_wrap=name in keep)
    for row in data:
        out.add_row(*(cell(v, (limits or {}).get(c)) for c, v in zip(cols, row, strict=True)))
    return out


def _timestamps(values: Iterable[object]) -> bool:
    """Whether a column holds timestamps (and nothing else but blanks)."""
    present = [v for v in values if v is not None and v != ""]
    return bool(present) and all(isinstance(v, str) and _TIMESTAMP.fullmatch(v)
                                 for v in present)


def kv_table(title: str | None, data: Mapping[str, object], *, skip: Iterable[str] = ()
             ) -> Table:
    """A two-column key/value table of a flat dict."""
    from rich.table import Table
    from rich.text import Text

    skipped = set(skip)
    out = Table(title=title, title_justify="left", show_header=False)
    out.add_column("key", style="bold")
    out.add_column("value", overflow="fold")
    for key, value in data.items():
        if key not in skipped:
            out.add_row(Text(str(key)), cell(value))
    return out


def output(as_json: bool, data: object, human: Callable[[Console], None]) -> None:
    """``--json`` → the data as JSON; otherwise call ``human(console)``."""
    if as_json:
        emit_json(data)
    else:
        human(console())


def message(text: str, *, style: str = "green") -> Callable[[Console], None]:
    def show(c: Console) -> None:
        from rich.text import Text

        c.print(Text(text, style=style))

    return show


def parse_properties(pairs: list[str] | None, raw_json: str | None) -> JsonInput:
    """``--property key=value`` (repeatable) merged over ``--properties '{json}'``."""
    props: JsonInput = {}
    if raw_json:
        try:
            loaded = json.loads(raw_json)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"--properties is not valid JSON: {exc.msg}") from None
        if not isinstance(loaded, dict):
            raise ValidationError("--properties must be a JSON object")
        props.update(loaded)
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValidationError(f"--property must be KEY=VALUE, got {pair!r}")
        props[key.strip()] = value
    return props


class CountProgress:
    """Items done of items due, as a rich progress bar on stderr (nothing when disabled):
    called with ``(done, total)``."""

    def __init__(self, label: str, enabled: bool) -> None:
        self.label = label
        self.enabled = enabled
        self.progress: Progress | None = None
        self.task: TaskID | None = None

    def __enter__(self) -> CountProgress:
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            self.progress = Progress(self.label, BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), console=err_console())
            self.progress.start()
            self.task = self.progress.add_task(self.label, total=None)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()

    def __call__(self, done: int, total: int) -> None:
        if self.progress is not None:
            assert self.task is not None
            self.progress.update(self.task, completed=done, total=total)
