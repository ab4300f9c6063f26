"""The ONNX backends of the in-process embedder: the export and its cache, the vectors against
PyTorch's, the query path's imports, and the fingerprint rule for a backend switch."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mind.embeddings import InProcessEmbedder, fingerprint, onnx_export
from mind.embeddings.base import EmbeddingError
from mind.embeddings.model_source import DEFAULT_MODEL, resolve_model_source
from mind.embeddings.onnx_export import MODEL_FILE, ensure_exported, read_manifest
from mind.errors import EmbeddingFingerprintError
from tests.procs import ROOT

TEXTS = [
    "The Q3 budget review moved to Thursday.",
    "ok",
    "Melanie painted a sunset over the lake after her pottery class; she said it calmed her.",
    "sqlite-vec stores float32 vectors in chunks of 1,024 " * 12,  # long: truncated at 256 tokens
    "Ünïcödé, emoji 🎉 and CJK 记忆 in one message",
    "",
]


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def cache_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        return asyncio.run(_embed(InProcessEmbedder(num_threads=1), TEXTS))


async def _embed(embedder: InProcessEmbedder, texts: list[str]) -> np.ndarray:
    async with embedder:
        return await embedder.embed_batch(texts)


def onnx_embedder(root: Path, backend: str = "onnx", **kw: object) -> InProcessEmbedder:
    return InProcessEmbedder(backend=backend, onnx_cache_dir=root, num_threads=1, **kw)  # type: ignore[arg-type]


def test_fp32_export_gives_the_pytorch_vectors(cache_root: Path,
                                               torch_vectors: np.ndarray) -> None:
    vectors = asyncio.run(_embed(onnx_embedder(cache_root), TEXTS))
    assert vectors.shape == torch_vectors.shape == (len(TEXTS), 384)
    cosine = (vectors * torch_vectors).sum(axis=1)
    assert np.all(cosine >= 1 - 1e-4), cosine
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_fp32_shares_the_pytorch_fingerprint_int8_does_not(cache_root: Path) -> None:
    torch_model = InProcessEmbedder()
    fp32, int8 = onnx_embedder(cache_root), onnx_embedder(cache_root, "onnx-int8")
    assert fp32.model_id == torch_model.model_id == DEFAULT_MODEL
    assert int8.model_id != DEFAULT_MODEL and "int8" in int8.model_id
    for embedder in (torch_model, fp32, int8):
        asyncio.run(embedder.close())


def test_int8_is_close_but_its_own_vectors(cache_root: Path, torch_vectors: np.ndarray) -> None:
    embedder = onnx_embedder(cache_root, "onnx-int8")
    vectors = asyncio.run(_embed(embedder, TEXTS))
    cosine = (vectors * torch_vectors).sum(axis=1)
    assert cosine.mean() > 0.97 and cosine.min() > 0.9, cosine  # per-channel weights
    assert not np.allclose(vectors, torch_vectors, atol=1e-3)
    assert fingerprint(embedder) == ("inprocess", embedder.model_id, 384)


def test_lanes_split_a_batch_and_match_one_lane(cache_root: Path) -> None:
    texts = [f"note {i}: " + "the release train leaves on friday " * (i % 7 + 1)
             for i in range(100)]
    one = asyncio.run(_embed(onnx_embedder(cache_root, batch_size=16), texts))
    two = asyncio.run(_embed(InProcessEmbedder(backend="onnx", onnx_cache_dir=cache_root,
                                               num_threads=2, lanes=2, batch_size=16), texts))
    np.testing.assert_allclose(two, one, atol=1e-5)  # same rows, same order


def test_the_cache_is_reused_without_exporting_again(cache_root: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    source, is_local = resolve_model_source(DEFAULT_MODEL)
    first = ensure_exported(cache_root, DEFAULT_MODEL, source, is_local=is_local,
                            variant="fp32", offline=True)
    stamp = first.model_path.stat().st_mtime_ns

    def no_export(*args: object) -> None:
        raise AssertionError("exported again although the cache was complete")

    monkeypatch.setattr(onnx_export, "_export", no_export)
    again = ensure_exported(cache_root, DEFAULT_MODEL, source, is_local=is_local,
                            variant="fp32", offline=True)
    assert again.directory == first.directory
    assert again.model_path.stat().st_mtime_ns == stamp


def test_new_exporter_versions_mean_a_new_cache_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    source, is_local = resolve_model_source(DEFAULT_MODEL)
    before = onnx_export.cache_key(source, is_local, "fp32")
    assert onnx_export.cache_key(source, is_local, "int8") != before
    real = onnx_export.package_versions()
    monkeypatch.setattr(onnx_export, "package_versions", lambda: {**real, "torch": "99.0"})
    assert onnx_export.cache_key(source, is_local, "fp32") != before


def test_a_truncated_model_file_is_exported_again(tmp_path: Path,
                                                  torch_vectors: np.ndarray) -> None:
    asyncio.run(_embed(onnx_embedder(tmp_path), TEXTS[:1]))
    [directory] = [d for d in (tmp_path / "onnx").iterdir() if d.is_dir()]
    model = directory / MODEL_FILE
    with model.open("r+b") as handle:
        handle.truncate(model.stat().st_size // 2)
    assert read_manifest(directory) is None  # sizes no longer match the manifest
    vectors = asyncio.run(_embed(onnx_embedder(tmp_path), TEXTS))
    assert np.all((vectors * torch_vectors).sum(axis=1) >= 1 - 1e-4)
    assert read_manifest(directory) is not None


def test_a_garbled_model_file_of_the_right_size_is_exported_again(
        tmp_path: Path, torch_vectors: np.ndarray) -> None:
    asyncio.run(_embed(onnx_embedder(tmp_path), TEXTS[:1]))
    [directory] = [d for d in (tmp_path / "onnx").iterdir() if d.is_dir()]
    model = directory / MODEL_FILE
    model.write_bytes(os.urandom(model.stat().st_size))  # same size: only loading can tell
    vectors = asyncio.run(_embed(onnx_embedder(tmp_path), TEXTS))
    assert np.all((vectors * torch_vectors).sum(axis=1) >= 1 - 1e-4)


CHILD = """
import asyncio, json, logging, sys
from pathlib import Path
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
from mind.embeddings import InProcessEmbedder
async def main():
    embedder = InProcessEmbedder(backend="onnx", onnx_cache_dir=Path(sys.argv[1]), num_threads=1)
    async with embedder:
        vector = await embedder.embed_batch(["the budget review moved to Thursday"])
    heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules)
    print(json.dumps({"vector": vector[0].tolist(), "heavy": heavy}))
