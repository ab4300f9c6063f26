"""The ONNX copy of a sentence-transformers model, exported once per machine and cached.

:func:`ensure_exported` returns the directory holding ``model.onnx`` (token ids → pooled,
optionally normalized sentence vectors: the model's mean/CLS pooling and Normalize module are
inside the graph), the model's ``tokenizer.json`` and a ``manifest.json``. The first call exports
it from the PyTorch weights with ``torch.onnx.export`` (opset 17, dynamic batch and sequence axes)
and, for ``int8``, quantizes the linear layers' weights per output channel
(:func:`onnxruntime.quantization.quantize_dynamic`, ``per_channel``: plain per-tensor int8 moved
chat vectors to a mean cosine of 0.95 with PyTorch, per channel keeps 0.99; the most sensitive
layers stay in float, :func:`_kept_in_fp32`; docs/performance.md, "Encoder backends").
Later calls only read the manifest: torch and transformers are imported by the export alone.

The cache directory's name carries a key over everything that shapes the graph: the model's
files, the variant, the export format and the torch / transformers / onnx / onnxruntime
versions, so an upgrade exports again instead of reusing a stale graph. The export is written
into a private temporary directory and renamed into place (atomic: a reader sees all of it or
none); an ``fcntl`` lock makes a second process that needs the same export wait for the first
instead of exporting twice; a directory whose manifest is missing or whose files do not match it
(an interrupted copy, a truncated file) is removed and exported again.

Where: the first of the cache *roots* that holds a complete export is used, read-only or not;
when none does, the export goes into the first root that can be written. The product passes the
machine-wide cache first (``~/.cache/hive-mind/models``, ``HIVE_MIND_MODEL_CACHE`` to move it:
every data dir, workspace, profile and test run of the machine shares one export) and the data
dir's ``models`` second, for a machine cache that is read-only and empty.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Final

from mind.embeddings.base import EmbeddingError
from mind.embeddings.model_source import offline_hint
from mind.embeddings.torch_encoder import quiet_progress_bars

log = logging.getLogger(__name__)

PREPARING: Final = "preparing the embedding model (once)…"
EXPORT_FORMAT = 2  # bump when the exported graph changes shape or meaning
OPSET = 17
VARIANTS = ("fp32", "int8")
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
MANIFEST_FILE = "manifest.json"
_EXPORTER_PACKAGES = ("torch", "transformers", "onnx", "onnxruntime")
_SUPPORTED_POOLING = ("mean", "cls")


@dataclass(frozen=True, slots=True)
class ExportedModel:
    """What the ONNX encoder needs, read from a cache directory's manifest."""

    directory: Path
    dimensions: int
    max_seq_length: int
    inputs: tuple[str, ...]
    normalized: bool
    pad_id: int
    pad_token: str

    @property
    def model_path(self) -> Path:
        return self.directory / MODEL_FILE

    @property
    def tokenizer_path(self) -> Path:
        return self.directory / TOKENIZER_FILE


def package_versions() -> dict[str, str]:
    """Versions of the packages that shape an export (read from metadata: nothing imported)."""
    versions: dict[str, str] = {}
    for name in _EXPORTER_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def source_identity(source: str, is_local: bool) -> str:
    """The model's identity: its files' names, sizes and mtimes for a local directory (a new
    copy of the weights gets a new key), the name itself for a hub id."""
    if not is_local:
        return f"hub:{source}"
    root = Path(source)
    parts = [str(root.resolve())]
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        stat = path.stat()
        parts.append(f"{path.relative_to(root)}:{stat.st_size}:{stat.st_mtime_ns}")
    return "\n".join(parts)


def cache_key(source: str, is_local: bool, variant: str) -> str:
    blob = json.dumps({
        "source": source_identity(source, is_local),
        "variant": variant,
        "format": EXPORT_FORMAT,
        "opset": OPSET,
        "versions": package_versions(),
    }, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def cache_dir_for(root: Path, model_id: str, source: str, is_local: bool, variant: str) -> Path:
    slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in model_id)[:60]
    return root / "onnx" / f"{slug}-{variant}-{cache_key(source, is_local, variant)}"


def writable(root: Path) -> bool:
    """Whether exports can be written under ``root`` (created if missing)."""
    try:
        (root / "onnx").mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root / "onnx", prefix=".probe-"):
            return True
    except OSError:
        return False


