"""``model prepare``: export the in-process embedding model into the machine-wide model cache."""

from __future__ import annotations

import time
from typing import Any

import typer

from hive_mind.cli.common import JsonOpt, kv_table, output, run, state

app = typer.Typer(help="The in-process embedding model.", no_args_is_help=True)


@app.command("prepare")
def prepare(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Prepare the in-process model once for this machine: export it to ONNX into the model
    cache (HIVE_MIND_MODEL_CACHE, default ~/.cache/hive-mind/models) unless it is there already,
    so that the first command of every data dir is fast. Nothing to do for the torch backend."""
    from mind.embeddings.inprocess import InProcessEmbedder
    from mind.embeddings.model_source import DEFAULT_MODEL

    settings = state(ctx).settings()
    config = settings.embedding_config()

    async def load() -> dict[str, Any]:
        started = time.perf_counter()
        embedder = InProcessEmbedder(config.model_for("inprocess") or DEFAULT_MODEL,
                                     backend=config.backend, onnx_cache_dir=config.onnx_cache_dir,
                                     num_threads=1, lanes=1)
        async with embedder:
            await embedder.load()
            where = embedder.prepared_at
            return {"model": embedder.model_id, "backend": embedder.backend,
                    "dimensions": embedder.dimensions,
                    "cache": None if where is None else str(where),
                    "seconds": round(time.perf_counter() - started, 2)}

    summary = run(load())
    output(as_json, summary, lambda c: c.print(kv_table("Model prepared", summary)))


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="model")
