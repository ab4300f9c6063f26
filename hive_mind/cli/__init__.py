"""The ``hive-mind`` command line (docs/cli.md), built with Typer.

``main(argv) -> int`` is the console entry point. Errors are one line on stderr
(``hive-mind: error: <message>``), never a traceback (unless ``--debug``). Exit codes:
0 ok; 2 bad input or usage (validation, unknown workspace, bad option, bad configuration);
1 runtime failures (Redis down, storage or embedding errors, anything unexpected);
130 interrupted.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence

import typer

try:  # Typer ≥ 0.20 vendors its own click; older releases use the click package
    from typer._click import exceptions as click_exc
    from typer._click.core import Command
except ImportError:  # pragma: no cover
    from click import exceptions as click_exc  # type: ignore[no-redef]
    from click.core import Command  # type: ignore[assignment]

from mind.errors import (
    ConfigurationError,
    ConflictError,
    HiveMindError,
    NotFoundError,
    ValidationError,
)

PROG = "hive-mind"
USAGE_ERRORS = (ValidationError, NotFoundError, ConflictError, ConfigurationError)


def exit_code(exc: BaseException) -> int:
    """2 for the caller's mistakes, 1 for failures of the system."""
    return 2 if isinstance(exc, USAGE_ERRORS) else 1


def error(text: str) -> None:
    from hive_mind.cli.common import printable

    one_line = printable(" ".join(str(text).split())) or "failed"
    print(f"{PROG}: error: {one_line}", file=sys.stderr, flush=True)


def _with_hint(exc: HiveMindError) -> str:
    """The error's message, and for an unknown workspace how to create it."""
    from hive_mind.workspaces import unknown_workspace

    text = str(exc) or type(exc).__name__
    missing = unknown_workspace(exc)
    if missing is None:
        return text
    return (f"{text}. Workspaces are never created implicitly: create it with `hive-mind "
            f"workspace create {shlex.quote(missing)}` (`hive-mind workspace list` shows "
            "the existing ids)")


def command(args: Sequence[str] | None = None) -> Command:
    """The click command behind the Typer app (docs generation uses it too): the whole tree,
    or, given a command line, the part it runs (:func:`hive_mind.cli.app.build`)."""
    from hive_mind.cli.app import build, invoked

    return typer.main.get_command(build(None if args is None else invoked(args)))


def main(argv: Sequence[str] | None = None, *, process: bool | None = None) -> int:
    """Run one command line (default ``sys.argv``). ``process``: this call is the whole
    process — the console script, ``python -m hive_mind`` — (default: when ``argv`` is None),
    so its startup may pause the garbage collector (:func:`hive_mind.cli.common.starting`)."""
    from hive_mind.cli.common import pause_gc_while_starting, starting

    whole_process = argv is None if process is None else process
    if whole_process:
        pause_gc_while_starting()
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    try:
        with starting():
            cli = command(args)
        rv = cli.main(args=args, prog_name=PROG, standalone_mode=False)
        return rv if isinstance(rv, int) else 0
    except click_exc.NoArgsIsHelpError:
        return 2  # the help was already printed
    except click_exc.UsageError as exc:
        error(exc.format_message())
        return 2
    except click_exc.ClickException as exc:
        error(exc.format_message())
        return exc.exit_code or 1
    except (typer.Abort, getattr(click_exc, "Abort", typer.Abort)):
        error("aborted")
        return 1
    except HiveMindError as exc:
        if debug:
            raise
        error(_with_hint(exc))
        return exit_code(exc)
    except KeyboardInterrupt:
        error("interrupted")
        return 130
    except Exception as exc:
        if debug:
            raise
        error(f"unexpected {type(exc).__name__}: {exc} (run with --debug for a traceback)")
        return 1


__all__ = ["command", "exit_code", "main"]