asyncio.run(main())
"""


def run_child(root: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", CHILD, str(root)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen[str]) -> tuple[dict[str, object], str]:
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1]), err


def test_two_processes_exporting_at_once_export_once(tmp_path: Path) -> None:
    first, second = run_child(tmp_path), run_child(tmp_path)
    (a, err_a), (b, err_b) = finish(first), finish(second)
    assert (err_a + err_b).count("exported all-MiniLM-L6-v2 to ONNX") == 1
    np.testing.assert_allclose(a["vector"], b["vector"], atol=1e-6)  # type: ignore[arg-type]
    entries = [p.name for p in (tmp_path / "onnx").iterdir() if not p.name.startswith(".")]
    assert len(entries) == 1  # no half-written scratch directory left behind
    # and the query path of a process that finds the cache ready loads no torch at all
    c, err_c = finish(run_child(tmp_path))
    assert c["heavy"] == [] and "exported" not in err_c
    assert "Loading weights" not in err_a + err_b + err_c


def test_switching_to_a_backend_with_other_vectors_asks_for_reembed(tmp_path: Path) -> None:
    from hive_mind.facade import HiveMind

    async def scenario() -> str:
        async with await HiveMind.open(data_dir=tmp_path, embedding_provider="inprocess",
                                       embedding_backend="onnx", redis_url=None) as hm:
            await hm.save("The Q3 budget review moved to Thursday", wait=True)
            assert (await hm.recall("budget review", touch=False))
        async with await HiveMind.open(data_dir=tmp_path, embedding_provider="inprocess",
                                       embedding_backend="torch", redis_url=None) as hm:
            assert (await hm.recall("budget review", touch=False))  # same vectors: accepted
        async with await HiveMind.open(data_dir=tmp_path, embedding_provider="inprocess",
                                       embedding_backend="onnx-int8", redis_url=None) as hm:
            with pytest.raises(EmbeddingFingerprintError) as err:
                await hm.recall("budget review", touch=False)
            return str(err.value)

    message = asyncio.run(scenario())
    assert "hive-mind maintenance reembed" in message and "int8" in message
    assert "HIVE_MIND_EMBEDDING_BACKEND=onnx (or torch)" in message  # how to read it meanwhile


def test_lanes_keep_their_nice_value_and_a_multithread_lane_works(cache_root: Path) -> None:
    import threading

    async def scenario() -> tuple[int, int, np.ndarray, np.ndarray]:
        base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        async with InProcessEmbedder(backend="onnx", onnx_cache_dir=cache_root, num_threads=1,
                                     nice=5) as niced:
            single = await niced.embed_batch(TEXTS)
            lane_nice = await niced._run(
                lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        async with InProcessEmbedder(backend="onnx", onnx_cache_dir=cache_root, num_threads=2,
                                     lanes=1) as wide:
            assert (wide.lanes, wide.lane_threads) == (1, 2)
            both = await wide.embed_batch(TEXTS)
        return base, lane_nice, single, both

    base, lane_nice, single, both = asyncio.run(scenario())
    if sys.platform.startswith("linux"):
        assert lane_nice == min(19, base + 5)
    np.testing.assert_allclose(both, single, atol=1e-5)


def test_a_query_runs_on_its_own_thread_at_the_process_priority(cache_root: Path) -> None:
    """One interactive text skips the niced lanes (where it waited for an import's forward
    batch and lost the CPU to the recall's other threads); bulk work of one text still runs
    on a lane; both give the same vector."""
    import threading

    from mind.priority_executor import work_priority

    async def scenario() -> tuple[list[tuple[str, int]], np.ndarray, np.ndarray]:
        async with InProcessEmbedder(backend="onnx", onnx_cache_dir=cache_root, num_threads=1,
                                     nice=5) as embedder:
            await embedder.load()
            seen: list[tuple[str, int]] = []
            real = embedder._encoder.encode

            def spy(texts: list[str]) -> np.ndarray:
                seen.append((threading.current_thread().name,
                             os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
                return real(texts)

            embedder._encoder.encode = spy  # type: ignore[method-assign]
            query = await embedder.embed_batch(["budget review"])
            with work_priority("bulk"):
                bulk = await embedder.embed_batch(["budget review"])
            return seen, query, bulk

    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen, query, bulk = asyncio.run(scenario())
    assert [name for name, _ in seen] == ["hm-embed-query", "hm-embed-0"]
    if sys.platform.startswith("linux"):
        assert [nice for _, nice in seen] == [base, min(19, base + 5)]
    np.testing.assert_allclose(query, bulk, atol=1e-6)


def test_forward_batches_by_token_count_give_each_text_its_own_vector(cache_root: Path) -> None:
    """Batching without padding waste changes nothing: every text's vector equals the one it
    gets encoded alone (fp32), in the caller's order, on one lane and on two."""
    texts = [f"turn {i}: " + "we moved the launch to next week " * (i % 9) + "ok"
             for i in range(70)] + TEXTS

    async def alone() -> np.ndarray:
        async with onnx_embedder(cache_root) as embedder:
            return np.stack([(await embedder.embed_batch([t]))[0] for t in texts])

    single = asyncio.run(alone())
    one = asyncio.run(_embed(onnx_embedder(cache_root), texts))
    two = asyncio.run(_embed(InProcessEmbedder(backend="onnx", onnx_cache_dir=cache_root,
                                               num_threads=2, lanes=2), texts))
    np.testing.assert_allclose(one, single, atol=2e-5)
    np.testing.assert_allclose(two, single, atol=2e-5)


# -- the machine-wide model cache ----------------------------------------------------------------


def test_the_export_is_shared_by_every_data_dir(cache_root: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Two data dirs, one model cache: the second data dir exports nothing and keeps no
    ``models`` folder; the model cache moves with HIVE_MIND_MODEL_CACHE."""
    from hive_mind.settings import load_settings

    monkeypatch.delenv("HIVE_MIND_EMBEDDING_CACHE_DIR", raising=False)
    monkeypatch.setenv("HIVE_MIND_MODEL_CACHE", str(cache_root))
    first = load_settings(data_dir=tmp_path / "one").embedding_config().onnx_cache_dir
    assert first == (cache_root, tmp_path / "one" / "models")
    source, is_local = resolve_model_source(DEFAULT_MODEL)
    ensure_exported(first, DEFAULT_MODEL, source, is_local=is_local, variant="int8",
                    offline=True)

    def no_export(*args: object) -> None:
        raise AssertionError("a second data dir exported the model again")

    monkeypatch.setattr(onnx_export, "_export", no_export)
    second = load_settings(data_dir=tmp_path / "two").embedding_config().onnx_cache_dir
    assert second is not None and not isinstance(second, Path)
    asyncio.run(_embed(InProcessEmbedder(backend="onnx-int8", onnx_cache_dir=second,
                                         num_threads=1), TEXTS[:1]))
    assert not (tmp_path / "two" / "models").exists()
    assert not (tmp_path / "one" / "models").exists()  # exported into the model cache only
    monkeypatch.delenv("HIVE_MIND_MODEL_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    default = load_settings(data_dir=tmp_path / "one").embedding_config().onnx_cache_dir
    assert default == (tmp_path / "xdg" / "hive-mind" / "models", tmp_path / "one" / "models")


def test_a_read_only_model_cache_is_used_or_falls_back(cache_root: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-only cache holding the export serves it; a read-only empty one sends the export
    to the next root (the data dir's); none writable is a clear error naming the setting."""
    source, is_local = resolve_model_source(DEFAULT_MODEL)
    ready = ensure_exported(cache_root, DEFAULT_MODEL, source, is_local=is_local, variant="int8",
                            offline=True)
    monkeypatch.setattr(onnx_export, "writable", lambda root: root == tmp_path / "data")
    assert ensure_exported((cache_root, tmp_path / "data"), DEFAULT_MODEL, source,
                           is_local=is_local, variant="int8", offline=True) == ready
    empty = tmp_path / "read-only"
    fallback = ensure_exported((empty, tmp_path / "data"), DEFAULT_MODEL, source,
                               is_local=is_local, variant="int8", offline=True)
    assert fallback.directory.is_relative_to(tmp_path / "data") and not empty.exists()
    with pytest.raises(EmbeddingError, match="HIVE_MIND_MODEL_CACHE"):
        ensure_exported((empty,), DEFAULT_MODEL, source, is_local=is_local, variant="fp32",
                        offline=True)


def test_writable_probes_the_directory(tmp_path: Path) -> None:
    assert onnx_export.writable(tmp_path / "fresh") and (tmp_path / "fresh" / "onnx").is_dir()
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert onnx_export.writable(locked) is (os.geteuid() == 0)  # root writes anyway
    finally:
        locked.chmod(0o700)


def test_model_prepare_fills_the_model_cache_once(tmp_path: Path) -> None:
    """``hive-mind model prepare`` exports into HIVE_MIND_MODEL_CACHE, a second run finds it,
    and the data dir stays empty."""
    env = {k: v for k, v in os.environ.items() if k != "HIVE_MIND_EMBEDDING_CACHE_DIR"}
    env.update(HIVE_MIND_MODEL_CACHE=str(tmp_path / "cache"), HF_HUB_OFFLINE="1")
    command = [sys.executable, "-m", "hive_mind", "--data-dir", str(tmp_path / "data"), "model",
               "prepare", "--json"]
    runs = [json.loads(subprocess.run(command, env=env, cwd=ROOT, capture_output=True,
                                      text=True, check=True, timeout=300).stdout)
            for _ in range(2)]
    for summary in runs:
        assert summary["backend"] == "onnx-int8" and summary["dimensions"] == 384
        assert Path(summary["cache"]).parent == tmp_path / "cache" / "onnx"
        assert read_manifest(Path(summary["cache"])) is not None
    assert runs[0]["cache"] == runs[1]["cache"]
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").iterdir())
