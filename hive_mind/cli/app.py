"""The ``hive-mind`` Typer application: global options and the command tree.

Global options override the environment (``HIVE_MIND_*`` and the data dir's ``.env``, read by
:func:`~hive_mind.settings.load_settings`); every command has ``--help`` text and ``--json``.

The tree is built per process by :func:`build`: a command line that names a command builds
(and imports the module of) that command's group only, so ``recall`` neither imports nor
builds ``serve``, ``harvest`` or the rest — a one-shot command answers sooner (issue #14).
Help of the whole tree, ``docs/cli.md`` and anything :func:`invoked` cannot tell build all of
it; ``app`` is that whole tree.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Final, Literal, get_args

import typer

from hive_mind.cli.common import CliState, configure_cli_logging
from vocabulary.enums import EmbeddingProviderName as Provider

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]
PROVIDERS: Final = get_args(Provider)
LOG_LEVELS: Final = get_args(LogLevel)

HELP = """Persistent memory for AI agents.

Each mind (personal, and one per workspace) is one SQLite file under the data dir. Without a
Redis URL the CLI runs embedded: it does the indexing itself and waits for it before exiting.
With --url it is a client of a running `hive-mind serve`.
"""

HELP_OPTIONS: Final = ("-h", "--help")
GROUPS: Final = (  # (top-level command names, the module that registers them), in --help order
    (("save", "recall", "ingest", "session"), "memory"),
    (("status", "serve", "ui", "worker", "mcp"), "ops"),
    (("harvest",), "harvest"),
    (("entities",), "knowledge"),
    (("identity", "awareness"), "context"),
    (("workspace",), "workspace"),
    (("maintenance",), "maintenance"),
    (("export", "backup", "restore"), "data"),
    (("jobs",), "jobs"),
    (("cluster",), "cluster"),
    (("token",), "token"),
    (("model",), "model"),
)


def global_options(
    ctx: typer.Context,
    data_dir: Annotated[Path | None, typer.Option(
        "--data-dir", metavar="DIR",
        help="Where mind files live (env HIVE_MIND_DATA_DIR, default ~/.hive-mind).")] = None,
    env_file: Annotated[Path | None, typer.Option(
        "--env-file", metavar="FILE",
        help="Read HIVE_MIND_* settings from FILE (env HIVE_MIND_ENV_FILE; default "
             "<data dir>/.env; a .env in the working directory is never read).")] = None,
    redis_url: Annotated[str | None, typer.Option(
        "--redis-url", metavar="URL",
        help="Redis for distributed mode (env HIVE_MIND_REDIS_URL; unset = embedded).")] = None,
    url: Annotated[str | None, typer.Option(
        "--url", metavar="URL",
        help="Client mode: URL of a running `hive-mind serve` (env HIVE_MIND_URL).")] = None,
    host_id: Annotated[str | None, typer.Option(
        "--host-id", metavar="ID",
        help="This mind host's queue id (env HIVE_MIND_HOST_ID, default local).")] = None,
    embedding_provider: Annotated[Provider | None, typer.Option(
        "--embedding-provider", metavar="NAME",
        help="Embedding provider: " + "|".join(PROVIDERS)
             + " (env HIVE_MIND_EMBEDDING_PROVIDER, default auto).")] = None,
    log_level: Annotated[LogLevel | None, typer.Option(
        "--log-level", case_sensitive=False, metavar="LEVEL",
        help="Log level on stderr: " + "|".join(LOG_LEVELS)
             + " (default WARNING; INFO for serve and worker).")] = None,
    debug: Annotated[bool, typer.Option(
        "--debug", metavar="", help="Show a traceback for unexpected errors.")] = False,
) -> None:
    """Global options apply to every command; flags override the environment."""
    overrides = {"data_dir": data_dir, "env_file": env_file, "redis_url": redis_url, "url": url,
                 "host_id": host_id, "embedding_provider": embedding_provider}
    ctx.obj = CliState(overrides={k: v for k, v in overrides.items() if v is not None},
                       debug=debug, log_level=log_level)
    configure_cli_logging(log_level)


def register(app: typer.Typer, module: str) -> None:
    """Import one module of :data:`GROUPS` and add its commands to ``app``."""
    if module == "memory":
        from hive_mind.cli.memory import register as add
    elif module == "ops":
        from hive_mind.cli.ops import register as add
    elif module == "harvest":
        from hive_mind.cli.harvest import register as add
    elif module == "knowledge":
        from hive_mind.cli.knowledge import register as add
    elif module == "context":
        from hive_mind.cli.context import register as add
    elif module == "workspace":
        from hive_mind.cli.workspace import register as add
    elif module == "maintenance":
        from hive_mind.cli.maintenance import register as add
    elif module == "data":
        from hive_mind.cli.data import register as add
    elif module == "jobs":
        from hive_mind.cli.jobs import register as add
    elif module == "cluster":
        from hive_mind.cli.cluster import register as add
    elif module == "model":
        from hive_mind.cli.model import register as add
    elif module == "token":
        from hive_mind.cli.token import register as add
    else:
        raise ValueError(f"no command module {module!r}")
    add(app)


def build(command: str | None = None) -> typer.Typer:
    """The Typer app: the global options and every command, or only the group of
    ``command`` (a top-level name of :data:`GROUPS`; ``""``: no command at all)."""
    app = typer.Typer(
        name="hive-mind", help=HELP, no_args_is_help=True, add_completion=False,
        rich_markup_mode="markdown", pretty_exceptions_enable=False,
        context_settings={"help_option_names": list(HELP_OPTIONS)},
    )
    app.callback()(global_options)
    for names, module in GROUPS:
        if command is None or command in names:
            register(app, module)
    return app


def invoked(args: Sequence[str]) -> str | None:
    """The top-level command ``args`` names (the first word after the global options and
    their values), or None when the whole tree is needed: no command, help asked before it,
    a name not in :data:`GROUPS` (click then reports it against the whole tree)."""
    root: Any = typer.main.get_command(build(""))
    takes_value = {name for param in root.params if not getattr(param, "is_flag", True)
                   for name in param.opts}
    rest = iter(args)
    for arg in rest:
        if arg in HELP_OPTIONS or arg == "--":
            return None
        if not arg.startswith("-"):
            return arg if any(arg in names for names, _ in GROUPS) else None
        if arg in takes_value:
            next(rest, None)
    return None


@functools.cache
def whole() -> typer.Typer:
    return build()


def __getattr__(name: str) -> Any:
    """``app``: the whole command tree, built on first use."""
    if name == "app":
        return whole()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
