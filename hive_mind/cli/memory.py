"""``save``, ``recall``, ``ingest`` and ``session state``: writing and finding memories."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from hive_mind.cli.common import (
    IdempotencyKeyOpt,
    JsonOpt,
    WorkspaceOpt,
    kv_table,
    output,
    printable,
    table,
    with_facade,
)
from vocabulary.enums import (
    FRAME_SOURCES,
    IMPORTANCES,
    INGEST_IMPORTANCES,
    INGEST_TYPES,
    RECALL_LANES,
    RECALL_PROFILES,
    FrameSource,
    Importance,
    IngestImportance,
    IngestType,
    RecallLanes,
    RecallProfile,
    Scope,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from hive_mind.contract import MindFacade


def save(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="The memory to save (one frame).")],
    importance: Annotated[Importance, typer.Option(
        "--importance", "-i", metavar="LEVEL",
        help="How much it matters: " + "|".join(IMPORTANCES) + ".")] = "normal",
    source: Annotated[FrameSource, typer.Option(
        "--source", metavar="SOURCE",
        help="Where it came from: " + "|".join(FRAME_SOURCES) + ".")] = "user_stated",
    session: Annotated[str | None, typer.Option(
        "--session", metavar="ID", help="Session (GOP) id; default save:<UTC date>.")] = None,
    at: Annotated[str | None, typer.Option(
        "--at", metavar="TIME",
        help="When it happened (ISO-8601 with a zone, e.g. 2024-05-01T12:00:00Z; default "
             "now): stored as created_at, what recall --since/--until filter on.")] = None,
    idempotency_key: IdempotencyKeyOpt = None,
    updates: Annotated[int | None, typer.Option(
        "--updates", metavar="ID", min=1,
        help="Save an update (P-frame) of the memory ID, an I-frame, in its session: recall "
             "ranks the update as current and ID as outdated.")] = None,
    refs: Annotated[str | None, typer.Option(
        "--refs", metavar="ID,ID",
        help="Save a cross-reference (B-frame) to these memories of the same mind.")] = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Save one memory; waits until it is indexed so a following `recall` finds it.

    Beside another process writing the mind (an import, `serve`, an MCP server) it returns once
    the memory is committed, found by keyword at once, and that process indexes it."""
    ref_ids = None if refs is None else _frame_ids(refs, "--refs")

    async def act(hm: MindFacade) -> dict[str, Any]:
        return dict(await hm.save(text, importance=importance, source=source,
                                  workspace=workspace, session=session, created_at=at,
                                  idempotency_key=idempotency_key, updates=updates,
                                  refs=ref_ids))

    frame = with_facade(ctx, act, writes=True)

    def human(c: Console) -> None:
        verb = "Saved" if frame.get("created", True) else "Already known (deduplicated)"
        if frame.get("replayed"):
            verb = "Already saved under this idempotency key:"
        c.print(kv_table(f"{verb} frame #{frame['id']} in {frame['workspace']}", frame,
                         skip=("created", "metadata", "recorded_at", "replayed")))

    output(as_json, frame, human)


def _frame_ids(text: str, option: str) -> list[int]:
    """``"3,5"`` → ``[3, 5]``; anything else is a usage error naming ``option``."""
    parts = [part.strip() for part in text.split(",")]
    if not all(part.isascii() and part.isdigit() for part in parts):
        raise typer.BadParameter("frame ids separated by commas, e.g. 3,5", param_hint=option)
    return [int(part) for part in parts]


