"""``token create|list|revoke``: tokens scoped to workspaces (:mod:`hive_mind.tokens`).

Against the data dir (one host), every shard (``HIVE_MIND_SHARDS``, with the admin token), or a
server's admin API (``--url``, with the admin token)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from hive_mind.cli.common import JsonOpt, kv_table, output, run, state, table

app = typer.Typer(help="Tokens that open only the workspaces they name (the API token stays "
                       "the admin's).", no_args_is_help=True)


async def _act(ctx: typer.Context, method: str, path: str = "", **body: Any) -> Any:
    from hive_mind.token_admin import TokenAdmin, remote_tokens

    settings = state(ctx).settings()
    if settings.url:
        return await remote_tokens(settings, method, path, **({"json": body} if body else {}))
    auth = None if settings.security.api_token is None else \
        f"Bearer {settings.security.api_token.get_secret_value()}"
    admin = TokenAdmin(settings, auth)
    if method == "POST":
        return await admin.create(body["workspaces"], read_only=body["read_only"],
                              expires=body["expires"], label=body["label"])
    if method == "DELETE":
        return await admin.revoke(path.strip("/"))
    return {"tokens": await admin.listing()}


@app.command("create")
def create(
    ctx: typer.Context,
    workspace: Annotated[list[str], typer.Option(
        "--workspace", "-w", metavar="ID",
        help="A workspace id it opens (repeat for several; `personal`: the personal mind).")],
    read_only: Annotated[bool, typer.Option("--read-only", help="Reads only.")] = False,
    expires: Annotated[str | None, typer.Option(
        "--expires", metavar="WHEN", help="`30d`, `12h`, `90m` from now, or an ISO time.")]
    = None,
    label: Annotated[str | None, typer.Option("--label", metavar="TEXT",
                                              help="A name to list it by.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Make a token for these workspaces; it is printed once (only its hash is stored)."""
    made = run(_act(ctx, "POST", workspaces=workspace, read_only=read_only, expires=expires,
                    label=label))
    output(as_json, made, lambda c: c.print(kv_table(f"Token {made['id']}", made)))


@app.command("list")
def list_(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """The scoped tokens: id, minds, read-only, expiry (never the tokens)."""
    data = run(_act(ctx, "GET"))
    output(as_json, data, lambda c: c.print(table(
        "Scoped tokens", ["id", "minds", "read-only", "expires", "label"],
        ([t["id"], ", ".join(t["minds"]), "yes" if t["read_only"] else "no",
          t["expires"] or "never", t.get("label") or ""] for t in data["tokens"]))))


@app.command("revoke")
def revoke(ctx: typer.Context,
           token_id: Annotated[str, typer.Argument(metavar="ID", help="The token's id.")],
           as_json: JsonOpt = False) -> None:
    """Revoke a token: it opens nothing from now on."""
    gone = run(_act(ctx, "DELETE", f"/{token_id}"))
    output(as_json, gone, lambda c: c.print(f"revoked {token_id}", markup=False))


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="token")
