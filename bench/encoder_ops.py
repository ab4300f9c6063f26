"""Where the ONNX encoder's time goes on this CPU, and whether int8 can pay here (#14).

Two measurements, one thread each (a lane's layout):

1. **Matrix product rates**: one float32 ``MatMul`` and one int8 ``DynamicQuantizeMatMul`` (the
   operator the int8 export runs: activations quantized per call, int8 weights per output
   channel) on the encoder's own shapes (1,024 tokens × 384 → 1,536, 1,536 → 384, 384 → 384),
   in GMAC/s (multiply-adds a second). Their ratio bounds what the int8 export can gain over
   float32 on this CPU, whatever else it does.
2. **Per operator**: the exported encoders (``onnx`` fp32 and ``onnx-int8``) through the
   product's :class:`OnnxEncoder` (token-count forward batches of 32), with ONNX Runtime's
   profiler on, over the same texts as bench/components/encoder_backends.py (SciFact abstracts, LoCoMo chat
   turns): CPU time by operator type, grouped into the int8 products, the float products and the
   rest.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.encoder_ops [--abstracts 256] [--turns 1024]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from bench.common import machine
from bench.components.encoder_backends import corpora

from mind.embeddings.inprocess import InProcessEmbedder
from mind.retrieval.int4_blocks import session_options  # one thread, quiet

SHAPES = ((1024, 384, 1536), (1024, 1536, 384), (1024, 384, 384))
INT8_PRODUCTS = {"DynamicQuantizeMatMul", "MatMulIntegerToFloat", "MatMulInteger",
                 "DynamicQuantizeLinear", "QAttention"}
FLOAT_PRODUCTS = {"MatMul", "FusedMatMul", "Gemm"}


def product_model(rows: int, inner: int, cols: int, int8: bool) -> bytes:
    """A one-node graph: ``x @ W`` in float32, or with W as per-column int8."""
    from onnx import TensorProto, helper, numpy_helper

    weights = np.random.default_rng(0).standard_normal((inner, cols)).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, inner])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, cols])
    if int8:
        scale = np.abs(weights).max(axis=0) / 127.0
        codes = np.round(weights / scale).astype(np.int8)
        node = helper.make_node("DynamicQuantizeMatMul", ["x", "w", "s", "z"], ["y"],
                                domain="com.microsoft")
        inits = [numpy_helper.from_array(codes, "w"),
                 numpy_helper.from_array(scale.astype(np.float32), "s"),
                 numpy_helper.from_array(np.zeros(cols, np.int8), "z")]
    else:
        node = helper.make_node("MatMul", ["x", "w"], ["y"])
        inits = [numpy_helper.from_array(weights, "w")]
    graph = helper.make_graph([node], "product", [x], [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    return bytes(model.SerializeToString())


def product_rates(reps: int) -> list[tuple[tuple[int, int, int], float, float]]:
    import onnxruntime as ort

    out = []
    for rows, inner, cols in SHAPES:
        x = np.random.default_rng(1).standard_normal((rows, inner)).astype(np.float32)
        rates = []
        for int8 in (False, True):
            session = ort.InferenceSession(product_model(rows, inner, cols, int8),
                                           session_options(), providers=["CPUExecutionProvider"])
            for _ in range(3):
                session.run(None, {"x": x})
            started = time.thread_time()
            for _ in range(reps):
                session.run(None, {"x": x})
            rates.append(rows * inner * cols * reps / (time.thread_time() - started) / 1e9)
        out.append(((rows, inner, cols), rates[0], rates[1]))
    return out


def operator_times(backend: str, cache: Path, texts: list[str], prefix: str) -> Counter[str]:
    """CPU microseconds by operator type for encoding ``texts`` once, one thread."""
    embedder = InProcessEmbedder(backend=backend, onnx_cache_dir=cache, lanes=1, num_threads=1)
    encoder: Any = embedder._encoder
    plain = encoder.session_options

    def profiled(ort: Any) -> Any:
        options = plain(ort)
        options.enable_profiling = True
        options.profile_file_prefix = prefix
        return options

    encoder.session_options = profiled
    encoder.load()
    encoder.encode(texts[:8])  # warm-up: its profile is dropped, a new session profiles anew
    _profile(encoder)
    encoder._session = None
    encoder.load()
    encoder.encode(texts)
    events = _profile(encoder)
    encoder.close()
    times: Counter[str] = Counter()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            times[event["args"]["op_name"]] += int(event["dur"])
    return times


def _profile(encoder: Any) -> list[dict[str, Any]]:
    """The session's profile (ending it: the session profiles nothing more)."""
    path = Path(encoder._session.end_profiling())
    events: list[dict[str, Any]] = json.loads(path.read_text())
    path.unlink()
    return events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--abstracts", type=int, default=256)
    parser.add_argument("--turns", type=int, default=1024)
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    print(f"_{machine()}_\n")
    print("| product (rows × inner → cols) | float32 MatMul, GMAC/s | int8 "
          "DynamicQuantizeMatMul, GMAC/s | int8 / float32 |\n|---|---:|---:|---:|")
    for (rows, inner, cols), fp32, int8 in product_rates(args.reps):
        print(f"| {rows:,} × {inner} → {cols} | {fp32:.1f} | {int8:.1f} | {int8 / fp32:.2f}x |")
    sets = corpora(args.abstracts, args.turns)
    print("\n| texts | backend | CPU s | int8 products | float products | other | top "
          "operators |\n|---|---|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, texts in sets.items():
            for backend in ("onnx", "onnx-int8"):
                times = operator_times(backend, Path(tmp), texts, f"{tmp}/profile")
                total = sum(times.values())
                int8 = sum(v for k, v in times.items() if k in INT8_PRODUCTS)
                flt = sum(v for k, v in times.items() if k in FLOAT_PRODUCTS)
                top = ", ".join(f"{k} {v / total:.0%}" for k, v in times.most_common(4))
                print(f"| {len(texts):,} {name} | {backend} | {total / 1e6:.1f} | "
                      f"{int8 / 1e6:.1f} | {flt / 1e6:.1f} | {(total - int8 - flt) / 1e6:.1f} | "
                      f"{top} |", flush=True)


if __name__ == "__main__":
    main()
