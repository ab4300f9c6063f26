"""``jobs`` (list), ``jobs retry ID|--all``, ``jobs drop ID|--all``: the job queue and its dead
letters, in every mode (:mod:`workers.jobs_admin`; over ``--url``, the server's)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from hive_mind.cli.common import JsonOpt, kv_table, output, table, with_facade

if TYPE_CHECKING:
    from rich.console import Console

    from hive_mind.contract import MindFacade

HELP = """Queued, running and failed jobs per mind; retry or drop dead letters.

Embedded, a CLI process has no queue of its own: `jobs` shows what each mind still has to
index (`pending_index`, the outbox every process shares) and the dead letters of every process
on the data dir (`serve`, `mcp`, the CLI). `jobs retry` runs a dead letter again in this
process and waits for it. Distributed, it shows the Redis queues, jobs in progress and the
dead-letter list; `jobs retry` re-enqueues the stored job. With --url, the server's jobs.
"""

app = typer.Typer(help=HELP, invoke_without_command=True)

IdArg = Annotated[str | None, typer.Argument(
    metavar="DEAD_LETTER_ID", help="A dead letter's id (32 hex digits, from `hive-mind jobs`).",
    show_default=False)]
AllOpt = Annotated[bool, typer.Option("--all", metavar="", help="Every dead letter.")]


@app.callback()
def jobs(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """List queued, running and failed jobs per mind."""
    if ctx.invoked_subcommand is not None:
        return

    async def act(hm: MindFacade) -> dict[str, Any]:
        return dict(await hm.jobs())

    report = with_facade(ctx, act)
    output(as_json, report, lambda c: render(c, report))


def render(c: Console, report: dict[str, Any]) -> None:
    c.print(kv_table(f"Jobs ({report.get('mode')})", {
        k: report.get(k) for k in ("queued", "running", "dead_letters", "note")
        if report.get(k) is not None}))
    c.print(table("Per mind", ["mind", "pending_index", "queued", "running", "dead_letters"],
                  ([m.get("id"), m.get("pending_index"), m.get("queued"), m.get("running"),
                    m.get("dead_letters")] for m in report.get("minds", []))))
    if report.get("running_jobs"):
        c.print(table("Running", ["job", "kind", "mind"],
                      ([j.get("job_id"), j.get("kind"), j.get("mind_id")]
                       for j in report["running_jobs"])))
    failures = report.get("failures") or []
    if failures:
        c.print(table("Dead letters (newest first)",
                      ["id", "kind", "mind", "tries", "at", "retryable", "error"],
                      ([f.get("id"), f.get("kind"), f.get("mind_id"), f.get("tries"),
                        f.get("at"), "yes" if f.get("retryable") else "no", f.get("error")]
                       for f in failures), limits={"error": 80}))
    else:
        c.print("No dead letters.")


def _act(ctx: typer.Context, method: str, dead_letter_id: str | None, every: bool,
         as_json: bool) -> None:
    async def act(hm: MindFacade) -> dict[str, Any]:
        if method == "retry_jobs":
            return dict(await hm.retry_jobs(dead_letter_id, all_failed=every))
        return dict(await hm.drop_jobs(dead_letter_id, all_failed=every))

    result = with_facade(ctx, act, writes=method == "retry_jobs")
    key = "retried" if method == "retry_jobs" else "dropped"

    def human(c: Console) -> None:
        rows = result.get(key) or []
        if not rows:
            c.print(f"Nothing {key}.")
        elif isinstance(rows[0], dict):
            c.print(table(key.capitalize(), ["id", "job", "status"],
                          ([r.get("id"), r.get("job_id"), r.get("status")] for r in rows)))
        else:
            c.print(table(key.capitalize(), ["id"], ([r] for r in rows)))

    output(as_json, result, human)


@app.command("retry")
def retry(ctx: typer.Context, dead_letter_id: IdArg = None, every: AllOpt = False,
          as_json: JsonOpt = False) -> None:
    """Run a dead letter again (or --all): an index job for its frames still pending, a
    scheduled task under its per-day id, a Redis job with its stored payload."""
    _act(ctx, "retry_jobs", dead_letter_id, every, as_json)


@app.command("drop")
def drop(ctx: typer.Context, dead_letter_id: IdArg = None, every: AllOpt = False,
         as_json: JsonOpt = False) -> None:
    """Forget a dead letter (or --all). Frames it named stay in the outbox, where a reconcile
    finds them."""
    _act(ctx, "drop_jobs", dead_letter_id, every, as_json)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="jobs")
