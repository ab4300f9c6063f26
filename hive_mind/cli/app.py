"""The ``hive-mind`` Typer application: global options and the command tree.

Global options override the environment (``HIVE_MIND_*`` and ``.env``, read by
:class:`~hive_mind.settings.Settings`); every command has ``--help`` text and ``--json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Final, Literal, get_args

import typer

from hive_mind.cli import context as context_cmds
from hive_mind.cli import harvest as harvest_cmds
from hive_mind.cli import jobs as jobs_cmds
from hive_mind.cli import knowledge as knowledge_cmds
from hive_mind.cli import maintenance as maintenance_cmds
from hive_mind.cli import memory as memory_cmds
from hive_mind.cli import ops as ops_cmds
from hive_mind.cli import workspace as workspace_cmds
from hive_mind.cli.common import CliState, configure_cli_logging
from hive_mind.settings import Provider

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]
PROVIDERS: Final = get_args(Provider)
LOG_LEVELS: Final = get_args(LogLevel)

HELP = """Persistent memory for AI agents.

Each mind (personal, and one per workspace) is one SQLite file under the data dir. Without a
Redis URL the CLI runs embedded: it does the indexing itself and waits for it before exiting.
With --url it is a client of a running `hive-mind serve`.
"""

app = typer.Typer(
    name="hive-mind", help=HELP, no_args_is_help=True, add_completion=False,
    rich_markup_mode="markdown",
    pretty_exceptions_enable=False, context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def global_options(
    ctx: typer.Context,
    data_dir: Annotated[Path | None, typer.Option(
        "--data-dir", metavar="DIR",
        help="Where mind files live (env HIVE_MIND_DATA_DIR, default ~/.hive-mind).")] = None,
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
    overrides = {"data_dir": data_dir, "redis_url": redis_url, "url": url,
                 "host_id": host_id, "embedding_provider": embedding_provider}
    ctx.obj = CliState(overrides={k: v for k, v in overrides.items() if v is not None},
                       debug=debug, log_level=log_level)
    configure_cli_logging(log_level)


memory_cmds.register(app)
app.add_typer(harvest_cmds.app, name="harvest")
app.add_typer(knowledge_cmds.app, name="entities")
app.add_typer(context_cmds.identity_app, name="identity")
app.add_typer(context_cmds.awareness_app, name="awareness")
app.add_typer(workspace_cmds.app, name="workspace")
app.add_typer(maintenance_cmds.app, name="maintenance")
app.add_typer(jobs_cmds.app, name="jobs")
ops_cmds.register(app)