def session_state(
    ctx: typer.Context,
    session: Annotated[str, typer.Argument(help="The session (GOP) id, e.g. a frame's gop_id.")],
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """A session's current state: its latest I-frame and the P-frames (updates) after it."""

    async def act(hm: MindFacade) -> dict[str, Any]:
        return dict(await hm.session_state(session, workspace=workspace))

    state = with_facade(ctx, act)

    def human(c: Console) -> None:
        frames = [f for f in [state["i_frame"], *state["p_frames"]] if f is not None]
        c.print(table(f"Session {printable(state['session'])} in {state['workspace']}",
                      ("id", "type", "base", "created_at", "content"),
                      [(f["id"], f["frame_type"], f.get("base_frame_id") or "", f["created_at"],
                        f["content"]) for f in frames], whole=("created_at",)))

    output(as_json, state, human)


def recall(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for (plain words; any characters).")],
    limit: Annotated[int, typer.Option(
        "--limit", "-n", min=1, max=100, help="Maximum number of results (1-100).")] = 10,
    scope: Annotated[Scope | None, typer.Option(
        "--scope", metavar="SCOPE",
        help="personal|workspace|all (`current` = workspace). Default: workspace when "
             "--workspace is given, else personal.")] = None,
    workspace: WorkspaceOpt = None,
    profile: Annotated[RecallProfile, typer.Option(
        "--profile", metavar="PROFILE",
        help="Scoring profile: " + "|".join(RECALL_PROFILES) + ".")] = "balanced",
    since: Annotated[str | None, typer.Option(
        "--since", metavar="TIME", help="Only frames created at/after this ISO-8601 time.")] = None,
    until: Annotated[str | None, typer.Option(
        "--until", metavar="TIME", help="Only frames created before this ISO-8601 time.")] = None,
    explain: Annotated[bool, typer.Option(
        "--explain", help="Show why each result ranked where it did: each lane's rank, the "
                          "fused score and every re-score factor (with --json: an `explain` "
                          "object per result).")] = False,
    lanes: Annotated[RecallLanes, typer.Option(
        "--lanes", metavar="LANES",
        help="Search " + "|".join(RECALL_LANES) + " (one lane alone is for debugging)."
    )] = "hybrid",
    min_relevance: Annotated[float | None, typer.Option(
        "--min-relevance", metavar="0-1", min=0.0, max=1.0,
        help="Drop results whose absolute relevance (how likely they match the query at all) "
             "is below this; 0.5 keeps likely matches.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Hybrid search (keywords + vectors), merged across minds by normalized score.

    With --json: a list of results, each the frame (id, frame_type, gop_id, t, content,
    importance, source, created_at, recorded_at, metadata), score in [0, 1] (a rank score:
    the top result is always near 1), absolute_relevance in [0, 1] (how likely it matches the
    query at all: comparable across queries and minds), rrf, relevance, final, from and
    conflict. `from` names where it came from: personal, workspace:<id>, or
    external:<name> for a document of the external source that `--scope all` asks when
    HIVE_MIND_EXTERNAL_URL is set and local memory has too little (its id is the document's,
    its frame fields without a value are null). When a workspace and the external source
    disagree ("approved" vs "rejected"), `conflict` holds the note on the results it concerns
    (else null); the human output prints it after the table. An external source that fails
    is a warning on stderr, never a failed recall."""

    async def act(hm: MindFacade) -> dict[str, Any]:
        return dict(await hm.recall_detail(
            query, limit=limit, scope=scope, workspace=workspace, profile=profile, since=since,
            until=until, lanes=lanes, explain=explain, min_relevance=min_relevance))

    detail = with_facade(ctx, act)
    results: list[dict[str, Any]] = detail["results"]
    external_error = (detail.get("external") or {}).get("error")
    if external_error:
        typer.echo(f"hive-mind: warning: {printable(external_error)}", err=True)

    def human(c: Console) -> None:
        if not results:
            c.print(f'No memories found for query: "{printable(query)}"', markup=False)
        elif explain:
            c.print(explain_table(results))
        else:
            out = table(
                f"{len(results)} result(s)", ["score", "absolute", "id", "from", "importance",
                                              "created_at", "content"],
                ([f"{r['score']:.3f}", _absolute(r), r["id"], r["from"], r["importance"],
                  r["created_at"], r["content"]] for r in results),
                limits={"content": 200})
            out.caption, out.caption_justify = ABSOLUTE_CAPTION, "left"
            c.print(out)
        from rich.text import Text

        for conflict in detail.get("conflicts") or []:
            c.print(Text(f"! {printable(conflict['note'])}", style="yellow"))

    output(as_json, results, human)


def _ids(ids: list[int]) -> str:
    return ", ".join(f"#{i}" for i in ids)


def _num(value: float | None) -> str | None:
    return None if value is None else f"{value:.4f}"


def _absolute(result: dict[str, Any]) -> str | None:
    value = result.get("absolute_relevance")
    return None if value is None else f"{value:.3f}"


ABSOLUTE_CAPTION = ("score: rank score (the top result is always near 1); absolute: how likely "
                    "the result matches the query at all, comparable across queries and minds "
                    "(>= 0.5 a likely match, < 0.3 noise; --min-relevance filters on it)")


EXPLAIN_KEYS = ("keyword_rank", "vector_rank", "fused", "session", "neighbour", "match",
                "speaker_match", "time_match", "relevance", "final")


def explain_table(results: list[dict[str, Any]]) -> Table:
    """``recall --explain``: one row per result with the numbers its rank came from."""
    rows = []
    for rank, r in enumerate(results, 1):
        e = r["explain"] or dict.fromkeys(EXPLAIN_KEYS)  # an external document: no lanes
        match = _num(e["match"])
        if match is not None:
            match += "".join(f" {name}" for name, on in (("speaker", e["speaker_match"]),
                                                         ("time", e["time_match"]),
                                                         ("decision", (e.get("decision") or 1) > 1))
                             if on)
        notes = [f"{label} {_ids(e.get(key) or [])}" for key, label in
                 (("superseded_by", "superseded by"), ("supersedes", "supersedes")) if e.get(key)]
        content = f"[{'; '.join(notes)}] {r['content']}" if notes else r["content"]
        rows.append([rank, r["id"], f"{r['score']:.3f}", _absolute(r), e["keyword_rank"],
                     e["vector_rank"], _num(e["fused"]), _num(e["session"]),
                     _num(e["neighbour"]), match, _num(e["relevance"]), _num(e["final"]),
                     content])
    out = table(f"{len(results)} result(s), explained",
                ["#", "id", "score", "absolute", "kw#", "vec#", "fused", "session", "neighbour",
                 "match", "relevance", "final", "content"], rows, limits={"content": 80})
    paths = sorted({r["explain"]["path"] for r in results if r["explain"]})
    out.caption = (f"{ABSOLUTE_CAPTION}; path: {', '.join(paths) or 'external only'}; "
                   "kw#/vec#: lane rank (- = not found); fused = lanes + session + neighbour "
                   "+ update (a later statement lifted above the one it supersedes); "
                   "match = speaker × time × spread (a gathering question's share for a turn "
                   "with better turns of its conversation) × decision (1.5: a decision about "
                   "a catch-up's topic); final = fused × match × relevance")
    out.caption_justify = "left"
    return out


def ingest(
    ctx: typer.Context,
    content: Annotated[str, typer.Argument(
        metavar="PATH|URL|TEXT",
        help="A file or folder path, an http(s) URL, or raw text.")],
    type_hint: Annotated[IngestType, typer.Option(
        "--type", metavar="TYPE",
        help="Content type: " + "|".join(INGEST_TYPES) + " (auto-detected by default).")] = "auto",
    importance: Annotated[IngestImportance, typer.Option(
        "--importance", "-i", metavar="LEVEL",
        help="Importance of the frames: " + "|".join(INGEST_IMPORTANCES) + ".")] = "normal",
    tags: Annotated[list[str] | None, typer.Option(
        "--tag", "-t", metavar="TAG", help="A tag for the ingested content (repeatable).")] = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Ingest a document (markdown, HTML, plain text, PDF), a folder of them (each file by its
    type; the summary lists what was skipped and why) or a web page; waits for indexing."""

    async def act(hm: MindFacade) -> dict[str, Any]:
        return dict(await hm.ingest(content, type_hint=type_hint, importance=importance,
                                    tags=tags or [], workspace=workspace))

    summary = with_facade(ctx, act, writes=True, bulk=True)
    output(as_json, summary, lambda c: c.print(kv_table("Ingested", _readable(summary))))


def _readable(summary: dict[str, Any]) -> dict[str, Any]:
    """A folder's files per type and what it skipped (reasons apart by "; "), as text."""
    out = dict(summary)
    if isinstance(out.get("files"), dict):
        out["files"] = ", ".join(f"{n:,} {kind}" for kind, n in out["files"].items())
    if "skipped" in out:
        out["skipped"] = "; ".join(out["skipped"]) or "nothing"
    return out


def register(root: typer.Typer) -> None:
    root.command("save")(save)
    root.command("recall")(recall)
    root.command("ingest")(ingest)
    sessions = typer.Typer(help="Sessions (groups of frames) and their current state.",
                           no_args_is_help=True)
    sessions.command("state")(session_state)
    root.add_typer(sessions, name="session")