def ensure_exported(
    root: Path | Sequence[Path], model_id: str, source: str, *, is_local: bool, variant: str,
    offline: bool,
) -> ExportedModel:
    """The cached export of ``source`` from the first of the cache ``root`` s that holds it, or
    exported now into the first writable one (missing, stale or damaged; a hub model is then
    loaded from the local Hugging Face cache only when ``offline``)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown ONNX variant {variant!r}; expected one of {VARIANTS}")
    roots = [root] if isinstance(root, Path) else list(root)
    targets = [cache_dir_for(r, model_id, source, is_local, variant) for r in roots]
    for candidate in targets:
        ready = read_manifest(candidate)
        if ready is not None:
            return ready
    # the first writable root; the probe creates it, so the later ones are not probed
    target = next((t for r, t in zip(roots, targets, strict=True) if writable(r)), None)
    if target is None:
        raise EmbeddingError(
            f"no ONNX model cache of {model_id!r} and none of {[str(r) for r in roots]} can be "
            "written: set HIVE_MIND_MODEL_CACHE to a writable directory", provider="inprocess")
    target.parent.mkdir(parents=True, exist_ok=True)
    with _export_lock(target):
        ready = read_manifest(target)  # another process finished it while we waited
        if ready is not None:
            return ready
        if target.exists():
            log.warning("ONNX model cache %s is incomplete or damaged: exporting it again", target)
            shutil.rmtree(target, ignore_errors=True)
        started = time.perf_counter()
        # a notice for whoever waits at a terminal (the CLI shows records marked so)
        log.info(PREPARING, extra={"notice": True})
        scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        try:
            _export(source, is_local or offline, variant, scratch)
            os.replace(scratch, target)  # target is absent: the rename publishes every file
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        log.info("exported %s to ONNX (%s) in %.1fs: %s", model_id, variant,
                 time.perf_counter() - started, target)
    exported = read_manifest(target)
    if exported is None:  # pragma: no cover - the export just wrote it
        raise EmbeddingError(f"ONNX export of {model_id!r} left no usable cache at {target}",
                             provider="inprocess")
    return exported


def read_manifest(directory: Path) -> ExportedModel | None:
    """The manifest of a complete cache directory, or None (missing, unreadable, or a file's
    size differs from what the export recorded)."""
    try:
        manifest = json.loads((directory / MANIFEST_FILE).read_text(encoding="utf-8"))
        for name, size in manifest["files"].items():
            if (directory / name).stat().st_size != int(size):
                return None
        return ExportedModel(
            directory=directory,
            dimensions=int(manifest["dimensions"]),
            max_seq_length=int(manifest["max_seq_length"]),
            inputs=tuple(str(name) for name in manifest["inputs"]),
            normalized=bool(manifest["normalized"]),
            pad_id=int(manifest["pad_id"]),
            pad_token=str(manifest["pad_token"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def discard(exported: ExportedModel) -> None:
    """Remove a cache directory whose model the runtime could not load (rebuilt on next use)."""
    shutil.rmtree(exported.directory, ignore_errors=True)


@contextmanager
def _export_lock(target: Path) -> Iterator[None]:
    with open(target.parent / f".{target.name}.lock", "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# -- the export itself (imports torch and transformers) --------------------------------------

def _export(source: str, local_only: bool, variant: str, out: Path) -> None:
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:  # pragma: no cover - declared dependencies
        raise EmbeddingError(f"the ONNX export needs torch and sentence-transformers: {exc}",
                             provider="inprocess") from None
    quiet_progress_bars()
    with warnings.catch_warnings():  # tracer and deprecation chatter is not the user's concern
        warnings.simplefilter("ignore")
        try:
            model = SentenceTransformer(source, device="cpu", local_files_only=local_only,
                                        model_kwargs={"attn_implementation": "eager"})
        except Exception as exc:
            raise EmbeddingError(f"in-process model {source!r} could not be loaded for the "
                                 f"ONNX export{offline_hint(source)}: {exc}",
                                 provider="inprocess") from None
        _trace(model, torch, variant, out)


def _trace(model: Any, torch: Any, variant: str, out: Path) -> None:
    transformer, pooling, normalized = _modules(model)
    auto_model = transformer.auto_model.eval()
    tokenizer = transformer.tokenizer
    accepted = _accepted_inputs(auto_model)
    wrapper = _pooled_module(torch, auto_model, pooling, normalized, accepted)
    sample = tokenizer(["a padded trace input", "short"], padding=True, return_tensors="pt")
    args = tuple(sample[name] for name in accepted)
    fp32 = out / ("model-fp32.onnx" if variant == "int8" else MODEL_FILE)
    axes = {name: {0: "batch", 1: "sequence"} for name in accepted}
    axes["embedding"] = {0: "batch"}
    with torch.no_grad():
        torch.onnx.export(wrapper, args, str(fp32), input_names=list(accepted),
                          output_names=["embedding"], dynamic_axes=axes, opset_version=OPSET,
                          dynamo=False)
    if variant == "int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        root = logging.getLogger()
        quiet = _DropQuantizerAdvice()
        root.addFilter(quiet)  # it advises pre-processing on the root logger, every time
        try:
            quantize_dynamic(str(fp32), str(out / MODEL_FILE), weight_type=QuantType.QInt8,
                             per_channel=True, nodes_to_exclude=_kept_in_fp32(fp32))
        finally:
            root.removeFilter(quiet)
        fp32.unlink()
    tokenizer.backend_tokenizer.save(str(out / TOKENIZER_FILE))
    files = {name: (out / name).stat().st_size for name in (MODEL_FILE, TOKENIZER_FILE)}
    getter = (getattr(model, "get_embedding_dimension", None)
              or model.get_sentence_embedding_dimension)
    dimensions = int(getter() or 0)
    manifest = {
        "dimensions": dimensions,
        "max_seq_length": int(model.max_seq_length or 512),
        "inputs": list(accepted),
        "normalized": normalized,
        "pad_id": int(tokenizer.pad_token_id or 0),
        "pad_token": str(tokenizer.pad_token or "[PAD]"),
        "variant": variant,
        "versions": package_versions(),
        "files": files,
    }
    (out / MANIFEST_FILE).write_text(json.dumps(manifest, indent=1), encoding="utf-8")


def _modules(model: Any) -> tuple[Any, str, bool]:
    """``(transformer, pooling mode, normalized)``; an EmbeddingError for any other layout."""
    modules = list(model)
    kinds = [type(module).__name__ for module in modules]  # names: stable across versions
    normalized = kinds[-1:] == ["Normalize"]
    core = kinds[:-1] if normalized else kinds
    if core != ["Transformer", "Pooling"]:
        raise EmbeddingError(
            f"the ONNX backend supports Transformer → Pooling (→ Normalize) models, not "
            f"{kinds}; use HIVE_MIND_EMBEDDING_BACKEND=torch", provider="inprocess")
    mode = _pooling_mode(modules[1].get_config_dict())
    if mode not in _SUPPORTED_POOLING:
        raise EmbeddingError(f"the ONNX backend supports {_SUPPORTED_POOLING} pooling, not "
                             f"{mode!r}; use HIVE_MIND_EMBEDDING_BACKEND=torch",
                             provider="inprocess")
    return modules[0], mode, normalized


def _kept_in_fp32(model_path: Path) -> list[str]:
    """The linear layers left in float: the attention value projections and the first layer's
    feed-forward output. Measured on LoCoMo turns against the fp32 export (docs/performance.md,
    "Encoder backends"), they carry the largest share of the int8 error for the least time: mean
    cosine 0.9927 → 0.9952 for ~13 % of int8's speed. Names as BERT-style exports spell them;
    a model whose names differ is simply quantized throughout."""
    import onnx

    graph = onnx.load(str(model_path), load_external_data=False).graph
    return [node.name for node in graph.node if node.op_type == "MatMul" and (
        "/attention/self/value/" in node.name or "/layer.0/output/dense/" in node.name)]


class _DropQuantizerAdvice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "onnxruntime/quantization" not in record.pathname.replace("\\", "/")


def _pooling_mode(config: dict[str, Any]) -> str:
    """``pooling_mode`` (sentence-transformers 6) or the older ``pooling_mode_*_tokens`` flags."""
    mode = config.get("pooling_mode")
    if isinstance(mode, str):
        return mode
    if isinstance(mode, list | tuple):
        return "+".join(str(m) for m in mode)
    flags = [key for key, on in config.items() if key.startswith("pooling_mode_") and on]
    names = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls"}
    return "+".join(names.get(key, key) for key in flags) or "unknown"


def _accepted_inputs(auto_model: Any) -> tuple[str, ...]:
    import inspect

    params = inspect.signature(auto_model.forward).parameters
    return tuple(name for name in ("input_ids", "attention_mask", "token_type_ids")
                 if name in params)


def _pooled_module(torch: Any, auto_model: Any, pooling: str, normalized: bool,
                   accepted: tuple[str, ...]) -> Any:
    """The transformer with its pooling (and normalization) as one traceable module."""

    class Pooled(torch.nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.model = auto_model

        def forward(self, *tensors: Any) -> Any:
            inputs = dict(zip(accepted, tensors, strict=True))
            hidden = self.model(**inputs).last_hidden_state
            if pooling == "cls":
                pooled = hidden[:, 0]
            else:
                mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            if normalized:
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
            return pooled

    return Pooled().eval()
